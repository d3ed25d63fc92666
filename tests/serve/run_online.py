"""``make online``: every notebook and the demo on the course's online path, against ``serve``.

A learner with a key sets ``COURSE_BACKEND=api`` (and maybe ``ANTHROPIC_BASE_URL``); nothing else
ever runs that path. Here ``serve`` stands in for the real API on loopback, so each notebook runs
through the same code a learner with a key runs: a plain ``anthropic.Anthropic`` built from the
environment. The figures differ from the committed ones (the behaviour is serve's SIMULATED default
policy, not the notebooks' own simulated policies), so outputs are not compared; a notebook passes
when every cell runs. The executed copies go to a temporary folder: the committed notebooks are
not touched. Prints one line per notebook and serve's summary; exits 1 if any failed.

    .venv/bin/python tests/serve/run_online.py [chapters/03_hooks.ipynb ...]
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started

ROOT = Path(__file__).resolve().parents[2]


def run(notebook: Path, folder: Path) -> tuple[bool, str]:
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}})
    try:
        client.execute()
    except CellExecutionError as e:
        failed = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        name = getattr(e, "ename", "") or "error"
        value = " ".join(str(getattr(e, "evalue", "")).split())[:300]
        return False, f"cell {failed}: {name}: {value}"
    finally:
        nbformat.write(nb, folder / notebook.name)
    return True, "ran to the end"


def main(paths: list[str]) -> int:
    notebooks = [Path(p).resolve() for p in paths] or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    calls = io.StringIO()
    folder = Path(tempfile.mkdtemp(prefix="online-"))
    failures = 0
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer()), out=calls) as (url, front):
        os.environ.update(COURSE_BACKEND="api", ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="dummy-online-path")
        print(f"serve at {url}; executed notebooks go to {folder}", flush=True)
        from minimal_runtime.example.demo import DemoFailed, run_demo
        try:
            run_demo(out=io.StringIO())
            print("demo: ran to the end", flush=True)
        except DemoFailed as e:
            failures += 1
            print(f"demo: FAILED: {e}", flush=True)
        for notebook in notebooks:
            before, start = len(front.lines), time.monotonic()
            ok, what = run(notebook, folder)
            failures += not ok
            print(f"{notebook.name}: {'ok' if ok else 'FAILED'} ({len(front.lines) - before} calls, "
                  f"{time.monotonic() - start:.0f} s): {what}", flush=True)
    (folder / "calls.txt").write_text(calls.getvalue())
    print(front.report.summary())
    print(f"per-call lines: {folder / 'calls.txt'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
