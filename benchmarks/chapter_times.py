"""The README's chapter table, measured: how long each notebook runs and how much there is to read
and to write (``make times``; about ten minutes).

    python benchmarks/chapter_times.py            # every chapter
    python benchmarks/chapter_times.py 03 05      # some

*run*: one execution of the whole notebook, offline, kernel start included (nbclient, the engine
behind ``jupyter nbconvert --execute``); seconds on this machine, so they move with its load.
*prose*: the words of the main path (before "Going further") of all the prose, counted by
``prose_stats`` (one rule for both tables). *exercise*: the functions and classes of
``exercises/chNN_*.py`` as committed that raise ``NotImplementedError``, and the tests of ``tests/chNN_*``.
How long a person takes to read and to solve is not measured here: that needs people.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prose_stats import chapter_prose  # noqa: E402

from minimal_runtime.features.filesystem import write_whole

ROOT = Path(__file__).resolve().parents[1]


def run_seconds(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def prose_column(path: Path) -> str:
    """The README's prose cell: "716 of 1,418 words" (the main path of all the notebook's prose)."""
    counted = chapter_prose(path)
    return f"{counted.main_words:,} of {counted.all_words:,} words"


def committed(path: Path, root: Path = ROOT) -> str:
    """The file as committed (git HEAD) where this is a checkout: the stub, not a learner's working copy."""
    shown = subprocess.run(["git", "show", f"HEAD:{path.relative_to(root).as_posix()}"], cwd=root, capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else path.read_text()


@functools.cache
def chapter_tests(root: Path = ROOT) -> Counter:
    """How many tests each chapter suite has ("01": 10, ...), from one collection of them all. A
    collection starts an interpreter that imports the SDK (seconds), and make test's two workers
    both ask: the counts are kept in the temporary folder under a digest of the files they come from."""
    suites = [str(p.relative_to(root)) for p in sorted((root / "tests").glob("ch*_*"))]
    sources = sorted({*(root / "tests").glob("ch*_*/**/*.py"), *root.glob("conftest.py"), *(root / "tests").glob("conftest.py")})
    digest = hashlib.sha256(b"".join(p.relative_to(root).as_posix().encode() + p.read_bytes() for p in sources)).hexdigest()
    kept = Path(tempfile.gettempdir()) / f"course-chapter-tests-{digest[:24]}.json"
    try:
        return Counter(json.loads(kept.read_text()))
    except (OSError, ValueError):
        pass
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             *suites], cwd=root, capture_output=True, text=True)
    counts = Counter(re.findall(r"^tests/ch(\d\d)_\w+/\S+::", listed.stdout, re.M))
    if listed.returncode != 0:  # a collection error: counted, shown as a mismatch, never kept
        return counts
    write_whole(kept.parent, kept.name, json.dumps(counts).encode())  # whole or absent: a worker reading it meanwhile never sees half
    return counts


def exercise_size(number: str, tests: Counter, root: Path = ROOT) -> str:
    stubs = list((root / "exercises").glob(f"ch{number}_*.py"))
    if not stubs:
        return "none"
    module = ast.parse(committed(stubs[0], root))
    methods = {id(item) for node in module.body if isinstance(node, ast.ClassDef) for item in node.body}
    unfinished = [node for node in ast.walk(module)
                  if isinstance(node, ast.FunctionDef) and "NotImplementedError" in ast.unparse(node)]
    functions = sum(id(node) not in methods for node in unfinished)
    counts = {"function": functions, "method": len(unfinished) - functions}
    parts = [f"{n} {kind}{'s' * (n != 1)}" for kind, n in counts.items() if n]
    return f"{' and '.join(parts)}, {tests[number]} tests"


def main() -> None:
    wanted = sys.argv[1:]
    tests = chapter_tests()
    print("| # | run (s) | prose | exercise |\n|---|---|---|---|")
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        number = path.name[:2]
        if wanted and number not in wanted:
            continue
        print(f"| {number} | {run_seconds(path):.0f} | {prose_column(path)} | {exercise_size(number, tests)} |", flush=True)


if __name__ == "__main__":
    main()
