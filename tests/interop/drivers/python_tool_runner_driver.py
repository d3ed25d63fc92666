"""The Python SDK's tool runner, ``client.beta.messages.tool_runner(...)``, as its docstring shows it:
message threads on (the default), iterated until the model stops calling tools. The policy serving
it calls four tools in a row, so each run is a create and four continues.

``INTEROP_MODE`` (set by the suite) adds the recoveries of API-2026.md §11.8, each in a run of its own:
``recovery``: a system with four ``cache_control`` blocks (``thread_unsupported_request``: the runner
goes on without a thread), and a tool that outlasts ``serve --thread-ttl`` once (``thread_not_found``:
the runner replays the history under a new thread); ``retry``: the plain run against ``serve
--faults``, with ``max_retries`` raised as the SDK's README shows (the seeded faults never come more
than four in a row)."""

import os
import time

import anthropic
from anthropic import beta_tool
from common import API_KEY, TASK, main, weather

MODE = os.environ.get("INTEROP_MODE", "plain")
OUTLAST = float(os.environ.get("INTEROP_OUTLAST", "4"))  # seconds: longer than serve's --thread-ttl
MARKED = [{"type": "text", "text": f"Rule {i}: answer briefly. " * 30, "cache_control": {"type": "ephemeral"}}
          for i in range(4)]


def tools(calls: list, slow_once: bool = False):
    @beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city's name
        """
        calls.append(city)
        if slow_once and len(calls) == 2:
            time.sleep(OUTLAST)  # the thread expires meanwhile
        return weather(city)
    return [get_weather]


def conversation(client, model: str, **kw) -> int:
    calls: list = []
    slow = kw.pop("slow_once", False)
    runner = client.beta.messages.tool_runner(model=model, max_tokens=4096, tools=tools(calls, slow),
                                              messages=[{"role": "user", "content": TASK}], **kw)
    for message in runner:
        last = message
    if last.stop_reason != "end_turn":
        raise RuntimeError(f"the runner ended on {last.stop_reason}")
    return len(calls)


def run(model: str, base_url: str) -> int:
    client = anthropic.Anthropic(api_key=API_KEY, base_url=base_url, max_retries=6 if MODE == "retry" else 2)
    calls = conversation(client, model)
    if MODE == "recovery":
        calls += conversation(client, model, system=MARKED)
        calls += conversation(client, model, slow_once=True)
    return calls


if __name__ == "__main__":
    main(run)
