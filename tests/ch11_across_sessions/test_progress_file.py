"""Chapter 11: the progress file says what a fresh session must know: what was written, what is next,
and everything else of the run's state it needs, with nothing left to its memory of earlier sessions."""

from __future__ import annotations

from minimal_runtime.features.handoff import Progress
from minimal_runtime.features.plan import Phase, Plan


def call(name: str, **args) -> dict:
    return {"type": "tool_use", "id": f"toolu_{name}_{len(args)}", "name": name, "input": args}


HISTORY = [
    {"role": "user", "content": "Read the pages; note each one."},
    {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, call("fetch", url="https://x/page/1"),
                                      call("write_file", path="notes/page-1.md", content="p1")]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"}]},
    {"role": "assistant", "content": [call("memory", command="create", path="/memories/session-1.md", file_text="x"),
                                      call("memory", command="view", path="/memories"),
                                      call("write_file", path="notes/page-1.md", content="again"),
                                      call("write_file", path=7, content="no path")]},
    {"role": "user", "content": [{"type": "text", "text": "write_file path=notes/fake.md"}]},
    {"role": "assistant", "content": [call("read_file", path="notes/page-1.md"), call("write_file", path="HANDOFF.md")]},
]


def test_written_paths_are_every_write_in_order_each_once(impl):
    got = impl.written_paths(HISTORY)
    assert got == ["notes/page-1.md", "/memories/session-1.md", "HANDOFF.md"], \
        f"write_file and the memory tool's create, in order, each once; not reads, views or a path that is no string: {got}"


def test_written_paths_of_a_session_that_wrote_nothing_is_empty(impl):
    assert (got := impl.written_paths(HISTORY[:1])) == [], f"no write call, no path: {got}"


PLAN = Plan(goal="read", phases=[Phase(title="pages 1-40", status="done"), Phase(title="pages 41-80", status="in_progress"),
                                 Phase(title="answer")])


def test_the_next_step_is_the_notes_next_line_first(impl):
    note = "Confirmed: code on page 12.\n  next:  fetch page 41  \nNext: something later"
    assert (got := impl.next_step(note, PLAN)) == "fetch page 41", f"the first 'Next:' line, any case, stripped: {got!r}"


def test_without_a_next_line_the_plans_current_phase_is_next(impl):
    assert (got := impl.next_step("Confirmed: code on page 12.", PLAN)) == "phase 2: pages 41-80", got
    pending = Plan(goal="read", phases=[Phase(title="a", status="done"), Phase(title="b")])
    assert (got := impl.next_step("", pending)) == "phase 2: b", f"no phase in progress: the first pending: {got!r}"


def test_without_either_nothing_is_invented(impl):
    assert (got := impl.next_step("no such line", None)) == "", f"no Next: line and no plan: '', not {got!r}"
    every_done = Plan(goal="g", phases=[Phase(title="a", status="done")])
    assert (got := impl.next_step("", every_done)) == "", f"every phase done and no note: '', not {got!r}"


PROGRESS = Progress(task="Read the pages.", session=3, ended="max_steps", plan=[("pages 1-40", "done"), ("answer", "pending")],
                    files=["notes/page-2.md", "notes/page-10.md", ".observations/fetch-1.txt"], written=["notes/page-10.md"],
                    note="Codes so far: K-12, K-40.\nNext: page 41", next="page 41", workspace="/tmp/ws",
                    memory="/memories")


def test_the_progress_file_names_what_the_next_session_must_know(impl):
    text = impl.progress_text(PROGRESS)
    lines = text.splitlines()
    assert "session 3" in text and "max_steps" in text, "which session wrote it, and how it ended"
    assert "/tmp/ws" in text and "/memories" in text, "where the files are: the workspace and the memory directory"
    assert any("[done]" in line and "pages 1-40" in line for line in lines), "every phase with its status"
    assert any("[pending]" in line and "answer" in line for line in lines), "every phase with its status"
    for path in PROGRESS.files:
        assert f"- {path}" in lines, f"every file done, a line each: {path}"
    assert "3 files" in text, "how many files are done"
    assert PROGRESS.note in text, "the agent's handoff note, verbatim"
    assert "## Next" in lines and lines[lines.index("## Next") + 1] == "page 41", "what is next, under its heading"
    assert text.endswith("\n"), "the file ends with a newline"


def test_a_progress_file_without_memory_or_next_says_so(impl):
    bare = PROGRESS.model_copy(update={"memory": None, "next": "", "note": ""})
    text = impl.progress_text(bare)
    assert "/memories" not in text, "no memory directory is named when the agent has none"
    after = text.split("## Next", 1)[1].strip()
    assert after and "not stated" in after, f"an empty Next is said to be unstated, not left blank: {after!r}"
