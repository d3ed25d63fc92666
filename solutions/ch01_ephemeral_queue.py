"""Chapter 01: the ephemeral queue, the call assembly in both generations, the append-only check.
The runtime's own code."""

from minimal_runtime.core.context import TurnScopedQueue, Injection, append_batch, batch_entry, first_edit

__all__ = ["TurnScopedQueue", "Injection", "append_batch", "batch_entry", "first_edit"]
