"""Each format's ``recorded`` row prices the log as the log priced itself (issue 62 items 2-4, 9-12,
14): within 5% of the log's own cost wherever the log carries one, each departure said."""

from __future__ import annotations


import pytest

from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import table
from tests.replay.cli_logs import write_mini_swe_agent


@pytest.mark.parametrize("usage_style", ["anthropic", "openai", "deepseek"])
def test_mini_swe_agent_recorded_bills_what_the_log_billed_its_misses_included(tmp_path, usage_style):
    (run,) = load(write_mini_swe_agent(tmp_path, usage_style, miss_every=3))
    assert all(c.usage.cache_read is not None for c in run.calls)  # each provider's cache figures read
    if usage_style == "anthropic":
        assert sum(c.usage.cache_write for c in run.calls) > 0
    recorded = replay(run, "recorded")
    assert recorded.cost == pytest.approx(run.cost_usd, rel=0.05)
    assert any("the log missed the cache" in n for n in recorded.notes)


def test_a_mini_swe_agent_trajectory_that_counts_more_calls_than_it_shows_says_so(tmp_path):
    (run,) = load(write_mini_swe_agent(tmp_path, "deepseek", dropped=3))
    shown = len(run.calls)
    assert any(f"counts {shown + 3} calls (info.model_stats.api_calls) and shows {shown}" in n for n in run.notes)
    assert f"counts {shown + 3} calls" in table(run, [replay(run, "recorded")])


def test_recorded_does_not_say_it_departs_where_it_billed_the_log_s_own_split(tmp_path):
    path = write_mini_swe_agent(tmp_path, "anthropic", miss_every=3)
    (run,) = load(path)
    text = table(run, [replay(run, "recorded")])
    assert "the log missed the cache" in text and "recorded departs" not in text
