"""The ``cline`` CLI (npm), headless with ``--json``, against plain ``serve``: its anthropic provider
pointed at ``BASE_URL/v1`` (Cline's Anthropic client is the Vercel AI SDK's, which appends
``/messages``), through its own settings file, as ``cline auth`` writes it (``auth -b`` takes a base
URL only for OpenAI-compatible providers). A throwaway HOME and data folder; the run passes when
Cline reports ``finishReason: completed``.

    python cline_driver.py CLINE_EXECUTABLE MODEL=BASE_URL ...
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import API_KEY, TASK, main

CLINE = sys.argv.pop(1)
TIMEOUT = 300


def run(model: str, base_url: str) -> int:
    with tempfile.TemporaryDirectory(prefix="interop-cline-") as folder:
        root = Path(folder)
        project, data = root / "project", root / "data"
        (data / "settings").mkdir(parents=True)
        project.mkdir()
        (project / "notes.txt").write_text("The build passes.\n")
        # the file as cline auth writes it, every field: one it cannot read it rewrites, base URL dropped
        (data / "settings" / "providers.json").write_text(json.dumps({"version": 1, "lastUsedProvider": "anthropic", "modes": {}, "providers": {
            "anthropic": {"settings": {"provider": "anthropic", "model": model, "baseUrl": f"{base_url}/v1",
                                       "apiKey": API_KEY}, "updatedAt": "2026-12-01T00:00:00.000Z", "tokenSource": "manual"}}}))
        done = subprocess.run([CLINE, TASK, "--json", "-c", str(project), "--config", str(root / "config"),
                               "--data-dir", str(data), "-P", "anthropic", "-m", model, "--retries", "3"],
                              capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
                              env={**os.environ, "HOME": str(root)})
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        result = next((e for e in events if e.get("type") == "run_result"), {})
        if done.returncode != 0 or result.get("finishReason") != "completed":
            raise RuntimeError(f"exit {done.returncode}, finishReason {result.get('finishReason')!r}: "
                               f"{str(result.get('text'))[:300]} {done.stderr[-300:]}")
        return sum(1 for e in events if (e.get("event") or {}).get("type") == "content_start"
                   and e["event"].get("contentType") == "tool")


if __name__ == "__main__":
    main(run)
