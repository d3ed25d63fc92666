"""Simon Willison's ``llm`` 0.36 with the llm-anthropic 0.30 plugin, as its docs use tools from the
command line: ``llm -m MODEL --functions CODE PROMPT``, then ``llm -c --functions CODE PROMPT`` (the
same conversation, a second user turn); the plugin's Anthropic SDK pointed at serve by
``ANTHROPIC_BASE_URL``, its key by ``LLM_ANTHROPIC_KEY``, its files in the run's own folder (``LLM_USER_PATH``).

Model: claude-sonnet-5-5, which the plugin registers (``claude-sonnet-5.5``) with no network.
Its own record: the logs database it writes every model call to (``logs.db``; in 0.36's schema the table
``turns``: ``input_tokens``, ``output_tokens``, and ``token_details``, with the cache's counts only where
prompt caching was asked for, so by default input and output tokens).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from common import API_KEY, FOLLOW_UP, TASK, main

FUNCTIONS = '''
def get_weather(city: str) -> str:
    "The weather in a city."
    return f"sunny in {city}"
'''


def run(model: str, base_url: str) -> dict:
    work = Path(os.environ.get("INTEROP_WORKDIR", "."))
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "LLM_ANTHROPIC_KEY": API_KEY, "LLM_USER_PATH": str(work)}
    llm = Path(sys.executable).parent / "llm"
    alias = model.replace("-5-5", "-5.5")
    for turn in (["-m", alias, TASK], ["-c", FOLLOW_UP]):
        done = subprocess.run([str(llm), *turn[:-1], "--functions", FUNCTIONS, turn[-1]], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"llm exited {done.returncode}: {done.stdout[-1500:]} {done.stderr[-2000:]}")
    with sqlite3.connect(work / "logs.db") as db:  # 0.36's schema: a model call is a row of ``turns``
        rows = db.execute("select input_tokens, output_tokens, token_details from turns").fetchall()
        tools = db.execute("select count(*) from parts where type = 'tool_result'").fetchone()[0]
    details = [json.loads(d) if d else {} for _, _, d in rows]
    usage = {"input_tokens": sum(r[0] for r in rows), "output_tokens": sum(r[1] for r in rows)}
    if any("cache_read_input_tokens" in d for d in details):
        usage |= {k: sum(d.get(k) or 0 for d in details) for k in ("cache_read_input_tokens", "cache_creation_input_tokens")}
    return {"tool_calls": tools, "usage": usage, "record": "logs.db: turns.input_tokens, output_tokens, token_details"}


if __name__ == "__main__":
    main(run)
