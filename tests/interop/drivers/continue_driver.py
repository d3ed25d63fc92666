"""The Continue CLI (npm ``@continuedev/cli``, ``cn``) headless (``-p``) on its default path, against plain ``serve``:
a ``config.yaml`` with one ``provider: anthropic`` model whose ``apiBase`` is serve's ``/v1/`` (Continue joins
``messages`` to it), in a throwaway ``CONTINUE_GLOBAL_DIR`` and HOME; the task, then a follow-up with ``--resume``
(its documented way to continue the last session). ``--auto`` lets its tools run unasked (headless has no one to ask).
Model: claude-sonnet-5-5.

The client's own token record: the session file Continue writes (``sessions/ID.json``), read after both turns: its
``usage`` (uncached prompt, reads, writes, output) and ``totalCost``. The cost is Continue's own price table's: on
claude-sonnet-4-6 it equals serve's ($0.0181302 against $0.01813, measured); Sonnet 5.5 is not in that table, so there
it prices the run at a few hundredths of serve's figure.

    python continue_driver.py CN_EXECUTABLE MODEL=BASE_URL
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import API_KEY, FOLLOW_UP, TASK, main

CN = sys.argv.pop(1)
TIMEOUT = 120
CONFIG = """name: interop
version: 0.0.1
schema: v1
models:
  - name: claude
    provider: anthropic
    model: {model}
    apiKey: {key}
    apiBase: {base}/v1/
    roles: [chat, edit, apply]
"""


def run(model: str, base_url: str) -> dict:
    root = Path(os.environ.get("INTEROP_WORKDIR") or tempfile.mkdtemp(prefix="interop-continue-"))
    project, home = root / "project", root / "home"
    project.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    (project / "notes.txt").write_text("The build passes.\n")
    config = root / "config.yaml"
    config.write_text(CONFIG.format(model=model, key=API_KEY, base=base_url))
    env = {**os.environ, "HOME": str(home), "CONTINUE_GLOBAL_DIR": str(home / ".continue")}
    for i, prompt in enumerate((TASK, FOLLOW_UP)):
        command = [CN, "-p", "--auto", "--config", str(config), *(["--resume"] if i else []), prompt]
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=project,
                              stdin=subprocess.DEVNULL, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"cn exited {done.returncode} on turn {i + 1}: {done.stdout[-400:]} {done.stderr[-800:]}")
    sessions = [p for p in (home / ".continue" / "sessions").glob("*.json") if p.name != "sessions.json"]
    if len(sessions) != 1:
        raise RuntimeError(f"--resume should have kept one session; Continue wrote {len(sessions)}")
    session = json.loads(sessions[0].read_text())
    usage, details = session["usage"], session["usage"].get("promptTokensDetails") or {}
    return {"tool_calls": sum(len(h["message"].get("toolCalls") or []) for h in session["history"]),
            "record": "session file's usage (sessions/ID.json)",
            # promptTokens is the uncached input: Continue keeps reads and writes apart, as the API does
            "usage": {"input_tokens": usage["promptTokens"], "output_tokens": usage["completionTokens"],
                      "cache_read_input_tokens": details.get("cachedTokens", 0),
                      "cache_creation_input_tokens": details.get("cacheWriteTokens", 0)},
            "cost_usd": usage.get("totalCost")}


if __name__ == "__main__":
    main(run)
