"""Chapter 01: the ephemeral queue and the call assembly. The runtime's own code."""

from minimal_runtime.core.context import EphemeralQueue, Injection, append_batch

__all__ = ["EphemeralQueue", "Injection", "append_batch"]
