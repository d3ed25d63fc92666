"""The figures of chapters 04, 05, 07 and 08 on their held-out seeds (5-9), kept in a file.

A chapter's verdict is picked on seeds 0-4 and judged again on seeds 5-9. Those reruns cost more
than the rest of the four chapters' main paths together, and `make test` checks every notebook on
every run, so they are measured by ``benchmarks/held_out.py``, which executes the notebooks with
``HELD_OUT_RUN`` naming a file: there each ``held_out`` call runs the chapter's own ``measure`` and
records what it returns. Everywhere else the call reads ``benchmarks/held_out.json``, the kept
record; ``tests/course/test_kept_figures.py`` holds it to a rerun (``-m slow``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

KEPT = Path(__file__).resolve().parents[2] / "benchmarks" / "held_out.json"
WHERE = "kept: benchmarks/held_out.json, by benchmarks/held_out.py"  # what a chapter prints beside the figures


def held_out(label: str, measure: Callable[[], Any]) -> Any:
    """The figures recorded as ``label``: ``measure()`` when benchmarks/held_out.py runs the chapter
    or the kept record has no such label (a chapter's length set by hand), else the kept record's.
    Either way as JSON gives them back (a dict's keys are strings: chapters pass pairs where a key is
    a number)."""
    into = os.environ.get("HELD_OUT_RUN")
    kept = {} if into else json.loads(KEPT.read_text())["figures"]
    if label in kept:
        return kept[label]
    figures = json.loads(json.dumps(measure()))
    if into:
        record = Path(into)
        recorded = json.loads(record.read_text()) if record.exists() else {}
        record.write_text(json.dumps({**recorded, label: figures}))
    return figures
