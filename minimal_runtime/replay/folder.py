"""A folder of runs: every file under it read by its content, replayed in worker processes (or on a
Dask cluster), streamed row by row into a CSV and summed into one table per strategy.

    python -m minimal_runtime replay ~/.claude/projects/ --jobs 2 --csv runs.csv

Every regular file under the folder is a candidate, whatever its name (Claude Code's own headless
logs are ``agent_log_raw.txt``): each is imported and replayed whole in one worker (a run's
strategies share its calibration); a file that is not a log, or that cannot be replayed, is listed
with its one-line reason. Workers return plain rows, so nothing but numbers crosses a process
boundary, and the parent keeps running totals, not the rows: each log's rows go to the CSV as the
log finishes. A rerun with the same ``--csv`` skips the files already in it (resume after a crash or
Ctrl-C); a file that was not imported is in it too, with its reason, so it is not sniffed again.
"""

from __future__ import annotations

import csv
import math
import os
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

LOGGED = "the log itself"
REFUSED = "(not replayed)"  # the strategy column of a file that was not: its reason is in ``stopped``
FIELDS = ["run", "source", "model", "strategy", "calls", "logged_calls", "prompt_tokens", "cache_read_tokens",
          "cache_read_share", "cost", "stopped", "log_cost_usd"]


def find_logs(directory: Path) -> list[Path]:
    """Every file under ``directory`` that is not a folder, in a stable order: FIFOs, sockets and
    devices too, every symbolic link (to a file or a folder: never followed) and every sub-folder
    that cannot be read, so each is listed as not replayed with its reason (the worker says what it
    is, without opening it)."""
    found: list[Path] = []

    def unreadable(error: OSError) -> None:
        if error.filename and Path(error.filename) != directory:
            found.append(Path(error.filename))
    for root, dirs, files in os.walk(directory, onerror=unreadable):
        dirs.sort()
        found += [Path(root) / name for name in files]
        found += [Path(root) / name for name in dirs if (Path(root) / name).is_symlink()]  # os.walk lists, never enters
    return sorted(found, key=lambda p: str(p).encode("utf-8", "surrogateescape"))


def _key(path: str) -> str:
    """A file as resume matches it: its folder resolved (the same folder spelled another way), its own
    name not (a symbolic link is its own row, never its target's)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def replay_file(path: str, strategies: list[str], model: str | None) -> tuple[str, list[dict] | str]:
    """(path, one row per run and strategy), or (path, why it could not be imported or replayed)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a model the table does not know: its cost is NaN, said in the table
            return path, _replay_file(path, strategies, model)
    except Exception as e:  # one log's surprise must not stop the folder: it is listed with its reason
        return path, f"not replayed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _replay_file(path: str, strategies: list[str], model: str | None) -> list[dict] | str:
    from .formats import runs as read_runs
    from .recorded import TrajectoryError
    if os.path.islink(path):  # never followed: a link to a log would be replayed twice, one to /dev/zero never end
        return f"a symbolic link (to {os.readlink(path)}): links are not followed; replay what it points to by its own path"
    if os.path.isdir(path):  # a sub-folder find_logs could not read
        try:
            os.listdir(path)
        except OSError as e:
            return f"a folder that cannot be read ({e.strerror or e}): nothing under it was replayed"
    rows: list[dict] = []
    try:
        for run in read_runs(path):  # a run at a time: a file of appended sessions is never held whole
            rows += _rows(run, strategies, model)
    except TrajectoryError as e:
        return f"line {e.line}: {e.problem}" if e.line else e.problem  # the line the file mode names too
    except OSError as e:
        return f"{type(e).__name__}: {e.strerror or e}"
    return rows


