"""Warning the agent before it runs out: of context, and of steps.

The model cannot see how full its window is. A POST_LLM_CALL hook records what the provider
reported for the call just made (cached + written + uncached input tokens); a PRE_LLM_CALL hook
acts on that number before the next call. Post-call measures, pre-call acts.

Both warnings fire *once*. A warning on every call past the threshold is a warning the model
learns to skip. And a warning that tells an agent to stop must also tell it how to mark the stop
as partial, or the caller reads every stop as done.
"""

from __future__ import annotations

from ..core.hooks import HookEvent, HookRegistry, Point

# What the model reads. Tests pin what each must carry (first person, the share, the partial report).
CONTEXT_WARNING = ("Context check: I am at about {share:.0%} of my context window, so compression is coming. If I hold "
                   "anything I would hate to lose (findings not yet in a file, paths, what I was about to do), I write it "
                   "down now, before my next action.")
STEPS_WARNING = ("I have {margin} calls left in this session. I stop starting new work now: I wrap up what is in hand "
                 "and call report with status partial, saying what I did and exactly what remains, so the planner can "
                 "hand the rest to someone else.")


class BudgetMonitor:
    """Warn once per run when the last call's prompt crossed ``threshold`` of the window."""

    def __init__(self, window: int, threshold: float = 0.8):
        self.window, self.threshold = window, threshold
        self.last_prompt_tokens = 0  # pragma: no mutate (any count under threshold x window reads the same)
        self.warned_at: int | None = None  # the call number the warning rode on

    def record(self, event: HookEvent) -> None:
        """POST_LLM_CALL: the provider's count, not an estimate. Injects nothing."""
        self.last_prompt_tokens = event.agent.calls[-1].prompt_tokens

    def warn(self, event: HookEvent) -> None:
        """PRE_LLM_CALL: once, the first time the last call was over the threshold."""
        if self.warned_at is not None or self.last_prompt_tokens < self.threshold * self.window:
            return
        self.warned_at = len(event.agent.calls) + 1
        share = self.last_prompt_tokens / self.window
        event.agent.inject_ephemeral("budget", CONTEXT_WARNING.format(share=share))

    def reset(self, event: HookEvent) -> None:
        """START: a new user message starts a new run, which gets its own warning."""
        self.warned_at = None

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.reset)
        hooks.register(Point.POST_LLM_CALL, self.record)
        hooks.register(Point.PRE_LLM_CALL, self.warn)


class MaxStepsWarning:
    """PRE_LLM_CALL for an executor: once per run, when three calls of its cap are left."""

    def __init__(self, margin: int = 3):
        self.margin = margin
        self.warned_at: int | None = None

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.reset)
        hooks.register(Point.PRE_LLM_CALL, self.warn)

    def reset(self, event: HookEvent) -> None:
        """START: a new run has its own cap, and its own warning."""
        self.warned_at = None

    def warn(self, event: HookEvent) -> None:
        if self.warned_at is not None or event.agent.steps != event.agent.max_steps - self.margin:
            return
        self.warned_at = len(event.agent.calls) + 1
        event.agent.inject_ephemeral("steps", STEPS_WARNING.format(margin=self.margin))
