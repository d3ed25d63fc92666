"""Chapter 03 exercise: the hook registry, with isolation.

Hooks at a lifecycle point run in registration order (so registration order is the order the
model reads the batch). A hook may have a condition ``when(event) -> bool``. A hook, or its
condition, that raises must not stop the other hooks or the run: log it, record a
``HookFailure``, go on. Test with ``.venv/bin/pytest tests/ch03_hooks --impl exercises``.
"""

from __future__ import annotations

import logging
from typing import Callable

from minimal_runtime.core.hooks import HookEvent, HookFailure, Point, hook_name  # noqa: F401  (the default name)

__all__ = ["HookEvent", "HookFailure", "HookRegistry", "Point"]

log = logging.getLogger(__name__)


class HookRegistry:
    def __init__(self) -> None:
        self.failures: list[HookFailure] = []

    def register(self, point: Point, hook: Callable[[HookEvent], None], *,
                 when: Callable[[HookEvent], bool] | None = None, name: str | None = None) -> None:
        """Remember ``hook`` for ``point``; ``name`` defaults to ``hook_name(hook)`` (a function's name,
        a method's ``Class.method``, a callable object's class name)."""
        raise NotImplementedError("ch03: HookRegistry.register")

    def run(self, point: Point, event: HookEvent) -> None:
        """Run the hooks of ``point`` in registration order, skipping those whose ``when`` is false.
        Failures are recorded as ``HookFailure(point=..., hook=name, error="Type: message")``."""
        raise NotImplementedError("ch03: HookRegistry.run")

    def names(self, point: Point) -> list[str]:
        """The names registered at ``point``, in order."""
        raise NotImplementedError("ch03: HookRegistry.names")

    def install(self, *features) -> "HookRegistry":
        """Given: each feature registers its own hooks (``feature.install(registry)``), in order."""
        for feature in features:
            feature.install(self)
        return self
