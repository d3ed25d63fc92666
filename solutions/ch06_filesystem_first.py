"""Chapter 06: the offloader (head, tail, path). The runtime's own code."""

from minimal_runtime.features.filesystem import Offloader, placeholder

__all__ = ["Offloader", "placeholder"]
