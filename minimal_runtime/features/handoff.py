"""The session handoff: a long task done in sessions, each a fresh context, joined by a progress file.

Chapter 09 keeps one run inside its window. A task can instead be cut into sessions: each a new
Agent with an empty history, reading what the last one left. The pattern Anthropic described for
long-running coding agents: a first session writes a progress file; each later one reads it, takes
the next item, finishes it and brings the file up to date before it ends. What makes it work or
fail is the file: a session that is not told what was done redoes it, and one that is not told what
was learned ("the code on page 12") has lost it.

``SessionHandoff`` does the runtime's part:

- **the ask**, a turn-scoped note on each of a session's last ``ask_before`` calls: finish the item
  in hand, write the handoff note (the agent's own words: the facts it confirmed, its next step),
  then stop. The session's size is its agent's ``max_steps``; the ask leaves it room to end cleanly;
- **the progress file** (``progress.md`` in the workspace), written by the runtime when the session
  ends, from the run's state, not from the model's memory of it: the plan's phases and their
  statuses (``PlanState``), what was done (the files the sessions wrote, all of them, by path), the
  agent's handoff note verbatim, what is next, and where the files are (the workspace, the memory
  directory). Written whole and replaced at once: a kill while writing leaves the last one;
- **the next session's task**: the task again, then the progress file, with the rule "go on from
  Next; do not redo what is done". The new session's context holds nothing else of the old ones.

``run_sessions`` runs a task that way until a session ends without having been asked to hand off
(it finished the task, or stopped for another reason), fails, or ``max_sessions`` are spent.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from pydantic import BaseModel

from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.messages import tool_uses
from .compaction import HANDOFF_PATH
from .filesystem import write_whole
from .plan import PlanState

PROGRESS_PATH = "progress.md"
SESSION_END_ASK = (f"This session ends in a few calls; the next one starts from a fresh context. I finish the item "
                   f"in hand, then write {HANDOFF_PATH}: the facts I have confirmed, what I have done and my next step. "
                   "Then I stop.")
GO_ON = "Go on from Next. Do not redo what is done: the files listed are in the workspace."
WRITES = ("write_file", "create")  # tools (or memory commands) whose ``path`` input is a file written


class Progress(BaseModel):
    """What the next session must know, from the run's state."""

    task: str
    session: int  # the session that wrote it (1 = the first)
    ended: str  # how that session ended (a RunResult status)
    plan: list[tuple[str, str]] = []  # (phase, status)
    files: list[str] = []  # every file in the workspace, by path: what was done
    written: list[str] = []  # of those, the ones this session wrote
    note: str = ""  # the agent's handoff note, verbatim
    next: str = ""
    workspace: str = ""
    memory: str | None = None  # the memory directory (the memory tool's /memories), if the agent has one

    def render(self) -> str:
        lines = [f"# Progress: written when session {self.session} ended ({self.ended})", "",
                 f"Where the files are: the workspace ({self.workspace}); paths below are relative to it."]
        if self.memory:
            lines.append(f"Memory: {self.memory} (the memory tool) holds what earlier sessions chose to remember.")
        if self.plan:
            lines += ["", "## Plan", *(f"{i}. [{status}] {title}" for i, (title, status) in enumerate(self.plan, 1))]
        lines += ["", f"## Done: {len(self.files)} files in the workspace", *(f"- {p}" for p in self.files)]
        if self.written:
            lines += ["", f"Session {self.session} wrote {len(self.written)} of them."]
        if self.note:
            lines += ["", f"## The agent's handoff note ({HANDOFF_PATH}), verbatim", self.note.strip()]
        lines += ["", "## Next", self.next or "(not stated: see the handoff note)"]
        return "\n".join(lines) + "\n"


