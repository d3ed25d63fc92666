"""langroid's ``ChatAgent`` in a ``Task`` on its default path for Claude (``OpenAIGPTConfig`` with
``chat_model="litellm/anthropic/MODEL"``: LiteLLM's Anthropic route; serve's address in ``ANTHROPIC_BASE_URL``, which
LiteLLM reads), against plain ``serve``: a ``ToolMessage`` the agent handles (for Claude, langroid's tools are JSON in
the text, not the API's tools), two user turns on one agent, each a non-interactive ``Task`` that ends with a text
answer. Model: claude-sonnet-5-5 (LiteLLM sends any name it is given on this route; langroid warns it has no context
length for it).

The client's own token record: ``LanguageModel.usage_cost_dict`` (langroid's per-model ``LLMTokenUsage``:
``prompt_tokens``, counted as LiteLLM gives it, input plus cache reads and writes; ``cached_tokens``, the reads;
``completion_tokens``; ``cost``)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

# langroid loads a tiktoken encoding at import, which tiktoken downloads; LiteLLM ships it (closed network: read there)
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(importlib.util.find_spec("litellm").origin).parent
                                                / "litellm_core_utils" / "tokenizers"))

import langroid as lr  # noqa: E402
import langroid.language_models as lm  # noqa: E402
from langroid.language_models.base import LanguageModel  # noqa: E402
from common import API_KEY, FOLLOW_UP, TASK, main, weather  # noqa: E402


MAX_TURNS = 20  # far more than a task of two tool rounds takes: reaching it is a loop that did not end


class WeatherTool(lr.ToolMessage):
    request: str = "get_weather"
    purpose: str = "To get the weather in a <city>."
    city: str

    def handle(self) -> str:
        return weather(self.city)


def run(model: str, base_url: str) -> dict:
    os.environ["ANTHROPIC_BASE_URL"] = base_url
    os.environ["ANTHROPIC_API_KEY"] = API_KEY
    llm = lm.OpenAIGPTConfig(chat_model=f"litellm/anthropic/{model}")
    agent = lr.ChatAgent(lr.ChatAgentConfig(llm=llm, system_message="You are a helpful assistant."))
    agent.enable_message(WeatherTool)
    for prompt in (TASK, FOLLOW_UP):
        task = lr.Task(agent, interactive=False, restart=False)
        task.run(prompt, turns=MAX_TURNS)
        # a non-interactive task ends when nothing answers its LLM's last message: a text answer, not a tool call
        last = agent.message_history[-1]
        if last.role != lm.Role.ASSISTANT or agent.get_tool_messages(last.content, all_tools=True):
            raise RuntimeError(f"the task ended without an answer ({MAX_TURNS} turns at most): {last.content[:200]!r}")
    # for Claude langroid's tools are JSON in the text (its default without OpenAI's tools API): count those it handled
    tools = sum(1 for m in agent.message_history
                if m.role == lm.Role.ASSISTANT and agent.get_tool_messages(m.content, all_tools=True))
    usage = LanguageModel.usage_cost_dict[agent.llm.config.chat_model]
    return {"tool_calls": tools, "record": "LanguageModel.usage_cost_dict (LLMTokenUsage)",
            "usage": {"prompt_tokens": usage.prompt_tokens, "cache_read_input_tokens": usage.cached_tokens,
                      "output_tokens": usage.completion_tokens},
            # langroid prices only the models in its table (not Sonnet 5.5): a 0.0 there is "no price", not $0
            "cost_usd": usage.cost or None}


if __name__ == "__main__":
    main(run)
