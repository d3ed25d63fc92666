"""The held-out seeds' figures of chapters 04, 05, 07 and 08 (seeds 5-9), measured by the chapters themselves.

    .venv/bin/python benchmarks/held_out.py        # executes the four notebooks, writes benchmarks/held_out.json

Each notebook runs whole, offline, on the solutions, with ``HELD_OUT_RUN`` set: its ``held_out(label,
measure)`` calls (``minimal_runtime/example/held_out.py``) then run the chapter's own code on the
held-out seeds and record the figures, which this script keeps (``KEPT``). `make test` reads them
instead of rerunning them; ``tests/course/test_kept_figures.py`` reruns this script (``-m slow``, in
.ci/run) and compares. The simulated rules draw their coins from the seeds: a rerun writes the same file.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minimal_runtime.example.held_out import KEPT  # noqa: E402

CHAPTERS = ["04_plan", "05_budget", "07_knowledge_manager", "08_drift"]


def measure(chapters: list[str] = CHAPTERS) -> dict:
    """Every held-out figure the chapters record, by label: the kept file's ``figures``."""
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "held_out.json"
        # the kernels inherit this: offline, the solutions, and where to record (the project first on the path)
        env = {"HELD_OUT_RUN": str(record), "COURSE_IMPL": "solutions", "COURSE_BACKEND": "emulator",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            for name in chapters:
                path = ROOT / "chapters" / f"{name}.ipynb"
                notebook = nbformat.read(path, as_version=4)
                NotebookClient(notebook, timeout=3600, kernel_name="python3",
                               resources={"metadata": {"path": str(path.parent)}}).execute()
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        return json.loads(record.read_text())


def text(data: dict) -> str:
    """The kept file's bytes for ``data`` (one writer, so a test can compare them)."""
    return json.dumps(data, indent=1) + "\n"


def main() -> None:
    started = time.perf_counter()
    data = {"made by": ".venv/bin/python benchmarks/held_out.py", "seeds": [5, 6, 7, 8, 9], "figures": measure()}
    KEPT.write_text(text(data))
    print(f"{len(data['figures'])} held-out figures of chapters {', '.join(c[:2] for c in CHAPTERS)} "
          f"in {time.perf_counter() - started:.0f} s: wrote {KEPT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
