"""The exercises, checked two ways (run by ``make test`` and ``make progress``, not by pytest).

    python tests/exercise_check.py stubs      every chapter suite must fail, every test, on the stubs
                                              *as committed* (a learner's solved exercise is not a stub)
    python tests/exercise_check.py progress   how many tests of each chapter pass on your exercises/, the
                                              failing ones of a chapter you have started with their first
                                              assertion, and how long each took you from its first check
                                              (.progress.jsonl); reported to a workshop room's serve too
    ... progress --room URL --token TOKEN --name NAME   once: the room remembered in .room.json (yours,
                                              not committed); every later make progress reports to it
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import urllib.error
import urllib.request
import shutil
import subprocess
import sys
import tempfile
import time
from xml.etree import ElementTree
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


FAILING_SHOWN = 5  # failing tests named per chapter in progress


def run_suites(suites: list[Path], root: Path = ROOT, names: bool = False) -> dict[Path, tuple[int, int, Any]]:
    """(passed, failed, the first failure's message) of each chapter suite against the ``exercises`` of
    the project at ``root``, from one pytest process: most of a suite's time on the stubs is an
    interpreter's start, paid once here. Only each failure's first line is read, from the report, so
    no traceback is rendered (``--tb=no``: half of the run's time on the stubs' 93 failures). With
    ``names``, the third is every failing test as ``(file::test, its first line)``."""
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
            said = "" if bad is None else " ".join((bad.get("message") or "").partition("\n")[0].split())
            outcomes.append((case.get("classname", ""), ok, said, case.get("name", "")))
    counts = {}
    for suite in suites:
        mine = [(ok, said, f"{where.split('.')[-1]}.py::{name}") for where, ok, said, name in outcomes
                if where.startswith(f"tests.{suite.name}.")]
        passed = sum(ok for ok, _, _ in mine)
        failing = [(test, said) for ok, said, test in mine if not ok]
        counts[suite] = (passed, len(mine) - passed,
                         failing if names else next((said for _, said in failing if said), ""))
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
        # python -m ruff: the venv's ruff is bin/ruff here and Scripts\ruff.exe on Windows
        lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", "exercises"], cwd=copy, capture_output=True, text=True)
        bad = lint.returncode != 0
        if bad:
            print(f"the committed stubs do not pass the lint:\n{lint.stdout}{lint.stderr}")
        for suite, (passed, failed, first) in run_suites(SUITES, copy).items():
            verdict = "every test fails on the stubs" if failed and not passed else "SOME TESTS PASS ON THE STUBS"
            print(f"{suite.relative_to(ROOT)}/: {verdict} ({failed} failed, {passed} passed){f'; the first says {first}' * bool(first)}")
            bad += bool(passed or not failed)
        return 1 if bad else 0


def progress(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make progress (tests/exercise_check.py progress)")
    parser.add_argument("suites", nargs="*", help="the chapters' test folders (default: every chapter)")
    parser.add_argument("--room", metavar="URL", help="a workshop room's serve (its address); remembered")
    parser.add_argument("--token", help="the room token the instructor's serve printed; remembered")
    parser.add_argument("--name", help=f"your name in the room (default {getpass.getuser()}); remembered")
    parser.add_argument("--no-room", action="store_true", help="forget the room: report to nobody")
    args = parser.parse_args(argv)
    room = remembered_room(args)
    found = run_suites([ROOT / s for s in args.suites] or SUITES, names=True)
    results = {suite.name: (passed, failed) for suite, (passed, failed, _) in found.items()}
    failing = {suite.name: tests for suite, (_, _, tests) in found.items()}
    timings = timed(results, time.time())
    print(f"{'chapter':<28} {'passing':>8}       time")
    for chapter, (passed, failed) in results.items():
        mark = "done" if passed and not failed else ""
        print(f"{chapter:<28} {passed:>3} of {passed + failed:<3} {mark:<5} {timings.get(chapter, '')}")
    for line in failing_lines(results, failing):
        print(line)
    print("a chapter's time runs from its first make progress to its first with every test passing "
          "(.progress.jsonl, yours, not committed): run it again as you work")
    if room is not None:
        print(report_to_room(room, results, first_failing(results, failing)))
    return 0


def started(results: dict[str, tuple[int, int]]) -> list[str]:
    """The chapters you have started: some tests pass, some fail (a chapter untouched fails every test)."""
    return [chapter for chapter, (passed, failed) in results.items() if passed and failed]


def failing_lines(results: dict[str, tuple[int, int]], failing: dict[str, list]) -> list[str]:
    """The failing tests of each chapter you have started, each with its first assertion, one a line."""
    lines = []
    for chapter in started(results):
        tests = failing[chapter]
        lines.append(f"{chapter}: {len(tests)} failing")
        lines += [f"  {test}: {said or '(no message)'}" for test, said in tests[:FAILING_SHOWN]]
        if len(tests) > FAILING_SHOWN:
            lines.append(f"  and {len(tests) - FAILING_SHOWN} more (pytest -q tests/{chapter} names them all)")
    return lines


def first_failing(results: dict[str, tuple[int, int]], failing: dict[str, list]) -> str | None:
    """The first failing test of the first chapter you have started, and its first assertion, in one line."""
    chapter = next(iter(started(results)), None)
    if chapter is None:
        return None
    test, said = failing[chapter][0]
    return f"{chapter}/{test}: {said}"[:300]


ROOM_FILE = ROOT / ".room.json"


def remembered_room(args, path: Path = ROOM_FILE) -> dict | None:
    """The room to report to: given once (``--room``, ``--token``, ``--name``), kept in ``.room.json``."""
    if args.no_room:
        path.unlink(missing_ok=True)
        return None
    try:
        room = json.loads(path.read_text()) if path.exists() else None
    except ValueError:
        room = None
    if args.room or args.token or args.name:
        room = {**(room or {"name": getpass.getuser()}),
                **{k: v for k, v in (("url", args.room), ("token", args.token), ("name", args.name)) if v}}
        path.write_text(json.dumps(room) + "\n")
        path.chmod(0o600)  # it holds the room token
    return room if room and room.get("url") else None


def report_to_room(room: dict, results: dict[str, tuple[int, int]], failing: str | None) -> str:
    """POST this check to the room's serve (``/ui/api/progress``, ``serve --ui``): what it shows the
    instructor's screen. One line back: sent, or why not (this check is kept locally either way)."""
    report = {"attendee": room.get("name"), "failing": failing,
              "chapters": {chapter.split("_")[0].removeprefix("ch"): {"passed": passed, "total": passed + failed}
                           for chapter, (passed, failed) in results.items()}}
    request = urllib.request.Request(room["url"].rstrip("/") + "/ui/api/progress", data=json.dumps(report).encode(),
                                     headers={"content-type": "application/json", "x-room-token": room.get("token") or ""})
    try:
        with urllib.request.urlopen(request, timeout=10):
            return f"reported to the room at {room['url']} as {room.get('name')}"
    except urllib.error.HTTPError as e:
        hint = " (the room's serve keeps progress with --ui: ask the instructor)" if e.code == 404 else ""
        return f"the room at {room['url']} refused the report: HTTP {e.code} {e.read()[:300].decode(errors='replace')}{hint}"
    except (urllib.error.URLError, OSError) as e:
        return f"could not reach the room at {room['url']}: {getattr(e, 'reason', e)} (kept here; make progress again later)"


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


SUITES = sorted(ROOT.glob("tests/ch*/"))  # the chapters to check

if __name__ == "__main__":  # imported (a notebook's banner runs run_suites), it reads no arguments
    if sys.argv[1] == "progress":
        sys.exit(progress(sys.argv[2:]))
    SUITES = [ROOT / s for s in sys.argv[2:]] or SUITES
    sys.exit(stubs())
