"""Chapter 05 exercise: warn once, when the prompt crosses a share of the usable budget (before the compaction).

Post-call measures, pre-call acts: ``record`` runs after every call and keeps the provider's count
of the prompt just sent (``event.agent.calls[-1].prompt_tokens``: cached + written + uncached).
``warn`` runs before every call and, the first time that count is at or over ``threshold`` of the
*budget* (the tokens this run may fill: e.g. the compaction trigger, not the window, which is 1M on
current models), injects the warning: a statement of fact, since on current models the batch is a
system entry, saying how full the budget is and that whatever is not yet in a file is lost at
compaction unless written down now. Then never again in this run. Test with
``.venv/bin/pytest tests/ch05_budget --impl exercises``.
"""

from __future__ import annotations

from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point

__all__ = ["BudgetMonitor"]


class BudgetMonitor:
    def __init__(self, budget: int, threshold: float = 0.8):
        self.budget, self.threshold = budget, threshold  # budget: usable context tokens (e.g. the compaction trigger)
        self.last_prompt_tokens = 0
        self.warned_at: int | None = None  # the number of the call the warning rode on (1-based)

    def record(self, event: HookEvent) -> None:
        """POST_LLM_CALL: remember the last call's prompt tokens. Injects nothing."""
        raise NotImplementedError("ch05: BudgetMonitor.record")

    def warn(self, event: HookEvent) -> None:
        """PRE_LLM_CALL: once per run, when the last prompt was >= threshold * budget, inject with
        source "budget" a note that states the fill of the budget as a whole percentage (85 of
        100 tokens -> "85%") and that what is not in a file yet should be written down (to a file,
        a note) now. Facts, not the agent's voice: no "I", no "my". Set ``warned_at`` to the number
        of the call about to be made (calls so far + 1)."""
        raise NotImplementedError("ch05: BudgetMonitor.warn")

    def reset(self, event: HookEvent) -> None:
        """START: a new user message starts a new run, which gets its own warning."""
        self.warned_at = None

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.reset)
        hooks.register(Point.POST_LLM_CALL, self.record)
        hooks.register(Point.PRE_LLM_CALL, self.warn)
