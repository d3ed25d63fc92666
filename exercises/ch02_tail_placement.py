"""Chapter 02 exercise: where the cache breakpoint goes, and where the batch goes, in both
generations of the layout; and, for the third, what a call sends on a message thread.

An entry in the prompt cache is the prefix that ends at a breakpoint block; a later request reads
it only if its own prefix up to there is byte-identical, and the read walks back at most
``LOOKBACK_BLOCKS`` block positions from each of its breakpoints. On a current model the request
must also be an append-only extension of the previous one (its thinking is bound to its prefix).
On a message thread the server holds the conversation, so a call sends only what it does not hold.
Test with ``.venv/bin/pytest tests/ch02_tail_placement --impl exercises`` (the long-run tests run on
Sonnet 4.6 with ``tail_layout`` and on Sonnet 5.5 with ``turn_scoped_layout``, and with your
``continuation`` on a thread).
"""

from __future__ import annotations

from typing import Any

from minimal_runtime.core.context import CallParts, append_batch, batch_entry  # noqa: F401  (chapter 01: use them)
from minimal_runtime.provider.models import CLEAR_AT_BETA, INLINE_TOOLS_BETA  # noqa: F401  (the two betas it needs)
from minimal_runtime.provider.models import LOOKBACK_BLOCKS  # 20: the provider's lookback, in block positions

__all__ = ["CallParts", "CLEAR_AT_BETA", "INLINE_TOOLS_BETA", "LOOKBACK_BLOCKS", "continuation", "system_with_breakpoint",
           "tail_layout", "turn_scoped_layout", "with_breakpoints"]


def with_breakpoints(durable: list[dict], previous_len: int | None = None) -> list[dict]:
    """A copy of the history with ``cache_control: {"type": "ephemeral"}`` on the last block of the
    last message. When ``previous_len`` (the history length at the previous call) is given and the
    messages added since hold ``LOOKBACK_BLOCKS`` blocks or more, also mark the last block of message
    ``previous_len - 1``, so the previous call's entry is still found. The API refuses a breakpoint on
    empty content (an empty text block, a tool result with empty content): where the block to mark
    is one, mark the last block before it that can take one. Copy only what you mark; the history
    and its messages must be left untouched."""
    raise NotImplementedError("ch02: with_breakpoints")


def system_with_breakpoint(system: list[dict]) -> list[dict]:
    """A copy of the system blocks with a breakpoint on the last one (an empty list stays empty)."""
    raise NotImplementedError("ch02: system_with_breakpoint")


def tail_layout(parts: CallParts) -> dict[str, Any]:
    """The request keywords for one call: ``system`` (with its breakpoint), ``messages`` (history
    with breakpoints, then the batch via ``append_batch``), ``tools`` if any and ``tool_choice`` if
    set. The batch must come after every breakpoint."""
    raise NotImplementedError("ch02: tail_layout")


def turn_scoped_layout(parts: CallParts) -> dict[str, Any]:
    """The 2026 layout, for models that take mid-conversation system messages: the same
    ``system`` and breakpoints as ``tail_layout``, ``tools`` and ``tool_choice`` likewise, and the
    history's copy left exactly as it is but for its breakpoints. After it, in this order: the
    call's ``parts.tool_changes`` (if any) as one plain system message ``{"role": "system",
    "content": [...]}`` (a tool change must last), then the batch (if any) as ``batch_entry``: a
    turn-scoped system message, which takes no breakpoint. ``betas``: ``CLEAR_AT_BETA`` and
    ``INLINE_TOOLS_BETA``, on every request (the history keeps every earlier entry). The agent
    appends both entries to its history with the turn, so the next request only appends."""
    raise NotImplementedError("ch02: turn_scoped_layout")


def continuation(request: dict[str, Any], previous_id: str, held: int) -> dict[str, Any]:
    """What call N of a message thread sends. ``request`` is the call's whole request, as a create
    would send it (``turn_scoped_layout``'s keywords, ``betas`` among them); the server already
    holds its first ``held`` messages (everything up to the reply whose ``id`` is ``previous_id``).
    Return a new dict: every keyword of ``request`` but ``system`` and ``tools`` (the thread keeps
    the ones it was created with, and refuses them on a continue), ``messages`` from ``held`` on,
    and ``thread: {"type": "continue", "previous_message_id": previous_id}``. A breakpoint on a held
    message is not sent with it. If one of the held messages that end within ``LOOKBACK_BLOCKS``
    blocks of ``held`` carries a breakpoint (the previous call's end, which ``with_breakpoints``
    marks when the lookback or more was added since), put one on the first block you send that
    can take it (not in a system message; not an empty text or tool result), unless it has one, so a
    read from there still walks back to the previous call's entry; if no block you send can take
    it, set a top-level ``cache_control: {"type": "ephemeral"}`` instead (the server places that
    one). Copy only what you mark; ``request`` and its messages must be left untouched."""
    raise NotImplementedError("ch02: continuation")
