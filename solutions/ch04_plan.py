"""Chapter 04: the plan block and the executor's task block. The runtime's own code."""

from minimal_runtime.features.delegation import MY_PHASE, SCOPE_LINE, TASK_LINE, ExecutorTask, render_task_block
from minimal_runtime.features.plan import COMMUNICATION_RULES, Phase, Plan, render_plan_block

__all__ = ["COMMUNICATION_RULES", "ExecutorTask", "MY_PHASE", "Phase", "Plan", "SCOPE_LINE", "TASK_LINE",
           "render_plan_block", "render_task_block"]
