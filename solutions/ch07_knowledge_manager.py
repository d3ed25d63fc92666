"""Chapter 07: the knowledge manager's formatter, lint and triggers. The runtime's own code."""

from minimal_runtime.features.knowledge import MAX_BULLETS, Triggers, bullet, format_block, lint

__all__ = ["MAX_BULLETS", "Triggers", "bullet", "format_block", "lint"]
