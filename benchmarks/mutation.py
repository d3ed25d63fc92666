"""How many changes of the emulator's accounting would a test notice? (``make mutate``; ~15 minutes)

Two passes over the accounting modules (``tool.mutmut.only_mutate`` in pyproject.toml):

1. mutmut mutates every function (comparisons, constants inside functions, keys, arguments) and
   runs the emulator's tests against each mutant; lines marked ``# pragma: no mutate`` carry an
   equivalent-by-construction reason next to them (a label inside a digest, say).
2. mutmut leaves module-level constants alone, so this script changes each of them in a copy of
   the project (the caching constants of the model table, the tokenizer's ratios, the block-type
   sets of the prompt renderer) and runs the same tests.

It prints each module's score: mutants killed (a test failed) over mutants made. Survivors are
listed so a reader can judge each: a test to add, or an equivalent mutant.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TESTS = ["tests/emulator", "-x", "-q", "-p", "no:xdist", "-p", "no:cacheprovider"]

# (file, the line as written, the line mutated): every module-level constant of the accounting.
CONSTANTS = [
    ("minimal_runtime/provider/models.py", "MAX_BREAKPOINTS = 4", "MAX_BREAKPOINTS = 5"),
    ("minimal_runtime/provider/models.py", "MAX_BREAKPOINTS = 4", "MAX_BREAKPOINTS = 3"),
    ("minimal_runtime/provider/models.py", "LOOKBACK_BLOCKS = 20", "LOOKBACK_BLOCKS = 21"),
    ("minimal_runtime/provider/models.py", "LOOKBACK_BLOCKS = 20", "LOOKBACK_BLOCKS = 19"),
    ("minimal_runtime/provider/models.py", 'TTL_SECONDS = {"5m": 300,', 'TTL_SECONDS = {"5m": 301,'),
    ("minimal_runtime/provider/models.py", 'TTL_SECONDS = {"5m": 300,', 'TTL_SECONDS = {"5m": 299,'),
    ("minimal_runtime/provider/models.py", '"1h": 3600}', '"1h": 3601}'),
    ("minimal_runtime/provider/models.py", '"1h": 3600}', '"1h": 3599}'),
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


def mutmut() -> dict[str, Counter]:
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    subprocess.run([str(BIN / "mutmut"), "run", "--max-children", "2"], cwd=ROOT, stdout=subprocess.DEVNULL)
    out = subprocess.run([str(BIN / "mutmut"), "results", "--all", "true"], cwd=ROOT, capture_output=True, text=True).stdout
    scores: dict[str, Counter] = {}
    for line in out.splitlines():
        match = re.match(r"\s*minimal_runtime\.emulator\.(\w+)\.\S+: (\w+)", line)
        if match:
            scores.setdefault(f"emulator/{match.group(1)}.py", Counter())[match.group(2)] += 1
            if match.group(2) != "killed":
                print("  survived:", line.strip())
    return scores


def constants() -> Counter:
    counts: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "project"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "mutants", "__pycache__", "chapters"))
        for path, before, after in CONSTANTS:
            source = (copy / path).read_text()
            assert before in source, f"{path}: {before!r} is gone; update CONSTANTS"
            (copy / path).write_text(source.replace(before, after, 1))
            result = subprocess.run([sys.executable, "-m", "pytest", *TESTS], cwd=copy, capture_output=True, text=True)
            (copy / path).write_text(source)
            killed = result.returncode != 0
            counts["killed" if killed else "survived"] += 1
            if not killed:
                print(f"  survived: {path}: {before} -> {after}")
    return counts


def main() -> None:
    print("pass 1: mutmut over the functions of the cache and prompt modules")
    scores = mutmut()
    print("pass 2: module-level constants")
    scores["module-level constants"] = constants()
    print(f"\n{'module':<26} {'killed':>7} {'made':>6} {'score':>7}")
    for module, counts in scores.items():
        made = sum(counts.values())
        print(f"{module:<26} {counts['killed']:>7} {made:>6} {counts['killed'] / max(1, made):>7.1%}")


if __name__ == "__main__":
    main()
