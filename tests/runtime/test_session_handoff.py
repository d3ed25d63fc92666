"""The session handoff (``features/handoff.py``): a long task in sessions, each a fresh Agent with an
empty history, joined by the progress file the runtime writes from the run's state. End to end on
chapter 09's SIMULATED long reader (``example/sessions.py``), through the real SDK and the emulator."""

from __future__ import annotations

import collections

from minimal_runtime.core.store import RunState
from minimal_runtime.example.compaction import code_for
from minimal_runtime.example.sessions import fetched_pages, recalled, run_in_sessions
from minimal_runtime.features.compaction import HANDOFF_PATH
from minimal_runtime.features.handoff import PROGRESS_PATH, SessionHandoff
from minimal_runtime.features.plan import Phase, Plan, PlanState

PAGES, STEPS = 30, 16


def test_a_task_in_sessions_redoes_no_page_and_loses_no_code(tmp_path):
    run = run_in_sessions(PAGES, STEPS, tmp_path)
    sessions, planted = run["sessions"], run["reader"].planted
    assert len(sessions) >= 3
    assert [r.status for _, r, _ in sessions] == ["done"] * len(sessions)
    fetched = fetched_pages(sessions)
    assert sorted(fetched) == list(range(PAGES))  # every page read, none twice
    assert {f"notes/page-{p}.md" for p in range(PAGES)} <= set(sessions[-1][2].files)  # nothing lost
    assert recalled(sessions, planted) == len(planted) == 8
    for n, (agent, _, _) in enumerate(sessions[1:], 2):  # a fresh context: the task and the progress file, nothing else
        first = agent.messages[0]["content"]
        first = first if isinstance(first, str) else first[0]["text"]
        assert f"This is session {n} of the task" in first and "## Done:" in first
        assert agent.calls[0].prompt_tokens < sessions[0][0].calls[-1].prompt_tokens
    last = sessions[-1][2]
    assert last.next == f"nothing: session {len(sessions)} finished the task" and all(code_for(p) in last.note for p in planted[:-1])


def test_without_the_progress_file_a_new_session_redoes_finished_work(tmp_path, monkeypatch):
    """The symptom the handoff fixes: a session that is not told what was done starts over."""
    monkeypatch.setattr(SessionHandoff, "task_for", lambda self, task: (setattr(self, "session", self.session + 1),
                                                                        setattr(self, "asked", False), task)[-1])
    run = run_in_sessions(PAGES, STEPS, tmp_path, max_sessions=3)
    redone = [p for p, n in collections.Counter(fetched_pages(run["sessions"])).items() if n > 1]
    assert redone  # page 0 again, and more: the files are in the workspace, but no session is told


def test_the_progress_file_carries_the_plan_the_note_and_where_the_files_are(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes/page-10.md").write_text("x")
    (workspace / "notes/page-2.md").write_text("x")
    (workspace / HANDOFF_PATH).write_text("Confirmed facts:\n- Access code for page 1: AC-1\nNext: page 3\n")
    state = PlanState(Plan(goal="read", phases=[Phase(title="pages 0-2", status="done"),
                                                Phase(title="pages 3-5", status="in_progress")])).kept_in(RunState())
    handoff = SessionHandoff(workspace, plan=state, memory="/memories")
    assert handoff.task_for("Read.") == "Read."  # the first session: nothing to hand over
    handoff.asked = True

    class Ran:
        messages = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "write_file",
                                                        "input": {"path": "notes/page-2.md", "content": "x"}}]}]
    progress = handoff.end(Ran(), "Read.", "done")
    text = (workspace / PROGRESS_PATH).read_text()
    assert "1. [done] pages 0-2\n2. [in_progress] pages 3-5" in text
    assert text.index("notes/page-2.md") < text.index("notes/page-10.md")  # as a person reads them
    assert "Access code for page 1: AC-1" in text and progress.next == "page 3"
    assert "Memory: /memories" in text and progress.written == ["notes/page-2.md"]
    following = handoff.task_for("Read.")
    assert following.startswith("Read.\n\nThis is session 2 of the task.") and text in following
    (workspace / HANDOFF_PATH).unlink()
    assert handoff.end(Ran(), "Read.", "max_steps").next == "phase 2: pages 3-5"  # no note: the plan says what is next
