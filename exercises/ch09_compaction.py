"""Chapter 09 exercise: the verbatim appendix a summary carries, and the ladder's decision.

Write both. Test with ``.venv/bin/pytest tests/ch09_compaction --impl exercises``.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["appendix", "ladder_step"]


def appendix(texts: list[str]) -> list[str]:
    """Every URL and every file path in ``texts``, verbatim, once each, in the order first seen.

    A URL starts with ``http://`` or ``https://`` and runs to whitespace, a quote or a closing
    bracket; a trailing ``.``, ``,``, ``;`` or ``:`` is punctuation, not part of it. A path is a
    file name with an extension, optionally behind folders (``notes/page-3.md``,
    ``/tmp/run/out.txt``, ``.observations/a-1.txt``, ``report.md``); the parts of a URL are not paths."""
    raise NotImplementedError("ch09: appendix")


def ladder_step(tokens: int, limit: int, compactable: int, last_gain: float | None,
                min_gain: float) -> Literal["wait", "compact", "summarize"]:
    """What the ladder does before a call: "wait" while the context is under ``limit`` tokens;
    past it, "compact" while calls are left to compact and compacting still pays (the last
    compaction freed at least ``min_gain`` of the context, or there was none yet); else "summarize"."""
    raise NotImplementedError("ch09: ladder_step")
