"""``replay DIR``'s speed: logs per CPU-second with each strategy alone and with every strategy, on
two folders the benchmark generates (``replay.current``: Claude Code's own session, sub-agent and
stream-json files, made by the runtime on the emulator, with a hidden system prompt of Claude
Code's size, ``--hidden``, 20,000 tokens by default):

- ``generated``: ``--logs`` short runs (4 to 10 tool rounds), most of them under the compaction
  strategies' 60,000-token limit;
- ``long``: ``--long`` long sessions past that limit, with results of 16,000 to 28,000 characters,
  a compaction by the client and a continued prompt (only the ``every strategy`` row: the costly one).

With ``--compare REF`` the same folders are replayed by the code at git ref REF too (checked out into
a temporary folder, run in a subprocess with this venv): before and after, one run, one machine, and
the ``every strategy`` CSV (the CLI's own ``--csv``) of both sides compared byte for byte. Wall and
CPU time are both printed (the machine may be shared: CPU is the steadier figure), the ``--jobs 2``
against ``--jobs 1`` ratio of this tree's ``every strategy`` row, and each side's peak RSS. With
``--repeat N`` each tree is measured N times, taking turns, and its least times are kept.

With ``--where``, where this tree's ``every strategy`` CPU goes on each folder, one worker: the
requests sent through the SDK, and the CPU of the SDK's own work around each (building it, httpx,
reading the answer), of the emulator answering it, of the agent around the call, and of the rest
(reading the logs, sizing, calibrating, the report). Measured by timing those entry points in the
measuring process (``Emulator.handle``, the SDK's ``messages.create``, ``Agent._step``), nothing else changed.

    .venv/bin/python benchmarks/replay_folder.py [--logs 200] [--long 12] [--jobs 1] [--compare REF] [--repeat 1] [--where]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minimal_runtime.replay.current import CURRENT_MODELS, write_current  # noqa: E402

# Run in a subprocess on this checkout or another: only ``run_folder`` (with ``csv_path``), ``replay_files``
# and ``STRATEGIES``, which every version since the CSV has. Prints one JSON object.
MEASURE = """
import json, os, resource, sys, time, warnings
warnings.simplefilter("ignore")
from pathlib import Path
from minimal_runtime.replay import STRATEGIES
from minimal_runtime.replay.folder import run_folder
from minimal_runtime.emulator import Emulator
paths, jobs, options = json.loads(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
sent = [0]  # requests the emulator answered in this process (--jobs 1: all of them)
answer = Emulator.handle
def counted(self, *args, **kwargs):
    sent[0] += 1
    return answer(self, *args, **kwargs)
Emulator.handle = counted
engine = {"engine": options["engine"]} if options.get("engine") else {}  # only newer trees take it

def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

out = {}
for name in options.get("names") or [*STRATEGIES, "every strategy"]:
    names = list(STRATEGIES) if name == "every strategy" else [name]
    csv_path = Path(options["csv"]) if name == "every strategy" and options.get("csv") else None
    start, used, before = time.perf_counter(), cpu(), sent[0]
    totals = run_folder(paths, names, jobs=jobs, csv_path=csv_path, **engine)
    rows = totals.strategies
    out[name] = {"wall": time.perf_counter() - start, "cpu": cpu() - used, "refused": len(totals.refused), "requests": sent[0] - before,
                 "calls": rows[names[0]]["calls"] if names[0] in rows else 0,
                 "cost": round(sum(rows[n]["cost"] for n in names if n in rows), 4)}
out["rss_mb"] = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024
print(json.dumps(out))
"""

# Where the CPU goes: each entry point's own time (its inclusive time less the entry points it calls).
WHERE = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from pathlib import Path
import anthropic.resources.messages.messages as plain
import anthropic.resources.beta.messages.messages as beta
from minimal_runtime.core.agent import Agent
from minimal_runtime.emulator import Emulator
from minimal_runtime.replay import STRATEGIES
from minimal_runtime.replay.folder import run_folder
spent = {"emulator": 0.0, "sdk": 0.0, "agent": 0.0}
count = {"requests": 0}
inner = []  # the CPU spent in timed entry points below the one running

def timed(owner, name, part):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        inner.append(0.0)
        try:
            return original(*args, **kwargs)
        finally:
            took, below = time.process_time() - start, inner.pop()
            spent[part] += took - below
            if inner:
                inner[-1] += took
            count["requests"] += part == "emulator"
    setattr(owner, name, wrapper)

timed(Emulator, "handle", "emulator")
timed(plain.Messages, "create", "sdk")
timed(beta.Messages, "create", "sdk")
timed(Agent, "_step", "agent")
start = time.process_time()
run_folder(json.loads(sys.argv[1]), list(STRATEGIES), jobs=1)
print(json.dumps({**spent, **count, "total": time.process_time() - start}))
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


def build_long(folder: Path, runs: int, hidden: int) -> list[Path]:
    """Long sessions past the 60,000-token limit (a hidden prompt of ``hidden`` tokens, 10 to 16
    tool rounds of 16,000 to 28,000 characters each before the client compacts, two rounds after
    the continue), each written three ways as ``build``'s are."""
    for k in range(runs):
        write_current(folder / f"long-{k:03d}", CURRENT_MODELS[k % len(CURRENT_MODELS)], rounds=10 + k % 7,
                      output_chars=16_000 + 4_000 * (k % 4), hidden_tokens=hidden)
    return sorted(p for p in folder.rglob("*.jsonl"))


def measure(code: Path, paths: list[Path], jobs: int, engine: str | None = None, names: list[str] | None = None,
            csv: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    options = {"engine": engine, "names": names, "csv": str(csv) if csv else None}
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps([str(p) for p in paths]), str(jobs),
                           json.dumps(options)], cwd=code, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"measuring {code} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def compared(trees: dict[str, Path], paths: list[Path], jobs: int, names: list[str] | None, csvs: list[Path],
             repeat: int) -> dict[str, dict]:
    """Each tree measured ``repeat`` times, the trees taking turns (first in one round, last in the
    next): on a shared machine what runs beside a measure changes its CPU time too, and the least of
    a tree's times is the one least disturbed. Each tree's CSV is written in the first round only."""
    best: dict[str, dict] = {}
    for round_ in range(repeat):
        order = list(enumerate(trees.items()))
        for k, (label, code) in (order if round_ % 2 == 0 else order[::-1]):
            r = measure(code, paths, jobs, names=names, csv=csvs[k] if round_ == 0 else None)
            if label not in best:
                best[label] = r
                continue
            for name, row in r.items():
                if name == "rss_mb":
                    best[label][name] = max(best[label][name], row)
                else:
                    best[label][name].update(cpu=min(best[label][name]["cpu"], row["cpu"]),
                                             wall=min(best[label][name]["wall"], row["wall"]))
    return {label: best[label] for label in trees}


