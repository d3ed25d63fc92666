"""A SIMULATED reader for chapter 08 (not Claude: fixed rules, seeded), and the flaky docs it reads.

The task: reference pages ``first`` to ``last``, each fetched then summarised to
``notes/page-N.md``, in phases of ``per_phase`` pages (``current_page``, ``phase_objective``). The
reader itself knows only pages: a drift can start on any page's fetch, mid-phase included. Three
rules, each with a parameter the chapter sweeps:

1. **Attention decays with the goal's distance from the tail.** Before each action the reader
   drifts with probability ``drift * (1 - exp(-d / half_life))``, where ``d`` is how many tokens
   of the request the model reads after the last place the goal's own words stand (the task
   itself, or a plan or task block that repeats them; ``attention.goal_distance``), and 0 where
   they stand within ``attention.STATED_WITHIN`` tokens of the tail. A label without the words
   states nothing. A drift is, half the time, a page
   outside the task (off the goal) and otherwise a page of a later phase (skipping ahead). A drift
   goes on: after a drifted page it reads the page after that with probability ``stay`` unless
   this call's batch states the goal. A batch note that names the next page ("The next page is
   N") brings it back at once.
2. **It retries what it cannot see fail.** A fetch that failed, if the failure is in its context,
   is followed by the mirror (``https://mirror.docs.example/page/N``); if the failure was erased,
   it fetches the same address again.
3. **It copies the pattern of its last ``k`` results.** After a page, with probability
   ``copy * similarity`` it fetches the same page again, where ``similarity`` is the share of its
   last ``k`` tool results framed like the newest one (their first line, digits aside).
"""

from __future__ import annotations

import math
import random
import re

from pydantic import BaseModel

from ..core.tools import FunctionTool
from ..emulator.policies import Turn, text
from .attention import STATED_WITHIN, goal_distance
from .knowledge import NEXT_PAGE
from .web import fetch_text
from .work import act, batch, exchanges



def reference_task(first: int, last: int) -> str:
    """The whole task, as the user gives it: the goal's words the reader looks for."""
    return f"Summarise reference pages {first} to {last}, one note per page."


def reference_objective(n: int) -> str:
    return f"Read https://docs.example/page/{n} and save a summary to notes/page-{n}.md"


def phase_objective(first: int, count: int) -> str:
    """The objective of a phase of ``count`` pages from ``first``: every page and note it names."""
    if count == 1:
        return reference_objective(first)
    pages = range(first, first + count)
    return (f"Read {', '.join(f'https://docs.example/page/{n}' for n in pages)} and save a summary of each to "
            f"{', '.join(f'notes/page-{n}.md' for n in pages)}")


class Url(BaseModel):
    url: str


def flaky_fetch(fail_every: int = 0, failures: int = 3, chars: int = 800) -> FunctionTool:
    """``fetch`` over the docs pages, where every ``fail_every``-th page answers 503 to its first
    ``failures`` fetches (a transient outage); its mirror always answers."""
    attempts: dict[int, int] = {}

    def fetch(args: Url) -> str:
        mirror = re.fullmatch(r"https://mirror\.docs\.example/page/(\d+)", args.url)
        if mirror:
            return fetch_text(f"https://docs.example/page/{mirror.group(1)}?chars={chars}")
        page = re.fullmatch(r"https://docs\.example/page/(\d+)", args.url.split("?")[0])
        if page and fail_every and int(page.group(1)) % fail_every == 0:
            n = int(page.group(1))
            attempts[n] = attempts.get(n, 0) + 1
            if attempts[n] <= failures:
                raise ConnectionError(f"503 Service Unavailable: {args.url}")
        return fetch_text(f"{args.url.split('?')[0]}?chars={chars}")
    return FunctionTool("fetch", "Fetch a URL over HTTP and return the page as text.", Url, fetch, reads_outside=True)


def _framing(result: str) -> str:
    return re.sub(r"\d+", "#", result.splitlines()[0] if result else "")


