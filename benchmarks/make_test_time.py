"""`make test` timed on a fresh clone, step by step (``make times`` runs it with ``--apart``; about fifteen minutes).

    python benchmarks/make_test_time.py            # clone HEAD beside this checkout, time each step
    python benchmarks/make_test_time.py --keep     # and leave the clone for a look
    python benchmarks/make_test_time.py --apart    # also the suites, the stub check and the notebooks each alone (minutes more)

The clone goes next to this checkout, so a ``../shared`` folder beside it is found as CI finds it.
The install is timed apart: ``make .venv/.installed`` (uv, with whatever package cache this machine
has), then each step of ``make test`` in the order the Makefile runs them. Seconds on this machine,
so they move with its load; the figure to compare is the one printed beside them, measured the same
way before the steps were split and uv came in.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = ["test-lint", "test-checks"]  # what `make test` runs, in order
APART = ["test-suites", "test-stubs", "test-notebooks"]  # test-checks' three parts, each alone: not in the sum
BEFORE = "9 min 35 s (fresh clone, pip install, one make test recipe; November 2026)"


def timed(command: list[str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return time.perf_counter() - start, done.returncode


def main() -> int:
    keep = "--keep" in sys.argv
    clone = Path(tempfile.mkdtemp(prefix="make-test-", dir=ROOT.parent))
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        rows = [("install", *timed(["make", ".venv/.installed"], clone))]
        for step in STEPS:
            rows.append((step, *timed(["make", step], clone)))
        tests = sum(seconds for name, seconds, _ in rows if name != "install")
        apart = [(f"{step} (alone)", *timed(["make", step], clone)) for step in APART if "--apart" in sys.argv]
        print("| step | wall (s) | exit |\n|---|---|---|")
        for name, seconds, code in rows:
            print(f"| {name} | {seconds:.0f} | {code} |")
        print(f"| make test after the install | {tests:.0f} ({tests / 60:.1f} min) | |")
        for name, seconds, code in apart:
            print(f"| {name} | {seconds:.0f} | {code} |")
        rows += apart
        print(f"before: {BEFORE}")
        return max(code for _, _, code in rows)
    finally:
        if keep:
            print(f"the clone is kept at {clone}")
        else:
            shutil.rmtree(clone, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
