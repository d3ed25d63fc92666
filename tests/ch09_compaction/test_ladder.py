"""Chapter 09: the ladder compacts before it summarizes, and summarizes only when compacting stops paying."""

from __future__ import annotations


def step(impl, tokens, limit, compactable, last_gain, min_gain=0.2):
    return impl.ladder_step(tokens, limit, compactable=compactable, last_gain=last_gain, min_gain=min_gain)


def test_the_ladder_waits_under_its_limit(impl):
    assert (got := step(impl, 9_999, 10_000, 40, None)) == "wait", f"under the limit: 'wait', not {got!r}"


def test_the_ladder_compacts_first_and_while_it_pays(impl):
    assert (got := step(impl, 10_000, 10_000, 40, None)) == "compact", \
        f"at the limit with calls to compact and no compaction yet: 'compact', not {got!r}"
    assert (got := step(impl, 12_000, 10_000, 20, 0.35)) == "compact", \
        f"the last compaction freed 35% (over min_gain 20%): 'compact', not {got!r}"
    assert (got := step(impl, 12_000, 10_000, 20, 0.2)) == "compact", \
        f"the last compaction freed exactly min_gain (at least min_gain pays): 'compact', not {got!r}"


def test_the_ladder_summarizes_at_diminishing_returns_or_with_nothing_left(impl):
    assert (got := step(impl, 12_000, 10_000, 20, 0.05)) == "summarize", \
        f"the last compaction freed 5% (under min_gain 20%): 'summarize', not {got!r}"
    assert (got := step(impl, 12_000, 10_000, 0, None)) == "summarize", f"no call left to compact: 'summarize', not {got!r}"
