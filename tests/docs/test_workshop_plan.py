"""docs/workshop.md's per-chapter estimates are what benchmarks/workshop_times.py computes from the README's
chapter table (itself measured by make times): a chapter that grew makes this fail until the page is updated."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_workshop_pages_chapter_estimates_are_the_scripts_from_the_readme():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import workshop_times

    page = (ROOT / "docs" / "workshop.md").read_text()
    for row in workshop_times.chapter_rows():
        assert row in page, f"docs/workshop.md lacks {row!r}: run python benchmarks/workshop_times.py and update its table"
