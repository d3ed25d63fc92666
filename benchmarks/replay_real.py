"""Replay every recorded run in ../shared/data/trajectories (real agents' logs, not part of the
project) under every strategy: recorded vs replayed cache-read share and cost, and the replay time
per call. Skips cleanly when the data is absent. Ratios and shares come from this run."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.provider.models import lookup  # noqa: E402
from minimal_runtime.replay import STRATEGIES, TrajectoryError, calibrate, load, replay, rows  # noqa: E402
from minimal_runtime.replay.habits import habits  # noqa: E402

FALLBACK = "claude-sonnet-4-6"  # the price table for logs of models it does not know (said in the output)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories"


def main() -> None:
    files = sorted(p for p in DATA.glob("*.json*")) if DATA.is_dir() else []
    if not files:
        print(f"no trajectories at {DATA}: skipped")
        return
    print(f"{'run':<58} {'strategy':<16} {'calls':>5} {'cache read':>10} {'cost $':>9} {'ms/call':>8}")
    fidelity, counted = [], []
    for path in files:
        try:
            runs = load(path)
        except TrajectoryError as e:
            print(f"{path.name}: not imported: {e.problem}\n")
            continue
        for run in runs:
            started = time.perf_counter()
            model = None if lookup(run.model or "") else FALLBACK
            if model:
                print(f"{Path(run.path).name}: the log's model {run.model!r} is not in the table; priced as {model}")
            calibration = calibrate(run, model)
            results = [replay(run, name, model=model, calibration=calibration) for name in STRATEGIES]
            label = Path(run.path).name[:56]
            for row in rows(run, results):
                share = "n/a" if row["cache_read_share"] is None else f"{row['cache_read_share']:.1%}"
                cost = "n/a" if row["cost"] is None else f"{row['cost']:.3f}"
                ms = "" if row["ms_per_call"] is None else f"{row['ms_per_call']:.1f}"
                print(f"{label:<58} {row['strategy']:<16} {row['calls']:>5} {share:>10} {cost:>9} {ms:>8}")
            counted.append((label, habits(run)))
            logged, recorded = rows(run, results)[0], next(r for r in results if r.strategy == "recorded")
            if len(run.calls) >= 5 and logged["strategy"] == "the log itself" and logged["cache_read_share"] is not None:
                fidelity.append((label, len(run.calls), logged["cache_read_share"], recorded.cache_read_share))
            for note in [*run.notes, *recorded.notes]:
                print(f"{'':<58} note: {note}")
            elapsed = time.perf_counter() - started
            print(f"{'':<58} all strategies: {elapsed:.1f}s for {len(STRATEGIES) * len(run.calls)} replayed calls\n")
    print("Fidelity: the `recorded` replay against the cache-read share each log reports (runs of 5+ calls)")
    for label, calls, logged_share, replayed_share in fidelity:
        gap = 100 * (replayed_share - logged_share)
        print(f"  {label:<58} {calls:>4} calls  logged {logged_share:6.1%}  replayed {replayed_share:6.1%}  "
              f"{gap:+5.1f} points  {'within 3' if abs(gap) <= 3 else 'OFF BY MORE THAN 3'}")

    print("\nHabits the course's simulated agents are given, counted in the real logs (minimal_runtime/replay/habits.py)")
    print(f"  {'run':<58} {'actions':>7} {'plan upkeep':>12} {'unchanged re-reads':>19} {'repeated failures':>18}")
    for label, h in counted:
        if h.actions:
            print(f"  {label:<58} {h.actions:>7} {h.plan_updates:>5} ({h.plan_share:5.1%}) "
                  f"{h.unchanged_rereads:>8} of {h.reads:<3} reads {h.repeated_failures:>8} of {h.failed:<3} failed")


if __name__ == "__main__":
    import warnings
    from minimal_runtime.provider.models import UnknownModelWarning
    warnings.simplefilter("ignore", UnknownModelWarning)  # each run says in its own line which model it priced as
    main()