def _rows(run, strategies: list[str], model: str | None) -> list[dict]:
    """One run's rows: what the log itself says (where it says it), and each strategy's replay."""
    from .driver import replay_all
    from .report import rows as report_rows
    rows = []
    own = {"run": run.path, "source": run.source, "logged_calls": len(run.calls), "log_cost_usd": run.cost_usd}
    logged = [c.usage for c in run.calls if c.usage]
    if logged:  # what the log itself says, where it says it
        first = report_rows(run, [])[0]
        rows.append({**own, "model": run.model, "strategy": LOGGED, "calls": len(logged),
                     "prompt_tokens": first["prompt_tokens"],
                     # None where the log has no cache figures (OpenHands): left out of the share
                     "cache_read_tokens": None if first["cache_read_share"] is None else
                     sum(u.cache_read or 0 for u in logged),
                     "cache_read_share": None if first["cache_read_share"] is None else
                     round(first["cache_read_share"], 4),
                     "cost": math.nan if first["cost"] is None else round(first["cost"], 6), "stopped": ""})
    for name, r in zip(strategies, replay_all(run, strategies, model=model)):
        rows.append({**own, "model": r.model, "strategy": name, "calls": len(r.calls),
                     "prompt_tokens": r.prompt_tokens, "cache_read_tokens": sum(c.cache_read_input_tokens for c in r.calls),
                     "cache_read_share": round(r.cache_read_share, 4),
                     "cost": round(r.cost, 6) if r.calls else math.nan,  # nothing replayed: no bill, not $0
                     "stopped": r.stopped or ""})
    return rows


# -- the engines: where the per-file work runs -----------------------------------------------------

Result = tuple[str, "list[dict] | str"]


def _in_process(paths: list[str], strategies: list[str], model: str | None) -> Iterator[Result]:
    for path in paths:
        yield replay_file(path, strategies, model)


def _die_with_parent(parent: int) -> None:
    """A worker's initializer: it ends when the replay that started it does, however that ends (a
    kill -9 leaves no chance to shut the pool down). Linux's PR_SET_PDEATHSIG signals it at once;
    elsewhere a thread notices that the parent is gone."""
    import signal
    import threading
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="die-with-parent").start()


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _in_workers(paths: list[str], strategies: list[str], model: str | None, jobs: int) -> Iterator[Result]:
    """Files in ``jobs`` processes, biggest first (a big log started last runs alone), at most a few
    per worker in flight: the parent never holds the futures of a whole folder."""
    queue = iter(sorted(paths, key=lambda p: -_size(p)))
    with ProcessPoolExecutor(max_workers=jobs, initializer=_die_with_parent, initargs=(os.getpid(),)) as pool:
        pending = {pool.submit(replay_file, p, strategies, model) for p in _take(queue, 4 * jobs)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            pending |= {pool.submit(replay_file, p, strategies, model) for p in _take(queue, len(done))}
            for future in done:
                yield future.result()


def _take(queue: Iterator[str], n: int) -> list[str]:
    return [p for _, p in zip(range(n), queue)]


def _on_dask(paths: list[str], strategies: list[str], model: str | None, jobs: int,
             scheduler: str | None) -> Iterator[Result]:
    """The same per-file work on a Dask cluster (the optional ``dask`` extra): the scheduler at
    ``scheduler``, or a ``LocalCluster`` of ``jobs`` single-threaded worker processes. At most a few
    files per worker are in flight, as with ``--jobs``."""
    if scheduler:
        _reachable(scheduler)
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SystemExit("--engine dask needs the dask extra: .venv/bin/pip install -e '.[dask]'") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask's notes on ports and memory limits: not this run's business
        cluster = None if scheduler else LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                                      dashboard_address=None)
        with Client(scheduler or cluster) as client:
            workers = max(1, len(client.scheduler_info().get("workers", {})) or jobs)
            queue = iter(sorted(paths, key=lambda p: -_size(p)))
            futures = as_completed([client.submit(replay_file, p, strategies, model, pure=False)
                                    for p in _take(queue, 4 * workers)])
            for future in futures:
                yield future.result()
                future.release()
                for p in _take(queue, 1):
                    futures.add(client.submit(replay_file, p, strategies, model, pure=False))
        if cluster is not None:
            cluster.close()


def _reachable(scheduler: str, seconds: float = 3.0) -> None:
    """A scheduler address that answers nothing is one line now, not Dask's traceback 30 s later."""
    import socket
    from urllib.parse import urlsplit
    where = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    try:
        host, port = where.hostname, where.port or 8786
    except ValueError:
        raise SystemExit(f"--scheduler {scheduler}: not an address (tcp://HOST:PORT)") from None
    try:
        socket.create_connection((host, port), timeout=seconds).close()
    except OSError as e:
        raise SystemExit(f"--scheduler {scheduler}: no Dask scheduler answered at {host}:{port} "
                         f"({e.strerror or type(e).__name__})") from None


