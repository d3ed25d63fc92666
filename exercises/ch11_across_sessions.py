"""Chapter 11 exercise: the progress file's writer, what the next session must know.

A session ends; the next one starts from a fresh context with the task and this file alone. Write
the three pieces the runtime's ``SessionHandoff.end`` uses. Test with
``.venv/bin/pytest tests/ch11_across_sessions --impl exercises``.
"""

from __future__ import annotations

from minimal_runtime.features.handoff import Progress
from minimal_runtime.features.plan import Plan

__all__ = ["next_step", "progress_text", "written_paths"]


def written_paths(messages: list[dict]) -> list[str]:
    """The paths this session's write calls named, in the order first written, each once: the
    ``path`` input of every ``tool_use`` block named ``write_file``, and of every memory tool call
    whose ``command`` is ``create``. Only assistant messages make calls; a ``path`` that is not a
    string is no path."""
    raise NotImplementedError("ch11: written_paths")


def next_step(note: str, plan: Plan | None) -> str:
    """What the next session does first: the text after ``Next:`` (any case, leading spaces allowed)
    on the first line of the agent's handoff ``note`` that starts with it, stripped; without such a
    line, ``"phase N: TITLE"`` for the plan's current phase (``plan.current``, 0-based; N is 1-based);
    without either, ``""``."""
    raise NotImplementedError("ch11: next_step")


def progress_text(progress: Progress) -> str:
    """The progress file's text. It must name, for a reader with nothing else in context: the session
    that wrote it and how it ended (``progress.ended``); the workspace; the memory directory when
    ``progress.memory`` is set; every phase of ``progress.plan`` as ``[status] title``; every path of
    ``progress.files`` on a line of its own as ``- path`` and how many there are; the agent's handoff
    note verbatim; and ``progress.next`` under a ``## Next`` heading (when it is empty, a line saying
    it was not stated). Ends with a newline."""
    raise NotImplementedError("ch11: progress_text")
