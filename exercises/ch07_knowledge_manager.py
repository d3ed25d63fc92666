"""Chapter 07 exercise: what the knowledge manager's notes look like, and when it runs.

The KM's notes must read as the working agent's own: bare bullets, nudges before guidance, at most
``MAX_BULLETS`` guidance lines (counted here, whatever the KM sent), and nothing that shows another
writer. Its runs are triggered on a clock, never inline, and rate-limited. Test with
``.venv/bin/pytest tests/ch07_knowledge_manager --impl exercises``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from minimal_runtime.features.knowledge import CONTENT_TOOLS, MAX_BULLETS

__all__ = ["MAX_BULLETS", "Triggers", "bullet", "format_block", "lint"]


def lint(line: str) -> list[str]:
    """Why ``line`` could not pass for the agent's own note; [] when it can. Refuse at least:
    self-reference ("I notice", "as your assistant", "another agent"); a header or label at the
    start ("Guidance:", "Steering -", "Note from ...", "# ...", "**"); attribution or second-person
    address ("suggested by", "according to the manager", any "you" or "your"); a claim of
    operator or developer authority ("Operator policy requires ..."); a chat-turn label ("H: ...
    A: ..."); more than one line. A plain statement of fact, as in the agent's own notes ("The
    Initech page moved to /plans."), passes."""
    raise NotImplementedError("ch07: lint")


def bullet(line: str) -> str:
    """One bare bullet: whitespace collapsed to single spaces, any leading marker ("-", "*", "•",
    "1.", "2)") removed, then "- " in front."""
    raise NotImplementedError("ch07: bullet")


def format_block(nudges: list[str], guidance: list[str]) -> str:
    """Nudges first, then at most ``MAX_BULLETS`` guidance lines, each a ``bullet``, one per line;
    blank lines dropped. Nothing else: no header, no label, no blank line."""
    raise NotImplementedError("ch07: format_block")


@dataclass
class Triggers:
    """When a KM run is due, on an injectable clock. Each method returns the trigger's name when a
    run is due (and remembers that a run started now, with ``messages`` in the request), else None."""

    clock: Callable[[], float]
    min_interval: float = 10.0
    min_new_messages: int = 4
    burst: int = 3
    tick_every: float = 15.0
    content_tools: frozenset[str] = CONTENT_TOOLS
    _last_run: float | None = None
    _messages_at_last_run: int = 0
    _content_streak: int = 0

    def after_call(self, messages: int, tool_names: list[str]) -> str | None:
        """After a working agent's call that sent ``messages`` messages and called ``tool_names``:
        "content burst" as soon as ``burst`` content-heavy calls came in a row (the streak then
        starts again; any other tool breaks it); else "prefetch" when at least ``min_interval``
        seconds passed since the last run (or none ran yet) and at least ``min_new_messages`` new
        messages arrived since it; else None."""
        raise NotImplementedError("ch07: Triggers.after_call")

    def tick(self, messages: int) -> str | None:
        """The ticker: "ticker" when no run started in the last ``tick_every`` seconds, else None."""
        raise NotImplementedError("ch07: Triggers.tick")

    def executor_done(self, messages: int) -> str:
        """An executor completed: always a run, "executor done"."""
        raise NotImplementedError("ch07: Triggers.executor_done")
