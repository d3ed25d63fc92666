"""A strategy that lays out as ``tail`` does goes on from tail's replay where it parts from it
(``driver.Parting``, ``driver.Fork``) instead of replaying the log from its first call: its bill
must be the bill of its own replay from call 1, call for call, on a log that crosses the compaction
strategies' 60,000-token limit and on one that never does."""

from __future__ import annotations

from minimal_runtime.replay import load, replay, replay_all
from minimal_runtime.replay.current import write_current
from minimal_runtime.replay.driver import calibrate
from tests.replay.test_real_variants import assistant, init, result, tool_use, usage, write

FOLLOWERS = ["offload", "ladder", "simple", "clearing", "server-compact"]


def growing_log(tmp_path, model: str = "claude-sonnet-4-6"):
    """A headless log whose first results are short and whose later ones are long (over the
    offloader's 4,000 characters), its prompt growing past 60,000 tokens at about call 12 of 17."""
    lines, before, prompt = [{**init(), "model": model}], 0, 2_000
    for k in range(1, 17):
        text = ("x = compute(a, b)  # code\n" * (40 if k < 4 else 1_000))
        lines.append(assistant(f"msg_{k}", [tool_use(f"toolu_{k}", "Read", file_path=f"f{k}.py")],
                               usage(3, prompt - 3 - before, before)))
        lines.append(result(f"toolu_{k}", text))
        before, prompt = prompt - 3, prompt + len(text) // 4
    lines.append(assistant("msg_17", [{"type": "text", "text": "Done."}], usage(3, prompt - 3 - before, before)))
    for line in lines[1:]:
        if line["type"] == "assistant":
            line["message"]["model"] = model
    return write(tmp_path / "growing.stream.jsonl", lines)


def _bills(replayed):
    return [(r.strategy, r.stopped, [c.model_dump() for c in r.calls], r.cost) for r in replayed]


def _forked_and_alone(run, names=("tail", *FOLLOWERS)):
    """Each strategy as ``replay_all`` replays it (going on from tail's where it parts), and replayed alone."""
    calibration = calibrate(run)
    forked = replay_all(run, list(names), calibration=calibration)
    alone = [replay(run, name, calibration=calibration) for name in names]
    return forked, alone


def test_a_strategy_going_on_from_tail_bills_what_its_own_replay_bills_past_the_limit(tmp_path):
    (run,) = load(growing_log(tmp_path))
    forked, alone = _forked_and_alone(run)
    assert _bills(forked) == _bills(alone)
    parted = {r.strategy: r.parted for r in forked}
    assert parted["offload"] == 3  # the first call whose reply asks for a long result
    assert all(0 < parted[name] < len(run.calls) for name in ["ladder", "simple", "clearing", "server-compact"]), parted
    assert all(r.stopped is None and len(r.calls) == len(run.calls) for r in forked if r.strategy in FOLLOWERS)
    # each acted: none of them sent what tail sent
    tail = next(r for r in forked if r.strategy == "tail")
    assert all(r.cost != tail.cost for r in forked if r.strategy in FOLLOWERS)


def test_a_current_model_session_with_its_compaction_bills_the_same_forked(tmp_path):
    """Claude Code's own shapes on a model that binds thinking to its prefix: a session that passes
    the limit, is compacted by its client and continued, with a sub-agent."""
    paths = write_current(tmp_path, "claude-sonnet-5-5", rounds=9, output_chars=30_000, hidden_tokens=20_000)
    (run, *_) = load(paths["session"])
    forked, alone = _forked_and_alone(run)
    assert _bills(forked) == _bills(alone)
    assert all(0 < r.parted < len(run.calls) - 1 for r in forked if r.strategy in FOLLOWERS[1:]), \
        [(r.strategy, r.parted) for r in forked]


def test_a_log_that_never_reaches_the_limit_is_one_replay_of_tail_for_them(tmp_path):
    paths = write_current(tmp_path, "claude-sonnet-5-5", rounds=4, output_chars=3_000)
    (run, *_) = load(paths["session"])
    forked, alone = _forked_and_alone(run)
    assert _bills(forked) == _bills(alone)
    assert all(r.parted is None for r in forked)


def test_one_strategy_asked_for_alone_is_replayed_alone_not_after_a_replay_of_tail(tmp_path, monkeypatch):
    """``replay LOG --strategy offload``: tail's replay is not made for it (it would cost one whole
    replay more than the call or two it saves), so the requests are those of its own replay."""
    from minimal_runtime.emulator import Emulator
    (run,) = load(growing_log(tmp_path))
    calibration = calibrate(run)
    sent, answer = [0], Emulator.handle

    def counted(self, *args, **kwargs):
        sent[0] += 1
        return answer(self, *args, **kwargs)
    monkeypatch.setattr(Emulator, "handle", counted)
    (forked,) = replay_all(run, ["offload"], calibration=calibration)
    asked_alone, sent[0] = sent[0], 0
    alone = replay(run, "offload", calibration=calibration)
    assert _bills([forked]) == _bills([alone])
    assert asked_alone == sent[0] == len(run.calls)
