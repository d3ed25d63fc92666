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

from ..core.context import last_note
from ..emulator.policies import Turn, text
from ..features.delegation import MY_PHASE, SCOPE_LINE, TASK_LINE
from .work import PolicyError, SingleAgent, act, after, batch, exchanges, next_work_step, objective_for, pricing_items, reference_items

__all__ = ["PLANNER_SYSTEM", "EXECUTOR_SYSTEM", "PlainWorker", "TodoRecitation", "PlanWorker", "Planner", "Executor",
           "RolePolicy", "pricing_items", "reference_items"]

PLANNER_SYSTEM = "You are a planner. You plan, delegate one atomic objective at a time to executors, and report to the user."
EXECUTOR_SYSTEM = "You are an executor. You do exactly the task in your task block, then call report."


class PlainWorker(SingleAgent):
    """No plan at all: the goal is only in the user's first message."""


class TodoRecitation(SingleAgent):
    """Writes todo.md (the goal and a checklist), and rewrites it after each finished item."""

    def _todo(self, finished: int) -> str:
        return f"# Goal: {self.goal}\n" + "".join(f"- [{'x' if i < finished else ' '}] {title}\n"
                                                  for i, (title, _) in enumerate(self.items))

    def keep_plan(self, finished: int, done: list) -> Turn | None:
        recited = sum(n == "write_file" and i["path"] == "todo.md" for n, i, *_ in done)
        if recited <= finished:
            return act("Updating my todo list.", "write_file", path="todo.md", content=self._todo(finished))
        return None


class PlanWorker(SingleAgent):
    """Writes the plan with the plan tool, then marks each phase done with it; the plan hook recites."""

    def setup(self, done: list) -> Turn | None:
        if not any(n == "plan" for n, *_ in done):
            return act("Writing the plan.", "plan", goal=self.goal,
                        phases=[{"title": t, "skills": ["web_research"]} for t, _ in self.items])
        return None

    def keep_plan(self, finished: int, done: list) -> Turn | None:
        marked = sum(n == "plan" and "status" in i for n, i, *_ in done)
        if marked < finished:
            return act("Phase done.", "plan", phase=finished, status="done")
        return None


class Planner:
    def __init__(self, goal: str, items: list[tuple[str, str]]):
        self.goal, self.items = goal, items

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        names = [n for n, *_ in done]
        if "message_user" not in names:
            return act("Acknowledging first.", "message_user", text="On it: I'll plan this and hand out the pieces.")
        if "plan" not in names:
            return act("This needs several delegations, so I plan first.", "plan", goal=self.goal,
                        phases=[{"title": t, "skills": ["web_research"]} for t, _ in self.items])
        reports = [(i["phase"], json.loads(r)) for n, i, r, err in done if n == "delegate" and not err]
        closed = {phase for phase, report in reports if report["status"] == "done"}
        for phase, (title, objective) in enumerate(self.items, start=1):
            if phase in closed:
                continue
            open_reports = [r for p, r in reports if p == phase]
            if open_reports:  # a partial report: re-delegate what remains
                objective = open_reports[-1]["remains"] or objective
            return act(f"Delegating phase {phase}.", "delegate", objective=objective, phase=phase)
        if names.count("message_user") < 2:
            return act("Reporting to the user.", "message_user", text="Done: every phase is complete.")
        return Turn(content=[text("All phases are complete.")])


class Executor:
    def __init__(self, wander_rate: float = 0.5, seed: int = 0):
        self.wander_rate, self.rng = wander_rate, random.Random(seed)
        self.wanders: dict[str, bool] = {}  # objective -> did this executor decide to go on?

    def __call__(self, request: dict) -> Turn:
        notes = batch(request)
        block = notes.get("task")
        if block is None:
            raise PolicyError("the simulated executor expects its task block (source 'task') in every call's batch")
        written = last_note(request["messages"], "task-text")
        if written:  # a tainted task: the planner's words are user text (kept in the history), the frame the system entry
            block = f"{written}\n{block}"
        objective = after(TASK_LINE, block)
        done = exchanges(request["messages"])
        step = next_work_step(objective, done)
        if step is not None:
            return step
        # My own task is finished. Without a scope line, the next pending phase looks like mine too.
        if f"<- {MY_PHASE}" not in block:
            raise PolicyError(f"the simulated executor expects {MY_PHASE!r} in the plan map of its task block")
        upcoming = re.search(rf"<- {re.escape(MY_PHASE)}\n- phase \d+ -- (.*) \(pending\)", block)
        extra = objective_for(upcoming.group(1)) if upcoming and SCOPE_LINE not in block else None
        if extra and self.wanders.setdefault(objective, self.rng.random() < self.wander_rate):
            step = next_work_step(extra, done)
            if step is not None:
                return step
        return act("Reporting back.", "report", status="done", did=f"Done: {objective}", remains="")


