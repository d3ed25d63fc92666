"""Ready-made agents for the running example, used by the demo, the notebooks and the tests.

Offline (the default) the client is the emulator with a SIMULATED policy; online the policy is
ignored and a real model does the work (see ``minimal_runtime.example.backend``).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Callable

from ..core import taint
from ..core.agent import Agent
from ..core.hooks import HookRegistry
from ..emulator import Emulator
from ..features.budget import MaxStepsWarning
from ..features.delegation import REPORT_STEPS_WARNING, ExecutorTask, TaskHook, delegate_tool, report_tool
from ..features.filesystem import REFINED_RULES, FilesystemRules
from ..features.plan import MessageDiscipline, PlanHook, PlanState, StartNote, plan_tool
from . import SYSTEM
from .backend import DEFAULT_MODEL, make_client
from .planning import EXECUTOR_SYSTEM, PLANNER_SYSTEM, Executor, Planner, RolePolicy
from .policy import LongRunPolicy, SimulatedResearcher
from .tools import Workspace, pricing_tools


_SCRATCH: list[Path] = []


def scratch_dir() -> Path:
    """A fresh working folder for one run, removed when the interpreter (a notebook's kernel) exits.
    All of them live under one parent folder per process, so a crash leaves one folder, not dozens."""
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="course-")))
        atexit.register(shutil.rmtree, _SCRATCH[0], ignore_errors=True)
    return Path(tempfile.mkdtemp(dir=_SCRATCH[0]))


class SteppingClock:
    """A deterministic clock for the emulator: each reading is one second after the last."""

    def __init__(self, start: float = 0.0):
        self.t = start

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def pricing_agent(workdir: str | Path, *, policy: Callable | None = None, model: str = DEFAULT_MODEL,
                  online: bool | None = None, clock: Callable[[], float] | None = None, extra_tools: tuple = (),
                  account_created: date | None = None, **agent_kwargs: Any) -> tuple[Agent, Emulator | None, list[str]]:
    """The pricing-comparison agent: (agent, the emulator or None online, the user's outbox)."""
    client, emulator = make_client(policy or SimulatedResearcher(), model=model, online=online,
                                   clock=clock or SteppingClock(), account_created=account_created)
    outbox: list[str] = []
    tools = [*pricing_tools(Workspace(Path(workdir) / "workspace"), outbox), *extra_tools]
    agent = Agent(client, model=model, system=SYSTEM, tools=tools, **agent_kwargs)
    return agent, emulator, outbox


@dataclass
class Team:
    """A planner and the executors it spawned, sharing one client (one emulator) and one plan."""

    planner: Agent
    executors: list[Agent]
    plan: PlanState
    emulator: Emulator | None
    outbox: list[str]


def planning_team(workdir: str | Path, goal: str, items: list[tuple[str, str]], *, scope_line: bool = True,
                  wander_rate: float = 0.5, seed: int = 0, model: str = DEFAULT_MODEL, online: bool | None = None,
                  executor_features: tuple = (), executor_max_steps: int = 12, render_plan: Callable | None = None,
                  render_task: Callable | None = None, filesystem_rules: str = REFINED_RULES,
                  **planner_kwargs: Any) -> Team:
    """A planner with the plan tool, the plan hook, START and message-discipline hooks, delegating
    to executors that get a task block bound at spawn time and report back."""
    state = PlanState()
    policy = RolePolicy(Planner(goal, items), Executor(wander_rate, seed))
    client, emulator = make_client(policy, model=model, online=online, clock=SteppingClock())
    outbox: list[str] = []
    work = pricing_tools(Workspace(Path(workdir) / "workspace"), outbox)
    executors: list[Agent] = []

    def spawn(task: ExecutorTask) -> Agent:
        # The executor's hook plan: its task, the filesystem rules, the max-steps warning.
        hooks = HookRegistry().install(TaskHook(task, render_task) if render_task else TaskHook(task),
                                       FilesystemRules(filesystem_rules), MaxStepsWarning(text=REPORT_STEPS_WARNING),
                                       *executor_features)
        # The planner's max_cost_usd is the team's: an executor may spend what the team has left of it
        # (the planner's own check counts only its own calls, so its calls after the last executor can pass it).
        limit = planner_kwargs.get("max_cost_usd")
        left = {} if limit is None else {"max_cost_usd": max(1e-9, limit - sum(
            a.bill().total for a in (planner, *executors)))}
        executor = Agent(client, model=model, system=EXECUTOR_SYSTEM, hooks=hooks, max_steps=executor_max_steps,
                         tools=[*(t for t in work if t.name != "message_user"), report_tool()], name="executor", **left)
        executors.append(executor)
        return executor

    hooks = HookRegistry().install(StartNote(), MessageDiscipline(state),
                                   PlanHook(state, render_plan) if render_plan else PlanHook(state))
    planner_kwargs.setdefault("max_steps", 3 * len(items) + 10)
    planner = Agent(client, model=model, system=PLANNER_SYSTEM, hooks=hooks, name="planner",
                    tools=[plan_tool(state), delegate_tool(state, spawn, scope_line, lambda: taint.by(planner.state)),
                           next(t for t in work if t.name == "message_user")], **planner_kwargs)
    state.kept_in(planner.state)  # the plan lives in the run record: back after a kill
    return Team(planner, executors, state, emulator, outbox)


def long_agent(workdir: str | Path, turns: int, *, page_chars: int = 500, note_every: int = 10, reasoning: int = 0,
               seed: int | None = None, **kwargs: Any) -> tuple[Agent, Emulator | None]:
    """A long synthetic run: ``turns`` tool calls over the docs pages, then an answer; ``reasoning``
    tokens of simulated thinking a call; ``seed`` draws the pages' lengths (see ``LongRunPolicy``)."""
    kwargs.setdefault("max_steps", turns + 2)
    policy = LongRunPolicy(turns, page_chars, note_every, reasoning, seed=seed)
    agent, emulator, _ = pricing_agent(workdir, policy=policy, **kwargs)
    return agent, emulator
