"""Cline's task folders (``replay/cline.py``), generated at test time (``cline_logs.py``): the
conversation in the Messages API's format, the usage and cost per request in the UI file beside it,
priced and replayed under every strategy."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.replay import STRATEGIES, TrajectoryError, calibrate, load, replay, table
from tests.replay.cline_logs import write_cline


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("cline")
    return {"native": write_cline(root / "native", "claude-sonnet-4-6"),
            "xml": write_cline(root / "xml", "claude-sonnet-4-6", native_tools=False)}


@pytest.mark.parametrize("kind", ["native", "xml"])
def test_a_cline_task_imports_with_the_usage_of_its_ui_file(tasks, kind):
    (run,) = load(tasks[kind])
    ui = json.loads(tasks[kind].with_name("ui_messages.json").read_text())
    requests = [json.loads(m["text"]) for m in ui if m.get("say") == "api_req_started"]
    assert run.source == "cline" and run.model == "claude-sonnet-4-6" and len(run.calls) == len(requests)
    assert [c.usage.prompt_tokens for c in run.calls] == [r["tokensIn"] + r["cacheWrites"] + r["cacheReads"]
                                                           for r in requests]
    assert [c.usage.output_tokens for c in run.calls] == [r["tokensOut"] for r in requests]
    assert run.cost_usd == pytest.approx(sum(r["cost"] for r in requests))
    assert bool(run.tools) == (kind == "native")  # XML tool calls are text to the replay


@pytest.mark.parametrize("kind", ["native", "xml"])
def test_every_strategy_replays_a_cline_task_and_recorded_prices_it_near_its_own_cost(tasks, kind):
    (run,) = load(tasks[kind])
    calibration = calibrate(run)
    results = [replay(run, name, calibration=calibration) for name in STRATEGIES]
    for r in results:
        assert r.finished and len(r.calls) == len(run.calls), (r.strategy, r.stopped)
    recorded = results[0]
    assert recorded.cost == pytest.approx(run.cost_usd, rel=0.05)
    assert f"the log's own total_cost_usd: ${run.cost_usd:.4f}" in table(run, results)


def test_the_other_files_of_a_task_say_what_they_are_and_a_history_alone_replays_on_estimates(tasks, tmp_path):
    folder = tasks["native"].parent
    for name in ("ui_messages.json", "task_metadata.json"):
        with pytest.raises(TrajectoryError, match="part of a Cline task folder"):
            load(folder / name)
    alone = tmp_path / "api_conversation_history.json"
    alone.write_text(tasks["native"].read_text())
    (run,) = load(alone)
    assert all(c.usage is None for c in run.calls) and any("no ui_messages.json" in n for n in run.notes)
    assert replay(run, "recorded").finished


def test_a_bad_number_in_the_ui_file_names_the_file_and_the_message(tasks, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(tasks["native"].read_text())
    ui = json.loads(tasks["native"].with_name("ui_messages.json").read_text())
    request = next(m for m in ui if m.get("say") == "api_req_started")
    request["text"] = json.dumps({**json.loads(request["text"]), "cacheReads": -5})
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    with pytest.raises(TrajectoryError, match=r"ui_messages.json: ui message 2 \(api_req_started\).cacheReads is -5"):
        load(folder / "api_conversation_history.json")