class DriftingReader:
    def __init__(self, first: int, last: int, *, drift: float = 0.5, half_life: float = 4000.0, stay: float = 0.8,
                 copy: float = 0.0, k: int = 6, seed: int = 0, goal: str | None = None):
        self.first, self.last, self.drift, self.half_life, self.copy, self.k = first, last, drift, half_life, copy, k
        self.stay, self.goal = stay, goal or reference_task(first, last)
        self.rng = random.Random(seed)

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        notes = batch(request)
        noted = {int(m.group(1)) for name, args, _, error in done if name == "write_file" and not error
                 for m in [re.fullmatch(r"notes/page-(\d+)\.md", args.get("path", ""))] if m}
        todo = [n for n in range(self.first, self.last + 1) if n not in noted]
        if not todo:
            return Turn(content=[text(f"Pages {self.first} to {self.last} are summarised in notes/.")])
        n = todo[0]
        fetched = [(args.get("url", ""), result, error) for name, args, result, error in done if name == "fetch"]
        mine = [(url, result, error) for url, result, error in fetched if re.search(rf"/page/{n}\b", url)]
        if mine and not mine[-1][2]:
            if self.copy and self._similarity(done) * self.copy > self.rng.random() and len(mine) < 2:
                return act(f"Reading page {n} again.", "fetch", url=mine[-1][0])  # rule 3: the pattern, copied
            return act(f"Saving page {n}.", "write_file", path=f"notes/page-{n}.md", content=mine[-1][1][:200])
        if mine and mine[-1][2]:  # rule 2: the failure is in view, so try the mirror
            return act(f"Page {n} failed; trying the mirror.", "fetch", url=f"https://mirror.docs.example/page/{n}")
        last = re.search(r"/page/(\d+)", fetched[-1][0]) if fetched else None
        last_page = int(last.group(1)) if last else None
        drifted = last_page if last_page is not None and last_page != n and last_page not in noted else None
        step = self._maybe_drift(request, notes, n, drifted)
        return act(f"Reading page {step}.", "fetch", url=f"https://docs.example/page/{step}")

    def _maybe_drift(self, request: dict, notes: dict[str, str], n: int, drifted: int | None) -> int:
        named = re.search(re.escape(NEXT_PAGE) + r"(\d+)", " ".join(notes.values()))
        if named:
            return int(named.group(1))
        distance = self.distance(request)
        p = self.drift * (1 - math.exp(-distance / self.half_life))
        if drifted is not None and distance and self.rng.random() < self.stay:
            return drifted + 1  # a drift goes on: the recent pages are the pattern now
        if self.rng.random() >= p:
            return n
        if self.rng.random() < 0.5:
            return 10_000 + self.rng.randrange(10_000)  # a page outside the task
        return min(self.last, n + 1 + self.rng.randrange(3))  # a page of a later phase

    def distance(self, request: dict) -> float:
        """Rule 1's ``d``: tokens after the goal's words, 0 where they stand at the tail (and where
        they stand nowhere, the whole request: the goal was never read)."""
        d = goal_distance(request, self.goal)
        if d is None:
            return float(sum(len(str(m["content"])) for m in request["messages"]) / 4)
        return 0.0 if d <= STATED_WITHIN else float(d)

    def _similarity(self, done: list) -> float:
        recent = [_framing(result) for _, _, result, error in done[-self.k:] if not error]
        return sum(f == recent[-1] for f in recent) / len(recent) if recent else 0.0


def reader_agent(workdir, reader: DriftingReader, *, fetch: FunctionTool | None = None, model: str | None = None,
                 vary: int | None = None, online: bool | None = None, **agent_kwargs):
    """An executor-role agent for the reader: the flaky fetch (no failures by default) and the
    workspace's file tools; ``vary``: a seed for framing each tool result (``VariedResults``).
    Returns (agent, the emulator or None online)."""
    from pathlib import Path

    from ..core.agent import Agent
    from ..core.tools import ToolBox
    from ..features.drift import VariedResults
    from .agents import SteppingClock
    from .backend import DEFAULT_MODEL, make_client
    from .tools import Workspace, pricing_tools
    model = model or DEFAULT_MODEL
    client, emulator = make_client(reader, model=model, clock=SteppingClock(), online=online)
    files = [t for t in pricing_tools(Workspace(Path(workdir) / "workspace"), []) if t.name in ("read_file", "write_file")]
    agent_kwargs.setdefault("max_steps", 4 * (reader.last - reader.first + 1) + 20)
    toolbox = ToolBox([fetch or flaky_fetch(), *files])
    agent = Agent(client, model=model, toolbox=VariedResults(toolbox, vary) if vary is not None else toolbox,
                  name="executor", **agent_kwargs)
    return agent, emulator


def current_page(reader: DriftingReader, per_phase: int = 1):
    """The current phase of the reader's task, from its own history: the phase (of ``per_phase``
    pages) of the first page without a note. The history is read once: an append-only history is
    scanned from where the last call stopped, a replaced one from the start."""
    seen: dict = {"messages": None, "scanned": 0, "noted": set()}

    def current(agent) -> int | None:
        messages = agent.messages
        n = seen["scanned"]
        if seen["messages"] is not messages or len(messages) < n or (n and messages[n - 1] is not seen["last"]):
            seen.update(messages=messages, noted=set())
            n = 0
        start = max(0, n - 1)  # the last message seen may hold the call whose result is new
        for name, args, _, error in exchanges(messages[start:]):
            m = re.fullmatch(r"notes/page-(\d+)\.md", args.get("path", "")) if name == "write_file" and not error else None
            if m:
                seen["noted"].add(int(m.group(1)))
        seen.update(scanned=len(messages), last=messages[-1] if messages else None)
        page = next((k - reader.first for k in range(reader.first, reader.last + 1) if k not in seen["noted"]), None)
        return None if page is None else page // per_phase
    return current


