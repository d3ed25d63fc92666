"""The exercises, checked two ways (run by ``make test`` and ``make progress``, not by pytest).

    python tests/exercise_check.py stubs      every chapter suite must fail, every test, on the stubs
                                              *as committed* (a learner's solved exercise is not a stub)
    python tests/exercise_check.py progress   how many tests of each chapter pass on your exercises/, and
                                              how long each took you from its first check (.progress.jsonl)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_suite(suite: Path, root: Path = ROOT) -> tuple[int, int]:
    """(passed, failed) of one chapter suite against the ``exercises`` of the project at ``root``."""
    env = {**os.environ, "COURSE_IMPL": "exercises"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:xdist", "--impl", "exercises",
                          str(suite.relative_to(ROOT))], cwd=root, env=env, capture_output=True, text=True
                         ).stdout.strip().splitlines()
    summary = out[-1] if out else ""
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", summary)) else 0
    failed = int(m.group(1)) if (m := re.search(r"(\d+) failed", summary)) else 0
    return passed, failed


def pristine_exercises(into: Path) -> bool:
    """Copy the committed exercises/ into ``into`` (False when this is not a git checkout)."""
    names = subprocess.run(["git", "ls-files", "exercises"], cwd=ROOT, capture_output=True, text=True)
    if names.returncode != 0 or not names.stdout.strip():
        return False
    for name in names.stdout.split():
        blob = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=ROOT, capture_output=True)
        if blob.returncode != 0:
            return False
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_bytes(blob.stdout)
    return True


def pristine_project(into: Path) -> Path:
    """A copy of the project at ``into`` whose exercises/ are the stubs as committed: the tests import
    from where they run, so a learner's solved (or half-written) exercise never reaches them."""
    copy = into / "project"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "chapters", "mutants", "__pycache__"))
    if pristine_exercises(copy):
        print("checking the exercise stubs as committed (git HEAD)")
    else:
        print("not a git checkout: checking the exercises/ folder as it is")
    return copy


def your_exercises_changed() -> bool:
    status = subprocess.run(["git", "status", "--porcelain", "--", "exercises"], cwd=ROOT, capture_output=True, text=True)
    return status.returncode == 0 and bool(status.stdout.strip())


def stubs() -> int:
    if your_exercises_changed():
        print("your exercises/ differ from the committed stubs: make test checks the stubs; `make progress` checks your code")
    with tempfile.TemporaryDirectory() as tmp:
        copy = pristine_project(Path(tmp))
        ruff = Path(sys.executable).with_name("ruff")
        lint = subprocess.run([str(ruff), "check", "--quiet", "exercises"], cwd=copy, capture_output=True, text=True)
        bad = lint.returncode != 0
        if bad:
            print(f"the committed stubs do not pass the lint:\n{lint.stdout}{lint.stderr}")
        # one pytest process per suite, as many at once as there are cores: most of their time is start-up
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            counts = pool.map(lambda suite: run_suite(suite, copy), SUITES)
            for suite, (passed, failed) in zip(SUITES, counts):
                verdict = "every test fails on the stubs" if failed and not passed else "SOME TESTS PASS ON THE STUBS"
                print(f"{suite.relative_to(ROOT)}/: {verdict} ({failed} failed, {passed} passed)")
                bad += bool(passed or not failed)
        return 1 if bad else 0


def progress() -> int:
    results = {suite.name: run_suite(suite) for suite in SUITES}
    timings = timed(results, time.time())
    print(f"{'chapter':<28} {'passing':>8}")
    for chapter, (passed, failed) in results.items():
        mark = "done" if passed and not failed else ""
        print(f"{chapter:<28} {passed:>3} of {passed + failed:<3} {mark:<5} {timings.get(chapter, '')}")
    return 0


def timed(results: dict[str, tuple[int, int]], now: float, log: Path = ROOT / ".progress.jsonl") -> dict[str, str]:
    """Append this check to your log (not committed) and say, per chapter, how long it took from its
    first check to its first check with every test passing: the exercise's time, measured on you."""
    with log.open("a") as f:
        f.write(json.dumps({"at": now, "results": results}) + "\n")
    checks, unreadable = [], 0
    for line in log.read_text(errors="replace").splitlines():
        try:
            check = json.loads(line)
            checks.append({"at": float(check["at"]), "results": {k: tuple(v) for k, v in check["results"].items()}})
        except (ValueError, KeyError, TypeError, AttributeError):
            unreadable += bool(line.strip())
    if unreadable:
        print(f"{log}: {unreadable} line(s) that are not a check were skipped")
    said = {}
    for chapter in results:
        seen = [(c["at"], c["results"][chapter]) for c in checks if chapter in c["results"]]
        done = next((at for at, (passed, failed) in seen if passed and not failed), None)
        if done is not None and done > seen[0][0]:
            said[chapter] = f"solved {(done - seen[0][0]) / 60:.0f} min after your first check"
    return said


SUITES = [ROOT / s for s in sys.argv[2:]] or sorted(ROOT.glob("tests/ch*/"))  # the chapters to check

if __name__ == "__main__":
    sys.exit({"stubs": stubs, "progress": progress}[sys.argv[1]]())
