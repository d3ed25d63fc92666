"""The ``opencode`` CLI (npm ``opencode-ai``), headless (``opencode run --format json``), against plain
``serve``: its anthropic provider pointed at ``BASE_URL/v1`` in the project's ``opencode.json`` (its
Anthropic client is the Vercel AI SDK's, which appends ``/messages``). A throwaway HOME and XDG
folders, sharing and updates off; two turns, the second continuing the session (``--continue``). It
also sends a title request of its own (on a small model) besides the loop.

    python opencode_driver.py OPENCODE_EXECUTABLE MODEL=BASE_URL ...
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import API_KEY, FOLLOW_UP, TASK, main

OPENCODE = sys.argv.pop(1)
TIMEOUT = 300


def run(model: str, base_url: str) -> int:
    with tempfile.TemporaryDirectory(prefix="interop-opencode-") as folder:
        root = Path(folder)
        project = root / "project"
        project.mkdir()
        (project / "notes.txt").write_text("The build passes.\n")
        (project / "opencode.json").write_text(json.dumps({
            "provider": {"anthropic": {"options": {"baseURL": f"{base_url}/v1", "apiKey": API_KEY}}},
            "share": "disabled", "autoupdate": False}))
        env = {**os.environ, "HOME": str(root), "XDG_CONFIG_HOME": str(root / ".config"),
               "XDG_DATA_HOME": str(root / ".local" / "share"),
               "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
               "PWD": str(project)}  # it takes its folder from PWD, not the working directory
        tools = 0
        for n, prompt in enumerate((TASK, FOLLOW_UP)):
            done = subprocess.run([OPENCODE, "run", prompt, "--model", f"anthropic/{model}", "--format", "json",
                                   *(["--continue"] if n else [])], cwd=project, env=env, capture_output=True,
                                  text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            errors = [e for e in events if e.get("type") == "error"]
            if done.returncode != 0 or errors or not any(e.get("type") == "step_finish" for e in events):
                raise RuntimeError(f"turn {n + 1}: exit {done.returncode}, {str(errors)[:300]} {done.stderr[-300:]}")
            tools += sum(1 for e in events if e.get("type") == "tool_use")
        return tools


if __name__ == "__main__":
    main(run)
