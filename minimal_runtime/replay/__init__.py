"""Replay recorded agent runs (``serve --log``, Claude Code, Cline, opencode/kilo, pi, Codex, mini-swe-agent,
OpenHands: one module each in ``formats/``) and price context strategies on them. Offline always:
nothing from a log leaves the machine.

    runs = load("~/.claude/projects/my-project/session.jsonl")
    results = [replay(runs[0], name) for name in STRATEGIES]
    print(table(runs[0], results))
"""

from .driver import STRATEGIES, Replay, Strategy, calibrate, replay, replay_all
from .formats import load, runs
from .recorded import RecordedCall, RecordedRun, RecordedUsage, TrajectoryError
from .report import per_call, plot, rows, table

__all__ = ["load", "runs", "replay", "replay_all", "calibrate", "table", "rows", "per_call", "plot", "STRATEGIES", "Strategy", "Replay", "RecordedRun",
           "RecordedCall", "RecordedUsage", "TrajectoryError"]
