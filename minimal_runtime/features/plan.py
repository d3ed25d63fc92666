"""Keeping the agent oriented: a structured plan, a tool to write it, a hook that recites it.

The goal is the oldest thing in a long transcript; each turn adds evidence about the current
sub-task and nothing re-states the task. The plan hook puts the goal, the current phase and a map
of the plan at the *tail* of every call, read fresh from the plan each time, so they are the
newest thing the model reads as well as among the oldest. It costs no action: the model never has
to decide to recite. On current models the batch is a system entry (operator authority), so every
block states facts about the run ("Current phase: 2 of 4") rather than speaking as the agent.

The goal, the phase titles and their skills are the model's words. Once the run has read outside
text (``core.taint``) they may carry it, so from then on they go out as user text (``plan-text``,
``render_words``: kept in the history, sent again when the plan is rewritten) and the system entry
keeps the frame: numbers, statuses, the cursor, the rules (``framed``: the plan with the model's
words replaced by where to find them).

The goal must not leave the tail when the run is tainted: that is when a page the agent read is
most likely to pull it elsewhere. So the frame keeps one sentence of words, the user's own task
(``TASK_KEY``, kept at START from the message that started the run). The operator's caller wrote
it, not the model and not a page, so it may stand in a system entry; the model's restatement of it
goes as user text only where it says something else. A hook installed after the run started has
no task to keep and points to the user turn instead.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field, model_validator

from ..core import taint
from ..core.context import last_note
from ..core.messages import text_of
from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.tools import FunctionTool

Status = Literal["pending", "in_progress", "done"]

COMMUNICATION_RULES = ("Messages to the user go through message_user: short, and never repeating what was "
                       "already delivered.")


GOAL_LINE = "The goal of this run: "  # simulated policies look for it (chapter 08)


class Phase(BaseModel):
    title: str = Field(min_length=1)
    status: Status = "pending"
    skills: list[str] = Field(default_factory=list, description="what this phase needs, e.g. web_research")


class Plan(BaseModel):
    goal: str = Field(min_length=1)
    phases: list[Phase] = Field(min_length=1)

    @property
    def current(self) -> int | None:
        """Index of the phase being worked on: the first in progress, else the first pending;
        None when every phase is done."""
        for wanted in ("in_progress", "pending"):
            for i, phase in enumerate(self.phases):
                if phase.status == wanted:
                    return i
        return None

    @property
    def done(self) -> int:
        return sum(p.status == "done" for p in self.phases)


class PlanEdit(BaseModel):
    """The plan tool's input: write a whole plan, or change one phase's status."""

    goal: str | None = None
    phases: list[Phase] | None = None
    phase: int | None = Field(default=None, description="1-based phase number, with status")
    status: Status | None = None

    @model_validator(mode="after")
    def one_kind_of_edit(self) -> "PlanEdit":
        whole, one = self.goal is not None or self.phases is not None, self.phase is not None or self.status is not None
        if whole == one:
            raise ValueError("give either goal and phases (a new plan) or phase and status (an update)")
        if whole and (self.goal is None or not self.phases):
            raise ValueError("a new plan needs a goal and at least one phase")
        if one and (self.phase is None or self.status is None):
            raise ValueError("an update needs both phase and status")
        return self


class PlanState:
    """The run's current plan, shared by the tool that writes it and the hooks that read it.

    Once ``kept_in`` an agent's ``state`` (what hooks keep across crashes), the plan lives there and
    nowhere else: each edit is in the run record with the tool result that made it, and an agent
    resumed on that record reads it back. Unbound, it is kept here, in memory (a test, a sketch)."""

    KEY = "plan"

    def __init__(self, plan: Plan | None = None):
        self._plan = plan
        self._record: Any = None  # the agent's RunState, once kept in it
        self._lock = threading.Lock()

    def kept_in(self, record: Any) -> "PlanState":
        """Keep the plan in ``record`` (an agent's ``state``) from now on; a plan given here and not
        yet there is moved into it. Returns self."""
        with self._lock:
            if self._plan is not None and record.get(self.KEY) is None:
                record.set(self.KEY, self._plan.model_dump())
            self._record, self._plan = record, None
        return self

    @property
    def plan(self) -> Plan | None:
        if self._record is None:
            return self._plan
        saved = self._record.get(self.KEY)
        return None if saved is None else Plan.model_validate(saved)

    def _save(self, plan: Plan) -> None:
        if self._record is None:
            self._plan = plan
        else:
            self._record.set(self.KEY, plan.model_dump())

    def apply(self, edit: PlanEdit) -> str:
        with self._lock:
            if edit.phases is not None:
                self._save(Plan(goal=edit.goal, phases=edit.phases))
                return f"Plan saved: {len(edit.phases)} phases."
            plan = self.plan
            if plan is None:
                raise ValueError("there is no plan yet: write one with goal and phases first")
            if not 1 <= edit.phase <= len(plan.phases):
                raise ValueError(f"phase {edit.phase} does not exist (1 to {len(plan.phases)})")
            plan.phases[edit.phase - 1].status = edit.status
            self._save(plan)
            return f"Phase {edit.phase} is now {edit.status}."

    def set_status(self, phase: int, status: Status) -> None:
        """For the runtime itself (an executor's report moves its phase)."""
        self.apply(PlanEdit(phase=phase, status=status))


PLAN_TOOL_DESCRIPTION = ("Write the plan (goal and phases, each with a status and skills) or update one phase's "
                         "status (phase, status).")
WHOLE_PLAN = "The whole plan, with the current phase marked:"
CURRENT = "current phase"  # the cursor in the plan block's map


def plan_tool(state: PlanState) -> FunctionTool:
    return FunctionTool("plan", PLAN_TOOL_DESCRIPTION, PlanEdit, state.apply)


def render_phase_map(plan: Plan, marked: int | None, cursor: str) -> str:
    """The plan as one line per phase, with ``<- cursor`` after the 0-based phase ``marked``. The
    plan block and an executor's task block both show this map; only the cursor differs."""
    return "\n".join(f"- phase {i + 1} -- {p.title} ({p.status.replace('_', ' ')})"
                     + (f"  <- {cursor}" if i == marked else "") for i, p in enumerate(plan.phases))


def render_plan_block(plan: Plan) -> str:
    """What the plan hook injects: facts about the plan, stated as a system entry states them."""
    total, current = len(plan.phases), plan.current
    if current is None:
        where = f"Every phase of the plan is done ({total}/{total}). What remains is to check the result and report it."
    else:
        where = (f"Current phase: {current + 1} of {total}: {plan.phases[current].title}.\n"
                 f"Progress so far: {plan.done}/{total} phases done.")
    # The blank lines are layout for the model; tests pin the block's parts (goal, phase, map, rules).
    lines = [f"Plan status. {GOAL_LINE}{plan.goal}", where, "",  # pragma: no mutate
             WHOLE_PLAN, render_phase_map(plan, current, CURRENT)]
    if current is not None and plan.phases[current].skills:
        lines += ["", f"Skills this phase needs: {', '.join(plan.phases[current].skills)}."]  # pragma: no mutate
    return "\n".join(lines + ["", COMMUNICATION_RULES])  # pragma: no mutate


# Where the frame of a tainted run points for the model's words (they follow as user text).
WRITTEN = "as written in the user turn"


# The user's task recited in a tainted run's frame, at most this many characters: a task that pastes a
# document would otherwise be re-sent whole on every call. Past it the frame says where the rest is.
TASK_RECITED = 1_000


def framed(plan: Plan, task: str | None = None) -> Plan:
    """``plan`` with the model's words (goal, titles, skills) replaced by where they are: what a
    system entry may state of a plan once the run is tainted. ``task``, the user's own words, stands
    as the goal where it is known."""
    if task is None:
        goal = f"({WRITTEN}: the plan-text note)"
    elif len(task) > TASK_RECITED:
        goal = f"{task[:TASK_RECITED]}... (the rest as written in the user's task)"
    else:
        goal = task
    return Plan(goal=goal, phases=[Phase(title=f"(title {WRITTEN})", status=p.status) for p in plan.phases])


def render_written(plan: Plan, marked: int | None, cursor: str = CURRENT) -> str:
    """The model's words of the plan, for the user turn: the goal, the phase map with its titles
    (``cursor`` after the 0-based phase ``marked``), the marked phase's skills."""
    lines = [f"The plan as written. {GOAL_LINE}{plan.goal}", render_phase_map(plan, marked, cursor)]
    if marked is not None and plan.phases[marked].skills:
        lines += [f"Skills this phase needs: {', '.join(plan.phases[marked].skills)}."]
    return "\n".join(lines)


def render_words(plan: Plan, task: str | None = None) -> str:
    """The model's words of a plan, for the user turn: its goal (unless it is the user's ``task``,
    which the frame recites), each phase's title and skills by number (statuses and the cursor are
    the frame's), so they change only when the plan is rewritten."""
    goal = "" if task is not None and plan.goal.strip() == task.strip() else f" {GOAL_LINE}{plan.goal}"
    return "\n".join([f"The plan as written.{goal}"] + [
        f"- phase {i + 1} -- {p.title}" + (f" (skills: {', '.join(p.skills)})" if p.skills else "")
        for i, p in enumerate(plan.phases)])


TASK_KEY = "plan-task"  # in agent.state: the user's task that started the run, for a tainted run's frame


class PlanHook:
    """PRE_LLM_CALL: once a plan exists, recite it at the tail of every call: whole in the system
    entry, or, once the run is tainted, its frame there, with the user's task as its goal, and the
    model's other words as user text. Those stay in the history on the current layout (user text
    cannot be turn-scoped), so they go again only when the plan is rewritten; on the 2025 layout the
    batch is not kept, and they go every call. START: keeps the user's task (``TASK_KEY``)."""

    def __init__(self, state: PlanState, render: Callable[[Plan], str] = render_plan_block):
        self.state, self.render = state, render

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.keep_task)
        hooks.register(Point.PRE_LLM_CALL, self.recite, when=lambda event: self.state.plan is not None)

    def keep_task(self, event: HookEvent) -> None:
        """START comes right after the task is appended: the last message is the user's task."""
        state, messages = getattr(event.agent, "state", None), event.agent.messages
        if state is not None and messages and messages[-1]["role"] == "user":
            state.set(TASK_KEY, text_of(messages[-1]))

    def recite(self, event: HookEvent) -> None:
        plan, state = self.state.plan, getattr(event.agent, "state", None)
        if taint.by(state) is None:
            event.agent.inject_turn_scoped("plan", self.render(plan))
            return
        task = state.get(TASK_KEY)
        words = render_words(plan, task)
        if last_note(event.agent.messages, "plan-text") != words:
            event.agent.inject_untrusted("plan-text", words)
        event.agent.inject_turn_scoped("plan", self.render(framed(plan, task)))


class MessageDiscipline:
    """PRE_LLM_CALL, only while there is no plan: once there is one, the plan block carries the
    same rules, so the batch has one block about the agent's situation instead of two."""

    def __init__(self, state: PlanState):
        self.state = state

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.remind, when=lambda event: self.state.plan is None)

    def remind(self, event: HookEvent) -> None:
        event.agent.inject_turn_scoped("discipline", COMMUNICATION_RULES + " Raw text stays under 200 words.")  # pragma: no mutate (prose)


START_NOTE = ("A new user message has arrived. The first action acknowledges it with message_user; then comes the "
              "decision whether to plan: work likely to take two or more delegations gets its plan before anything "
              "else. Each delegation carries one atomic objective.")


class StartNote:
    """START, once per new user message: shapes the planner's first action."""

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.note)

    def note(self, event: HookEvent) -> None:
        event.agent.inject_turn_scoped("start", START_NOTE)
