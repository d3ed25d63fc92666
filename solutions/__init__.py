"""Solved exercises. Each module re-exports the runtime's own code, so the solution and the
runtime are one source of truth: the runtime *is* the solution.

``impl(chapter)`` returns the implementation selected by ``COURSE_IMPL`` (``solutions`` by default,
``exercises`` for your own work); the notebooks use it so they follow the same switch as the tests.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def impl(chapter: str) -> ModuleType:
    package = os.environ.get("COURSE_IMPL", "solutions")
    if package not in ("solutions", "exercises"):
        raise ValueError(f"COURSE_IMPL must be 'solutions' or 'exercises', not {package!r}")
    return importlib.import_module(f"{package}.{chapter}")
