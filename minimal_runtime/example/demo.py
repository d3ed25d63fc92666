"""The running example end to end, call by call: what was injected, what the cache did, the cost.

Offline (the default) the model is the emulator with a *simulated* researcher policy; with
``ANTHROPIC_API_KEY`` set the same run goes to the real API.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ..core.agent import Agent
from ..core.context import injected_source
from ..view.request import batch_of
from ..core.hooks import HookEvent, HookRegistry, Point
from . import TASK, LongRunPolicy, SimulatedResearcher, Workspace, pricing_agent
from .backend import DEFAULT_MODEL


class NotesProgress:
    """PRE_LLM_CALL: where the work stands, read fresh from the workspace every call."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def __call__(self, event: HookEvent) -> None:
        folder = self.workspace.root / "notes"
        notes = sorted(p.stem for p in folder.glob("*.md")) if folder.exists() else []
        have = ", ".join(notes) if notes else "none yet"
        event.agent.inject_turn_scoped("progress", f"Progress of this run: notes saved for {len(notes)} of 4 competitors ({have}).")


def calls_progress(event: HookEvent) -> None:
    """The long run's PRE_LLM_CALL hook: how far the run has got, in calls (what the runtime counts;
    a model online may read no page on some of them)."""
    n = len(event.agent.calls)
    event.agent.inject_turn_scoped("progress", f"Progress of this run: {n} call{'' if n == 1 else 's'} made so far.")


class DemoFailed(RuntimeError):
    """The run stopped on an API error; the error was printed with what to do about it."""


def run_demo(turns: int | None = None, out=None) -> Agent:
    out = out or sys.stdout  # looked up per call, so a redirected stdout is honoured
    online = bool(os.environ.get("ANTHROPIC_API_KEY"))
    policy = LongRunPolicy(turns) if turns else SimulatedResearcher()
    workdir = Path(tempfile.mkdtemp(prefix="demo-"))
    workspace = Workspace(workdir / "workspace")
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, calls_progress if turns else NotesProgress(workspace))
    agent, _, outbox = pricing_agent(workdir, policy=policy, online=online, hooks=hooks, max_steps=(turns or 30) + 5)

    server = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    backend = f"the Messages API at {server}" if online else "the offline emulator, SIMULATED policy"
    print(f"model {DEFAULT_MODEL} via {backend}; workspace {workspace.root}", file=out)
    name = getattr(agent.layout, "__name__", type(agent.layout).__name__)
    print(f"layout {name}: {agent.layout_reason}", file=out)
    print("under each call, the note injected at its tail: what the model read before it chose the action", file=out)
    print(f"{'call':>4}  {'injected':<10} {'cache read':>10} {'write':>7} {'uncached':>8} {'cost':>9}  action", file=out)

    def show(event: HookEvent) -> None:
        n, u = len(event.agent.calls), event.agent.calls[-1]
        blocks = event.response.content
        action = next((f"{b.name}({next(iter(b.input.values()), '')!s:.40})" for b in blocks if b.type == "tool_use"),
                      "answer")
        if turns and n % 50 and n != 1:  # long runs: a row every 50 calls, a progress line between
            if out.isatty():
                print(f"\r  ... call {n}/{turns}", end="", file=out, flush=True)
            return
        batch = [b for b in batch_of(event.request) if injected_source(b)]
        sources = ",".join(injected_source(b) for b in batch) or "-"
        print(f"\r{n:>4}  {sources:<10} {u.cache_read_input_tokens:>10,} {u.cache_creation_input_tokens:>7,} "
              f"{u.input_tokens:>8,} {u.cost:>9.5f}  {action}", file=out)
        for b in batch:  # what the model read at the tail of this call, and only of this call
            body = b["text"].split("\n", 1)[-1].replace("\n", " ")
            print(f"{'':>6}{body[:96]}{'...' if len(body) > 96 else ''}", file=out)
    hooks.register(Point.POST_LLM_CALL, show, name="show")

    result = agent.run(TASK if not turns else f"Read the docs pages 0 to {turns - 1}.")
    calls = agent.calls
    if result.status == "error":
        print(f"\nrun stopped after {len(calls)} calls: {result.error}", file=out)
        if online:
            print("ANTHROPIC_API_KEY is set, so the demo went to the real API. To run offline instead:\n"
                  "  ANTHROPIC_API_KEY= make demo", file=out)
        raise DemoFailed(result.error or "the run stopped on an API error")
    prompt = sum(c.prompt_tokens for c in calls)
    read = sum(c.cache_read_input_tokens for c in calls)
    cost, uncached_cost = agent.bill().total, sum(c.cost_without_cache for c in calls)  # the bill: lost calls too
    print(f"\nrun {result.status} after {len(calls)} calls: {result.final_text}", file=out)
    print(f"cache-read share of prompt tokens: {read / prompt:.1%}", file=out)
    print(f"total cost ${cost:.4f}; without caching ${uncached_cost:.4f} ({uncached_cost / cost:.1f}x)", file=out)
    if outbox:
        print("messages to the user:\n" + "\n".join(f"  > {m}" for m in outbox), file=out)
    report = workspace.root / "report.md"
    if report.exists():
        print("\n" + report.read_text(), file=out)
    return agent
