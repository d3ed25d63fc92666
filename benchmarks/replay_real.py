"""Replay every recorded run in ../shared/data/trajectories (real agents' logs, not part of the
project) under every strategy: recorded vs replayed cache-read share and cost, and the replay time
per call. Skips cleanly when the data is absent. Ratios and shares come from this run."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.replay import STRATEGIES, load, replay, rows  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories"


def main() -> None:
    files = sorted(p for p in DATA.glob("*.json*")) if DATA.is_dir() else []
    if not files:
        print(f"no trajectories at {DATA}: skipped")
        return
    print(f"{'run':<58} {'strategy':<16} {'calls':>5} {'cache read':>10} {'cost $':>9} {'ms/call':>8}")
    for path in files:
        for run in load(path):
            started = time.perf_counter()
            results = [replay(run, name) for name in STRATEGIES]
            label = Path(run.path).name[:56]
            for row in rows(run, results):
                share = "n/a" if row["cache_read_share"] is None else f"{row['cache_read_share']:.1%}"
                cost = "n/a" if row["cost"] is None else f"{row['cost']:.3f}"
                ms = "" if row["ms_per_call"] is None else f"{row['ms_per_call']:.1f}"
                print(f"{label:<58} {row['strategy']:<16} {row['calls']:>5} {share:>10} {cost:>9} {ms:>8}")
            elapsed = time.perf_counter() - started
            print(f"{'':<58} all strategies: {elapsed:.1f}s for {len(STRATEGIES) * len(run.calls)} replayed calls\n")


if __name__ == "__main__":
    main()
