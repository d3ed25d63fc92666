"""``replay DIR``'s speed: logs per second with each strategy alone and with every strategy, on a
folder of generated Claude Code logs (``replay.current``) that carry a hidden system prompt of
Claude Code's size (``--hidden``, 20,000 tokens by default), as real ones do. With ``--compare
REF`` the same folder is replayed by the code at git ref REF too (checked out into a temporary
folder, run in a subprocess with this venv), and the ratio is printed: before and after, one run,
one machine. Wall time and CPU time are both printed: the machine may be shared.

    .venv/bin/python benchmarks/replay_folder.py [--logs 200] [--jobs 1] [--compare REF]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minimal_runtime.replay.current import CURRENT_MODELS, write_current  # noqa: E402

# Run in this process, or in a subprocess on another checkout: only ``replay_files`` and
# ``STRATEGIES``, which every version has. Prints one JSON object.
MEASURE = """
import json, os, resource, sys, time, warnings
warnings.simplefilter("ignore")
from minimal_runtime.replay import STRATEGIES
from minimal_runtime.replay.folder import replay_files
paths, jobs = json.loads(sys.argv[1]), int(sys.argv[2])
engine = {"engine": sys.argv[3]} if len(sys.argv) > 3 else {}  # only this tree's replay_files takes it
names_asked = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None

def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

out = {}
for name in names_asked or [*STRATEGIES, "every strategy"]:
    names = list(STRATEGIES) if name == "every strategy" else [name]
    start, used = time.perf_counter(), cpu()
    rows, refused = replay_files(paths, names, jobs=jobs, **engine)[:2]
    out[name] = {"wall": time.perf_counter() - start, "cpu": cpu() - used, "refused": len(refused),
                 "calls": sum(r["calls"] for r in rows if r["strategy"] == names[0]),
                 "cost": round(sum(r["cost"] for r in rows if r["strategy"] in names and r["cost"] == r["cost"]), 4)}
print(json.dumps(out))
"""


def build(folder: Path, at_least: int, hidden: int) -> list[Path]:
    """Generated logs: each run writes three (its session, its sub-agent's file, its stream-json)."""
    k = 0
    while 3 * k < at_least:
        model = CURRENT_MODELS[k % len(CURRENT_MODELS)]
        write_current(folder / f"run-{k:03d}", model, rounds=4 + k % 7, output_chars=2_000 + 1_500 * (k % 5),
                      hidden_tokens=hidden)
        k += 1
    return sorted(p for p in folder.rglob("*.jsonl"))


def measure(code: Path, paths: list[Path], jobs: int, engine: str | None = None, names: list[str] | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    extra = [engine or "processes", json.dumps(names)] if engine or names else []
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps([str(p) for p in paths]), str(jobs), *extra],
                          cwd=code, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"measuring {code} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def checkout(ref: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "minimal_runtime"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=20_000, help="tokens of hidden system prompt per run")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--compare", default=None, metavar="REF", help="also replay with the code at this git ref")
    parser.add_argument("--engines", action="store_true", help="instead: every strategy at 1 and 2 workers, "
                                                               "--jobs and --engine dask (the dask extra)")
    args = parser.parse_args()
    if args.engines:
        return engines(args)
    with tempfile.TemporaryDirectory(prefix="replay-folder-") as tmp:
        start = time.perf_counter()
        paths = build(Path(tmp) / "logs", args.logs, args.hidden)
        print(f"{len(paths)} generated logs ({args.hidden:,}-token hidden system prompt), made in "
              f"{time.perf_counter() - start:.0f}s; --jobs {args.jobs} on {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f}")
        results = {}
        if args.compare:
            results[args.compare] = measure(checkout(args.compare, Path(tmp) / "before"), paths, args.jobs)
        results["this tree"] = measure(ROOT, paths, args.jobs)
    print("logs per second of wall time, and per second of CPU time (the machine may be shared: CPU is the "
          "steadier figure)")
    print(f"{'strategy':<16}" + "".join(f"{label[:12]:>12} {'log/cpu-s':>10}" for label in results)
          + ("   after/before: wall  cpu" if args.compare else ""))
    for name in results["this tree"]:
        cells = "".join(f"{len(paths) / r[name]['wall']:>6.1f} log/s {len(paths) / r[name]['cpu']:>10.1f}"
                        for r in results.values())
        ratio = (f"   {' ' * 13}{results[args.compare][name]['wall'] / results['this tree'][name]['wall']:>4.2f}x "
                 f"{results[args.compare][name]['cpu'] / results['this tree'][name]['cpu']:>4.2f}x") if args.compare else ""
        print(f"{name:<16}{cells}{ratio}")
    for label, r in results.items():
        every = r["every strategy"]
        print(f"{label}: {every['calls']:,} calls replayed per strategy, {every['refused']} logs refused, "
              f"every strategy's bill summed ${every['cost']:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}; resource use of this process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB peak")


def engines(args) -> None:
    """Every strategy, in worker processes and on a Dask LocalCluster, at 1 and 2 workers: the same rows."""
    with tempfile.TemporaryDirectory(prefix="replay-folder-") as tmp:
        paths = build(Path(tmp) / "logs", args.logs, args.hidden)
        print(f"{len(paths)} generated logs, every strategy; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        for engine in ("processes", "dask"):
            for workers in (1, 2):
                r = measure(ROOT, paths, workers, engine, ["every strategy"])["every strategy"]
                print(f"{engine:<10} {workers} worker(s): {len(paths) / r['wall']:5.1f} logs/s wall, "
                      f"{r['calls']:,} calls a strategy, bills summed ${r['cost']:.2f}, {r['refused']} refused "
                      f"(CPU of the parent and its ended children: {r['cpu']:.0f}s)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
