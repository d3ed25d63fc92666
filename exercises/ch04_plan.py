"""Chapter 04 exercise: what the plan hook and the executor's task hook inject.

Both blocks are written in the agent's first person, because the model continues from them as if
it had written them. Test with ``.venv/bin/pytest tests/ch04_plan --impl exercises``.
"""

from __future__ import annotations

from minimal_runtime.features.delegation import ExecutorTask  # objective, phase (1-based), plan snapshot, scope_line
from minimal_runtime.features.plan import COMMUNICATION_RULES, Phase, Plan  # Plan.current: index of the phase now, or None

__all__ = ["COMMUNICATION_RULES", "ExecutorTask", "Phase", "Plan", "render_plan_block", "render_task_block"]


def render_plan_block(plan: Plan) -> str:
    """The planner's plan block, in the first person ("I am on ...", never "You ...") and plain
    text (no Markdown headers). It must contain:

    - ``The goal I am working toward: <goal>``;
    - while a phase is current: ``I am on phase <n> of <total>: <title>.`` and
      ``Progress so far: <done>/<total> phases done.``; when every phase is done, a line saying
      ``Every phase of my plan is done (<total>/<total>)`` instead;
    - the whole plan, one line per phase: ``- phase <n> -- <title> (<status>)`` with the status
      written with a space (``in progress``), and ``  <- I am here`` after the current phase;
    - ``Skills that matter for this phase: a, b.`` when the current phase has skills;
    - ``COMMUNICATION_RULES`` last (the message-discipline rules move here once there is a plan).
    """
    raise NotImplementedError("ch04: render_plan_block")


def render_task_block(task: ExecutorTask) -> str:
    """The executor's task block. It must contain:

    - ``The task I have been handed: <objective>``;
    - the goal (``...the overall goal I am contributing to is: <goal>``) and
      ``This task is part of phase <n> of <total>: <title>.``;
    - the plan map, one line per phase as in the plan block, with
      ``  <- my task belongs to this phase`` after the task's phase;
    - when ``task.scope_line`` is true, a paragraph starting ``My scope for this run:`` that keeps
      the executor inside its phase (other phases are not its to work on);
    - how to finish: ``report`` with status done or partial, what was done, what remains.
    """
    raise NotImplementedError("ch04: render_task_block")
