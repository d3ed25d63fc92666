"""How many changes of the code would a test notice? Mutation testing with mutmut 3.

    python benchmarks/mutation.py                      # the emulator's accounting (make mutate, ~15 min)
    python benchmarks/mutation.py core                 # the runtime's core and its pricing (make mutate-runtime)
    python benchmarks/mutation.py features             # the chapters' features
    python benchmarks/mutation.py fork --module cost --minutes 10   # the fork's own suite on the fork's core
    python benchmarks/mutation.py fork --module thread --suite-ref 9900c66~1   # the suite as it was at a commit
    python benchmarks/mutation.py fork --module agent --sample 05 --minutes 25   # a fifth of each function's
    python benchmarks/mutation.py core --module store --minutes 20
    python benchmarks/mutation.py features --module knowledge --keep /tmp/km      # keep the copy
    python benchmarks/mutation.py features --module knowledge --keep /tmp/km --survivors

Each scope names the modules to mutate and the suites that should notice. mutmut changes every
function of those modules (comparisons, constants inside functions, keys, arguments, deleted calls)
and, for each mutant, runs the tests that reached that function. The work happens in a copy of
the project, so the checkout is untouched. mutmut leaves module-level constants alone, so the
emulator scope also changes each of them by hand (the caching constants of the model table, the
tokenizer's ratios, the block-type sets of the prompt renderer) and runs the same tests.

It prints each module's score: mutants killed (a test failed) over mutants checked, and separately
the mutants no selected test reaches. Survivors are printed with their diff so a reader can judge
each: a test to add, or an equivalent mutant (marked ``# pragma: no mutate`` with the reason).
With ``--minutes``, mutants not reached in time are counted as unchecked, not as survivors. mutmut
has no sampling and runs a file's functions in order; ``--sample DIGITS`` checks only the mutants whose
number ends in one of those digits, in every function alike, and counts the rest as unchecked.

mutmut forks each mutant's tests from a process that imported the project before any mutant was on,
so a function called at import (a price table built by a helper, a type built in a class body) keeps
its original code there and every mutant of it "survives". Those functions are found by importing
the modules with mutmut's call recording on; each of their mutants is then run with the scope's tests
in a fresh process that imports the project with the mutant already on. The report shows them apart
("at import": killed/checked), with the score over the rest, what mutmut alone checks, beside it.

With ``--keep DIR`` the copy (and mutmut's results) stays in DIR. A later ``--survivors`` run with
the same DIR copies the checkout's tests/ into it and re-runs only the mutants that survived (and
those a ``--minutes`` limit left unchecked), so a test written for a survivor is checked in minutes; the mutated modules are
not re-copied, so the mutants are the ones first scored (every other module is the checkout's).
With ``--suite-ref REF`` the scope's suites are taken from that commit (``git show REF:PATH``) into the
copy, over the checkout's code: the score of the tests as they were, on the code as it is (a "before"). Every score also counts the survivors that change only a logging call's
line ("log text", shown apart): a reader may judge them equivalent, and the second score does.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PYTEST_ARGS = ["-p", "no:xdist", "-p", "no:cacheprovider", "-q"]


@dataclass(frozen=True)
class Scope:
    modules: list[str]     # under minimal_runtime/
    tests: list[str]       # the suites that should notice
    deselect: str = ""     # a pytest -k expression: the long runs, which add time and no new checks


RUNTIME_SUITES = ["tests/runtime/test_context_checks.py", "tests/runtime/test_agent_checks.py", "tests/runtime/test_boundaries.py", "tests/runtime/test_agent_loop.py",
                  "tests/runtime/test_append_only.py", "tests/runtime/test_reliability.py",
                  "tests/runtime/test_store.py", "tests/runtime/test_steering.py",
                  "tests/runtime/test_ephemeral_property.py", "tests/runtime/test_house.py"]
SCOPES = {
    "emulator": Scope(["emulator/cache.py", "emulator/prompt.py"], ["tests/emulator"]),
    "core": Scope(["core/context.py", "core/hooks.py", "core/agent.py", "core/store.py", "steering.py",
                   "core/tools.py", "core/messages.py", "provider/cost.py"],
                  ["tests/emulator/test_errors_and_wiring.py", "tests/ch01_ephemeral_queue", "tests/ch02_tail_placement", "tests/ch03_hooks", "tests/ch04_plan",
                   "tests/ch05_budget", *RUNTIME_SUITES],
                  deselect="not 300_call and not random_hook_plans"),
    # The fork's own suite (what `fork DEST` writes as test_PKG.py) on what a fork copies: does the suite a
    # forking engineer runs notice a change to the core they own? Run module by module with --minutes.
    "fork": Scope(["core/agent.py", "core/context.py", "core/store.py", "core/hooks.py", "core/thread.py",
                   "core/tools.py", "core/messages.py", "core/config.py", "core/taint.py", "provider/cost.py",
                   "provider/models.py", "provider/content.py"],
                  ["minimal_runtime/fork_suite.py"]),
    "features": Scope(["features/budget.py", "features/plan.py", "features/filesystem.py", "features/coordination.py",
                       "features/delegation.py", "features/knowledge.py", "features/drift.py", "features/recall.py",
                       "features/compaction.py", "features/compaction_rungs.py", "features/server_compaction.py"],
                      ["tests/ch04_plan", "tests/ch05_budget", "tests/ch06_filesystem_first",
                       "tests/ch07_knowledge_manager", "tests/ch08_drift", "tests/ch09_compaction",
                       "tests/runtime/test_feature_checks.py", "tests/runtime/test_budget_and_files.py", "tests/runtime/test_planning.py",
                       "tests/runtime/test_knowledge.py", "tests/runtime/test_knowledge_rules.py", "tests/runtime/test_drift.py",
                       "tests/runtime/test_saved_copies.py",
                       "tests/runtime/test_compaction.py", "tests/runtime/test_boundaries.py",
                       "tests/runtime/test_reliability.py",
                       *[f"tests/runtime/test_{m}_rules.py" for m in ("coordination", "delegation", "drift", "recall",
                                                                      "compaction", "compaction_rungs",
                                                                      "server_compaction")]]),
}

# (file, the line as written, the line mutated): every module-level constant of the accounting.
CONSTANTS = [
    ("minimal_runtime/emulator/models.py", "MAX_BREAKPOINTS = 4", "MAX_BREAKPOINTS = 5"),
    ("minimal_runtime/emulator/models.py", "MAX_BREAKPOINTS = 4", "MAX_BREAKPOINTS = 3"),
    ("minimal_runtime/provider/models.py", "LOOKBACK_BLOCKS = 20", "LOOKBACK_BLOCKS = 21"),
    ("minimal_runtime/provider/models.py", "LOOKBACK_BLOCKS = 20", "LOOKBACK_BLOCKS = 19"),
    ("minimal_runtime/emulator/models.py", 'TTL_SECONDS = {"5m": 300,', 'TTL_SECONDS = {"5m": 301,'),
    ("minimal_runtime/emulator/models.py", 'TTL_SECONDS = {"5m": 300,', 'TTL_SECONDS = {"5m": 299,'),
    ("minimal_runtime/emulator/models.py", '"1h": 3600}', '"1h": 3601}'),
    ("minimal_runtime/emulator/models.py", '"1h": 3600}', '"1h": 3599}'),
    ("minimal_runtime/provider/models.py", "CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.0, 0.10",
     "CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.3, 2.0, 0.10"),
    ("minimal_runtime/provider/models.py", "CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.0, 0.10",
     "CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.5, 0.10"),
    ("minimal_runtime/provider/models.py", "CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.0, 0.10",
     "CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.0, 0.12"),
    ("minimal_runtime/emulator/tokens.py", "CHARS_PER_TOKEN = 4", "CHARS_PER_TOKEN = 5"),
    ("minimal_runtime/emulator/tokens.py", "PIXELS_PER_TOKEN = 750", "PIXELS_PER_TOKEN = 751"),
    ("minimal_runtime/emulator/tokens.py", "MAX_EDGE = 1568", "MAX_EDGE = 1569"),
    ("minimal_runtime/emulator/tokens.py", "MAX_PIXELS = 1_150_000", "MAX_PIXELS = 1_200_000"),
    ("minimal_runtime/emulator/prompt.py", 'UNCACHEABLE_TYPES = {"thinking", "redacted_thinking"}',
     'UNCACHEABLE_TYPES = {"redacted_thinking"}'),
    ("minimal_runtime/emulator/prompt.py", 'VERBATIM_KEYS = {"input", "input_schema"}', 'VERBATIM_KEYS = {"input_schema"}'),
    ("minimal_runtime/emulator/prompt.py", 'VERBATIM_KEYS = {"input", "input_schema"}', 'VERBATIM_KEYS = {"input"}'),
    ("minimal_runtime/emulator/prompt.py", '_PLAIN_TEXT_KEYS = {"type", "text", "cache_control"}',
     '_PLAIN_TEXT_KEYS = {"type", "text"}'),
    ("minimal_runtime/emulator/prompt.py", '_PLAIN_RESULT_KEYS = {"type", "tool_use_id", "content", "is_error", "cache_control"}',
     '_PLAIN_RESULT_KEYS = {"type", "tool_use_id", "content", "cache_control"}'),
    ("minimal_runtime/emulator/prompt.py", '_PLAIN_TOOL_USE_KEYS = {"type", "id", "name", "input", "cache_control"}',
     '_PLAIN_TOOL_USE_KEYS = {"type", "id", "name", "input", "cache_control", "caller"}'),
]


def copy_project(tmp: Path) -> Path:
    copy = tmp / "project"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "mutants", "__pycache__", "chapters"))
    return copy


def suites_from(ref: str, copy: Path, scope: Scope) -> None:
    """The scope's suites as they were at ``ref``, written over the copy's (the checkout's code stays)."""
    for suite in scope.tests:
        listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", ref, "--", suite], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
        if not listed:
            sys.exit(f"{suite} is not in {ref}")
        if (copy / suite).is_dir():  # the ref's files only: a test added since would not be "as it was"
            shutil.rmtree(copy / suite)
        for path in listed:
            text = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True, check=True).stdout
            (copy / path).parent.mkdir(parents=True, exist_ok=True)
            (copy / path).write_bytes(text)


