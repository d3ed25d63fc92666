"""Planner and executors: one atomic objective per delegation, a task block bound at spawn time,
a structured report back.

An executor starts with an *empty* history: the task block is all it knows, so the block carries
the whole story (the task, why it matters, where it sits in the plan) and a scope line that keeps
the executor inside its phase. It ends by calling ``report`` (status done or partial, what it did,
what remains); an executor that stops any other way is recorded as *partial*, never as done. The
report moves its phase in the plan, so the planner spends no action keeping the plan current.

The objective, and the plan's goal and titles, are the planner's words. A task handed over by a
planner whose run was tainted (``core.taint``: it had read outside text, an executor's report
included) is ``tainted``: its block keeps the frame in the system entry (the phase numbers and
statuses, the scope line, how the run ends) and gives the planner's words as user text
(``task-text``: once on the current layout, where the history keeps it; every call on the 2025 one).
"""

from __future__ import annotations

from typing import Callable, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

from ..core.agent import RunResult
from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.tools import FunctionTool
from ..core.context import last_note
from .plan import WRITTEN, Plan, PlanState, framed, render_phase_map, render_written

# Phrases of the task block that a reader (or a simulated executor) finds the block's parts by.
TASK_LINE = "The task handed to this executor: "
MY_PHASE = "this task's phase"
SCOPE_LINE = "Scope of this run: "
# The max-steps warning (``budget.MaxStepsWarning(text=...)``) for an executor, which ends with ``report``.
REPORT_STEPS_WARNING = ("{margin} calls are left in this session. No new work starts now: what is in hand gets wrapped up, "
                        "and the run ends with report, status partial, saying what was done and exactly what remains, "
                        "so the planner can hand the rest to someone else.")


class Runnable(Protocol):
    """What ``delegate`` needs of an executor: an agent it can run on the objective."""

    def run(self, task: str | None = None) -> RunResult: ...


class ExecutorTask(BaseModel):
    objective: str
    phase: int = Field(description="1-based phase of the plan this task belongs to")
    plan: Plan  # a snapshot taken at spawn time
    scope_line: bool = True  # chapter 04 measures what happens without it
    tainted: bool = False  # written by a planner whose run had read outside text: its words go as user text


class ExecutorReport(BaseModel):
    status: Literal["done", "partial"]
    did: str = Field(description="what I did, briefly")
    remains: str = Field(default="", description="what is left, for the planner to re-delegate")


def render_task_block(task: ExecutorTask) -> str:
    """The executor's task block: facts about its task, as a system entry states them."""
    phase = task.plan.phases[task.phase - 1]
    lines = [f"{TASK_LINE}{task.objective}", "",
             f"Why this task matters: it contributes to the overall goal: {task.plan.goal}",
             f"This task is part of phase {task.phase} of {len(task.plan.phases)}: {phase.title}.", "",
             "Where the phase sits in the larger plan:",
             render_phase_map(task.plan, task.phase - 1, MY_PHASE)]
    if task.scope_line:
        lines += ["", f"{SCOPE_LINE}the task above, nothing more. The other phases belong to the planner, which "
                      f"knows what else is in flight, even where something there looks doable. Staying inside phase "
                      f"{task.phase} keeps the plan coherent."]
    lines += ["", "The run ends with a call to report: status done or partial, what was done, and what "
                  "remains (also when the task cannot go further)."]
    return "\n".join(lines)


def framed_task(task: ExecutorTask) -> ExecutorTask:
    """``task`` with the planner's words (objective, goal, titles) replaced by where they are."""
    return task.model_copy(update={"objective": f"({WRITTEN}: the task-text note)", "plan": framed(task.plan)})


def render_task_written(task: ExecutorTask) -> str:
    """The planner's words of a task, for the user turn: the objective, then the plan as written."""
    return f"{TASK_LINE}{task.objective}\n{render_written(task.plan, task.phase - 1, MY_PHASE)}"


class TaskHook:
    """PRE_LLM_CALL for an executor: the task block, on every call (the plan hook, bound to one task);
    for a tainted task, its frame there and the planner's words as user text."""

    def __init__(self, task: ExecutorTask, render: Callable[[ExecutorTask], str] = render_task_block):
        self.task, self.render = task, render

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.recite)

    def recite(self, event: HookEvent) -> None:
        if not self.task.tainted:
            event.agent.inject_turn_scoped("task", self.render(self.task))
            return
        words = render_task_written(self.task)
        if last_note(event.agent.messages, "task-text") != words:  # kept in the history on the current layout
            event.agent.inject_untrusted("task-text", words)
        event.agent.inject_turn_scoped("task", self.render(framed_task(self.task)))


def report_tool() -> FunctionTool:
    return FunctionTool("report", "Finish: report status (done or partial), what you did and what remains.",
                        ExecutorReport, lambda r: r.model_dump_json(), final=True)


class DelegateInput(BaseModel):
    objective: str = Field(min_length=1, description="one atomic objective, written out in full")
    phase: int = Field(description="the 1-based plan phase it belongs to")


def read_report(result_status: str, final_text: str, objective: str) -> ExecutorReport:
    """The executor's report; anything else (a cap, an error, plain text) is partial, never done."""
    if result_status == "done":
        try:
            return ExecutorReport.model_validate_json(final_text)
        except ValidationError:
            pass
    return ExecutorReport(status="partial", did=f"stopped ({result_status}) without a report",
                          remains=objective)


def delegate_tool(state: PlanState, spawn: Callable[[ExecutorTask], Runnable], scope_line: bool = True,
                  tainted: Callable[[], str | None] | None = None) -> FunctionTool:
    """The planner's tool: run an executor on one objective and return its report. ``tainted``
    says what tainted the planner's run, read when it delegates (``lambda: taint.by(planner.state)``);
    without it, every task is handed over as tainted. The tool reads outside content: a report is
    written by an executor, which may have read pages."""
    def delegate(args: DelegateInput) -> str:
        if state.plan is None:
            raise ValueError("write the plan before delegating")
        if not 1 <= args.phase <= len(state.plan.phases):
            raise ValueError(f"phase {args.phase} does not exist")
        state.set_status(args.phase, "in_progress")
        task = ExecutorTask(objective=args.objective, phase=args.phase, plan=state.plan.model_copy(deep=True),
                            scope_line=scope_line, tainted=tainted is None or tainted() is not None)
        executor = spawn(task)
        result = executor.run(args.objective)
        report = read_report(result.status, result.final_text, args.objective)
        if report.status == "done":
            state.set_status(args.phase, "done")
        return report.model_dump_json()
    return FunctionTool("delegate", "Hand one atomic objective to an executor (it starts with no context: write "
                        "the objective in full) and get its report.", DelegateInput, delegate, reads_outside=True)