# -- the streaming summary: running totals, the CSV, progress ---------------------------------------

@dataclass
class Totals:
    """What the folder's table needs, kept as the rows go by: per strategy, and the files not replayed."""

    strategies: dict[str, dict] = field(default_factory=dict)
    runs: set = field(default_factory=set)
    files: set = field(default_factory=set)
    refused: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0  # calls replayed, for the rate
    resumed: int = 0  # files read back from an earlier --csv

    def add(self, row: dict) -> None:
        if row["strategy"] == REFUSED:
            self.refused.append((row["run"], row["stopped"]))
            return
        self.runs.add(row["run"])
        self.files.add(row["run"].split("#")[0])
        a = self.strategies.setdefault(row["strategy"], {
            "strategy": row["strategy"], "runs": 0, "calls": 0, "prompt_tokens": 0, "cache_read_tokens": 0,
            "known_prompt": 0, "cost": 0.0, "unpriced": 0, "not_finished": 0, "nothing": 0})
        if not row["calls"] and row["stopped"]:  # stopped before its first call: counted apart, summed nowhere
            a["nothing"] += 1
            a["not_finished"] += 1
            return
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

    def aggregate(self) -> list[dict]:
        for a in self.strategies.values():
            a["cache_read_share"] = a["cache_read_tokens"] / max(1, a["known_prompt"])
        return list(self.strategies.values())


def _typed(row: dict) -> dict:
    """A row read back from the CSV, with its numbers as numbers."""
    def number(value, kind):
        return None if value in ("", None) else kind(value)
    return {**row, "calls": number(row["calls"], int) or 0, "logged_calls": number(row["logged_calls"], int) or 0,
            "prompt_tokens": number(row["prompt_tokens"], int) or 0,
            "cache_read_tokens": number(row["cache_read_tokens"], int),
            "cache_read_share": number(row["cache_read_share"], float),
            "cost": number(row["cost"], float) if row["cost"] not in ("", None) else math.nan,
            "log_cost_usd": number(row["log_cost_usd"], float)}


