"""The run record says its format (issue 65): a record of an older format opens and resumes,
upgraded on read; one of a newer format is refused in one line, naming both.

The older records are made here, at test time: the current writer's record of a run killed after
each of its events, rewritten in the shape the writer of format 2 gave each event (``as_format_2``:
no step value; its hook marks, batch, reply, results and result as that writer's own fields), and of
format 1 (``as_format_1``: neither a format nor a task's time)."""

from __future__ import annotations

import errno
import logging

import pytest

from minimal_runtime.core.store import RECORD_FORMAT, MemoryStore, StoredStep, StoreError, load
from minimal_runtime.fork_suite import MODELS, TASK, DyingStore, Killed, Run, as_format_1, as_format_2, uninterrupted

MODEL = "claude-sonnet-5-5"


def killed_record(after: int, model: str = MODEL) -> tuple[Run, list[dict]]:
    """A run's record as a kill after its ``after``-th event left it."""
    run, store = Run(model), DyingStore(after=after)
    with pytest.raises(Killed):
        run.agent(store).run(TASK)
    return run, store.events()


def test_a_new_record_says_its_format_and_each_boundary_its_step():
    _, saved, events = uninterrupted(MODEL)
    assert RECORD_FORMAT == 3 and events[0]["type"] == "start" and events[0]["format"] == 3 and saved.format == 3
    assert isinstance(next(e for e in events if e["type"] == "task")["at"], float)
    boundaries = {"task", "hooked", "sent", "reply", "tool_output", "turn", "ended", "status"}
    assert all("step" in e for e in events if e["type"] in boundaries)
    assert saved.step == StoredStep()  # a run that ended: nothing in progress, nothing carried


@pytest.mark.parametrize("model", MODELS)
def test_a_format_2_record_killed_after_any_event_reads_as_the_value_format_3_wrote(model):
    """Every prefix of a run's record (a kill after each event), rewritten as format 2, reads back
    as the same step value, the same bill and the same history as the record format 3 wrote."""
    events = uninterrupted(model)[2]
    for after in range(2, len(events) + 1):
        new, old = load(events[:after]), load(as_format_2(events[:after]))
        kind = events[after - 1]["type"]
        assert old.format == 2 and "step" not in events[after - 1] or kind in ("hooked", "sent", "reply", "task",
                                                                                  "tool_output", "turn", "ended", "status")
        assert old.step == new.step, f"killed after event {after} ({kind})"
        assert (old.messages, old.calls, old.state) == (new.messages, new.calls, new.state), f"after event {after}"
        assert (old.lost_calls, old.unanswered_calls, old.previous_len) == \
               (new.lost_calls, new.unanswered_calls, new.previous_len), f"after event {after} ({kind})"


@pytest.mark.parametrize("kind", ["hooked", "sent", "reply", "tool_output", "turn", "ended"])
@pytest.mark.parametrize("shape", [as_format_2, as_format_1])
def test_a_killed_record_of_an_older_format_opens_and_resumes_as_written(kind, shape, caplog):
    clean, expected, events = uninterrupted(MODEL)
    after = [e["type"] for e in events].index(kind, 3) + 1
    run, killed = killed_record(after)
    old = shape(killed)
    written = 2 if shape is as_format_2 else 1
    assert all("step" not in e for e in old) and load(old).format == written
    assert (load(old).current.started_at is None) == (written == 1)
    store = DyingStore(old)
    with caplog.at_level(logging.WARNING):
        result = run.agent(store).run(TASK)  # the same script again: resumed
    assert result.status == "done", result.error
    saved = load(store.events())
    assert (saved.messages, saved.state, saved.calls) == (expected.messages, expected.state, expected.calls)
    assert (saved.lost_calls, len(saved.unanswered_calls)) == ([], kind == "sent")  # the call in flight: listed
    assert len(run.tool_runs) == len(clean.tool_runs)  # nothing run twice
    assert sorted(set(run.hook_runs)) == sorted(set(clean.hook_runs))
    assert len(run.hook_runs) == len(clean.hook_runs)  # no hook run twice
    starts = [e for e in store.events() if e["type"] == "start"]
    upgraded = [] if kind == "ended" else [3]  # killed among the END hooks: the run ends with no call, no new start
    assert [s.get("format") for s in starts] == [None if written == 1 else 2, *upgraded]
    assert saved.format == (3 if upgraded else written)
    assert not [r for r in caplog.records if "differ" in r.getMessage()]  # not told its options changed


def test_a_record_of_a_newer_format_is_refused_naming_both_and_nothing_is_written():
    _, _, events = uninterrupted(MODEL)
    newer = [{**e, "format": RECORD_FORMAT + 1} if e["type"] == "start" else e for e in events]
    store = DyingStore(newer)
    with pytest.raises(StoreError, match=r":1: written in record format 4; this reader knows formats 1 to 3"):
        Run().agent(store)
    assert len(store.events()) == len(events)


class DiskFullAt(MemoryStore):
    """A store whose disk fills at the first event of ``kind``."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def write(self, event: dict, sync: bool = True) -> None:
        if event["type"] == self.kind:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().write(event, sync)


def test_a_reply_whose_turn_never_lands_is_in_the_bill_at_once_as_the_record_has_it():
    """The step's value decides the bill on both sides (``StoredStep.passed_by``): a reply stored, then
    the disk full at its tool's result, the run ends with the reply lost; the agent's bill says so
    without reading the record again."""
    agent = Run(MODEL).agent(DiskFullAt("tool_output"))
    result = agent.run(TASK)
    assert result.status == "error" and "No space left" in result.error
    saved = load(agent.store.events())
    assert len(saved.lost_calls) == 1 and saved.lost_calls[0].cost > 0
    assert agent.lost_calls == saved.lost_calls and agent.bill().lost == saved.lost_calls[0].cost
