"""Chapter 02 exercise: where the cache breakpoint goes, and where the batch goes.

An entry in the prompt cache is the prefix that ends at a breakpoint block; a later request reads
it only if its own prefix up to there is byte-identical, and the read walks back at most
``LOOKBACK_BLOCKS`` block positions from each of its breakpoints. Test with
``.venv/bin/pytest tests/ch02_tail_placement --impl exercises``.
"""

from __future__ import annotations

from typing import Any

from minimal_runtime.core.context import CallParts, append_batch  # noqa: F401  (chapter 01: use it)
from minimal_runtime.provider.models import LOOKBACK_BLOCKS  # 20: the provider's lookback, in block positions

__all__ = ["CallParts", "LOOKBACK_BLOCKS", "system_with_breakpoint", "tail_layout", "with_breakpoints"]


def with_breakpoints(durable: list[dict], previous_len: int | None = None) -> list[dict]:
    """A copy of the history with ``cache_control: {"type": "ephemeral"}`` on the last block of the
    last message. When ``previous_len`` (the history length at the previous call) is given and the
    messages added since hold ``LOOKBACK_BLOCKS`` blocks or more, also mark the last block of message
    ``previous_len - 1``, so the previous call's entry is still found. Copy only what you mark; the
    history and its messages must be left untouched."""
    raise NotImplementedError("ch02: with_breakpoints")


def system_with_breakpoint(system: list[dict]) -> list[dict]:
    """A copy of the system blocks with a breakpoint on the last one (an empty list stays empty)."""
    raise NotImplementedError("ch02: system_with_breakpoint")


def tail_layout(parts: CallParts) -> dict[str, Any]:
    """The request keywords for one call: ``system`` (with its breakpoint), ``messages`` (history
    with breakpoints, then the batch via ``append_batch``), ``tools`` if any and ``tool_choice`` if
    set. The batch must come after every breakpoint."""
    raise NotImplementedError("ch02: tail_layout")
