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
    _one_line_for_unfinished_stubs()
    return importlib.import_module(f"{package}.{chapter}")


def _one_line_for_unfinished_stubs() -> None:
    """In a notebook, a stub not written yet stops the cell with one line ("ch05: write
    BudgetMonitor.warn first") instead of a traceback through the runtime."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821  (defined inside IPython)
    except NameError:
        return

    def unfinished(shell, kind, error, tb, tb_offset=None):
        where = str(error)
        chapter, _, name = where.partition(": ")
        print(f"{chapter}: write {name} first (exercises/, then restart the kernel)" if name else f"unfinished: {where}")
        return None
    shell.set_custom_exc((NotImplementedError,), unfinished)
