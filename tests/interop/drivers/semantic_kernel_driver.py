"""Semantic Kernel 1.45 as its docs start an agent on Anthropic: a ``ChatCompletionAgent`` with the
``AnthropicChatCompletion`` connector (semantic-kernel[anthropic]; the key from ``ANTHROPIC_API_KEY``, the
SDK pointed at serve by ``ANTHROPIC_BASE_URL``) and a plugin of one ``kernel_function``, two
``get_response`` calls on one ``ChatHistoryAgentThread`` (the agent calls functions automatically).

Model: claude-sonnet-5-5: the connector takes any model id (it has no model table).
Its own record: each message's ``metadata["usage"]`` (the SDK's ``Usage`` as the connector kept it) in the
thread's history, where the connector kept the answers of the calls that asked for a function too.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

from common import FOLLOW_UP, TASK, main, weather
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
from semantic_kernel.connectors.ai.anthropic import AnthropicChatCompletion
from semantic_kernel.functions import kernel_function

KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class Weather:
    @kernel_function(description="The weather in a city.")
    def get_weather(self, city: Annotated[str, "the city's name"]) -> str:
        return weather(city)


async def converse(model: str) -> dict:
    agent = ChatCompletionAgent(service=AnthropicChatCompletion(ai_model_id=model), name="assistant",
                                instructions="Answer with the tools you have.", plugins=[Weather()])
    thread = ChatHistoryAgentThread()
    for task in (TASK, FOLLOW_UP):
        thread = (await agent.get_response(messages=task, thread=thread)).thread
    history = [m async for m in thread.get_messages()]
    used = [m.metadata["usage"] for m in history if m.role.value == "assistant" and m.metadata.get("usage") is not None]
    tools = sum(1 for m in history for item in m.items if type(item).__name__ == "FunctionResultContent")
    return {"tool_calls": tools, "usage": {k: sum(getattr(u, k) or 0 for u in used) for k in KEYS},
            "record": f"thread history: {len(used)} assistant messages' metadata['usage']"}


def run(model: str, base_url: str) -> dict:
    os.environ["ANTHROPIC_BASE_URL"] = base_url
    return asyncio.run(converse(model))


if __name__ == "__main__":
    main(run)
