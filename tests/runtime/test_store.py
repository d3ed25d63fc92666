"""The durable store: a run killed between any two steps resumes with no turn lost or duplicated."""

from __future__ import annotations

import functools
import os
import signal
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from minimal_runtime.core.messages import dumps
from minimal_runtime.core.store import MemoryStore, RunStore, StoreError, load_run
from minimal_runtime.provider.cost import CallRecord
from tests.support import TASK, pricing_agent, progress_hooks

def killed_child(script: Callable[[], None]) -> int:
    """Run ``script`` in a forked copy of this process, which kills itself at the point the script
    chooses (SIGKILL: no cleanup, no flush), and return how it ended (-9 when it was killed). A fork,
    not a new interpreter: the child starts with the SDK already imported, so each case costs its run
    and not an interpreter's start, and it is as dead as any process when it dies."""
    pid = os.fork()
    if pid == 0:
        try:
            script()
        except BaseException:
            traceback.print_exc()
        os._exit(3)  # the script returned without dying: never back into pytest
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


@functools.cache
def reference_history(model: str) -> str:
    """The uninterrupted run's history, once per model."""
    with tempfile.TemporaryDirectory() as tmp:
        agent, _, _ = pricing_agent(Path(tmp), model=model, hooks=progress_hooks())
        agent.run(TASK)
        return dumps(agent.messages)


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "claude-sonnet-5-5"])
@pytest.mark.parametrize("point", ["pre_llm_call", "post_llm_call"])
@pytest.mark.parametrize("step", [1, 2, 7, 13, 14])
def test_kill_and_resume_loses_and_duplicates_nothing(tmp_path, point, step, model):
    """On a current model the resumed history holds the cleared batch entries verbatim and thinking
    blocks as returned, so the next call passes the prefix check (the run finishes)."""
    def run_until_killed():
        agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"), model=model, hooks=progress_hooks())

        def die(event):
            if len(event.agent.calls) + (point == "pre_llm_call") == step:
                os.kill(os.getpid(), signal.SIGKILL)
        agent.hooks.register(point, die)
        agent.run(TASK)
    assert killed_child(run_until_killed) == -9  # it really was killed
    store = RunStore(tmp_path / "run")
    saved = store.load()
    assert saved.status == "new"  # killed: never reached a final status
    # killed after a reply was stored and before its turn was written: resumed from it, nothing lost
    assert saved.lost_calls == [] and saved.unanswered_calls == []
    assert len(saved.calls) == step - 1
    assert (saved.step.phase == "replied") == (point == "post_llm_call")

    agent, _, _ = pricing_agent(tmp_path, store=store, model=model, hooks=progress_hooks(), check_append_only=True)
    assert agent.messages == saved.messages
    assert agent.lost_calls == saved.lost_calls  # the bill: what the history holds and what the crash lost
    result = agent.run()  # resume: no new task, continue the history as it stands
    assert result.status == "done", result.error
    assert dumps(agent.messages) == reference_history(model)
    if model == "claude-sonnet-5-5":  # the 2025 layout edits the last user turn on every call, by design
        assert agent.edits == []
    assert dumps(load_run(tmp_path / "run").messages) == dumps(agent.messages)


def test_the_same_script_run_again_after_a_kill_resumes_its_task_instead_of_asking_it_twice(tmp_path):
    """The default path after a crash is to run the same script again, ``run(TASK)`` and all: the
    killed run's task is recognised and resumed; another task is refused in one line, history untouched."""
    def run_until_killed():
        agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"), hooks=progress_hooks())
        agent.hooks.register("post_tool_call", lambda e: len(e.agent.calls) == 3 and os.kill(os.getpid(), signal.SIGKILL))
        agent.run(TASK)
    assert killed_child(run_until_killed) == -9
    store = RunStore(tmp_path / "run")
    agent, _, _ = pricing_agent(tmp_path, store=store, hooks=progress_hooks())
    before = dumps(agent.messages)
    refused = agent.run("Summarize something else.")
    assert refused.status == "error" and "run() resumes it" in refused.error and dumps(agent.messages) == before
    agent, _, _ = pricing_agent(tmp_path, store=store, hooks=progress_hooks())
    result = agent.run(TASK)  # the README's script, run again as it stands
    assert result.status == "done", result.error
    assert dumps(agent.messages) == reference_history("claude-sonnet-4-6")  # the task is asked once
    assert "unfinished" not in (agent.run("And now a second task.").error or "")  # an ended run: tasks follow


