"""Chapter 09's long reading task done in sessions (chapter 11): SIMULATED, not Claude.

``SessionReader`` is chapter 09's ``LongReader`` (it knows only what it can see; a page is done when
its note's path is in view; codes are the ones it can read) with the one rule the harness asks of a
session at its end (``features.handoff.SESSION_END_ASK``): finish the item in hand (a page fetched
and not yet noted is noted first), write the handoff note, then stop. A new session sees only its
task and the progress file the runtime wrote. ``MemoryReader`` hands over through the memory tool
instead, with no progress file.

``run_in_sessions`` runs the task that way on one emulator (one server for every session, as online:
a fresh session's prefix is written to the cache again, and that is part of what it costs).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.tools import ToolBox
from ..emulator.policies import Turn, text
from ..features.compaction import HANDOFF_PATH
from ..features.handoff import SESSION_END_ASK, SessionHandoff, run_sessions
from ..features.memory import ROOT, MemoryTool
from .compaction import LongReader, code_for, long_pages, planted_pages, task_text
from .work import act, batch

SESSION_END = SESSION_END_ASK.split(";")[0]  # what the reader reacts to: fails loudly if reworded (below)
STOPPED = "Session over: my progress is in " + HANDOFF_PATH + "."


class SessionReader(LongReader):
    """SIMULATED: chapter 09's reader, which ends a session as asked (the module docstring)."""

    def __call__(self, request: dict) -> Turn:
        if not any(SESSION_END in t for t in batch(request).values()):
            return super().__call__(request)
        seen = self._gather(request["messages"])
        last = seen["calls"][-1] if seen["calls"] else None
        if last and last[0] == "fetch" and not last[3]:  # the item in hand: a page read, its note not written
            page = int(re.search(r"/page/(\d+)", last[1].get("url", "")).group(1))
            if page not in seen["done"]:
                return act(f"Saving page {page} before the session ends.", "write_file", path=f"notes/page-{page}.md",
                           content=last[2][:200])
        wrote = any(name == "write_file" and args.get("path") == HANDOFF_PATH for name, args, _, _ in seen["calls"])
        if not wrote:
            return self._handoff(seen)
        return Turn(content=[text(STOPPED)])


class MemoryReader(SessionReader):
    """SIMULATED: the same reader with the memory tool and no progress file. As the memory tool page
    says the model does, it views ``/memories`` before anything else; then it reads the latest of its
    session files there (each holds everything so far: just-in-time, one file, not all); at a
    session's end it writes the next one (the codes it has seen, the pages done, the next page)."""

    def __call__(self, request: dict) -> Turn:
        seen = self._gather(request["messages"])
        viewed = [args.get("path") for name, args, _, _ in seen["calls"] if name == "memory" and args.get("command") == "view"]
        if ROOT not in viewed:
            return act("Checking my memory directory first.", "memory", command="view", path=ROOT)
        listing = next(result for name, args, result, _ in seen["calls"] if name == "memory" and args.get("path") == ROOT)
        kept = sorted({int(n) for n in re.findall(r"/memories/session-(\d+)\.md", listing)})
        if kept and f"{ROOT}/session-{kept[-1]}.md" not in viewed:
            return act("Reading my latest memory file.", "memory", command="view", path=f"{ROOT}/session-{kept[-1]}.md")
        if not any(SESSION_END in t for t in batch(request).values()):
            return LongReader.__call__(self, request)
        turn = SessionReader.__call__(self, request)  # the item in hand first, then its handoff note
        uses = [b for b in turn.content if b.get("type") == "tool_use"]
        if uses and uses[0]["input"].get("path") == HANDOFF_PATH:  # the note goes to memory instead
            if any(name == "memory" and args.get("command") == "create" for name, args, _, _ in seen["calls"]):
                return Turn(content=[text(STOPPED.replace(HANDOFF_PATH, ROOT))])
            path = f"{ROOT}/session-{(kept[-1] if kept else 0) + 1}.md"
            return act("Saving what I know to memory before the session ends.", "memory", command="create", path=path,
                       file_text=uses[0]["input"]["content"] + "\n")
        if not uses:
            return Turn(content=[text(STOPPED.replace(HANDOFF_PATH, ROOT))])
        return turn


def run_in_sessions(pages: int, session_steps: int, workdir: Path, *, chars: int = 2000,
                    model: str = "claude-sonnet-5-5", max_sessions: int = 40, memory: bool = False,
                    online: bool = False, max_cost_usd: float | None = None) -> dict:
    """The long reading task in sessions of ``session_steps`` calls each: handed over through the
    progress file, or (``memory``) through the memory tool alone. Returns the sessions (agent,
    result, progress), the reader, the emulator and the workspace. ``online``: a model answers
    instead of the simulated reader; ``max_cost_usd`` bounds all the sessions together (each new
    session gets what the earlier ones left)."""
    from ..core.agent import Agent
    from .agents import SteppingClock
    from .backend import make_client
    from .tools import Workspace, pricing_tools
    if SESSION_END not in SESSION_END_ASK:
        raise RuntimeError("the session-end ask was reworded: the simulated reader would not react")
    reader = (MemoryReader if memory else SessionReader)(pages, planted_pages(pages))
    workspace = Workspace(Path(workdir) / "workspace")
    client, emulator = make_client(reader, model=model, clock=SteppingClock(), online=online)
    made: list[Agent] = []
    files = [t for t in pricing_tools(workspace, []) if t.name in ("read_file", "write_file")]

    def new_agent(handoff: SessionHandoff) -> Agent:
        from ..core.hooks import HookRegistry
        hooks = HookRegistry()
        hooks.install(handoff)
        remembers = [MemoryTool(workspace.root)] if memory else []  # its files in the workspace's memories/
        left = None if max_cost_usd is None else max_cost_usd - sum(a.bill().total for a in made)
        agent = Agent(client, model=model, toolbox=ToolBox([long_pages(chars, reader.planted), *files, *remembers]),
                      name="executor", hooks=hooks, max_steps=session_steps,
                      **({} if left is None else {"max_cost_usd": max(left, 0.0)}))
        made.append(agent)
        return agent

    handoff = SessionHandoff(workspace.root, memory=ROOT if memory else None, carry=not memory)
    sessions = run_sessions(new_agent, task_text(pages, reader.planted), handoff, max_sessions)
    return {"sessions": sessions, "reader": reader, "emulator": emulator, "workspace": workspace.root}


def fetched_pages(sessions) -> list[int]:
    """Every page fetched, in order, over all the sessions (a page twice: work redone)."""
    found = []
    for agent, _, _ in sessions:
        for message in agent.messages:
            if message["role"] == "assistant":
                for block in message["content"]:
                    if block.get("type") == "tool_use" and block["name"] == "fetch":
                        found.append(int(re.search(r"/page/(\d+)", block["input"]["url"]).group(1)))
    return found


def recalled(sessions, planted: list[int]) -> int:
    """The planted codes the last session's answer gives."""
    final = sessions[-1][1].final_text
    return sum(code_for(p) in final for p in planted)
