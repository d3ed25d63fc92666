"""Warning the agent in time to act: before the compaction its budget stands for, and before its last step.

The model cannot see how full its context is. A POST_LLM_CALL hook records what the provider
reported for the call just made (cached + written + uncached input tokens); a PRE_LLM_CALL hook
acts on that number before the next call. Post-call measures, pre-call acts.

The warning is measured against a *usable* budget, not the window: on a 1M-token model 80% of the
window is 800K tokens, far past where a run compacts (the server's default trigger is 150K) or
where long-context quality is reported to fall off. The budget is the caller's: the compaction
trigger is the natural one, since the warning exists to be acted on before compaction.

Both warnings fire *once*. A warning on every call past the threshold is a warning the model
learns to skip. Once means once across crashes too: the call a warning rode on is kept in the
run's state (``agent.state``), which lands in the run record with the turn that carried the
warning. And a warning that tells an agent to stop must also tell it how to mark the stop as
partial, or the caller reads every stop as done.

Money is not this monitor's: it counts tokens. A run's dollars are ``agent.bill()`` (its calls, the
calls a kill paid for and lost, an estimate for a call in flight at a kill), which ``max_cost_usd``
stops a run against.
"""

from __future__ import annotations

from ..core.hooks import HookEvent, HookRegistry, Point

# What the model reads. On current models the batch is a system entry (operator authority): the
# provider's advice is to state facts there, so both warnings state the situation and what it costs,
# not the agent's voice. Tests pin what each must carry (the share, the persist advice, the partial report).
CONTEXT_WARNING = ("Context check: the last prompt filled about {share:.0%} of this run's usable context budget "
                   "({tokens:,} of {budget:,} tokens), and compaction comes at the budget. Whatever is not yet in a file "
                   "(findings, paths, the next step) survives compaction only if it is written down before the next action.")
STEPS_WARNING = ("{margin} calls are left in this run. No new work starts now: what is in hand gets wrapped up, and "
                 "the final answer is marked partial and says what was done and exactly what remains.")


class BudgetMonitor:
    """Warn once per run when the last call's prompt crossed ``threshold`` of the usable ``budget``
    (in tokens: e.g. the compaction trigger; never more than the window).

    The default, 80%, is the source's: the runtime this course is built from fires its one budget
    warning when the provider-reported prompt crosses 80% (there of the window; here of the usable
    budget, which on today's 1M-token models is what a run reaches). It is not a measurement. What
    matters is that the warning comes a step or two before the trigger, so a run whose steps are large
    against its budget wants a lower one. Chapter 05 sweeps it on a SIMULATED reader, and shows what
    that reader's rules say, on seeds it was tuned on and on seeds it was not; no sweep sets it."""

    def __init__(self, budget: int, threshold: float = 0.8):
        if budget <= 0 or not 0 < threshold <= 1:
            raise ValueError(f"budget must be a positive token count and threshold in (0, 1]; got {budget}, {threshold}")
        self.budget, self.threshold = budget, threshold
        self.last_prompt_tokens = 0  # pragma: no mutate (any count under threshold x budget reads the same)
        self.warned_at: int | None = None  # the call number the warning rode on

    def record(self, event: HookEvent) -> None:
        """POST_LLM_CALL: the provider's count, not an estimate. Injects nothing."""
        self.last_prompt_tokens = event.agent.calls[-1].prompt_tokens

    def warn(self, event: HookEvent) -> None:
        """PRE_LLM_CALL: once, the first time the last call was over the threshold. The count is read
        from the agent's calls (they are in the run record), never kept here between calls: after
        a resume the warning comes on the call it would have come on."""
        self.last_prompt_tokens = event.agent.calls[-1].prompt_tokens if event.agent.calls else 0
        self.warned_at = event.agent.state.get("budget.warned_at")
        if self.warned_at is not None or self.last_prompt_tokens < self.threshold * self.budget:
            return
        self.warned_at = len(event.agent.calls) + 1
        event.agent.state.set("budget.warned_at", self.warned_at)
        event.agent.inject_turn_scoped("budget", CONTEXT_WARNING.format(
            share=self.last_prompt_tokens / self.budget, tokens=self.last_prompt_tokens, budget=self.budget))

    def reset(self, event: HookEvent) -> None:
        """START: a new user message starts a new run, which gets its own warning."""
        self.warned_at = None
        event.agent.state.set("budget.warned_at", None)

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.reset)
        hooks.register(Point.POST_LLM_CALL, self.record)
        hooks.register(Point.PRE_LLM_CALL, self.warn)


class MaxStepsWarning:
    """PRE_LLM_CALL for an executor: once per run, when three calls of its cap are left. ``text``:
    what it says (``{margin}`` is filled in); an agent with a tool for a partial report names it."""

    def __init__(self, margin: int = 3, text: str = STEPS_WARNING):
        self.margin, self.text = margin, text
        self.warned_at: int | None = None

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.reset)
        hooks.register(Point.PRE_LLM_CALL, self.warn)

    def reset(self, event: HookEvent) -> None:
        """START: a new run has its own cap, and its own warning."""
        self.warned_at = None
        event.agent.state.set("steps.warned_at", None)

    def warn(self, event: HookEvent) -> None:
        self.warned_at = event.agent.state.get("steps.warned_at")
        if self.warned_at is not None or event.agent.steps != event.agent.max_steps - self.margin:
            return
        self.warned_at = len(event.agent.calls) + 1
        event.agent.state.set("steps.warned_at", self.warned_at)
        event.agent.inject_turn_scoped("steps", self.text.format(margin=self.margin))
