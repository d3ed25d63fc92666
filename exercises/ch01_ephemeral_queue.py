"""Chapter 01 exercise: the ephemeral queue, the call assembly in both generations, and the check
that tells them apart.

The agent keeps two lists. ``messages`` is the durable history. The *batch* is what hooks inject
for the next call only. Fill in the queue, the two ways a batch reaches the model, and the
append-only check. Test with ``.venv/bin/pytest tests/ch01_ephemeral_queue --impl exercises``.
"""

from __future__ import annotations

import threading
from typing import Any

from minimal_runtime.core.context import Injection  # a source and a text; .block() gives the marked text block

__all__ = ["TurnScopedQueue", "Injection", "append_batch", "batch_entry", "first_edit"]


class TurnScopedQueue:
    """Injections for the next call only."""

    def __init__(self) -> None:
        self._items: list[Injection] = []
        self._lock = threading.Lock()  # hooks may run on other threads

    def inject(self, source: str, text: str, untrusted: bool = False) -> None:
        """Add an ``Injection(source=..., text=..., untrusted=...)`` to the queue. ``untrusted`` marks
        text that came from outside (``Agent.inject_untrusted``): keep it on the injection, since the
        2026 layout delivers such notes as user text, never in a system entry (chapter 07)."""
        raise NotImplementedError("ch01: TurnScopedQueue.inject")

    def drain(self) -> list[Injection]:
        """Return every queued injection, in the order injected, and leave the queue empty."""
        raise NotImplementedError("ch01: TurnScopedQueue.drain")

    def __len__(self) -> int:
        return len(self._items)

    # Given (not the chapter's idea): what the runtime needs after each hook, when one fails, and when a call fails.
    def since(self, length: int) -> list[Injection]:
        with self._lock:
            return list(self._items[length:])

    def truncate(self, length: int) -> None:
        with self._lock:
            del self._items[length:]

    def remove(self, taken: list[Injection]) -> None:
        with self._lock:
            self._items = [i for i in self._items if not any(i is t for t in taken)]

    def requeue(self, batch: list[Injection]) -> None:
        with self._lock:
            fresh = {i.source for i in self._items}
            self._items = [i for i in batch if i.source not in fresh] + self._items


def append_batch(messages: list[dict], batch: list[Injection], prefill_ok: bool) -> list[dict]:
    """The 2025 generation. Return the call's messages: ``messages`` followed by the batch. Never
    modify ``messages`` or any message in it (they are the durable history).

    - an empty batch changes nothing;
    - ``prefill_ok``: the batch is one extra assistant message whose content is the batch's blocks;
    - otherwise (models that reject a trailing assistant message) the batch's blocks are appended
      to the end of a *copy* of the final user message.
    """
    raise NotImplementedError("ch01: append_batch")


def batch_entry(batch: list[Injection]) -> dict:
    """The 2026 generation: the batch as one turn-scoped system message, ``{"role": "system",
    "clear_at": "next_user_message", "content": [...]}`` with the batch's blocks, in order. The API
    shows it on its own call only; the agent keeps it in the history and resends it unchanged."""
    raise NotImplementedError("ch01: batch_entry")


def first_edit(previous: dict[str, Any], current: dict[str, Any]) -> str | None:
    """Where the request ``current`` stops being an append-only extension of ``previous`` (both are
    request dicts with ``system``, ``tools`` and ``messages``), or None when it is one.

    - ``system`` (a string or text blocks) and ``tools`` must be equal; a tool with
      ``"defer_loading": True`` present only in ``current`` is not a change. Answer
      ``"system: changed since the previous request"`` (or ``"tools: ..."``, same wording);
    - every message of ``previous`` must be in ``current`` at the same index, equal in value.
      Answer ``"messages.<i>: ..."`` for the first that differs, or ``"messages: ..."`` if
      ``current`` has fewer messages;
    - everywhere (system, tools, messages) ``cache_control`` keys do not count, and string content
      equals one text block with that text;
    - a message that differs only by ``thinking`` blocks left out is not an edit here, but one whose
      thinking block was replaced or added is (the runtime's own check also rejects a gap in the
      middle; that part is not asked of you).
    """
    raise NotImplementedError("ch01: first_edit")
