"""Solved exercises. Each module re-exports the runtime's own code, so the solution and the
runtime are one source of truth: the runtime *is* the solution.

``impl(chapter)`` returns the implementation selected by ``COURSE_IMPL`` (``solutions`` by default,
``exercises`` for your own work), as the tests do. A notebook names its choice, ``impl(chapter, IMPL)``
with ``IMPL`` set in its settings cell (reading mode, ``"solutions"``, as committed: every figure shows),
and gets a banner saying which code the chapter runs and, for yours, how many of the chapter's tests it
passes. ``committed_stub(chapter)`` is the stub as committed, for the notebooks' contract cells.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import traceback
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def impl(chapter: str, choice: str | None = None) -> ModuleType:
    package = choice or os.environ.get("COURSE_IMPL", "solutions")
    if package not in ("solutions", "exercises"):
        raise ValueError(f"the implementation must be 'solutions' or 'exercises', not {package!r}")
    _one_line_for_unfinished_stubs()
    if choice is not None:  # a notebook's switch: anything later that reads COURSE_IMPL follows it
        os.environ["COURSE_IMPL"] = choice
        _show(Banner(chapter, choice, _tests_on_exercises(chapter) if choice == "exercises" else None))
    return importlib.import_module(f"{package}.{chapter}")


class Banner:
    """What a chapter runs, shown under its settings cell: the solutions (reading mode) and how to switch,
    or the learner's code and how many of the chapter's tests it passes, so a figure drawn by failing code
    says so where it is read."""

    def __init__(self, chapter: str, choice: str, tests: tuple[int, int, str] | None):
        self.chapter, self.choice, self.tests = chapter, choice, tests

    def lines(self) -> tuple[str, list[str]]:
        """(a word for its colour, its lines)."""
        suite = f"tests/{self.chapter}"
        if self.choice == "solutions":
            return "reading", [f"Reading mode: this chapter runs the course's solutions (solutions/{self.chapter}.py), so every "
                               "figure below is the reference.",
                               'To run your own code (exercises/): set IMPL = "exercises" in this cell, then Kernel > '
                               "Restart Kernel and Run All Cells."]
        passed, failed, first = self.tests
        if passed + failed == 0:
            return "failing", [f"Your code: exercises/{self.chapter}.py. Its tests ({suite}) could not run: {first or 'none was collected'}",
                               f"Check it with `.venv/bin/pytest {suite} --impl exercises`."]
        if failed == 0:
            return "passing", [f"Your code: exercises/{self.chapter}.py passes all {passed} tests of {suite}: the figures below are "
                               "yours.", 'Set IMPL = "solutions" to read the chapter as committed.']
        return "failing", [f"Your code: exercises/{self.chapter}.py passes {passed} of {passed + failed} tests of {suite}: "
                           f"what runs below runs code that fails {failed}.",
                           # its first 160 characters: a failure that prints a whole request would bury the verdict
                           f"The first failure: {first[:160]}{'...' * (len(first) > 160)}" if first else "",
                           f"Check it with `.venv/bin/pytest {suite} --impl exercises`; "
                           'IMPL = "solutions" reads the chapter as committed.']

    def __repr__(self) -> str:
        return "\n".join(line for line in self.lines()[1] if line)

    def _repr_html_(self) -> str:
        import html

        kind, lines = self.lines()
        colour = {"reading": "#1a73e8", "passing": "#188038", "failing": "#c5221f"}[kind]
        body = "<br>".join(html.escape(line) for line in lines if line)
        return (f'<div class="course-banner course-banner-{kind}" style="border-left: 6px solid {colour}; '
                f'padding: 6px 10px; margin: 4px 0">{body}</div>')


def _show(banner: Banner) -> None:
    try:
        from IPython.display import display
    except ImportError:
        print(repr(banner))
        return
    display(banner)


def _tests_on_exercises(chapter: str) -> tuple[int, int, str]:
    """(passed, failed, the first failure's message) of the chapter's suite on exercises/, by make progress's
    own check (one pytest process, a few seconds)."""
    spec = importlib.util.spec_from_file_location("exercise_check", ROOT / "tests" / "exercise_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    return check.run_suites([ROOT / "tests" / chapter])[ROOT / "tests" / chapter]


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
