"""The session handoff (``features/handoff.py``): a long task in sessions, each a fresh Agent with an
empty history, joined by the progress file the runtime writes from the run's state. End to end on
chapter 09's SIMULATED long reader (``example/sessions.py``), through the real SDK and the emulator."""

from __future__ import annotations

import collections

import pytest

from minimal_runtime.core.store import RunState
from minimal_runtime.example.compaction import code_for
from minimal_runtime.example.sessions import fetched_pages, recalled, run_in_sessions
from minimal_runtime.features.compaction import HANDOFF_PATH
from minimal_runtime.features.handoff import PROGRESS_PATH, SessionHandoff
from minimal_runtime.features.plan import Phase, Plan, PlanState

PAGES, STEPS = 30, 16


@pytest.fixture(scope="module")
def carried(tmp_path_factory):
    """The task in sessions handed over through the progress file (one run, read by several tests)."""
    return run_in_sessions(PAGES, STEPS, tmp_path_factory.mktemp("progress"))


@pytest.fixture(scope="module")
def remembered(tmp_path_factory):
    """The task in sessions handed over through the memory tool alone."""
    return run_in_sessions(PAGES, STEPS, tmp_path_factory.mktemp("memory"), memory=True)


def test_a_task_in_sessions_redoes_no_page_and_loses_no_code(carried):
    run = carried
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


def test_with_the_memory_tool_alone_each_session_views_memory_first_and_nothing_is_redone_or_lost(remembered):
    """Variant (c): no progress file; what a session knows is what the last one put in /memories."""
    run = remembered
    sessions, planted = run["sessions"], run["reader"].planted
    assert sorted(fetched_pages(sessions)) == list(range(PAGES)) and recalled(sessions, planted) == 8
    for n, (agent, _, _) in enumerate(sessions, 1):
        first = agent.messages[1]["content"]
        assert [b["input"] for b in first if b["type"] == "tool_use"] == [{"command": "view", "path": "/memories"}]
        assert "This is session" not in str(agent.messages[0]["content"])  # the task alone
        if n > 1:  # just in time: the directory, then its latest file only
            assert agent.messages[3]["content"][-1]["input"] == {"command": "view", "path": f"/memories/session-{n - 1}.md"}
    assert sorted(p.name for p in (run["workspace"] / "memories").iterdir()) == \
        [f"session-{n}.md" for n in range(1, len(sessions))]


def test_a_session_start_writes_its_prefix_again_when_the_progress_rides_in_the_task(carried, remembered):
    """Measured, exact: the task's first message differs each session with a progress file, so each
    session start writes it to the cache again; with the memory tool the task is the same bytes every
    session and a later start reads the first one's entry."""
    assert all(a.calls[0].cache_creation_input_tokens > 0 for a, _, _ in carried["sessions"])
    assert all(a.calls[0].cache_creation_input_tokens == 0 < a.calls[0].cache_read_input_tokens
               for a, _, _ in remembered["sessions"][1:])
