"""SIMULATED planning behaviour for chapter 04. Not Claude: fixed rules, stated here.

Three ways to keep a long task oriented, each a policy for the emulated model, and a baseline
(``PlainWorker``: no plan at all, just the work):

``TodoRecitation`` (one agent, Manus's first approach): acknowledge; write ``todo.md``; then for
each item: fetch its page, write a note, rewrite ``todo.md`` with the item checked off.

``PlanWorker`` (one agent with the plan tool and the plan hook): acknowledge; write the plan with
``plan``; then for each phase: fetch, write a note, mark the phase done with ``plan``.

``Planner`` + ``Executor`` (the plan hook, with executors): the planner acknowledges, writes the
plan, then delegates each phase (one objective per ``delegate`` call) and re-delegates what a
report leaves open; executors do the work and ``report``; the runtime moves the plan on reports.
The executor rule that chapter 04 measures: when its task block has *no scope line* and the plan
map shows a next pending phase, it also starts that phase's work with probability
``wander_rate`` (seeded), before reporting. With the scope line it never does.
"""

from __future__ import annotations

import json
import random
import re

from ..emulator.policies import Turn, text
from .policy import _act, exchanges
from .web import COMPETITORS

PLANNER_SYSTEM = "You are a planner. You plan, delegate one atomic objective at a time to executors, and report to the user."
EXECUTOR_SYSTEM = "You are an executor. You do exactly the task in your task block, then call report."


def reference_items(n: int) -> list[tuple[str, str]]:
    """The long synthetic task: (phase title, objective) for ``n`` reference pages."""
    return [(f"Summarise reference page {i}", f"Read https://docs.example/page/{i} and save a summary to notes/page-{i}.md")
            for i in range(n)]


def pricing_items() -> list[tuple[str, str]]:
    """The running example as phases: one per competitor, then the write-up."""
    items = [(f"Collect {name}'s pricing", f"Read {name}'s pricing page at {url} and save the tiers to notes/{name.lower()}.md")
             for name, url in COMPETITORS.items()]
    return items + [("Write up the gaps", "Read the four notes in notes/ and write report.md: a tier table and the gaps")]


def _target(objective: str) -> tuple[str | None, str | None]:
    url = re.search(r"https://\S+", objective)
    path = re.search(r"notes/[\w.-]+\.md|report\.md", objective)
    return (url.group(0) if url else None), (path.group(0) if path else None)


def next_work_step(objective: str, done: list) -> Turn | None:
    """The next tool call for one objective given the exchanges so far; None once it is done.
    Knows the three kinds of objective these tasks have: a pricing page (with the moved page and
    the client-side prices to recover from), a reference page, and the write-up."""
    url, path = _target(objective)
    mine = [d for d in done if not _beyond(d, objective)]
    if objective.startswith("Read the four notes"):
        read = [i["path"] for n, i, *_ in mine if n == "read_file"]
        for name in COMPETITORS:
            if f"notes/{name.lower()}.md" not in read:
                return _act(f"Reading my {name} note.", "read_file", path=f"notes/{name.lower()}.md")
        if any(n == "write_file" for n, *_ in mine):
            return None
        from .policy import report
        notes = {name: r for (n, i, r, _), name in zip([d for d in mine if d[0] == "read_file"], COMPETITORS)}
        return _act("Writing the comparison.", "write_file", path="report.md", content=report(notes))
    fetched = [(n, i, r, e) for n, i, r, e in mine if n in ("fetch", "browse")]
    if not fetched:
        return _act("Fetching the page.", "fetch", url=url)
    name, inputs, result, failed = fetched[-1]
    if failed and "404" in result:
        return _act("The page moved; trying /plans.", "fetch", url=inputs["url"].replace("/pricing", "/plans"))
    if "Loading prices" in result:
        return _act("Rendered client-side; browsing.", "browse", url=inputs["url"])
    if any(n == "write_file" for n, *_ in mine):
        return None
    lines = [line.strip() for line in result.splitlines() if "$" in line] or [result[:120]]
    return _act("Saving what I found.", "write_file", path=path,
                content=f"source: {inputs['url']}\n" + "".join(f"- {line}\n" for line in lines))


class _SingleAgent:
    """Shared shape of the one-agent strategies: acknowledge, set up, work item by item, report."""

    def __init__(self, goal: str, items: list[tuple[str, str]]):
        self.goal, self.items = goal, items

    def setup(self, done: list) -> Turn | None:
        return None

    def keep_plan(self, finished: int, done: list) -> Turn | None:
        return None

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        names = [n for n, *_ in done]
        if "message_user" not in names:
            return _act("Acknowledging first.", "message_user", text="On it.")
        step = self.setup(done)
        if step is not None:
            return step
        for finished, (title, objective) in enumerate(self.items):
            step = self.keep_plan(finished, done)
            if step is not None:
                return step
            step = next_work_step(objective, done)
            if step is not None:
                return step
        step = self.keep_plan(len(self.items), done)
        if step is not None:
            return step
        if names.count("message_user") < 2:
            return _act("Reporting to the user.", "message_user", text="Done: every item is finished; see notes/.")
        return Turn(content=[text("All items are done.")])


