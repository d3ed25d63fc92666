"""Chapter 08: the drift judgement and the event-driven recitation trigger. The runtime's own code."""

from minimal_runtime.features.drift import BOOKKEEPING, RecitationTrigger, serves, subjects, targets

__all__ = ["BOOKKEEPING", "RecitationTrigger", "serves", "subjects", "targets"]
