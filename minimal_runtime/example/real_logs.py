"""The logs a chapter's real-log cell reads: your own, the course CI's, or a labelled sample.

In order, the first that has any:

1. **your own Claude Code sessions** (``~/.claude/projects/*/*.jsonl``, the newest ``NEWEST``),
   when ``COURSE_OWN_LOGS=1``: ``make lab`` sets it, so a learner's lab reads them; ``make test``,
   nbval and CI never do (``CI`` set turns it off whatever the variable says). Read only; a cell
   prints aggregates only: counts and totals per session, never a prompt, a path or a project name;
2. **the course CI's logs** (``../shared/data/trajectories`` beside the project): other people's
   real runs, kept with the course's CI and not shipped with the project;
3. **a sample the emulator makes here** (``replay.samples`` and ``replay.current``): SIMULATED
   runs, labelled so, so that a cell shows its mechanism on a fresh clone instead of a dead line.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

OWN = "COURSE_OWN_LOGS"
NEWEST = 20  # your newest sessions: a folder of hundreds would take a cell minutes
ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "trajectories"


def projects() -> Path:
    return Path.home() / ".claude" / "projects"


def reading_own() -> bool:
    """Whether a cell may read your own sessions: ``COURSE_OWN_LOGS=1``, and not under CI."""
    return os.environ.get(OWN) == "1" and not os.environ.get("CI")


@dataclass
class Logs:
    kind: str  # "yours" | "course CI" | "sample"
    label: str  # one line saying which logs these are, for the cell to print first
    runs: list = field(default_factory=list)  # replay.RecordedRun, one per run (a sub-agent is a run)

    def name(self, run, width: int = 36) -> str:
        """A short name for a run: yours are numbered, never named after a path or a project."""
        if self.kind == "yours":
            return f"your session {self.runs.index(run) + 1}"
        return f"{'sample: ' if self.kind == 'sample' else ''}{Path(run.path).name}"[:width]


def _load(paths: list[Path]) -> tuple[list, int]:
    from ..replay import load
    runs, unreadable = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unpriced models, odd lines: the cell's figures say what was read
        for path in paths:
            try:
                runs += [r for r in load(path) if r.calls]
            except Exception:  # a file of another kind, or damaged: counted, not fatal
                unreadable += 1
    return runs, unreadable


def _sample() -> list:
    from ..replay.current import write_current
    from ..replay.samples import write_samples
    from . import scratch_dir
    paths = [*write_samples(scratch_dir()).values()]
    current = write_current(scratch_dir(), "claude-sonnet-5-5", rounds=10, output_chars=30_000)
    return _load([*paths, current["session"], current["stream"]])[0]


def real_logs(shared: Path | None = None) -> Logs:
    """The logs to read, and the line that says which they are."""
    why = f"set {OWN}=1 (make lab does) to read your own Claude Code sessions"
    if reading_own():
        sessions = sorted(projects().glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime)[-NEWEST:]
        runs, unreadable = _load(sessions)
        if runs:
            skipped = f"; {unreadable} not readable as a session" if unreadable else ""
            return Logs("yours", f"your own Claude Code sessions: {len(runs)} runs from the newest {len(sessions)} files "
                                 f"in ~/.claude/projects (read only; aggregates only{skipped})", runs)
        why = "no Claude Code session found in ~/.claude/projects"
    shared = SHARED if shared is None else shared
    logs = sorted(shared.glob("*.json*")) if shared.is_dir() else []
    if logs:
        runs, _ = _load(logs)
        return Logs("course CI", f"the course CI's logs: {len(runs)} real runs by other agents, kept beside the project "
                                 f"(not shipped; {why})", runs)
    return Logs("sample", f"SAMPLE: {why}; until then, logs the emulator made here (simulated runs, not real ones)",
                _sample())