class PlainWorker(_SingleAgent):
    """No plan at all: the goal is only in the user's first message."""


class TodoRecitation(_SingleAgent):
    """Writes todo.md (the goal and a checklist), and rewrites it after each finished item."""

    def _todo(self, finished: int) -> str:
        return f"# Goal: {self.goal}\n" + "".join(f"- [{'x' if i < finished else ' '}] {title}\n"
                                                  for i, (title, _) in enumerate(self.items))

    def keep_plan(self, finished: int, done: list) -> Turn | None:
        recited = sum(n == "write_file" and i["path"] == "todo.md" for n, i, *_ in done)
        if recited <= finished:
            return _act("Updating my todo list.", "write_file", path="todo.md", content=self._todo(finished))
        return None


class PlanWorker(_SingleAgent):
    """Writes the plan with the plan tool, then marks each phase done with it; the plan hook recites."""

    def setup(self, done: list) -> Turn | None:
        if not any(n == "plan" for n, *_ in done):
            return _act("Writing the plan.", "plan", goal=self.goal,
                        phases=[{"title": t, "skills": ["web_research"]} for t, _ in self.items])
        return None

    def keep_plan(self, finished: int, done: list) -> Turn | None:
        marked = sum(n == "plan" and "status" in i for n, i, *_ in done)
        if marked < finished:
            return _act("Phase done.", "plan", phase=finished, status="done")
        return None


class Planner:
    def __init__(self, goal: str, items: list[tuple[str, str]]):
        self.goal, self.items = goal, items

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        names = [n for n, *_ in done]
        if "message_user" not in names:
            return _act("Acknowledging first.", "message_user", text="On it: I'll plan this and hand out the pieces.")
        if "plan" not in names:
            return _act("This needs several delegations, so I plan first.", "plan", goal=self.goal,
                        phases=[{"title": t, "skills": ["web_research"]} for t, _ in self.items])
        reports = [(i["phase"], json.loads(r)) for n, i, r, err in done if n == "delegate" and not err]
        closed = {phase for phase, report in reports if report["status"] == "done"}
        for phase, (title, objective) in enumerate(self.items, start=1):
            if phase in closed:
                continue
            open_reports = [r for p, r in reports if p == phase]
            if open_reports:  # a partial report: re-delegate what remains
                objective = open_reports[-1]["remains"] or objective
            return _act(f"Delegating phase {phase}.", "delegate", objective=objective, phase=phase)
        if names.count("message_user") < 2:
            return _act("Reporting to the user.", "message_user", text="Done: every phase is complete.")
        return Turn(content=[text("All phases are complete.")])


class Executor:
    def __init__(self, wander_rate: float = 0.5, seed: int = 0):
        self.wander_rate, self.rng = wander_rate, random.Random(seed)
        self.wanders: dict[str, bool] = {}  # objective -> did this executor decide to go on?

    @staticmethod
    def _task_block(request: dict) -> str:
        last = request["messages"][-1]["content"]
        blocks = [b["text"] for b in last if isinstance(last, list) and b.get("type") == "text"
                  and b["text"].startswith("<!-- task -->")]
        return blocks[-1] if blocks else ""

    def __call__(self, request: dict) -> Turn:
        block = self._task_block(request)
        objective = re.search(r"The task I have been handed: (.*)", block).group(1)
        done = exchanges(request["messages"])
        step = next_work_step(objective, done)
        if step is not None:
            return step
        # My own task is finished. Without a scope line, the next pending phase looks like mine too.
        upcoming = re.search(r"<- my task belongs to this phase\n- phase \d+ -- (.*) \(pending\)", block)
        extra = objective_for(upcoming.group(1)) if upcoming and "My scope for this run" not in block else None
        if extra and self.wanders.setdefault(objective, self.rng.random() < self.wander_rate):
            step = next_work_step(extra, done)
            if step is not None:
                return step
        return _act("Reporting back.", "report", status="done", did=f"Done: {objective}", remains="")


def objective_for(title: str) -> str | None:
    """The objective behind a phase title, for the phases these policies know how to do."""
    page = re.fullmatch(r"Summarise reference page (\d+)", title)
    if page:
        return reference_items(int(page.group(1)) + 1)[-1][1]
    company = re.fullmatch(r"Collect (\w+)'s pricing", title)
    if company and company.group(1) in COMPETITORS:
        return next(o for t, o in pricing_items() if t == title)
    return None


def _beyond(exchange: tuple, objective: str) -> bool:
    """Is this tool call outside the objective (another page, another note)?"""
    name, inputs, *_ = exchange
    url, path = _target(objective)
    target = inputs.get("url") or inputs.get("path")
    if name not in ("fetch", "browse", "write_file") or target is None:
        return False
    own = {u for u in (url, path) if u} | ({url.replace("/pricing", "/plans")} if url else set())
    return target not in own


class RolePolicy:
    """One emulator, several roles: the system prompt says which agent is asking, as it would for a model."""

    def __init__(self, planner, executor):
        self.planner, self.executor = planner, executor

    def __call__(self, request: dict) -> Turn:
        system = request.get("system") or ""
        system = system if isinstance(system, str) else " ".join(b["text"] for b in system)
        return (self.executor if EXECUTOR_SYSTEM in system else self.planner)(request)
