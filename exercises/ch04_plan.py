"""Chapter 04 exercise: what the plan hook and the executor's task hook put in the batch, and when.

The wording is yours; what each block carries in each state of the plan is the exercise. On
current models the batch is a turn-scoped *system* entry, read with operator authority, so the
blocks state facts about the run ("Current phase: 2 of 4 ...") rather than speak as the agent
("I am ...") or at it ("You ..."). Test with ``.venv/bin/pytest tests/ch04_plan --impl exercises``.
"""

from __future__ import annotations

from minimal_runtime.features.delegation import MY_PHASE, SCOPE_LINE, TASK_LINE  # noqa: F401  (the executor reads these)
from minimal_runtime.features.delegation import ExecutorTask  # objective, phase (1-based), plan snapshot, scope_line
from minimal_runtime.features.plan import COMMUNICATION_RULES, Phase, Plan  # Plan.current: index of the phase now, or None

__all__ = ["COMMUNICATION_RULES", "ExecutorTask", "MY_PHASE", "Phase", "Plan", "SCOPE_LINE", "TASK_LINE",
           "render_plan_block", "render_task_block"]


def render_plan_block(plan: Plan) -> str:
    """The planner's plan block, recited at the tail of every call once a plan exists. Plain text
    (no Markdown headers), facts only (no "I", no "you"). What it carries, and when:

    - the goal, in every state;
    - while a phase is current (``plan.current``): its number, the number of phases and its title,
      and how many phases are done (e.g. ``1/4``); once every phase is done: that they all are
      (``4/4``), and no phase named or marked as current;
    - the whole plan, one line per phase with its title and status, and a mark on the current
      phase's line only (the same mark whichever phase is current);
    - the current phase's skills, and no other phase's;
    - ``COMMUNICATION_RULES`` (the message-discipline reminder stops once there is a plan, so the
      plan block carries its rules).
    """
    raise NotImplementedError("ch04: render_plan_block")


def render_task_block(task: ExecutorTask) -> str:
    """The executor's task block, recited on every call of the executor (bound at spawn time: it is
    all the executor knows). Facts only, as above. What it carries:

    - the objective, on a line starting with ``TASK_LINE`` (the simulated executor reads it there);
    - the plan's goal, and the task's phase: its number, the number of phases, its title;
    - the plan map, one line per phase as in the plan block, with ``  <- `` + ``MY_PHASE`` after
      the task's phase (the simulated executor finds the next phase from it);
    - when ``task.scope_line`` is true, a paragraph starting with ``SCOPE_LINE`` that keeps the
      executor inside its phase (the other phases are the planner's); without it, nothing else changes;
    - how the run ends: ``report``, with status done or partial, what was done, what remains.
    """
    raise NotImplementedError("ch04: render_task_block")