def refresh_unmutated(copy: Path) -> None:
    """The checkout's version of every module the kept run did not mutate (one without a ``.meta``
    beside it in mutants/): the checkout's tests may need a fix made there since."""
    for source in (ROOT / "minimal_runtime").rglob("*.py"):
        relative = source.relative_to(ROOT)
        if not (copy / "mutants" / relative.parent / f"{relative.name}.meta").exists():
            for target in (copy / relative, copy / "mutants" / relative):
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def configure(copy: Path, scope: Scope, modules: list[str]) -> None:
    """mutmut 3 reads its settings from pyproject.toml only: write this scope's into the copy."""
    args = PYTEST_ARGS + (["-k", scope.deselect] if scope.deselect else [])
    settings = "\n".join([
        "[tool.mutmut]",
        'source_paths = ["minimal_runtime"]',
        f"only_mutate = {toml_list([f'minimal_runtime/{m}' for m in modules])}",
        f"pytest_add_cli_args_test_selection = {toml_list(scope.tests)}",
        f"pytest_add_cli_args = {toml_list(args)}",
    ])
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(re.sub(r"\n\[tool\.mutmut\]\n(?:(?!\[).*(?:\n|$))*", "\n", pyproject.read_text()) + "\n" + settings + "\n")


LOG_CALL = re.compile(r"^\s*[-+]\s*(?:log|logger|logging)\.(?:debug|info|warning|error|exception)\(")