def resume(path: Path, totals: Totals) -> set[str]:
    """The files an earlier run with this ``--csv`` finished, its rows added to ``totals``. A last
    line cut by a crash is dropped (its file is replayed again)."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(raw.rfind(b"\n") + 1)
    done = set()
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:  # file names as the OS gave them
        reader = csv.DictReader(f)
        if reader.fieldnames != FIELDS:
            raise SystemExit(f"{path}: its columns are not this version's ({', '.join(FIELDS)}): give another --csv")
        for row in reader:
            totals.add(_typed(row))
            done.add(_key(row["run"].split("#")[0]))
    totals.resumed = len(done)
    return done


class _Progress:
    """Logs done of the total, calls replayed per second, and the time left (tqdm's), on stderr."""

    def __init__(self, total: int, shown: bool):
        from tqdm import tqdm
        # redrawn after every log (mininterval=0): a log is coarse enough, and tqdm's default 0.1 s
        # throttle would leave a fast folder with no line at all
        self.bar = tqdm(total=total, unit="log", desc="replaying", disable=not shown, leave=False, smoothing=0.05,
                        mininterval=0)
        self.start, self.calls = time.perf_counter(), 0

    def update(self, calls: int) -> None:
        self.calls += calls
        self.bar.set_postfix_str(f"{self.calls / max(1e-9, time.perf_counter() - self.start):,.0f} calls/s", refresh=False)
        self.bar.update()

    def close(self) -> None:
        self.bar.close()


def run_folder(paths: Iterable[Path], strategies: list[str], model: str | None = None, jobs: int | None = None,
               csv_path: Path | None = None, progress: bool = False, engine: str = "processes",
               scheduler: str | None = None, each: Callable[[str, list[dict] | str], None] | None = None) -> Totals:
    """Replay every file, streaming each one's rows to ``csv_path`` (appended to, after the files it
    already holds are skipped) and into the totals the table is made of; ``each`` sees every result."""
    totals = Totals()
    paths = [str(p) for p in paths]
    if csv_path is not None:  # matched on the resolved path: the same folder spelled another way resumes too
        done = resume(csv_path, totals)
        paths = [p for p in paths if _key(p) not in done]
    jobs = jobs or os.cpu_count() or 1
    results = _on_dask(paths, strategies, model, jobs, scheduler) if engine == "dask" else \
        _in_process(paths, strategies, model) if jobs == 1 else _in_workers(paths, strategies, model, jobs)
    bar = _Progress(len(paths), progress)
    out = None
    try:
        if csv_path is not None:
            fresh = not csv_path.exists() or csv_path.stat().st_size == 0
            out = open(csv_path, "a", newline="", encoding="utf-8", errors="surrogateescape")
            writer = csv.DictWriter(out, fieldnames=FIELDS)
            if fresh:
                writer.writeheader()
        for path, result in results:
            rows = result if isinstance(result, list) else [
                {"run": path, "source": "", "model": "", "strategy": REFUSED, "calls": 0, "logged_calls": 0,
                 "prompt_tokens": 0, "cache_read_tokens": None, "cache_read_share": None, "cost": math.nan,
                 "stopped": result, "log_cost_usd": None}]
            if out is not None:
                writer.writerows(rows)
                out.flush()  # a log's rows reach the file when the log is done: a crash loses only the logs in flight
            for row in rows:
                totals.add(row)
            if each is not None:
                each(path, result)
            bar.update(sum(r["calls"] for r in rows if r["strategy"] == (strategies[0] if strategies else LOGGED)))
    finally:
        bar.close()
        if out is not None:
            out.close()
    return totals


def replay_files(paths: Iterable[Path], strategies: list[str], model: str | None = None, jobs: int | None = None,
                 progress: bool = False, engine: str = "processes",
                 scheduler: str | None = None) -> tuple[list[dict], dict[str, str]]:
    """Replay every file; returns (rows in file order, {path: why not imported}). For a folder that
    fits in memory (tests, the benchmark): the command streams instead (``run_folder``)."""
    paths = [str(p) for p in paths]
    results: dict[str, list[dict] | str] = {}
    run_folder(paths, strategies, model, jobs, progress=progress, engine=engine, scheduler=scheduler,
               each=lambda path, result: results.__setitem__(path, result))
    rows = [row for path in paths if isinstance(results.get(path), list) for row in results[path]]
    return rows, {path: results[path] for path in paths if isinstance(results.get(path), str)}


def aggregate(rows: list[dict]) -> list[dict]:
    """Per strategy, over all runs: calls, prompt tokens, read share (over the runs whose share is
    known), cost (over the priced runs; the others counted), runs not finished."""
    totals = Totals()
    for row in rows:
        totals.add(row)
    return totals.aggregate()


def _shown(path: str | Path) -> str:
    """A file name as printed: bytes that are not UTF-8 (a name the OS gave as such) as \\xNN escapes."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def folder_table(directory: Path, totals: Totals, shown: int = 40) -> str:
    lines = [f"{_shown(directory)}: {len(totals.runs)} runs from {len(totals.files)} files, {len(totals.refused)} files not "
             f"replayed" + (f" ({totals.resumed} files read back from the --csv)" if totals.resumed else "")
             + " (replayed tokens calibrated per log where it records usage)",
             f"{'strategy':<16} {'runs':>5} {'calls':>7} {'prompt tokens':>14} {'cache read':>10} {'cost $':>10} "
             f"{'not finished':>12}"]
    for a in totals.aggregate():
        unpriced = f" ({a['unpriced']} unpriced)" if a["unpriced"] else ""
        unpriced += f" ({a['nothing']} replayed nothing)" if a.get("nothing") else ""
        lines.append(f"{a['strategy']:<16} {a['runs']:>5} {a['calls']:>7,} {a['prompt_tokens']:>14,} "
                     f"{'n/a' if not a['runs'] else format(a['cache_read_share'], '.1%'):>10} "
                     f"{'n/a' if not a['runs'] else format(a['cost'], '.3f'):>10} {a['not_finished']:>12}{unpriced}")
    for path, why in totals.refused[:shown]:
        lines.append(f"  not replayed: {_shown(path)}: {why}")
    if len(totals.refused) > shown:
        lines.append(f"  ... and {len(totals.refused) - shown} more (every one is in the --csv, with its reason)")
    return "\n".join(lines)
