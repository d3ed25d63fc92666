"""A stream-json file several headless runs were appended to (``claude -p ... >> log``, ``tee -a``):
each run up to its ``result`` event is a run of its own, compared with its own result (read as one
run, it was compared with the last result only: +536% on one public log)."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.replay import load, replay, table
from minimal_runtime.replay.current import write_current


def test_several_sessions_in_one_stream_json_file_are_several_runs_each_with_its_own_result(tmp_path):
    logs = [write_current(tmp_path / str(k), model, rounds=rounds, hidden_tokens=2_000)["stream"]
            for k, (model, rounds) in enumerate([("claude-sonnet-4-6", 4), ("claude-sonnet-4-6", 6),
                                                 ("claude-opus-4-6", 5)])]
    appended = tmp_path / "agent_log_raw.txt"
    appended.write_text("".join(p.read_text() for p in logs))
    alone = [[r for r in load(p) if "#subagent" not in r.path] for p in logs]
    runs = [r for r in load(appended) if "#subagent" not in r.path]
    assert [r.path.rsplit("#", 1)[-1] for r in runs] == ["session-1", "session-2", "session-3"]
    results = [json.loads(p.read_text().splitlines()[-1]) for p in logs]
    for run, (own,), result in zip(runs, alone, results):
        assert run.cost_usd == pytest.approx(result["total_cost_usd"]) and len(run.calls) == len(own.calls)
        assert run.model == own.model
        recorded = replay(run, "recorded")
        assert recorded.cost == pytest.approx(replay(own, "recorded").cost, rel=1e-6)
        assert f"${result['total_cost_usd']:.4f}" in table(run, [recorded])
    assert sum(r.cost_usd for r in runs) == pytest.approx(sum(r["total_cost_usd"] for r in results))