def survivors(copy: Path) -> list[str]:
    """The mutants an earlier run left alive, or did not reach (a --minutes run): the ones to run again
    (not those a fresh process killed at import, which mutmut alone still counts alive)."""
    out = subprocess.run([str(BIN / "mutmut"), "results"], cwd=copy, capture_output=True, text=True).stdout
    at_import = json.loads((copy / "at-import.json").read_text()) if (copy / "at-import.json").exists() else {}
    return [name for line in out.splitlines() if line.strip().endswith((": survived", ": not checked"))
            and at_import.get(name := line.split(":")[0].strip()) != "killed"]


SHOW = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
print(json.dumps({name: get_diff_for_mutant(name) for name in json.load(sys.stdin)}))
"""


def survivor_diffs(copy: Path, names: list[str]) -> dict[str, str]:
    """Each survivor's diff, from one process (``mutmut show`` per mutant costs a start-up each)."""
    if not names:
        return {}
    out = subprocess.run([sys.executable, "-c", SHOW], cwd=copy, input=json.dumps(names), capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {}


CALLED_AT_IMPORT = """
import importlib, json, sys
from mutmut.state import state
for module in sys.argv[1:]:
    importlib.import_module(module)
print(json.dumps(sorted(state()._stats)))
"""


def called_at_import(copy: Path, scope: Scope, modules: list[str]) -> list[str]:
    """The mutated functions that run while the modules and the scope's test modules are imported
    (a price table built from a helper, a type built in a class body). mutmut forks each mutant's
    test run from a process that imported everything before the mutant was switched on, so these
    keep their original code however mutmut scores them: a fresh process has to check them."""
    imported = [f"minimal_runtime.{m[:-3].replace('/', '.')}" for m in modules]
    imported += [t[:-3].replace("/", ".") for t in scope.tests if t.startswith("minimal_runtime/") and t.endswith(".py")]
    out = subprocess.run([sys.executable, "-c", CALLED_AT_IMPORT, *imported], cwd=copy / "mutants", check=True,
                         env={**os.environ, "MUTANT_UNDER_TEST": "stats"}, capture_output=True, text=True).stdout
    return json.loads(out)


def check_at_import(copy: Path, scope: Scope, names: list[str], minutes: float | None) -> None:
    """Each mutant of a function called at import, run with the scope's tests in a fresh process that
    imports the project with the mutant already on (``-x``: the first failure kills it). The results
    go to ``at-import.json`` beside mutmut's, where ``mutmut`` reads them over mutmut's own; with
    ``minutes``, those not reached in that time stay unchecked."""
    path = copy / "at-import.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    args = PYTEST_ARGS + (["-k", scope.deselect] if scope.deselect else [])
    deadline = time.monotonic() + minutes * 60 if minutes else math.inf
    print(f"  {len(names)} mutants of functions called at import, each in a fresh process")
    for name in names:
        try:
            run = subprocess.run([sys.executable, "-m", "pytest", "-x", *scope.tests, *args], cwd=copy / "mutants",
                                 env={**os.environ, "MUTANT_UNDER_TEST": name}, capture_output=True,
                                 timeout=max(1.0, deadline - time.monotonic()) if minutes else None)
            results[name] = "survived" if run.returncode == 0 else "killed"
        except subprocess.TimeoutExpired:
            results[name] = "not checked"
        path.write_text(json.dumps(results, indent=1))
        if time.monotonic() > deadline:
            break


def chosen(name: str, patterns: list[str]) -> bool:
    """Is ``name`` one of ``patterns`` (mutant names, or mutmut's fnmatch patterns: a sample)?"""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def sample(modules: list[str], digits: str) -> list[str]:
    """The mutants whose number ends in one of ``digits``, in every function of ``modules``: a tenth
    of them per digit, spread over every function alike (mutmut has no sampling of its own; a
    ``--minutes`` limit alone checks the first functions of a file and none of the last)."""
    return [f"minimal_runtime.{m[:-3].replace('/', '.')}.*__mutmut_*{d}" for m in modules for d in digits]


def mutmut(copy: Path, scope: Scope, modules: list[str], minutes: float | None,
           names: list[str] | None = None) -> dict[str, Counter]:
    """Run mutmut (every mutant without a result, or only ``names``; none when ``names`` is empty),
    then each mutant of a function called at import not yet killed in a fresh process, then read back
    every mutant's status (for those, the fresh process's)."""
    try:
        if names != []:
            with open(copy / "mutmut.log", "a") as log:  # mutmut's own output: why a run stopped short
                subprocess.run([str(BIN / "mutmut"), "run", "--max-children", "2", *(names or [])], cwd=copy,
                               stdout=log, stderr=subprocess.STDOUT, timeout=minutes * 60 if minutes else None)
    except subprocess.TimeoutExpired:
        print(f"  stopped after {minutes:g} minutes; what was not reached is counted as unchecked")
    out = subprocess.run([str(BIN / "mutmut"), "results", "--all", "true"], cwd=copy,
                         capture_output=True, text=True).stdout
    listed = []
    for line in out.splitlines():
        match = re.match(r"\s*minimal_runtime\.(\w+)\.(\w+)\.\S+: (.+)$", line)
        if match:
            listed.append((line.split(":")[0].strip(), f"{match.group(1)}/{match.group(2)}.py", match.group(3).strip()))
    path = copy / "at-import.json"
    imported = set(called_at_import(copy, scope, modules))
    done = json.loads(path.read_text()) if path.exists() else {}
    check_at_import(copy, scope, [name for name, _, _ in listed if name.partition("__mutmut_")[0] in imported
                                  and done.get(name) != "killed" and (names is None or chosen(name, names))], minutes)
    at_import = json.loads(path.read_text()) if path.exists() else {}
    scores: dict[str, Counter] = {}
    statuses = [(name, module, at_import.get(name, status)) for name, module, status in listed]
    diffs = survivor_diffs(copy, [name for name, _, status in statuses if status == "survived"])
    for name, module, status in statuses:
        scores.setdefault(module, Counter())[status] += 1
        if name in at_import and status != "not checked":
            scores[module]["at import"] += 1
            scores[module]["at import killed"] += status == "killed"
        if status == "survived":
            changed = [d for d in diffs.get(name, "").splitlines() if d[:1] in "+-" and d[:3] not in ("+++", "---")]
            if changed and all(LOG_CALL.match(c) for c in changed):
                scores[module]["log text"] += 1
            print(f"  survived: {name}: " + " / ".join(c.strip() for c in changed)[:300])
    return scores


def constants() -> Counter:
    counts: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_project(Path(tmp))
        for path, before, after in CONSTANTS:
            source = (copy / path).read_text()
            assert before in source, f"{path}: {before!r} is gone; update CONSTANTS"
            (copy / path).write_text(source.replace(before, after, 1))
            result = subprocess.run([sys.executable, "-m", "pytest", *SCOPES["emulator"].tests, "-x", *PYTEST_ARGS],
                                    cwd=copy, capture_output=True, text=True)
            (copy / path).write_text(source)
            counts["killed" if result.returncode != 0 else "survived"] += 1
            if result.returncode == 0:
                print(f"  survived: {path}: {before} -> {after}")
    return counts


def report(scores: dict[str, Counter]) -> None:
    """Per module: killed over checked, the mutants no test reached and those a time limit left
    unchecked (neither counted as checked), the survivors that change only a log line, and the
    mutants of functions called at import (checked in a fresh process each) apart, with the score
    over the rest: what mutmut alone could check."""
    print(f"\n{'module':<34} {'killed':>7} {'checked':>8} {'score':>7} {'no test':>8} {'unchecked':>10} "
          f"{'log text':>9} {'score without':>14} {'at import':>10} {'score of the rest':>18}")
    for module, counts in scores.items():
        unreached, unchecked, logged = counts["no tests"], counts["not checked"], counts["log text"]
        imported, imported_killed = counts["at import"], counts["at import killed"]
        checked = sum(counts.values()) - unreached - unchecked - logged - imported - imported_killed
        rest = (counts["killed"] - imported_killed) / max(1, checked - imported)
        print(f"{module:<34} {counts['killed']:>7} {checked:>8} {counts['killed'] / max(1, checked):>7.1%} "
              f"{unreached:>8} {unchecked:>10} {logged:>9} {counts['killed'] / max(1, checked - logged):>14.1%} "
              f"{f'{imported_killed}/{imported}':>10} {rest:>18.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scope", nargs="?", default="emulator", choices=sorted(SCOPES))
    parser.add_argument("--module", action="append", default=[],
                        help="only modules whose path contains this (repeatable), e.g. --module store")
    parser.add_argument("--minutes", type=float, help="stop mutmut after this long (unreached mutants: unchecked)")
    parser.add_argument("--sample", metavar="DIGITS", help="only the mutants whose number ends in one of these "
                        "digits (e.g. 05: a fifth of each function's); the rest are counted as unchecked")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it (for --survivors)")
    parser.add_argument("--suite-ref", help="the scope's suites as they were at this commit (a score before)")
    parser.add_argument("--survivors", action="store_true",
                        help="with --keep DIR of an earlier run: copy tests/ in, re-run only its survivors")
    args = parser.parse_args()
    if args.survivors and not args.keep:
        parser.error("--survivors needs --keep DIR")
    if args.survivors and args.suite_ref:
        parser.error("--survivors re-runs with the checkout's tests; --suite-ref is for a first run")
    scope = SCOPES[args.scope]
    modules = [m for m in scope.modules if not args.module or any(part in m for part in args.module)]
    if not modules:
        parser.error(f"no module of {args.scope} matches {args.module}: {scope.modules}")
    print(f"mutmut over {', '.join(modules)}; tests: {' '.join(scope.tests)}"
          + (f" as at {args.suite_ref}" if args.suite_ref else "")
          + (f"; sample: the mutants numbered ...{' or ...'.join(args.sample)}" if args.sample else ""))
    if args.survivors:
        copy = args.keep / "project"
        if not (copy / "mutants").is_dir():
            parser.error(f"--survivors needs a --keep directory of an earlier run; {copy / 'mutants'} is absent")
        shutil.copytree(ROOT / "tests", copy / "tests", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        refresh_unmutated(copy)
        dotted = tuple(f"minimal_runtime.{m[:-3].replace('/', '.')}." for m in modules)
        names = [name for name in survivors(copy) if name.startswith(dotted)  # --module narrows the re-run
                 and (not args.sample or chosen(name, sample(modules, args.sample)))]  # and --sample does
        print(f"re-running the {len(names)} survivors and unchecked mutants with the checkout's tests")
        scores = mutmut(copy, scope, modules, args.minutes, names)
    elif args.keep:
        if (args.keep / "project").exists():
            parser.error(f"{args.keep / 'project'} exists; remove it or pass --survivors")
        args.keep.mkdir(parents=True, exist_ok=True)
        copy = copy_project(args.keep)
        if args.suite_ref:
            suites_from(args.suite_ref, copy, scope)
        configure(copy, scope, modules)
        scores = mutmut(copy, scope, modules, args.minutes, sample(modules, args.sample) if args.sample else None)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            copy = copy_project(Path(tmp))
            if args.suite_ref:
                suites_from(args.suite_ref, copy, scope)
            configure(copy, scope, modules)
            scores = mutmut(copy, scope, modules, args.minutes, sample(modules, args.sample) if args.sample else None)
    if args.scope == "emulator" and not args.module:
        print("module-level constants, changed one at a time")
        scores["module-level constants"] = constants()
    report(scores)


if __name__ == "__main__":
    main()
