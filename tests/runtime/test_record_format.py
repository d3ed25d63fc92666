"""The run record says its format (issue 65): a record of the previous format opens and resumes,
upgraded on read; one of a newer format is refused in one line, naming both."""

from __future__ import annotations

import logging

import pytest

from minimal_runtime.core.store import RECORD_FORMAT, StoreError, load
from minimal_runtime.fork_suite import TASK, DyingStore, Killed, Run, uninterrupted


def killed_record(after: int) -> tuple[Run, list[dict]]:
    """A run's record as a kill after its ``after``-th event left it."""
    run, store = Run(), DyingStore(after=after)
    with pytest.raises(Killed):
        run.agent(store).run(TASK)
    return run, store.events()


def as_format_1(events: list[dict]) -> list[dict]:
    """The same record as the runtime wrote it before formats: no ``format``, no task ``at``."""
    return [{k: v for k, v in e.items() if not (k == "format" and e["type"] == "start" or k == "at" and e["type"] == "task")}
            for e in events]


def test_a_new_record_says_its_format():
    _, saved, events = uninterrupted("claude-sonnet-5-5")
    assert RECORD_FORMAT == 2 and events[0]["type"] == "start" and events[0]["format"] == 2 and saved.format == 2
    assert isinstance(next(e for e in events if e["type"] == "task")["at"], float)


def test_a_killed_record_of_the_previous_format_opens_and_resumes_as_written(caplog):
    clean, expected, events = uninterrupted("claude-sonnet-5-5")
    after = [e["type"] for e in events].index("tool_output") + 1
    run, killed = killed_record(after)
    old = as_format_1(killed)
    assert "format" not in old[0] and load(old).format == 1 and load(old).run_started_at is None
    store = DyingStore(old)
    with caplog.at_level(logging.WARNING):
        result = run.agent(store).run(TASK)  # the same script again: resumed
    assert result.status == "done", result.error
    saved = load(store.events())
    assert (saved.messages, saved.state, len(saved.calls)) == (expected.messages, expected.state, len(expected.calls))
    assert len(run.tool_runs) == len(clean.tool_runs)  # nothing run twice
    starts = [e for e in store.events() if e["type"] == "start"]
    assert [s.get("format") for s in starts] == [None, 2] and saved.format == 2  # upgraded by the next start
    assert not [r for r in caplog.records if "differ" in r.getMessage()]  # not told its options changed


def test_a_record_of_a_newer_format_is_refused_naming_both_and_nothing_is_written():
    _, _, events = uninterrupted("claude-sonnet-5-5")
    newer = [{**e, "format": RECORD_FORMAT + 1} if e["type"] == "start" else e for e in events]
    store = DyingStore(newer)
    with pytest.raises(StoreError, match=r":1: written in record format 3; this reader knows formats 1 to 2"):
        Run().agent(store)
    assert len(store.events()) == len(events)
