"""Chapter 08 exercise: judge an action against the plan, and recite the plan only when it matters.

``subjects(objective)`` (what a phase's objective names: URLs without their query, workspace
paths) and ``targets(tool_use)`` (what an action touches, in the same terms) are given. Write the
judgement and the trigger. Test with ``.venv/bin/pytest tests/ch08_drift --impl exercises``.
"""

from __future__ import annotations

from typing import Literal

from minimal_runtime.features.drift import BOOKKEEPING, subjects, targets

__all__ = ["BOOKKEEPING", "RecitationTrigger", "serves", "subjects", "targets"]

Verdict = Literal["phase", "goal", "off"]


def serves(tool_use: dict, phase: set[str], goal: set[str]) -> Verdict:
    """"phase" when the action serves the current phase: it touches something in ``phase``, or it
    touches nothing named at all, or it is bookkeeping (its name is in ``BOOKKEEPING``); "goal"
    when it touches something another phase names (in ``goal`` but not in ``phase``); "off"
    otherwise."""
    raise NotImplementedError("ch08: serves")


class RecitationTrigger:
    """Whether to re-inject the plan before a call: on the first call; whenever the current phase
    differs from the one the plan was last recited for; right after a call whose verdict was
    "goal" or "off". Otherwise not (a recitation per call is what this replaces)."""

    def should_recite(self, phase: int | None, last_verdict: Verdict | None) -> bool:
        raise NotImplementedError("ch08: RecitationTrigger.should_recite")
