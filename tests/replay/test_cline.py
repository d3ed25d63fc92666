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
    assert f"the log's own cost (its api_req_started costs, summed): ${run.cost_usd:.4f}" in table(run, results)


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


def test_a_request_without_usage_in_the_middle_replays_and_the_index_convention_is_clines(tasks, tmp_path, capsys):
    """Cline's ``conversationHistoryIndex`` is the history's length minus one when the request was
    said, before its user message joined: -1, 1, 3, ... (read with the index minus one, every call
    but the first had no usage). A request with no usage (cancelled before any) leaves its call
    without: ``recorded`` once crashed there (it checked the call before's usage, not the call's)."""
    (run,) = load(tasks["native"])
    ui = json.loads(tasks["native"].with_name("ui_messages.json").read_text())
    assert [m["conversationHistoryIndex"] for m in ui if m.get("say") == "api_req_started"][:3] == [-1, 1, 3]
    assert all(c.usage for c in run.calls)
    folder = tmp_path / "cancelled"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(tasks["native"].read_text())
    started = [m for m in ui if m.get("say") == "api_req_started"]
    started[2]["text"] = json.dumps({"request": "[cut]", "cancelReason": "user_cancelled"})
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    (cut,) = load(folder / "api_conversation_history.json")
    assert cut.calls[2].usage is None and all(c.usage for k, c in enumerate(cut.calls) if k != 2)
    assert replay(cut, "recorded").finished


def test_the_file_mode_exits_1_when_a_replay_stopped_on_the_way(tasks, monkeypatch, capsys):
    from minimal_runtime.__main__ import main
    from minimal_runtime.replay import driver

    def broken(*args, **kwargs):
        raise RuntimeError("a shape nothing foresaw")
    monkeypatch.setattr(driver.Agent, "run", broken)
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(tasks["native"]), "--plot", "none", "--strategy", "tail", "--strategy", "early"])
    assert stopped.value.code == 1 and "stopped at call 1" in capsys.readouterr().out
