"""Chapter 03: the hook registry with isolation. The runtime's own code."""

from minimal_runtime.core.hooks import HookEvent, HookFailure, HookRegistry, Point

__all__ = ["HookEvent", "HookFailure", "HookRegistry", "Point"]
