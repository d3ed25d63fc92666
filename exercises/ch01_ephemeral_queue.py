"""Chapter 01 exercise: the ephemeral queue and the call assembly.

The agent keeps two lists. ``messages`` is the durable history. The *batch* is what hooks inject
for the next call only. Fill in the queue and the function that puts the batch at the tail of the
call's messages. Test with ``pytest tests/ch01_ephemeral_queue --impl exercises``.
"""

from __future__ import annotations

import threading

from minimal_runtime.core.context import Injection  # a source and a text; .block() gives the marked text block

__all__ = ["EphemeralQueue", "Injection", "append_batch"]


class EphemeralQueue:
    """Injections for the next call only."""

    def __init__(self) -> None:
        self._items: list[Injection] = []
        self._lock = threading.Lock()  # hooks may run on other threads

    def inject(self, source: str, text: str) -> None:
        """Add an ``Injection(source=..., text=...)`` to the queue."""
        raise NotImplementedError("ch01: EphemeralQueue.inject")

    def drain(self) -> list[Injection]:
        """Return every queued injection, in the order injected, and leave the queue empty."""
        raise NotImplementedError("ch01: EphemeralQueue.drain")

    def __len__(self) -> int:
        return len(self._items)


def append_batch(messages: list[dict], batch: list[Injection], prefill_ok: bool) -> list[dict]:
    """Return the call's messages: ``messages`` followed by the batch. Never modify ``messages``
    or any message in it (they are the durable history).

    - an empty batch changes nothing;
    - ``prefill_ok``: the batch is one extra assistant message whose content is the batch's blocks;
    - otherwise (models that reject a trailing assistant message) the batch's blocks are appended
      to the end of a *copy* of the final user message.
    """
    raise NotImplementedError("ch01: append_batch")
