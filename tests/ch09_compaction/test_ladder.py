"""Chapter 09: the ladder compacts before it summarizes, and summarizes only when compacting stops paying."""

from __future__ import annotations


def test_the_ladder_waits_under_its_limit(impl):
    assert impl.ladder_step(9_999, 10_000, compactable=40, last_gain=None, min_gain=0.2) == "wait"


def test_the_ladder_compacts_first_and_while_it_pays(impl):
    assert impl.ladder_step(10_000, 10_000, compactable=40, last_gain=None, min_gain=0.2) == "compact"
    assert impl.ladder_step(12_000, 10_000, compactable=20, last_gain=0.35, min_gain=0.2) == "compact"
    assert impl.ladder_step(12_000, 10_000, compactable=20, last_gain=0.2, min_gain=0.2) == "compact"


def test_the_ladder_summarizes_at_diminishing_returns_or_with_nothing_left(impl):
    assert impl.ladder_step(12_000, 10_000, compactable=20, last_gain=0.05, min_gain=0.2) == "summarize"
    assert impl.ladder_step(12_000, 10_000, compactable=0, last_gain=None, min_gain=0.2) == "summarize"
