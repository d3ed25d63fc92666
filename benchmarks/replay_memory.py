"""One big stream-json log (issue 52 item 6): replay's peak memory against the file's size, and its
time per call against a small log's. The logs are generated here, at benchmark time (never in a
test): a 1 MB headless Claude Code log of the course's task (``replay.current``), and that log
appended to itself to 4 MB, to ``--under`` (below replay's limit) and to ``--mb`` (``claude -p ... >> log`` makes such files: each run
up to its ``result`` is replayed as a run of its own). Each replay runs in a fresh subprocess, so its
peak resident memory is its own (``ru_maxrss`` of the child). A log past ``source.MAX_BYTES`` is
refused in one line, which is printed.

    .venv/bin/python benchmarks/replay_memory.py [--mb 400] [--under 64] [--strategy recorded]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minimal_runtime.replay.current import write_current  # noqa: E402
from minimal_runtime.replay.source import MAX_BYTES  # noqa: E402

MEASURE = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from minimal_runtime.replay import runs, replay_all
from minimal_runtime.replay.recorded import TrajectoryError
start = time.perf_counter()
calls = count = 0
try:
    for run in runs(sys.argv[1]):  # as the command reads a file: a run at a time
        count += 1
        calls += sum(len(r.calls) for r in replay_all(run, json.loads(sys.argv[2])))
except TrajectoryError as e:
    print(json.dumps({"refused": str(e)}))
    raise SystemExit
print(json.dumps({"runs": count, "calls": calls, "seconds": time.perf_counter() - start, "load": 0.0}))
"""


def measure(path: Path, strategies: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path), json.dumps(strategies)], capture_output=True,
                          text=True, cwd=ROOT, check=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB: the largest child so far
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["peak_mb"] = peak / 1024 if peak > before else float("nan")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=400)
    parser.add_argument("--under", type=float, default=64, help="the size of the log under the limit (MB)")
    parser.add_argument("--strategy", action="append")
    args = parser.parse_args()
    strategies = args.strategy or ["recorded"]
    with tempfile.TemporaryDirectory(prefix="replay-memory-") as tmp:
        unit = write_current(tmp, "claude-sonnet-4-6", rounds=40, output_chars=24_000)["stream"].read_bytes()
        paths, sizes = [], []
        for target in (4, min(args.under, MAX_BYTES / 2**20 * 0.95), args.mb):  # 4 MB, under the limit, asked
            copies = max(1, int(target * 2**20 / len(unit)))
            big = Path(tmp) / f"appended-{copies}.stream.jsonl"
            with open(big, "wb") as f:
                for _ in range(copies):
                    f.write(unit)
            paths.append(big)
            sizes.append(os.path.getsize(big) / 2**20)
        base = None
        print(f"strategies: {', '.join(strategies)}; limit {MAX_BYTES // 2**20} MB a file (source.MAX_BYTES)")
        for path, mb in zip(paths, sizes):
            m = measure(path, strategies)
            if "refused" in m:
                print(f"{mb:8.1f} MB: refused in one line: {m['refused'].split(': ', 1)[1]}")
                continue
            per_call = m["seconds"] / max(1, m["calls"])
            base = base or per_call
            print(f"{mb:8.1f} MB: {m['runs']:4d} runs, {m['calls']:6,d} calls replayed in {m['seconds']:7.1f} s "
                  f"{1000 * per_call:6.1f} ms a call ({per_call / base:.2f}x the 4 MB "
                  f"log's); peak {m['peak_mb']:7.0f} MB = {m['peak_mb'] / mb:4.2f}x the file")
            os.remove(path)


if __name__ == "__main__":
    main()
