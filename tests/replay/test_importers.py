"""Importers: one fixture per format (made by the project), compaction and multi-line calls,
skipped lines counted, malformed input named by file and line."""

from __future__ import annotations

import json
import tempfile

import pytest

from minimal_runtime.replay import STRATEGIES, TrajectoryError, load, replay, rows
from minimal_runtime.replay.samples import write_samples


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return write_samples(tmp_path_factory.mktemp("samples"))


@pytest.mark.parametrize("fmt", ["claude-code", "claude-code-stream", "mini-swe-agent", "openhands"])
def test_every_format_imports_the_whole_run(samples, fmt):
    (run,) = load(samples[fmt])
    assert run.source == fmt and len(run.calls) == 14
    assert run.task[0]["text"].startswith("Compare the pricing pages")
    assert {"fetch", "browse", "write_file", "message_user"} <= set(run.tools)
    results = sum(len(c.results) for c in run.calls)
    assert results == 13  # every tool call answered; the last call is the final answer
    assert all(c.usage and c.usage.prompt_tokens > 0 for c in run.calls)
    failed = [r for c in run.calls for r in c.results.values() if "404" in str(r.get("content"))]
    assert len(failed) == 1


def test_claude_code_groups_lines_by_message_id_and_marks_the_compaction(samples):
    (run,) = load(samples["claude-code"])
    multi = [c for c in run.calls if len(c.assistant["content"]) > 1]
    assert len(multi) == 13  # text + tool_use, logged as two lines each, are one call
    assert [k for k, c in enumerate(run.calls) if c.compacted_before] == [7]
    assert run.skipped == {"progress": 1, "file-history-snapshot": 14, "compact_boundary": 1}
    assert run.calls[5].at - run.calls[3].at == 380  # the six-minute pause is in the times


def test_cache_figures_where_the_log_has_them(samples):
    (cc,) = load(samples["claude-code"])
    (swe,) = load(samples["mini-swe-agent"])
    assert cc.calls[3].usage.cache_read > 0 and cc.calls[3].usage.cache_write is not None
    assert swe.calls[3].usage.cache_read > 0 and swe.calls[3].usage.cache_write is None  # DeepSeek reports hits only
    assert swe.cost_usd == 0.01


# the OpenHands sample runs a model the table does not know, on purpose (a strategy that needs one says so,
# below): the warning that names it is expected here, not news for whoever reads make test's output
@pytest.mark.filterwarnings("ignore:model 'llama-4-maverick' is not in the model table")
def test_replay_runs_every_strategy_over_every_format(samples):
    for fmt, path in samples.items():
        (run,) = load(path)
        results = [replay(run, name) for name in STRATEGIES]
        for r in results:  # a strategy the model cannot take says so instead of replaying
            assert len(r.calls) == 14 or (not r.calls and "needs a model" in r.notes[0]), (fmt, r.strategy, r.notes)
        by_name = {r.strategy: r for r in results}
        assert by_name["early"].cache_read_share < by_name["tail"].cache_read_share
        table = rows(run, results)
        assert table[0]["strategy"] == "the log itself" and len(table) == 1 + len(STRATEGIES)


def test_a_replay_leaves_no_folder_behind(samples, tmp_path, monkeypatch):
    (run,) = load(samples["claude-code"])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where mkdtemp and TemporaryDirectory create
    assert len(replay(run, "offload").calls) == 14
    assert list(tmp_path.iterdir()) == []


def test_replay_reproduces_the_compaction(samples):
    (run,) = load(samples["claude-code"])
    result = replay(run, "tail")
    assert result.calls[7].prompt_tokens < result.calls[6].prompt_tokens / 2


def test_replay_expires_the_cache_across_the_logged_pause(samples):
    (run,) = load(samples["mini-swe-agent"])
    calls = replay(run, "recorded").calls
    assert calls[4].cache_read_input_tokens == 0 and calls[3].cache_read_input_tokens > 0


def write_lines(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_invalid_json_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n{"type": oops}\n')
    with pytest.raises(TrajectoryError, match=r"bad\.jsonl:2: invalid JSON"):
        load(path)


def test_a_truncated_last_line_names_file_and_line(tmp_path, samples):
    text = samples["claude-code"].read_text()
    path = tmp_path / "cut.jsonl"
    path.write_text(text[: len(text) - 40])  # cut inside the last line
    line = text[: len(text) - 40].count("\n") + 1
    with pytest.raises(TrajectoryError, match=rf"cut\.jsonl:{line}: a truncated line"):
        load(path)


def test_a_tool_result_without_its_tool_use_names_file_and_line(tmp_path):
    path = write_lines(tmp_path / "orphan.jsonl", [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_ghost", "content": "?"}]}},
    ])
    with pytest.raises(TrajectoryError, match=r"orphan\.jsonl:3: tool_result for 'toolu_ghost'"):
        load(path)


def test_mini_swe_agent_bad_json_and_bad_arguments(tmp_path, samples):
    broken = tmp_path / "x.traj.json"
    broken.write_text(samples["mini-swe-agent"].read_text()[:500])
    with pytest.raises(TrajectoryError, match=r"x\.traj\.json:1: invalid JSON"):
        load(broken)
    data = json.loads(samples["mini-swe-agent"].read_text())
    data["messages"][2]["tool_calls"][0]["function"]["arguments"] = "{not json"
    bad_args = tmp_path / "y.traj.json"
    bad_args.write_text(json.dumps(data))
    with pytest.raises(TrajectoryError, match=r"y\.traj\.json:3: tool call .* arguments that are not JSON"):
        load(bad_args)


def test_unknown_line_types_are_skipped_and_counted(tmp_path):
    path = write_lines(tmp_path / "odd.jsonl", [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "telemetry", "x": 1}, {"type": "telemetry", "x": 2}, {"type": "summary", "summary": "s"},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "done"}]}},
    ])
    (run,) = load(path)
    assert run.skipped == {"telemetry": 2, "summary": 1} and len(run.calls) == 1


def test_the_command_line_prints_the_table_and_writes_the_plot(samples, tmp_path, capsys):
    from minimal_runtime.__main__ import main
    main(["replay", str(samples["mini-swe-agent"]), "--strategy", "tail", "--strategy", "early",
          "--plot", str(tmp_path / "p.png")])
    out = capsys.readouterr().out
    assert "the log itself" in out and "tail" in out and "early" in out and "offload" not in out.split("plot:")[0]
    assert (tmp_path / "p.png").stat().st_size > 10_000


def test_the_command_line_names_a_bad_file(tmp_path):
    from minimal_runtime.__main__ import main
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user"\n')
    with pytest.raises(SystemExit, match=r"cannot import: .*bad\.jsonl:1"):
        main(["replay", str(bad)])