def checkout(ref: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "minimal_runtime"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", type=int, default=200, help="logs in the generated folder")
    parser.add_argument("--long", type=int, default=12, help="long sessions past the limit (three logs each)")
    parser.add_argument("--hidden", type=int, default=20_000, help="tokens of hidden system prompt per run")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--compare", default=None, metavar="REF", help="also replay with the code at this git ref")
    parser.add_argument("--repeat", type=int, default=1, help="measure each tree this many times, in turn, "
                                                                   "and keep each one's least CPU and wall time")
    parser.add_argument("--where", action="store_true", help="also: where this tree's every-strategy CPU goes")
    parser.add_argument("--engines", action="store_true", help="instead: every strategy at 1 and 2 workers, "
                                                               "--jobs and --engine dask (the dask extra)")
    args = parser.parse_args()
    if args.engines:
        return engines(args)
    identical = True
    with tempfile.TemporaryDirectory(prefix="replay-folder-") as tmp:
        tmp = Path(tmp)
        start = time.perf_counter()
        folders = {"generated": build(tmp / "logs", args.logs, args.hidden),
                   "long": build_long(tmp / "long", args.long, args.hidden)}
        print(f"{len(folders['generated'])} generated logs and {len(folders['long'])} logs of {args.long} long "
              f"sessions ({args.hidden:,}-token hidden system prompt), made in {time.perf_counter() - start:.0f}s; "
              f"--jobs {args.jobs} on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        trees = {"this tree": ROOT}
        if args.compare:
            trees = {args.compare: checkout(args.compare, tmp / "before"), **trees}
        for folder, paths in folders.items():
            names = None if folder == "generated" else ["every strategy"]
            results = compared(trees, paths, args.jobs, names, [tmp / f"{folder}-{k}.csv" for k in range(len(trees))],
                               args.repeat)
            table(folder, paths, results, args.compare)
            if args.compare:
                identical &= same_csv(folder, tmp / f"{folder}-0.csv", tmp / f"{folder}-1.csv")
            if args.jobs == 1:
                two = measure(ROOT, paths, 2, names=["every strategy"])
                one = results["this tree"]["every strategy"]
                print(f"  this tree, every strategy, --jobs 2 against --jobs 1: {one['wall'] / two['every strategy']['wall']:.2f}x "
                      f"wall ({len(paths) / two['every strategy']['wall']:.1f} against {len(paths) / one['wall']:.1f} log/s; "
                      f"peak RSS {two['rss_mb']:.0f} MB with 2 workers)")
            if args.where:
                where(folder, paths)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if not identical:
        raise SystemExit("the CSVs differ")


def table(folder: str, paths: list[Path], results: dict[str, dict], compare: str | None) -> None:
    print(f"\n{folder}: {len(paths)} logs; logs per second of wall time, and per second of CPU time")
    print(f"{'strategy':<16}" + "".join(f"{label[:12]:>12} {'log/cpu-s':>10}" for label in results)
          + ("   after/before: wall  cpu" if compare else ""))
    last = results["this tree"]
    for name in [n for n in last if n != "rss_mb"]:
        cells = "".join(f"{len(paths) / r[name]['wall']:>6.1f} log/s {len(paths) / r[name]['cpu']:>10.1f}"
                        for r in results.values())
        ratio = (f"   {' ' * 13}{results[compare][name]['wall'] / last[name]['wall']:>4.2f}x "
                 f"{results[compare][name]['cpu'] / last[name]['cpu']:>4.2f}x") if compare else ""
        print(f"{name:<16}{cells}{ratio}")
    for label, r in results.items():
        every = r["every strategy"]
        sent = f"{every['requests']:,} requests through the SDK, " if every.get("requests") else ""
        print(f"  {label}: {every['calls']:,} calls replayed per strategy, {sent}{every['refused']} logs refused, "
              f"every strategy's bill summed ${every['cost']:.2f}; peak RSS {r['rss_mb']:.0f} MB")


def where(folder: str, paths: list[Path]) -> None:
    """This tree's every-strategy CPU on ``folder``, by who spends it (``WHERE``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", WHERE, json.dumps([str(p) for p in paths])], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"measuring where the time goes failed:\n{done.stderr[-2000:]}")
    r = json.loads(done.stdout.splitlines()[-1])
    rest = r["total"] - r["sdk"] - r["emulator"] - r["agent"]
    parts = [("the SDK's own work (building, httpx, reading the answer)", r["sdk"]), ("the emulator", r["emulator"]),
             ("the agent around each call", r["agent"]), ("the rest (logs read, sizing, calibration, report)", rest)]
    print(f"  {folder}: where this tree's every-strategy CPU goes: {r['requests']:,} requests through the SDK, "
          f"{r['total']:.1f} CPU-s, {1000 * r['total'] / max(1, r['requests']):.2f} ms a request")
    for name, seconds in parts:
        print(f"    {name:<56} {seconds:6.1f}s {seconds / r['total']:6.1%} {1000 * seconds / max(1, r['requests']):6.2f} ms a request")


def same_csv(folder: str, before: Path, after: Path) -> bool:
    """The ``every strategy`` CSVs of both trees, byte for byte; the first line that differs, if one does."""
    old, new = before.read_bytes().splitlines(), after.read_bytes().splitlines()
    if old == new:
        print(f"  {folder}: the every-strategy CSVs are identical ({len(new) - 1} rows)")
        return True
    k = next((k for k, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    print(f"  {folder}: the every-strategy CSVs DIFFER ({len(old) - 1} rows before, {len(new) - 1} after), first at "
          f"line {k + 1}:\n    before {old[k:k + 1]}\n    after  {new[k:k + 1]}")
    return False


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
