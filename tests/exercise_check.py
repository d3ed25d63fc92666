"""The exercises, checked two ways (run by ``make test`` and ``make progress``, not by pytest).

    python tests/exercise_check.py stubs      every chapter suite must fail, every test, on the stubs
                                              *as committed* (a learner's solved exercise is not a stub)
    python tests/exercise_check.py progress   how many tests of each chapter pass on your exercises/, and
                                              how long each took you from its first check (.progress.jsonl)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from xml.etree import ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_suites(suites: list[Path], root: Path = ROOT) -> dict[Path, tuple[int, int, str]]:
    """(passed, failed, the first failure's message) of each chapter suite against the ``exercises`` of
    the project at ``root``, from one pytest process: most of a suite's time on the stubs is an
    interpreter's start, paid once here. Only each failure's first line is read, from the report, so
    no traceback is rendered (``--tb=no``: half of the run's time on the stubs' 93 failures)."""
    # the copy's hypothesis uses this project's storage: its table of the characters UTF-8 encodes, built
    # on a first st.text() in a folder, took a third of the stub check in a fresh copy
    env = {"HYPOTHESIS_STORAGE_DIRECTORY": str(ROOT / ".hypothesis"), **os.environ, "COURSE_IMPL": "exercises"}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:xdist", "--tb=no", "--impl", "exercises",
                        "--continue-on-collection-errors", f"--junitxml={report}", *(str(s.relative_to(ROOT)) for s in suites)],
                       cwd=root, env=env, capture_output=True, text=True)
        cases = ElementTree.parse(report).getroot().iter("testcase") if report.exists() else []
        outcomes = []
        for case in cases:
            bad = next((e for e in (case.find("failure"), case.find("error")) if e is not None), None)
            ok = bad is None and case.find("skipped") is None
            outcomes.append((case.get("classname", ""), ok, "" if bad is None else (bad.get("message") or "").partition("\n")[0]))
    counts = {}
    for suite in suites:
        mine = [(ok, said) for where, ok, said in outcomes if where.startswith(f"tests.{suite.name}.")]
        passed = sum(ok for ok, _ in mine)
        counts[suite] = (passed, len(mine) - passed, next((said for ok, said in mine if not ok and said), ""))
    return counts


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


def copy_own_files(copy: Path, skip: str | None = None) -> bool:
    """Copy the project's own files (tracked, or new and not ignored: no .venv, .interop or .git) to
    ``copy``, leaving out those under ``skip``; False when this is not a git checkout."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        return False
    for name in filter(None, listed.stdout.split("\0")):
        if not (skip and name.startswith(skip)) and (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    return True


def pristine_project(into: Path) -> Path:
    """A copy of the project at ``into`` whose exercises/ are the stubs as committed: the tests import
    from where they run, so a learner's solved (or half-written) exercise never reaches them. Only the
    project's own files are copied (not .venv, .interop, .git or the notebooks)."""
    copy = into / "project"
    if not copy_own_files(copy, skip="chapters/"):
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".*", "chapters", "mutants", "__pycache__"))
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
        for suite, (passed, failed, first) in run_suites(SUITES, copy).items():
            verdict = "every test fails on the stubs" if failed and not passed else "SOME TESTS PASS ON THE STUBS"
            print(f"{suite.relative_to(ROOT)}/: {verdict} ({failed} failed, {passed} passed){f'; the first says {first}' * bool(first)}")
            bad += bool(passed or not failed)
        return 1 if bad else 0


def progress() -> int:
    results = {suite.name: (passed, failed) for suite, (passed, failed, _) in run_suites(SUITES).items()}
    timings = timed(results, time.time())
    print(f"{'chapter':<28} {'passing':>8}       time")
    for chapter, (passed, failed) in results.items():
        mark = "done" if passed and not failed else ""
        print(f"{chapter:<28} {passed:>3} of {passed + failed:<3} {mark:<5} {timings.get(chapter, '')}")
    print("a chapter's time runs from its first make progress to its first with every test passing "
          "(.progress.jsonl, yours, not committed): run it again as you work")
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
        elif done is not None:  # the clock starts at a chapter's first check here, not at a pytest run
            said[chapter] = "passing at your first check here: no time kept (run make progress as you start one)"
    return said


if __name__ == "__main__":  # imported (a notebook's banner runs run_suites), it reads no arguments
    SUITES = [ROOT / s for s in sys.argv[2:]] or sorted(ROOT.glob("tests/ch*/"))  # the chapters to check
    sys.exit({"stubs": stubs, "progress": progress}[sys.argv[1]]())
