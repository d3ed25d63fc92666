"""A steer from another thread, a full disk or a second opener never makes a store unreadable
(issue 27, the store): each test here failed on the runtime before its fix."""

from __future__ import annotations

import errno
import os
import sys
import threading

import pytest

from minimal_runtime.core import store as store_module
from minimal_runtime.core.hooks import Point
from minimal_runtime.core.store import RunStore, StoreLocked
from minimal_runtime.core.messages import user
from tests.support import TASK, pricing_agent


def test_steers_from_another_thread_never_put_the_record_out_of_sequence(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "getswitchinterval", sys.getswitchinterval)
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: a race shows in a few hundred writes
    try:
        store = RunStore(tmp_path / "run")
        start = threading.Barrier(2)

        def steers():
            start.wait()
            for k in range(150):
                store.write({"type": "steer", "text": f"steer {k}"})

        thread = threading.Thread(target=steers)
        thread.start()
        start.wait()
        for k in range(150):
            store.write({"type": "tool_output", "tool_use_id": f"toolu_{k}", "raw": "x" * 2048})
        thread.join()
    finally:
        sys.setswitchinterval(0.005)
    store.close()
    saved = RunStore(tmp_path / "run").load()
    assert saved.pending_steers == [f"steer {k}" for k in range(150)] and len(saved.tool_outputs) == 150


def failing_write(fail_on: int, short: bool):
    """``os.write`` that, on its ``fail_on``-th call, writes half the data and then (on the next
    attempt) finds the disk full; with ``short`` only, the second attempt succeeds."""
    real, state = os.write, {"n": 0, "half": False}

    def write(fd, data):
        state["n"] += 1
        if state["n"] == fail_on:
            state["half"] = True
            return real(fd, bytes(data[: len(data) // 2]))
        if state["half"]:
            state["half"] = False
            if not short:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)
    return write


def test_a_short_write_is_finished_and_a_full_disk_is_cut_back_to_the_last_whole_line(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "run")
    store.write({"type": "status", "status": "running"})
    monkeypatch.setattr(store_module.os, "write", failing_write(1, short=True))
    store.write({"type": "steer", "text": "written in two parts"})  # a short write is not an error: the rest follows
    monkeypatch.setattr(store_module.os, "write", failing_write(1, short=False))
    before = store.path.read_bytes()
    with pytest.raises(OSError, match="No space left"):
        store.write({"type": "steer", "text": "the disk is full"})
    assert store.path.read_bytes() == before  # cut back: no half line
    monkeypatch.undo()
    store.write({"type": "steer", "text": "after the disk had room again"})
    store.close()
    saved = RunStore(tmp_path / "run").load()
    assert saved.pending_steers == ["written in two parts", "after the disk had room again"]


def test_a_hooks_write_that_fails_is_isolated_and_leaves_no_trace(tmp_path, monkeypatch):
    agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))

    def counters(event):
        if len(event.agent.calls) == 2:
            monkeypatch.setattr(store_module.os, "write", failing_write(1, short=False))
            try:
                event.agent.store.write({"type": "tool_output", "tool_use_id": "a hook's", "raw": "reads: 2"})
            finally:
                monkeypatch.undo()
    agent.hooks.register(Point.POST_LLM_CALL, counters)
    assert agent.run(TASK).status == "done"
    assert [f.hook for f in agent.hooks.failures] == ["counters"]
    agent.store.close()
    saved = RunStore(tmp_path / "run").load()  # every later line in sequence
    assert saved.messages == agent.messages and "a hook's" not in saved.tool_outputs


def test_a_full_disk_under_the_loop_stops_the_run_with_the_record_whole(tmp_path, monkeypatch):
    agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))

    def fill_the_disk(event):
        if len(event.agent.calls) == 2:
            monkeypatch.setattr(store_module.os, "write", failing_write(1, short=False))
    agent.hooks.register(Point.POST_LLM_CALL, fill_the_disk)
    result = agent.run(TASK)
    monkeypatch.undo()
    assert result.status == "error" and "could not be written" in result.error and "No space left" in result.error
    agent.store.close()
    saved = RunStore(tmp_path / "run").load()
    assert saved.messages == agent.messages and len(saved.calls) == 1  # the second call's turn never landed
    resumed, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))
    assert resumed.run().status == "done"


def test_a_second_opener_is_refused_with_the_holders_pid_until_the_first_closes(tmp_path):
    first = RunStore(tmp_path / "run")
    with pytest.raises(StoreLocked, match=rf"open in process {os.getpid()} \(this one\): close it there first"):
        RunStore(tmp_path / "run")
    first.write({"type": "steer", "text": "still mine"})
    first.close()
    with RunStore(tmp_path / "run") as second:
        assert second.load().pending_steers == ["still mine"]


def test_a_task_the_record_never_held_is_asked_again_not_resumed(tmp_path, monkeypatch):
    agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))
    real = os.write

    def full_after_the_start(fd, data):  # the start event lands; the task, the ending and the status do not
        if b'"type":"start"' not in bytes(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)
    monkeypatch.setattr(store_module.os, "write", full_after_the_start)
    first = agent.run(TASK)
    monkeypatch.undo()
    assert first.status == "error" and "No space left" in first.error and agent.messages == []
    again = agent.run(TASK)  # room again: the record never held the task, so it is asked, not "resumed"
    assert again.status == "done" and agent.messages[0] == user(TASK)
    agent.store.close()
    assert RunStore(tmp_path / "run").load().messages == agent.messages