class SessionHandoff:
    """Ask for the handoff on a session's last calls; write the progress file when it ends; give
    the next session its task. One per task: it counts the sessions."""

    def __init__(self, workspace: str | Path, ask_before: int = 3, plan: PlanState | None = None,
                 memory: str | None = None, carry: bool = True):
        self.workspace, self.ask_before, self.plan, self.memory = Path(workspace), ask_before, plan, memory
        self.carry = carry  # False: the next session is given the task alone (what it knows is in its memory)
        self.session = 0
        self.asked = False  # this session was asked to hand off

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.before_call)

    def before_call(self, event: HookEvent) -> None:
        agent = event.agent
        if agent.max_steps - agent.steps <= self.ask_before:
            self.asked = True
            agent.inject_turn_scoped("session", SESSION_END_ASK)

    def task_for(self, task: str) -> str:
        """The next session's task: the task, then the progress file if an earlier session wrote one."""
        self.session += 1
        self.asked = False
        progress = self.workspace / PROGRESS_PATH
        if self.session == 1 or not self.carry or not progress.is_file():
            return task
        return (f"{task}\n\nThis is session {self.session} of the task. The last session left its progress file "
                f"({PROGRESS_PATH}):\n\n{progress.read_text(encoding='utf-8')}\n{GO_ON}")

    def end(self, agent, task: str, ended: str) -> Progress:
        """Write the progress file from the session's state; returns what it says."""
        note_path = self.workspace / HANDOFF_PATH
        note = note_path.read_text(encoding="utf-8") if note_path.is_file() else ""
        plan = self.plan.plan if self.plan is not None else None
        progress = Progress(
            task=task, session=self.session, ended=ended,
            plan=[(p.title, p.status) for p in plan.phases] if plan else [],
            files=workspace_files(self.workspace), written=written_paths(agent.messages), note=note,
            next=f"nothing: session {self.session} finished the task" if ended == "done" and not self.asked
            else next_step(note, plan), workspace=str(self.workspace), memory=self.memory)
        write_whole(self.workspace, PROGRESS_PATH, progress.render().encode("utf-8"))
        return progress


def workspace_files(root: Path) -> list[str]:
    """Every file under ``root`` but the progress file itself, by path, sorted as a person reads them
    (``page-2`` before ``page-10``); hidden folders (offloads' ``.observations``, the memory journal) too,
    since a path there is how a saved copy is found."""
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            rel = (Path(folder) / name).relative_to(root).as_posix()
            if rel != PROGRESS_PATH and not name.endswith((".tmp", ".part")):  # a write in flight is no file
                found.append(rel)
    return sorted(found, key=_natural)


def written_paths(messages: list[dict]) -> list[str]:
    """The paths this session's write calls named (``write_file``, the memory tool's ``create``)."""
    paths = []
    for message in messages:
        for use in tool_uses(message) if message.get("role") == "assistant" else []:
            args = use.get("input") or {}
            if (use.get("name") in WRITES or args.get("command") in WRITES) and isinstance(args.get("path"), str):
                if args["path"] not in paths:
                    paths.append(args["path"])
    return paths


def next_step(note: str, plan) -> str:
    """What the next session does first: the handoff note's "Next:" line, else the plan's current phase."""
    for line in note.splitlines():
        if line.strip().lower().startswith("next:"):
            return line.strip()[5:].strip()
    if plan is not None and plan.current is not None:
        return f"phase {plan.current + 1}: {plan.phases[plan.current].title}"
    return ""


def _natural(path: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


def run_sessions(new_agent: Callable[[SessionHandoff], object], task: str, handoff: SessionHandoff,
                 max_sessions: int = 20) -> list[tuple[object, object, Progress]]:
    """Run ``task`` in sessions: each a fresh agent from ``new_agent(handoff)`` (which installs the
    handoff on its hooks, and gives it the same workspace and memory), until a session ends without
    having been asked to hand off. Returns (agent, result, progress) per session."""
    sessions = []
    for _ in range(max_sessions):
        agent = new_agent(handoff)
        result = agent.run(handoff.task_for(task))
        progress = handoff.end(agent, task, result.status)
        sessions.append((agent, result, progress))
        if not handoff.asked or result.status == "error":  # finished, or failed: another session would not help
            break
    return sessions
