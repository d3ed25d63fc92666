"""AutoGen 0.7.5 as its docs start an agent: an ``AssistantAgent`` with a Python function as its tool
and ``AnthropicChatCompletionClient`` (autogen-ext[anthropic]; the key from ``ANTHROPIC_API_KEY``, the
SDK pointed at serve by ``ANTHROPIC_BASE_URL``), two ``run`` calls (the agent keeps its context), each
its default single tool iteration.

Model: claude-sonnet-4-6, which autogen's model table matches to its claude-sonnet-4 entry (function
calling on); a 5.5 name falls through to its claude-2.0 entry, no function calling, so no tools.
Its own record: each message's ``models_usage`` (``RequestUsage``: ``prompt_tokens`` is the API's
``input_tokens``, the cache's counts left out; ``completion_tokens``), and the client's ``total_usage()``.
"""

from __future__ import annotations

import asyncio

from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.anthropic import AnthropicChatCompletionClient
from common import FOLLOW_UP, TASK, main, weather


async def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


async def converse(model: str) -> dict:
    client = AnthropicChatCompletionClient(model=model)
    agent = AssistantAgent("assistant", model_client=client, tools=[get_weather])
    messages = []
    for task in (TASK, FOLLOW_UP):
        messages += (await agent.run(task=task)).messages
    await client.close()
    used = [m.models_usage for m in messages if m.models_usage is not None]
    total = client.total_usage()
    if (sum(u.prompt_tokens for u in used), sum(u.completion_tokens for u in used)) != (total.prompt_tokens,
                                                                                          total.completion_tokens):
        raise RuntimeError(f"the messages' usage {used} does not add up to the client's total {total}")
    tools = sum(len(m.content) for m in messages if m.type == "ToolCallExecutionEvent")
    return {"tool_calls": tools, "usage": {"input_tokens": total.prompt_tokens, "output_tokens": total.completion_tokens},
            "record": "messages' models_usage (RequestUsage), client.total_usage()"}


def run(model: str, base_url: str) -> dict:
    import os
    os.environ["ANTHROPIC_BASE_URL"] = base_url
    return asyncio.run(converse(model))


if __name__ == "__main__":
    main(run)
