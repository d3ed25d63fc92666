"""What every driver shares: the task, the tool, the command line, the result line.

A driver runs in the suite's own venv (the pinned clients), never imports the course's code, and
for each ``MODEL=BASE_URL`` argument holds one conversation: a task that the emulator's policy
answers with two tool rounds, then a follow-up turn (two more). It prints one JSON line per model:
``{"model", "ok", "error", "tool_calls", "seconds"}``; an exception is reported, never raised past the model.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Callable

TASK = "What is the weather in the two cities I care about? Use the tool."
FOLLOW_UP = "And tomorrow?"
TOOL_NAME = "get_weather"
TOOL_DESCRIPTION = "The weather in a city."
TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
API_KEY = "sk-ant-offline-interop"


def weather(city: str) -> str:
    return f"sunny in {city}"


def main(run: Callable[[str, str], int | dict]) -> None:
    """``run(model, base_url)`` holds the conversation and returns how many tools it ran (or a dict, above)."""
    failed = False
    for arg in sys.argv[1:]:
        model, _, base_url = arg.partition("=")
        started = time.perf_counter()
        try:
            ran = run(model, base_url)
            result = {"model": model, "ok": True, "error": None,
                      **(ran if isinstance(ran, dict) else {"tool_calls": ran})}
        except BaseException as e:  # noqa: BLE001 - the suite reads and reports every failure
            failed = True
            result = {"model": model, "ok": False, "error": f"{type(e).__name__}: {e}",
                      "traceback": traceback.format_exc()[-3000:], "tool_calls": None}
        result["seconds"] = time.perf_counter() - started  # the conversation, not the client's import
        print(json.dumps(result), flush=True)
    sys.exit(1 if failed else 0)
