"""Chapter 09 exercise: a client-side compaction that today's models accept, and the ladder's decision.

Write both. Test with ``.venv/bin/pytest tests/ch09_compaction --impl exercises``.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["compact_keeping_tail", "ladder_step"]


def compact_keeping_tail(task: str, messages: list[dict], summary: str, keep_last: int) -> list[dict]:
    """The history to send next, once everything before the last ``keep_last`` tool calls is
    summarized in ``summary``, on a model that binds each thinking block to everything sent before
    it (Sonnet 5.5 on a new account answers a replayed block whose prefix changed with a 400).

    ``messages`` is a Messages API history: the task first (a user message), then assistant turns
    (thinking, text, tool_use blocks) and user turns (tool_result blocks). Return a new list, and
    leave ``messages`` and every message in it as they were. The new list holds:

    - first, one user message whose text is ``task`` verbatim, then ``summary``;
    - then every message from the assistant turn that made the ``keep_last``-th last tool call to
      the end, in order, each as it was except that its ``thinking`` and ``redacted_thinking``
      blocks are removed: each was bound to the history this replaces, and replayed it is a 400;
    - ``keep_last=0`` keeps no turn: the first message alone;
    - with fewer than ``keep_last`` tool calls, every message after the task is kept (stripped
      the same way).

    Roles alternate, user first; every tool_result still follows its tool_use."""
    raise NotImplementedError("ch09: compact_keeping_tail")


def ladder_step(tokens: int, limit: int, compactable: int, last_gain: float | None,
                min_gain: float) -> Literal["wait", "compact", "summarize"]:
    """What the ladder does before a call: "wait" while the context is under ``limit`` tokens;
    past it, "compact" while calls are left to compact and compacting still pays (the last
    compaction freed at least ``min_gain`` of the context, or there was none yet); else "summarize"."""
    raise NotImplementedError("ch09: ladder_step")
