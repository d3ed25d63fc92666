"""Logs of current-model runs (Sonnet 5.5, Haiku 5.5, Opus 5.5), made at test time by the runtime's
own agent on the emulator and written out as Claude Code writes them (``replay.current``): every
strategy replays every call; the 2025 layout cannot, and the table, the notes and the exit status say so."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.replay import STRATEGIES, calibrate, load, replay, table
from minimal_runtime.replay.report import usage_bill
from minimal_runtime.replay.current import CURRENT_MODELS, write_current


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    # tool outputs of ~7,500 tokens: the context passes the compaction strategies' 60,000-token limit
    return {model: write_current(tmp_path_factory.mktemp(model), model, rounds=10, output_chars=30_000)
            for model in CURRENT_MODELS}


@pytest.mark.parametrize("model", CURRENT_MODELS)
@pytest.mark.parametrize("kind", ["session", "subagent", "stream"])
def test_every_strategy_replays_every_call_of_a_current_model_log(logs, model, kind):
    runs = load(logs[model][kind])
    assert runs and all(r.model == model for r in runs)
    if kind != "subagent":
        assert runs[0].compactions == 1
        assert sum(b["type"] == "thinking" for c in runs[0].calls for b in c.assistant["content"]) == len(runs[0].calls)
    for run in runs:
        calibration = calibrate(run)
        results = {name: replay(run, name, calibration=calibration) for name in STRATEGIES if name != "tail-2025"}
        for name, r in results.items():
            assert r.finished and len(r.calls) == len(run.calls), (model, kind, name, r.stopped)
        if kind == "session":  # the history-rewriting strategies did rewrite (with thinking bound to it)
            for name in ("ladder", "simple", "offload"):
                assert results[name].prompt_tokens < 0.97 * results["tail"].prompt_tokens, name


def test_the_session_and_its_sub_agent_are_claude_code_shaped(logs):
    paths = logs["claude-sonnet-5-5"]
    first = json.loads(paths["session"].read_text().splitlines()[0])
    assert first["type"] == "queue-operation"  # today's Claude Code starts a session file so
    assert paths["subagent"].parent.name == "subagents" and paths["subagent"].parent.parent.name == paths["session"].stem
    (main,) = load(paths["session"])
    assert any("2 queue-operation" in n for n in main.notes) and main.skipped["queue-operation"] == 2
    assert any(c.then_user for c in main.calls)  # the --continue's prompt, between two calls
    (sub,) = load(paths["subagent"])
    assert sub.task[0]["text"].startswith("Which functions") and len(sub.calls) == 2
    main_stream, sub_stream = load(paths["stream"])
    task = next(b["id"] for c in main_stream.calls for b in c.assistant["content"] if b.get("name") == "Task")
    assert main_stream.prompt_missing and sub_stream.path.endswith(f"#subagent-{task}") and len(sub_stream.calls) == 2


@pytest.mark.parametrize("model", CURRENT_MODELS)
def test_the_2025_layout_stops_at_call_2_and_the_table_says_where_and_why(logs, model):
    (run,) = load(logs[model]["stream"])[:1]
    stopped = replay(run, "tail-2025")
    assert len(stopped.calls) == 1 and stopped.stopped.startswith("stopped at call 2: BadRequestError 400:")
    assert "\n" not in stopped.stopped
    shown = table(run, [replay(run, "tail"), stopped])
    row = next(line for line in shown.splitlines() if line.startswith("tail-2025 "))
    assert "stopped at call 2: BadRequestError 400" in row and "bound to a different conversation" in row
    assert f"  note: {stopped.notes[-1]}" in shown


def test_the_command_exits_non_zero_when_the_one_strategy_asked_for_stops(logs, tmp_path, capsys):
    from minimal_runtime.__main__ import main
    path = str(logs["claude-haiku-5-5"]["session"])
    with pytest.raises(SystemExit) as stopped:
        main(["replay", path, "--strategy", "tail-2025", "--plot", str(tmp_path / "p.png")])
    assert stopped.value.code == 1
    out = capsys.readouterr().out
    assert "stopped at call 2:" in out and "note: stopped at call 2:" in out and "queue-operation" in out
    main(["replay", path, "--strategy", "tail", "--strategy", "tail-2025", "--plot", str(tmp_path / "q.png")])
    assert "stopped at call 2:" in capsys.readouterr().out  # asked among others: shown, the status is 0


def test_recorded_thinking_is_re_issued_and_counted_next_to_the_billed_output(logs):
    (run,) = load(logs["claude-opus-5-5"]["session"])
    replayed = replay(run, "tail")
    note = next(n for n in replayed.notes if "thinking blocks" in n)
    assert f"the log recorded {len(run.calls)} thinking blocks" in note and "re-issued as the emulator's own" in note
    logged_output = sum(c.usage.output for c in run.calls)  # estimated from what each call wrote (session file)
    assert logged_output > sum(c.usage.output_tokens for c in run.calls)  # more than the placeholders
    assert f"{logged_output:,} tokens over the run" in note
    assert sum(c.output_tokens for c in replayed.calls) == logged_output
    # the re-issued thinking is in every replayed prompt, as the logged thinking was in the log's
    assert [c.prompt_tokens for c in replay(run, "recorded").calls] == [c.usage.prompt_tokens for c in run.calls]


def test_the_compaction_limits_are_in_the_logs_own_tokens(logs):
    """A log whose tokenizer counts 1.5 tokens per estimated token: ``simple`` and ``ladder`` compact
    before the calibrated prompt would pass 60,000 (the log's tokens), not before the estimate would
    (90,000 of the log's)."""
    (run,) = load(logs["claude-sonnet-5-5"]["stream"])[:1]
    scaled = run.model_copy(update={"calls": [c.model_copy(update={"usage": c.usage.model_copy(update={
        k: round(getattr(c.usage, k) * 1.5) for k in ("prompt_tokens", "cache_read", "cache_write")
        if getattr(c.usage, k) is not None})}) for c in run.calls]})
    calibration = calibrate(scaled)
    assert 1.3 < calibration.factor < 1.7
    for name in ("simple", "ladder"):
        prompts = [c.prompt_tokens for c in replay(scaled, name, calibration=calibration).calls]
        grown = max(b - a for a, b in zip(prompts, prompts[1:]))  # one call's growth, at most
        assert max(prompts) < 60_000 <= max(prompts) + grown, (name, prompts)


def test_a_call_reads_from_cache_the_tokens_the_calls_before_it_wrote(logs):
    """A log whose call 5 sent 20,000 tokens the log does not show (an attachment, a file the stream
    truncated), kept in every prompt after it: the calibration stretches only what call 5 added, so
    every call's cache read is what the calls before it wrote, in the log's tokens, and the bill is
    the log's. (One factor per call over its whole prompt read ~38,000 on call 5, against the log's 23,316.)"""
    (run,) = load(logs["claude-sonnet-5-5"]["stream"])[:1]
    extra = 20_000

    def attached(k, usage):
        if not 5 <= k < 10:  # call 10 follows the log's compaction, which dropped the attachment
            return usage
        return usage.model_copy(update={"prompt_tokens": usage.prompt_tokens + extra,
                                        **({"cache_write": usage.cache_write + extra} if k == 5 else
                                           {"cache_read": usage.cache_read + extra})})
    log = run.model_copy(update={"calls": [c.model_copy(update={"usage": attached(k, c.usage)})
                                           for k, c in enumerate(run.calls)]})
    replayed = replay(log, "recorded")
    reads = [c.cache_read_input_tokens for c in replayed.calls]
    assert reads == pytest.approx([c.usage.cache_read for c in log.calls], abs=20), reads
    assert replayed.cost == pytest.approx(usage_bill(log), rel=0.01)  # the calls and those the log does not show


def test_strategies_that_would_send_what_tail_sends_are_replayed_once_with_the_same_figures(tmp_path):
    """Below the compaction limit the four compaction strategies send exactly what ``tail`` sends,
    and on a model that takes the 2025 layout ``tail-2025`` is ``tail``: ``replay_all`` replays those
    once. Its figures are the ones each strategy gives replayed on its own."""
    from minimal_runtime.replay import replay_all
    (run,) = load(write_current(tmp_path, "claude-sonnet-5-5", rounds=3)["stream"])[:1]
    older = run.model_copy(update={"model": "claude-sonnet-4-6"})  # a model on the 2025 layout
    for log in (older,):
        calibration = calibrate(log)
        names = ["tail", "tail-2025", "offload", "ladder", "simple", "clearing", "server-compact"]
        shared = dict(zip(names, replay_all(log, names, calibration=calibration)))
        for name in names:
            alone = replay(log, name, calibration=calibration)
            assert [c.model_dump() for c in shared[name].calls] == [c.model_dump() for c in alone.calls], (log.model, name)
            assert shared[name].stopped == alone.stopped and shared[name].strategy == name
        assert any("never reached its limit" in n for n in shared["ladder"].notes)
        assert any("no tool result of the log is over 4,000" in n for n in shared["offload"].notes)


def test_a_warm_first_call_is_seeded_once_a_run_and_every_strategy_reads_it(tmp_path, monkeypatch):
    """A log whose first call read 15,000 tokens from cache (earlier sessions wrote them): the replay
    seeds its cache once a run, with one request, and each strategy starts from a copy of that cache,
    so its first call reads what the logged one read, as a replay of that strategy alone does."""
    from minimal_runtime.emulator import Emulator
    from minimal_runtime.replay import replay_all
    (run,) = load(write_current(tmp_path, "claude-sonnet-5-5", rounds=3, hidden_tokens=20_000)["stream"])[:1]
    first, warm = run.calls[0].usage, 15_000
    calls = [run.calls[0].model_copy(update={"usage": first.model_copy(
        update={"cache_read": warm, "cache_write": first.cache_write - warm})}), *run.calls[1:]]
    log = run.model_copy(update={"calls": calls})
    seeds, handle = [], Emulator.handle

    def counted(self, method, path, body, *rest):
        seeds.extend([path] if b"(seeding the cache)" in body else [])
        return handle(self, method, path, body, *rest)
    monkeypatch.setattr(Emulator, "handle", counted)
    names = ["recorded", "tail", "early", "offload"]
    shared = dict(zip(names, replay_all(log, names)))
    assert seeds == ["/v1/messages"]  # one seeding request for the four strategies
    for name in names:
        alone = replay(log, name)
        assert [c.model_dump() for c in shared[name].calls] == [c.model_dump() for c in alone.calls], name
        assert shared[name].calls[0].cache_read_input_tokens == pytest.approx(warm, abs=20), name
        assert any("seeded with a prefix" in n for n in shared[name].notes), name