def test_a_torn_last_line_is_cut_on_open(tmp_path):
    store = RunStore(tmp_path)
    store.write({"type": "turn", "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})
    store.close()
    with open(tmp_path / "events.jsonl", "ab") as f:
        f.write(b'{"type":"turn","messages":[{"role":"assis')  # a write cut short by a kill
    reopened = RunStore(tmp_path)
    assert len(reopened.load().messages) == 1
    reopened.write({"type": "turn", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]})
    assert [m["role"] for m in load_run(tmp_path).messages] == ["user", "assistant"]


def test_store_records_calls_and_raw_tool_outputs(tmp_path):
    agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))
    agent.run(TASK)
    saved = load_run(tmp_path / "run")
    assert saved.status == "done" and saved.messages == agent.messages
    assert saved.calls == agent.calls
    assert any("404" in raw for raw in saved.tool_outputs.values())


def test_resuming_a_finished_run_makes_no_call(tmp_path):
    agent, emu, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))
    agent.run(TASK)
    agent.store.close()
    again, emu2, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))
    result = again.run()
    assert result.status == "done" and result.final_text == agent.messages[-1]["content"][0]["text"]
    assert emu2.calls == []


def test_an_accepted_steer_survives_a_kill_and_lands_once(tmp_path):
    def steer_then_die():
        agent, _, _ = pricing_agent(tmp_path, store=RunStore(tmp_path / "run"))

        def steer_then_die(event):
            if len(event.agent.calls) == 3:
                assert event.agent.steer("Also include Umbrella Corp.")  # accepted: the caller got its 200
                os.kill(os.getpid(), signal.SIGKILL)                      # and the process dies before the next call
        agent.hooks.register("post_llm_call", steer_then_die)
        agent.run(TASK)
    assert killed_child(steer_then_die) == -9
    store = RunStore(tmp_path / "run")
    assert store.load().pending_steers == ["Also include Umbrella Corp."]
    agent, _, _ = pricing_agent(tmp_path, store=store)
    assert agent.run().status == "done"
    steered = [m for m in agent.messages if m["role"] == "user" and m["content"][0].get("text") == "Also include Umbrella Corp."]
    assert len(steered) == 1
    assert load_run(tmp_path / "run").pending_steers == []


def _every_event(store) -> None:
    call = lambda n: CallRecord(model="claude-sonnet-5-5", input_tokens=n, output_tokens=1)  # noqa: E731
    store.write({"type": "task", "messages": [{"role": "user", "content": "first task"}]})
    store.write({"type": "billed", "call": call(10).model_dump()})
    store.write({"type": "turn", "messages": [{"role": "assistant", "content": "a"}], "call": call(10).model_dump()})
    store.write({"type": "tool_output", "tool_use_id": "t1", "raw": "raw output"})
    store.write({"type": "compaction", "messages": [{"role": "user", "content": "summary"}]})
    store.write({"type": "steer", "text": "look at the pricing page"})
    store.write({"type": "steered", "messages": [{"role": "user", "content": "look at the pricing page"}]})
    store.write({"type": "task", "messages": [{"role": "user", "content": "second task"}]})
    store.write({"type": "billed", "call": call(20).model_dump()})
    store.write({"type": "turn", "messages": [{"role": "assistant", "content": "b"}], "call": call(20).model_dump()})
    store.write({"type": "compaction", "messages": [{"role": "user", "content": "summary 2"}]})
    store.write({"type": "steer", "text": "not yet delivered"})
    store.write({"type": "start", "model": "claude-sonnet-5-5", "system": "1a2b", "tools": "3c4d", "options": {}})
    store.write({"type": "status", "status": "done", "state": {"pages": 3}})
    store.write({"type": "billed", "call": call(30).model_dump()})  # the process died before this call's turn


@pytest.mark.parametrize("make", [lambda tmp: MemoryStore(), lambda tmp: RunStore(tmp / "run")], ids=["memory", "file"])
def test_every_event_kind_reads_back_as_written(tmp_path, make):
    store = make(tmp_path)
    _every_event(store)
    run = store.load()
    assert run.messages == [{"role": "user", "content": "summary 2"}]  # the last compaction, nothing after it
    assert run.compactions == 2 and run.current.first_call == 1 and [c.input_tokens for c in run.calls] == [10, 20]
    assert run.pending_steers == ["not yet delivered"] and run.tool_outputs == {"t1": "raw output"}
    assert run.state == {"pages": 3} and run.status == "done" and run.start["system"] == "1a2b"
    assert [c.input_tokens for c in run.lost_calls] == [30]