class RolePolicy:
    """One emulator, several roles: the system prompt says which agent is asking, as it would for a model."""

    def __init__(self, planner, executor):
        self.planner, self.executor = planner, executor

    def __call__(self, request: dict) -> Turn:
        system = request.get("system") or ""
        system = system if isinstance(system, str) else " ".join(b["text"] for b in system)
        return (self.executor if EXECUTOR_SYSTEM in system else self.planner)(request)


# -- chapter 04's experiment: one strategy on a task (the chapter and ``make experiment CHAPTER=04``) ----

STRATEGIES = ("no plan", "todo recitation", "plan hook, one agent", "planner + executors")
PLAN_KEEPING = {"plan", "todo"}  # the kinds of action that keep the plan current


def kind(call: dict) -> str:
    """What an action is for: work, keeping the plan (``todo``, ``plan``), delegating, or talking."""
    if call["name"] == "write_file" and call["input"].get("path") == "todo.md":
        return "todo"
    return {"message_user": "talk", "delegate": "delegate", "report": "delegate", "plan": "plan"}.get(call["name"], "work")


def actions(run: dict):
    """A Counter of the run's actions by ``kind``, over every agent of the run."""
    from collections import Counter

    from ..core.messages import tool_uses
    return Counter(kind(c) for a in run["agents"] for m in a.messages if m["role"] == "assistant" for c in tool_uses(m))


def strategy_run(strategy: str, goal: str, items: list[tuple[str, str]], *, render_plan=None, render_task=None,
                 online: bool | None = None, workdir=None, **agent_kwargs) -> dict:
    """One run of ``strategy`` (one of ``STRATEGIES``) on ``items``, with the blocks ``render_plan``
    and ``render_task`` (the learner's, in the chapter; the runtime's where None). ``online``: the
    model answers instead of the simulated agents. ``agent_kwargs`` go to the single agent or the
    planner; a team's executors each get what is left of its ``max_cost_usd`` when spawned.
    Returns the agents, the requests the (first) agent sent, every call, and the result."""
    import tempfile

    from ..core.hooks import HookRegistry, Point
    from ..features.plan import PlanHook, PlanState, plan_tool
    from .agents import planning_team, pricing_agent
    if strategy not in STRATEGIES:
        raise ValueError(f"no strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    workdir, prompts = workdir or tempfile.mkdtemp(prefix="plan-"), []
    if strategy == "planner + executors":
        team = planning_team(workdir, goal, items, online=online, render_plan=render_plan, render_task=render_task,
                             **agent_kwargs)
        team.planner.hooks.register(Point.POST_LLM_CALL, lambda e: prompts.append(e.request))
        result = team.planner.run(goal)
        return {"agents": [team.planner, *team.executors], "prompts": prompts, "result": result,
                "calls": team.planner.calls + [c for e in team.executors for c in e.calls]}
    policy = {"no plan": PlainWorker, "todo recitation": TodoRecitation, "plan hook, one agent": PlanWorker}[strategy]
    state, hooks, with_plan = PlanState(), HookRegistry(), strategy == "plan hook, one agent"
    if with_plan:
        hooks.install(PlanHook(state, render_plan) if render_plan else PlanHook(state))
    hooks.register(Point.POST_LLM_CALL, lambda e: prompts.append(e.request))
    agent_kwargs.setdefault("max_steps", 4 * len(items) + 10)
    agent, _, _ = pricing_agent(workdir, policy=policy(goal, items), online=online, hooks=hooks,
                                extra_tools=(plan_tool(state),) if with_plan else (), **agent_kwargs)
    result = agent.run(goal)
    return {"agents": [agent], "prompts": prompts, "calls": agent.calls, "result": result}
