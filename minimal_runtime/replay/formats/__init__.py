"""The formats ``replay`` reads: one module each, all with the same two functions.

    recognise(source: Source) -> bool       # is this file mine? (by its content, never its name)
    read(source: Source) -> Iterable[RecordedRun]  # a list, or a generator for a file of many runs

and a ``NAME`` saying what the format's files are. ``load`` opens the file once (``source.py``
checks what every file must be), asks each format in ``FORMATS`` in turn, and the first that
recognises the file reads it over the shared builder (``build.py``); the run's model is then taken
the same way for every format (``build.billed_model``: the model the log billed most). A new format is one module
here and one line in ``FORMATS``. A format that is recognised only to be refused (no usage to
price, say) is a module too: its ``read`` says why, by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..build import billed_model
from ..recorded import RecordedRun, TrajectoryError
from ..source import NOT_ONE, Source
from . import (aider, claude_code, cline_cli, cline_task, codex, codex_rollout, gemini_cli, mini_swe_agent, openhands,
               opencode, pi, serve_log)

FORMATS = [aider, serve_log, claude_code, pi, codex, codex_rollout, openhands, opencode, cline_cli, gemini_cli,
           mini_swe_agent, cline_task]
ACCEPTED = ", ".join(f.NAME for f in FORMATS if not getattr(f, "REFUSED", False))


def load(path: str | Path) -> list[RecordedRun]:
    """Every run in the file at ``path`` (a file may hold several: OpenHands, sub-agents, appended
    sessions). Anything else is refused with a ``TrajectoryError`` that says what was recognised."""
    return list(runs(path))


def runs(path: str | Path) -> Iterator[RecordedRun]:
    """``load``, one run at a time: a file of appended sessions is held a session at a time (a
    format whose ``read`` yields lazily). The refusal of a file with no model calls comes at the end."""
    path = Path(path).expanduser()
    source = Source.open(path, ACCEPTED)
    fmt = next((f for f in FORMATS if f.recognise(source)), None)
    if fmt is None:
        raise TrajectoryError(str(path), _where(source), _unknown(source))
    first, any_calls = None, False
    for run in fmt.read(source):
        if run.calls:
            any_calls = True
            run.model = billed_model(run)  # every format's run model the same way: the one its log billed most
            yield run
        elif first is None:
            first = run
    if not any_calls:
        what = first.source if first else fmt.__name__.rsplit(".", 1)[-1].replace("_", "-")
        skipped = ", ".join(f"{n} {k}" for k, n in first.skipped.items()) if first and first.skipped else \
            "no conversation"
        raise TrajectoryError(str(path), None, f"read as {what}, but it holds no model calls ({skipped}); "
                              f"expected {ACCEPTED}")


def _where(source: Source) -> int | None:
    return None if source.document is not NOT_ONE and not source.one_line else source.first_number


def _unknown(source: Source) -> str:
    head = source.head
    one = source.document is not NOT_ONE
    if not isinstance(head, dict):
        return f"a JSON {type(head).__name__}, not a trajectory; expected {ACCEPTED}"
    keys = ", ".join(sorted(head)[:6]) or "none"
    return f"not a trajectory I know (keys: {keys}{'' if one else ', on its first line'}); expected {ACCEPTED}"
