"""docs/replay.md's table of formats holds what the fixtures measure (issue 62): each format's
``recorded`` row against the log's own cost, printed by ``tests/replay/formats_table.py``."""

from __future__ import annotations

from pathlib import Path

from tests.replay.formats_table import ABOUT, measure, render

PAGE = Path(__file__).resolve().parents[2] / "docs" / "replay.md"


def test_the_page_holds_the_measured_table_and_every_priced_format_is_within_5_percent():
    measured = measure()
    assert render(measured) in PAGE.read_text()
    assert [row[0] for row in measured] == list(ABOUT)
    for name, _, _, own, usage in measured:
        for share in (own, usage):
            assert share == "n/a" or abs(float(share.rstrip("%"))) <= 5.0, (name, share)
