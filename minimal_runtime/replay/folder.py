"""A folder of runs: every log under it (sub-agents' files included), replayed in worker processes,
summed into one table per strategy.

    python -m minimal_runtime replay ~/.claude/projects/ --jobs 2 --csv runs.csv

Each file is imported and replayed whole in one worker (a run's strategies share its calibration);
a file that cannot be imported is listed with its one-line reason and the rest go on. Workers
return plain rows, so nothing but numbers crosses a process boundary.
"""

from __future__ import annotations

import csv
import math
import os
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Iterable

LOG_SUFFIXES = (".jsonl", ".json")
LOGGED = "the log itself"
FIELDS = ["run", "source", "model", "strategy", "calls", "logged_calls", "prompt_tokens", "cache_read_tokens",
          "cache_read_share", "cost", "stopped"]


def find_logs(directory: Path) -> list[Path]:
    """Every file under ``directory`` that could be a log, in a stable order."""
    return sorted(p for p in directory.rglob("*") if p.is_file() and p.name.endswith(LOG_SUFFIXES))


def replay_file(path: str, strategies: list[str], model: str | None) -> tuple[str, list[dict] | str]:
    """(path, one row per run and strategy), or (path, why it could not be imported or replayed)."""
    try:
        return path, _replay_file(path, strategies, model)
    except Exception as e:  # one log's surprise must not stop the folder: it is listed with its reason
        return path, f"not replayed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _replay_file(path: str, strategies: list[str], model: str | None) -> list[dict] | str:
    from .driver import calibrate, replay
    from .importers import load
    from .recorded import TrajectoryError
    from .report import rows as report_rows
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a model the table does not know: its cost is NaN, said in the table
            runs = load(path)
    except TrajectoryError as e:
        return e.problem
    except OSError as e:
        return f"{type(e).__name__}: {e.strerror or e}"
    rows = []
    for run in runs:
        logged = [c.usage for c in run.calls if c.usage]
        if logged:  # what the log itself says, where it says it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                first = report_rows(run, [])[0]
            rows.append({"run": run.path, "source": run.source, "model": run.model, "strategy": LOGGED,
                         "calls": len(logged), "logged_calls": len(run.calls), "prompt_tokens": first["prompt_tokens"],
                         # None where the log has no cache figures (OpenHands): left out of the share
                         "cache_read_tokens": None if first["cache_read_share"] is None else
                         sum(u.cache_read or 0 for u in logged),
                         "cache_read_share": None if first["cache_read_share"] is None else
                         round(first["cache_read_share"], 4),
                         "cost": math.nan if first["cost"] is None else round(first["cost"], 6), "stopped": ""})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            calibration = calibrate(run, model)
            for name in strategies:
                r = replay(run, name, model=model, calibration=calibration)
                read = sum(c.cache_read_input_tokens for c in r.calls)
                rows.append({"run": run.path, "source": run.source, "model": r.model, "strategy": name,
                             "calls": len(r.calls), "logged_calls": len(run.calls), "prompt_tokens": r.prompt_tokens,
                             "cache_read_tokens": read, "cache_read_share": round(r.cache_read_share, 4),
                             "cost": round(r.cost, 6), "stopped": r.stopped or ""})
    return rows


def replay_files(paths: Iterable[Path], strategies: list[str], model: str | None = None, jobs: int | None = None,
                 progress: bool = False) -> tuple[list[dict], dict[str, str]]:
    """Replay every file; returns (rows in file order, {path: why not imported})."""
    paths = [str(p) for p in paths]
    jobs = jobs or os.cpu_count() or 1
    done: dict[str, list[dict] | str] = {}
    bar = _bar(len(paths), progress)
    if jobs == 1:  # in this process: nothing to start
        for path in paths:
            done[path] = replay_file(path, strategies, model)[1]
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            biggest_first = sorted(paths, key=lambda p: -os.path.getsize(p))  # a big log started last runs alone
            futures = [pool.submit(replay_file, path, strategies, model) for path in biggest_first]
            for future in as_completed(futures):
                path, result = future.result()
                done[path] = result
                bar.update()
    bar.close()
    rows = [row for path in paths if isinstance(done[path], list) for row in done[path]]
    refused = {path: done[path] for path in paths if isinstance(done[path], str)}
    return rows, refused


def _bar(total: int, shown: bool):
    from tqdm import tqdm
    return tqdm(total=total, unit="log", desc="replaying", disable=not shown, leave=False)


def aggregate(rows: list[dict]) -> list[dict]:
    """Per strategy, over all runs: calls, prompt tokens, read share (over the runs whose share is
    known), cost (over the priced runs; the others counted), runs not finished."""
    out = {}
    for row in rows:
        a = out.setdefault(row["strategy"], {"strategy": row["strategy"], "runs": 0, "calls": 0, "prompt_tokens": 0,
                                             "cache_read_tokens": 0, "known_prompt": 0, "cost": 0.0, "unpriced": 0,
                                             "not_finished": 0})
        a["runs"] += 1
        a["calls"] += row["calls"]
        a["prompt_tokens"] += row["prompt_tokens"]
        if row["cache_read_tokens"] is not None:
            a["cache_read_tokens"] += row["cache_read_tokens"]
            a["known_prompt"] += row["prompt_tokens"]
        if math.isnan(row["cost"]):
            a["unpriced"] += 1
        else:
            a["cost"] += row["cost"]
        a["not_finished"] += bool(row["stopped"])
    for a in out.values():
        a["cache_read_share"] = a["cache_read_tokens"] / max(1, a["known_prompt"])
    return list(out.values())


def folder_table(directory: Path, rows: list[dict], refused: dict[str, str]) -> str:
    runs = len({row["run"] for row in rows})
    lines = [f"{directory}: {runs} runs from {len({r['run'].split('#')[0] for r in rows})} files, "
             f"{len(refused)} files not imported (replayed tokens calibrated per log where it records usage)",
             f"{'strategy':<16} {'runs':>5} {'calls':>7} {'prompt tokens':>14} {'cache read':>10} {'cost $':>10} "
             f"{'not finished':>12}"]
    for a in aggregate(rows):
        unpriced = f" ({a['unpriced']} unpriced)" if a["unpriced"] else ""
        lines.append(f"{a['strategy']:<16} {a['runs']:>5} {a['calls']:>7,} {a['prompt_tokens']:>14,} "
                     f"{a['cache_read_share']:>10.1%} {a['cost']:>10.3f} {a['not_finished']:>12}{unpriced}")
    for path, why in refused.items():
        lines.append(f"  not imported: {path}: {why}")
    return "\n".join(lines)


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