def test_lines_without_a_sequence_number_still_load(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.jsonl").write_text('{"type": "turn", "messages": [{"role": "user", "content": "t"}]}\n'
                                                   '{"type": "status", "status": "done"}\n')
    run = load_run(tmp_path / "run")
    assert run.messages == [{"role": "user", "content": "t"}] and run.status == "done"


@pytest.mark.parametrize("line, message", [
    ('{"type": "turn", "seq": 1, "messages": [1, 2]}', "1: a turn event that cannot be read (ValueError: its messages are "
                                                         "not a list of message objects)"),
    ('{"type": "steered", "seq": 1, "messages": []}', "1: a steered turn without an accepted steer before it"),
    ('{"type": "status", "seq": 2, "status": "done"}', "1: event 1 expected, found event 2 (a line was deleted, duplicated or moved)"),
])
def test_each_fault_is_named(tmp_path, line, message):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.jsonl").write_text(line + "\n")
    with pytest.raises(StoreError) as e:
        load_run(tmp_path / "run")
    assert str(e.value) == f"{tmp_path / 'run' / 'events.jsonl'}:{message}"


def test_two_responses_without_their_turns_are_both_lost_calls(tmp_path):
    store = MemoryStore()
    store.write({"type": "billed", "call": CallRecord(model="claude-sonnet-5-5", input_tokens=1).model_dump()})
    store.write({"type": "billed", "call": CallRecord(model="claude-sonnet-5-5", input_tokens=2).model_dump()})
    store.write({"type": "turn", "messages": [{"role": "assistant", "content": "b"}], "call": CallRecord(model="claude-sonnet-5-5", input_tokens=2).model_dump()})
    assert [c.input_tokens for c in store.load().lost_calls] == [1]


def test_the_memory_store_numbers_its_events_too():
    store = MemoryStore()
    for status in ("a", "b", "c"):
        store.write({"type": "status", "status": status})
    del store._log[1]
    with pytest.raises(StoreError, match="event 2 expected, found event 3"):
        store.load()


def test_a_store_folder_is_created_with_its_parents_and_the_file_is_private_to_writes(tmp_path):
    import os
    import stat
    store = RunStore(tmp_path / "a" / "b" / "run")
    store.write({"type": "status", "status": "running"})
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o644 & ~umask


def test_an_event_of_a_type_the_reader_does_not_know_is_kept_and_skipped_with_a_warning(tmp_path, caplog):
    """Issue 50 item 7: one new event type made a record unopenable (``unknown event type 'resumed'``)."""
    store = RunStore(tmp_path)
    store.write({"type": "task", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
    store.write({"type": "resumed", "why": "a newer writer's event"})
    store.close()
    with caplog.at_level("WARNING"):
        saved = load_run(tmp_path)
    assert saved.skipped == ["resumed"] and len(saved.messages) == 1
    assert "does not know ('resumed'): kept, skipped" in caplog.text
    assert '"resumed"' in (tmp_path / "events.jsonl").read_text()  # kept in the record


def test_a_database_backends_own_error_ends_the_run_cleanly_with_its_end_hooks(tmp_path):
    """Issue 50 item 4: only OSError was handled, so a SQLite store's OperationalError escaped run() as
    a traceback, the END hooks never ran and the record stayed ``new``. Any backend failure is a
    StoreFailure (an OSError) now."""
    import json
    import sqlite3

    from minimal_runtime.core.store import StoreBase, StoreFailure

    class SqliteStore(StoreBase):
        def __init__(self, path, fail_after: int):
            self.db, self.fail_after = sqlite3.connect(path), fail_after
            self.db.execute("create table if not exists events (seq integer primary key, event text)")

        def write(self, event, sync=True):
            count = self.db.execute("select count(*) from events").fetchone()[0]
            if count >= self.fail_after:
                raise sqlite3.OperationalError("database is locked")
            self.db.execute("insert into events values (?, ?)", (count + 1, json.dumps({**event, "seq": count + 1})))
            self.db.commit()

        def events(self):
            return [json.loads(e) for (e,) in self.db.execute("select event from events order by seq")]

    ended = []
    hooks = progress_hooks()
    hooks.register("end", lambda e: ended.append(e.result.status))
    agent, _, _ = pricing_agent(tmp_path, store=SqliteStore(tmp_path / "run.db", fail_after=12), hooks=hooks)
    result = agent.run(TASK)
    assert result.status == "error" and ended == ["error"]
    assert result.error == "the run record could not be written: OperationalError: database is locked"
    assert issubclass(StoreFailure, OSError)
    saved = agent.store.load()
    assert dumps(saved.messages) == dumps(agent.messages)  # what the record holds is what the history holds
