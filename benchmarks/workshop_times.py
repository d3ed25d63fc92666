"""The machine times of a workshop's plan (docs/workshop.md), measured on a fresh clone with course.py:

    python benchmarks/workshop_times.py                       # install online, the wheelhouse for this laptop, the offline install
    python benchmarks/workshop_times.py --wheelhouse DIR      # and the size of a full wheelhouse made by `course.py wheelhouse DIR`

Measured: `course.py setup` with the network (uv, with whatever package cache this machine has: a laptop
at a venue has none, so this is a floor); `course.py wheelhouse` for this platform and Python alone; a
second fresh clone set up from it with no network and an empty uv cache, as a venue's laptop is; then
`course.py demo` and `course.py progress` there. Not measured again here: `make test` (benchmarks/make_test_time.py)
and each notebook's run (benchmarks/chapter_times.py, the README's *run* column), which this script reads
and prints beside its own figures. Reading and solving are people's times, not a machine's: they are
estimated from the README's word and test counts at the rates below, and printed as estimates.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The estimates' assumptions. Technical prose with tables and code read closely: 150 words a minute (a common
# figure for prose is 200 to 250; these chapters are denser). Solving: one test of a chapter's suite turned
# green every two minutes, reading the failure, writing, re-running (0.5 tests a minute); a guess until
# `course.py progress` logs (.progress.jsonl) from a real workshop replace it.
WORDS_PER_MINUTE = 150
TESTS_PER_MINUTE = 0.5


def timed(command: list, cwd: Path, env: dict | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - start


def size(folder: Path) -> str:
    wheels = list(folder.glob("*.whl"))
    return f"{len(wheels)} wheels, {sum(w.stat().st_size for w in wheels) / 1e6:,.0f} MB"


def chapter_table() -> list[tuple[str, int, int, int]]:
    """(chapter, run s, main-path words, tests) from the README's table, which `make times` measures."""
    rows = []
    for line in (ROOT / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit() and cells[3].endswith("words"):
            tests = cells[4].split(", ")[-1].split()[0] if "tests" in cells[4] else "0"
            rows.append((cells[0], int(cells[2]), int(cells[3].split()[0].replace(",", "")), int(tests)))
    return rows


def chapter_rows() -> list[str]:
    """docs/workshop.md's per-chapter table, a row a chapter (a test holds the page to it)."""
    return [f"| {chapter} | {run} | {words / WORDS_PER_MINUTE:.0f} | {tests} | {tests / TESTS_PER_MINUTE:.0f} |"
            for chapter, run, words, tests in chapter_table()]


def main() -> int:
    house_all = Path(sys.argv[sys.argv.index("--wheelhouse") + 1]) if "--wheelhouse" in sys.argv else None
    work = Path(tempfile.mkdtemp(prefix="workshop-", dir=ROOT.parent))
    rows = []
    try:
        online, offline, house = work / "online", work / "offline", work / "wheelhouse"
        for clone in (online, offline):
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        own = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # each clone imports its own install
        rows.append(("install with the network (course.py setup; this machine's package cache)",
                     timed([sys.executable, "course.py", "setup"], online, own)))
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        rows.append((f"wheelhouse for this laptop alone (linux-x86_64, Python {running}): {{}}",
                     timed([online / ".venv" / "bin" / "python", "course.py", "wheelhouse", house,
                            "--platforms", "linux-x86_64", "--pythons", running], online, own)))
        rows[-1] = (rows[-1][0].format(size(house)), rows[-1][1])
        nowhere = "http://127.0.0.1:9"  # any connection attempted fails: the install must need none
        env = {k: v for k, v in own.items() if not k.startswith(("PIP_", "UV_"))}
        env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", UV_CACHE_DIR=str(work / "empty-cache"),
                   http_proxy=nowhere, https_proxy=nowhere, HTTP_PROXY=nowhere, HTTPS_PROXY=nowhere)
        rows.append(("install from the wheelhouse, no network, empty cache (course.py setup --wheelhouse; with JupyterLab)",
                     timed([sys.executable, "course.py", "setup", "--wheelhouse", house], offline, env)))
        rows.append(("course.py demo", timed([sys.executable, "course.py", "demo"], offline, env)))
        rows.append(("course.py progress (every chapter's tests on the stubs)", timed([sys.executable, "course.py", "progress"], offline, env)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| step | wall (s) |\n|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.0f} |")
    if house_all is not None:
        print(f"the full wheelhouse {house_all}: {size(house_all)}")
    print(f"\nper chapter (run: the README's, from make times; reading at {WORDS_PER_MINUTE} words a minute and "
          f"solving at {TESTS_PER_MINUTE} tests a minute: estimates)")
    print("| chapter | run (s) | reading (min) | tests | solving (min) |\n|---|---|---|---|---|")
    for row in chapter_rows():
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
