"""Solved exercises. Each module re-exports the runtime's own code, so the solution and the
runtime are one source of truth: the runtime *is* the solution.

``impl(chapter)`` returns the implementation selected by ``COURSE_IMPL`` (``solutions`` by default,
``exercises`` for your own work); the notebooks use it so they follow the same switch as the tests.
``committed_stub(chapter)`` is the stub as committed, for the notebooks' contract cells.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import traceback
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def impl(chapter: str) -> ModuleType:
    package = os.environ.get("COURSE_IMPL", "solutions")
    if package not in ("solutions", "exercises"):
        raise ValueError(f"COURSE_IMPL must be 'solutions' or 'exercises', not {package!r}")
    _one_line_for_unfinished_stubs()
    return importlib.import_module(f"{package}.{chapter}")


def committed_stub(chapter: str) -> ModuleType:
    """The exercise's stub as committed (git HEAD), whatever the learner's exercises/ holds now: a
    notebook prints the contract from it, so a learner's own file (solved, edited, half-written) never
    changes a committed output. Outside a git checkout, the file as it is."""
    name = f"exercises/{chapter}.py"
    shown = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=ROOT, capture_output=True, text=True)
    source = shown.stdout if shown.returncode == 0 else (ROOT / name).read_text()
    # a name of its own: exercises.<chapter> stays the learner's module; registered, as a dataclass needs
    stub = sys.modules[f"committed_exercises.{chapter}"] = ModuleType(f"committed_exercises.{chapter}")
    exec(compile(source, str(ROOT / name), "exec"), stub.__dict__)
    return stub


def _one_line_for_unfinished_stubs() -> None:
    """In a notebook, a stub not written yet stops the cell, and Run All with it, with an error of one
    line that names the file to write and the command that checks it, instead of a traceback through
    the runtime. Any other NotImplementedError keeps its ordinary traceback."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821  (defined inside IPython)
    except NameError:
        return

    def unfinished(shell, kind, error, tb, tb_offset=None):
        frames = [Path(f.filename) for f in traceback.extract_tb(tb)]
        stub = next((f for f in reversed(frames) if f.parent.name == "exercises" and f.name.startswith("ch")), None)
        if stub is None:
            shell._showtraceback(kind, error, shell.InteractiveTB.structured_traceback(kind, error, tb, tb_offset))
            return None
        name = str(error).partition(": ")[2] or str(error)
        where = stub.relative_to(ROOT) if stub.is_relative_to(ROOT) else stub
        # the command on a line of its own: a long line wraps where the page ends, inside the command too
        said = (f"{name} is not written yet: write it in {where}, check it with\n"
                f"    `.venv/bin/pytest tests/{stub.stem} --impl exercises`\n"
                f"then restart the kernel and run again")
        # an error output, not printed text: JupyterLab shows it as an error and Run All stops at it
        shell._showtraceback(kind, error, [f"\x1b[0;31mNotImplementedError\x1b[0m: {said}"])
        return None
    shell.set_custom_exc((NotImplementedError,), unfinished)
