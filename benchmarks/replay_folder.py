"""``replay DIR`` in worker processes: wall time with --jobs 2 against --jobs 1, over a folder of
at least 50 logs (the shared real logs in ../shared/data/trajectories, when present, and logs of
current-model runs generated here by the runtime's agent on the emulator). Prints the aggregate
table once and the ratio measured in this run.

    .venv/bin/python benchmarks/replay_folder.py [--logs 50]
"""

from __future__ import annotations

import argparse
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
        seconds, tables = {}, {}
        for jobs in (1, 2):
            start = time.perf_counter()
            rows, refused = replay_files(paths, list(STRATEGIES), jobs=jobs)
            seconds[jobs] = time.perf_counter() - start
            tables[jobs] = folder_table(folder, rows, refused)
        print(tables[2])
        assert tables[1] == tables[2], "the two runs disagree"
        print(f"\nwall time: --jobs 1 {seconds[1]:.1f}s, --jobs 2 {seconds[2]:.1f}s; "
              f"ratio jobs 2 / jobs 1 = {seconds[2] / seconds[1]:.2f} (the machine's other load included)")


if __name__ == "__main__":
    main()
