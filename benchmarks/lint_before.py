"""The knowledge manager's lint as it was before issue 61 (commit ``BEFORE``), on chapter 07's spellings:
which lines it refused. Chapter 07's table shows it beside the lint as it is, so "before and after" is
measured, not remembered. The old code is taken from git (``git archive``) into a temporary folder and
run in a subprocess of its own; the figures go to ``lint_before.json``, which the chapter reads (``make
bench`` writes it; ``tests/course/test_kept_figures.py`` checks it against a fresh run where git history is
there)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minimal_runtime.example.spellings import SPELLINGS  # noqa: E402

BEFORE = "4f59aa5"  # main before this round's hostile-input work
KEPT = Path(__file__).with_name("lint_before.json")
RUN = ("import json, sys\nfrom minimal_runtime.features.knowledge import lint\n"
       "print(json.dumps({name: bool(lint(line)) for name, line in json.load(sys.stdin)}))")


def measure() -> dict:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", BEFORE, "minimal_runtime"], capture_output=True,
                             check=True).stdout
    with tempfile.TemporaryDirectory() as old:
        tarfile.open(fileobj=io.BytesIO(archive)).extractall(old, filter="data")
        answer = subprocess.run([sys.executable, "-c", RUN], input=json.dumps(SPELLINGS), capture_output=True,
                                text=True, check=True, cwd=old, env={**os.environ, "PYTHONPATH": old})
    return {"commit": BEFORE, "refused": json.loads(answer.stdout)}


def text(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    data = measure()
    KEPT.write_text(text(data))
    print(f"{sum(data['refused'].values())} of {len(data['refused'])} spellings refused by the lint at {BEFORE}: {KEPT}")
