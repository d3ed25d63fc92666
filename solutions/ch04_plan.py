"""Chapter 04: the plan block and the executor's task block. The runtime's own code."""

from minimal_runtime.features.delegation import ExecutorTask, render_task_block
from minimal_runtime.features.plan import COMMUNICATION_RULES, Phase, Plan, render_plan_block

__all__ = ["COMMUNICATION_RULES", "ExecutorTask", "Phase", "Plan", "render_plan_block", "render_task_block"]
