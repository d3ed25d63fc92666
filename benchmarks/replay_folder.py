"""``replay DIR`` in worker processes: wall time with --jobs 2 against --jobs 1, over a folder of
at least 50 logs (the shared real logs in ../shared/data/trajectories, when present, and logs of
current-model runs generated here by the runtime's agent on the emulator). Prints the aggregate
table once and the ratio measured in this run, with what each run got of the machine: the CPU
seconds it used over its wall time (the cores it had on average) and the load average around it.
A ratio near 1 with about one core used says the machine was shared, not that the workers do not
overlap: this kernel schedules each session as one group (autogroup), so other sessions' work takes
its share whatever their nice value.

    .venv/bin/python benchmarks/replay_folder.py [--logs 50]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.replay import STRATEGIES  # noqa: E402
from minimal_runtime.replay.current import CURRENT_MODELS, write_current  # noqa: E402
from minimal_runtime.replay.folder import find_logs, folder_table, replay_files  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories"


def build(folder: Path, at_least: int) -> list[Path]:
    """The shared logs (read where they are) and generated ones in ``folder``: ``at_least`` in all."""
    shared = sorted(DATA.glob("*.json*")) if DATA.is_dir() else []
    k = 0
    while len(shared) + len(find_logs(folder)) < at_least:  # each run writes three files: session, sub-agent, stream
        model = CURRENT_MODELS[k % len(CURRENT_MODELS)]
        write_current(folder / f"run-{k:02d}", model, rounds=4 + k % 7, output_chars=2_000 + 1_500 * (k % 5))
        k += 1
    return shared + find_logs(folder)


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the pool's workers, once it is shut down)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-folder-") as tmp:
        folder = Path(tmp)
        paths = build(folder, args.logs)
        shared = [p for p in paths if DATA in p.parents]
        print(f"{len(paths)} logs: {len(shared)} shared real logs, {len(paths) - len(shared)} generated; "
              f"{len(STRATEGIES)} strategies each")
        seconds, cores, loads, tables = {}, {}, {}, {}
        for jobs in (1, 2):
            load, start, cpu = os.getloadavg()[0], time.perf_counter(), cpu_seconds()
            rows, refused = replay_files(paths, list(STRATEGIES), jobs=jobs)
            seconds[jobs] = time.perf_counter() - start
            cores[jobs] = (cpu_seconds() - cpu) / seconds[jobs]
            loads[jobs] = (load, os.getloadavg()[0])
            tables[jobs] = folder_table(folder, rows, refused)
        print(tables[2])
        assert tables[1] == tables[2], "the two runs disagree"
        for jobs in (1, 2):
            print(f"--jobs {jobs}: wall {seconds[jobs]:.1f}s, {cores[jobs]:.2f} cores used on average, "
                  f"load average {loads[jobs][0]:.1f} before, {loads[jobs][1]:.1f} after")
        print(f"ratio jobs 2 / jobs 1 = {seconds[2] / seconds[1]:.2f} on {os.cpu_count()} cores "
              f"(the machine's other load included)")


if __name__ == "__main__":
    main()
