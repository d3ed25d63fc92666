"""The real logs in ../shared/data/trajectories (not part of the project: skipped when absent):
every one imports and replays, and where a log reports its own cache reads, the `recorded`
replay lands within 3 points of them."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from minimal_runtime.replay.pricing import priced
from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import usage_bill

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories"
LOGS = sorted(DATA.glob("*.json*")) if DATA.is_dir() else []


@pytest.mark.skipif(not LOGS, reason=f"no real trajectories at {DATA}")
@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:40])
def test_a_real_log_imports_replays_and_the_recorded_layout_matches_its_cache_reads(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # logs of models the table does not know are priced as Sonnet 4.6
        runs = load(path)
        for run in runs:
            replayed = replay(run, "recorded", model=None if priced(run.model) else "claude-sonnet-4-6")
            assert len(replayed.calls) == len(run.calls), replayed.notes
            assert not any(n.startswith("stopped") for n in replayed.notes), replayed.notes
            usages = [c.usage for c in run.calls if c.usage]
            if len(run.calls) >= 5 and usages and all(u.cache_read is not None for u in usages):
                logged = sum(u.cache_read for u in usages) / sum(u.prompt_tokens for u in usages)
                assert abs(replayed.cache_read_share - logged) <= 0.03, (run.path, logged, replayed.cache_read_share)


@pytest.mark.skipif(not LOGS, reason=f"no real trajectories at {DATA}")
def test_recorded_reprices_each_real_log_within_5_percent_of_its_own_bill(capsys):
    """Calibrated tokens (``replay.calibration``): the `recorded` replay's cost against the cost of
    the log's own usage, for every shared log that records cache usage. Both figures are printed."""
    lines, off = [], []
    for path in LOGS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for run in load(path):
                usages = [c.usage for c in run.calls if c.usage]
                if not usages or any(u.cache_read is None for u in usages):
                    continue
                model = None if priced(run.model) else "claude-sonnet-4-6"
                replayed = replay(run, "recorded", model=model)
                logged = usage_bill(run if model is None else run.model_copy(update={"model": model}))
                gap = replayed.cost / logged - 1
                lines.append(f"{Path(run.path).name[:60]:<60} log ${logged:8.3f}  recorded ${replayed.cost:8.3f}  "
                             f"{gap:+6.1%}")
                if abs(gap) > 0.05:
                    off.append(lines[-1])
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert lines and not off, off


STREAMS = [p for p in LOGS if '"type":"result"' in p.read_text(encoding="utf-8").replace(" ", "")]


@pytest.mark.skipif(not STREAMS, reason=f"no stream-json logs with a result event at {DATA}")
def test_recorded_is_within_5_percent_of_each_stream_logs_own_total_cost(capsys):
    """The figure nothing was fit to: the log's own ``total_cost_usd`` (the calibration reads the
    calls' prompt sizes; the output comes from ``modelUsage``'s tokens; the prices are our table's).
    Where the log's own cost prices 1-hour writes at the 5-minute rate, the replay is priced so too
    for the comparison, and both figures are printed."""
    from minimal_runtime.replay.report import at_five_minute_rate, prices_one_hour_as_five_minutes
    lines, off = [], []
    for path in STREAMS:
        runs = load(path)
        replays = [replay(run, "recorded") for run in runs]
        bill = sum(r.cost for r in replays)
        compared = sum(at_five_minute_rate(r) for r in replays) if prices_one_hour_as_five_minutes(runs[0]) else bill
        gap = compared / runs[0].cost_usd - 1
        lines.append(f"{path.name[:60]:<60} own ${runs[0].cost_usd:7.3f}  usage ${usage_bill(runs[0]):7.3f}  "
                     f"recorded ${bill:7.3f}  compared ${compared:7.3f} {gap:+6.1%}")
        if abs(gap) > 0.05:
            off.append(lines[-1])
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert not off, off
