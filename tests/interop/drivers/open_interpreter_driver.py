"""open-interpreter's ``interpreter.chat`` on its default path (LiteLLM's Anthropic route, ``interpreter.llm.api_base``
set to serve), against plain ``serve``: ``auto_run`` on, so that its own loop runs the code the model writes; two
user turns in one conversation (``interpreter.messages`` kept between ``chat`` calls, as its docs show).

Model: claude-sonnet-4-6. open-interpreter picks its tool-calling mode by ``litellm.supports_function_calling``,
which reads LiteLLM's bundled model table (offline): a model missing there gets the text mode (markdown code blocks).

The client's own token record: open-interpreter keeps none of the API's usage (its ``%tokens`` is an estimate from a
tokenizer); the usage LiteLLM returns for each streamed call, read by a LiteLLM success callback (the library it
calls the API through), is what is compared."""

from __future__ import annotations

import os

os.environ.setdefault("DISABLE_TELEMETRY", "true")

import litellm  # noqa: E402
from common import API_KEY, FOLLOW_UP, TASK, main  # noqa: E402
from interpreter import interpreter  # noqa: E402
from litellm.litellm_core_utils.thread_pool_executor import executor  # noqa: E402


def run(model: str, base_url: str) -> dict:
    by_id: dict[str, dict] = {}

    def record(kwargs, response, start, end) -> None:  # LiteLLM's custom callback signature
        usage = getattr(response, "usage", None)
        if usage is not None:  # keyed by the response's id: LiteLLM reports a streamed call more than once
            by_id[response.id] = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)

    litellm.success_callback = [record]
    interpreter.auto_run = True
    interpreter.llm.model = f"anthropic/{model}"
    interpreter.llm.api_key = API_KEY
    interpreter.llm.api_base = base_url
    os.chdir(os.environ.get("INTEROP_WORKDIR") or os.getcwd())  # the code it runs writes nothing outside
    for prompt in (TASK, FOLLOW_UP):
        interpreter.chat(prompt, display=False)
    executor.shutdown(wait=True)  # LiteLLM runs a stream's success callbacks on this pool: the last may still be queued
    calls = list(by_id.values())
    code_runs = sum(1 for m in interpreter.messages if m.get("type") == "code")
    return {"tool_calls": code_runs, "record": "LiteLLM success callback, response usage per call",
            "usage": {"input_tokens": sum(c.get("prompt_tokens", 0) - (c.get("cache_read_input_tokens") or 0)
                                          - (c.get("cache_creation_input_tokens") or 0) for c in calls),
                      "output_tokens": sum(c.get("completion_tokens", 0) for c in calls),
                      "cache_read_input_tokens": sum(c.get("cache_read_input_tokens") or 0 for c in calls),
                      "cache_creation_input_tokens": sum(c.get("cache_creation_input_tokens") or 0 for c in calls)},
            "cost_usd": None, "calls": len(calls), "function_calling": interpreter.llm.supports_functions}


if __name__ == "__main__":
    main(run)