# -- chapter 08's experiment: one run of the reader under a setting -----------------------------------

SETTINGS = ("none", "plan hook", "scope line", "KM nudge", "event recitation", "all")


def phases(per_phase: int, pages: int) -> list[str]:
    """The objectives of the task's phases of ``per_phase`` pages."""
    return [phase_objective(first, min(per_phase, pages - first)) for first in range(0, pages, per_phase)]


def plan_of(current, per_phase: int, pages: int):
    """The plan as the reader's notes make it stand: phases before the current one done."""
    from ..features.plan import Phase, Plan

    def plan(agent) -> Plan:
        c = current(agent)
        c = pages if c is None else c
        return Plan(goal=reference_task(0, pages - 1), phases=[
            Phase(title=(f"Summarise reference pages {first} to {min(first + per_phase, pages) - 1}" if per_phase > 1
                         else f"Summarise reference page {first}"),
                  status="done" if k < c else "in_progress" if k == c else "pending")
            for k, first in enumerate(range(0, pages, per_phase))])
    return plan


def drift_run(setting: str, *, half_life: float = 4000.0, seed: int = 0, per_phase: int = 4, pages: int = 24,
              page_chars: int = 800, judge=None, trigger=None, model: str = "claude-sonnet-5-5",
              online: bool | None = None, workdir=None, **agent_kwargs) -> dict:
    """One run of the reader under ``setting`` (one of ``SETTINGS``), with the runtime's own features:
    the ``DriftMeter`` (``judge``: a ``serves``), the ``PlanHook`` on a plan kept current from the
    notes, the executor's task block, the knowledge manager, ``EventRecitation`` (``trigger``).
    ``online``: the model answers instead of the simulated reader, and the meter judges it the same
    way. Returns the agent, the meter, the result and the recitation feature."""
    import tempfile

    from ..core.hooks import HookRegistry, Point
    from ..features.delegation import ExecutorTask, render_task_block
    from ..features.drift import DriftMeter, EventRecitation
    from ..features.knowledge import KnowledgeManager, SerialPool
    from ..features.plan import PlanEdit, PlanHook, PlanState, render_plan_block
    from .backend import make_client
    from .knowledge import RunClock, SimulatedKM
    if setting not in SETTINGS:
        raise ValueError(f"no setting {setting!r}: one of {', '.join(SETTINGS)}")
    reader = DriftingReader(0, pages - 1, half_life=half_life, seed=seed)
    current = current_page(reader, per_phase)
    plan, objectives = plan_of(current, per_phase, pages), phases(per_phase, pages)
    meter = DriftMeter(objectives, current, **({"judge": judge} if judge else {}))
    hooks, recitation = HookRegistry().install(meter), None
    if setting in ("plan hook", "all"):
        state = PlanState()
        hooks.register(Point.PRE_LLM_CALL, lambda e: state.apply(PlanEdit(**plan(e.agent).model_dump())))
        hooks.install(PlanHook(state))
    if setting in ("scope line", "all"):
        def task_block(e):
            if current(e.agent) is not None:
                e.agent.inject_turn_scoped("task", render_task_block(ExecutorTask(
                    objective=objectives[current(e.agent)], phase=current(e.agent) + 1, plan=plan(e.agent))))
        hooks.register(Point.PRE_LLM_CALL, task_block)
    if setting in ("KM nudge", "all"):
        clock = RunClock()
        client, _ = make_client(SimulatedKM(), model="claude-haiku-5-5", online=online)
        hooks.register(Point.PRE_LLM_CALL, clock.advance)
        hooks.install(KnowledgeManager(client, "claude-haiku-5-5", clock, pool=SerialPool()))
    if setting == "event recitation":
        recitation = EventRecitation(lambda a: render_plan_block(plan(a)), current, meter,
                                     **({"trigger": trigger} if trigger else {}))
        hooks.install(recitation)
    agent, _ = reader_agent(workdir or tempfile.mkdtemp(prefix="drift-"), reader, model=model, hooks=hooks,
                            fetch=flaky_fetch(chars=page_chars), online=online, **agent_kwargs)
    result = agent.run(reference_task(0, pages - 1))
    return {"agent": agent, "meter": meter, "result": result, "recitation": recitation}
