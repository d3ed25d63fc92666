"""Reading a request as it was sent: this call's batch, wherever the layout put it (``batch_of``), and
the messages the model reads of it (``rendered``). The readers of requests use them (a call's view,
the demos, the knowledge manager, the chapters); the loop itself never reads a request back, so they
live here and not in ``core/`` (what a fork copies).
"""

from __future__ import annotations

from typing import Any

from ..core.context import injected_source


def batch_of(request: dict[str, Any], size: int | None = None) -> list[dict]:
    """This call's batch in a request, wherever the layout put it (its ``size`` blocks, when known):
    on the 2026 layout the turn-scoped system entry at the end and the untrusted notes in the
    message before it; on the 2025 layout the last blocks of the final message (the user turn's
    copy, or a trailing assistant message and the end of the user turn's copy before it). Found by
    place, so durable text that merely starts with a marker (a tool result) is never taken for it;
    without ``size`` the trailing marked blocks of the message before the system entries are taken,
    which a forged marker in a steer can fool (a reader of the prompt, like a model, has nothing
    better)."""
    messages = request.get("messages") or []
    k, entry = len(messages), []
    while k and messages[k - 1].get("role") == "system":  # this call's, not the cleared ones
        k -= 1
        if messages[k].get("clear_at") == "next_user_message":
            entry = [*(messages[k].get("content") or []), *entry]
    if size is not None:
        size -= len(entry)
    if not k or (size is not None and size <= 0):
        return entry
    found = entry
    while k:  # the 2025 batch: a prefill's blocks, then (its untrusted part) the end of the user turn before it
        content = messages[k - 1].get("content") if isinstance(messages[k - 1].get("content"), list) else []
        if size is not None:
            tail = content[max(0, len(content) - size):]
            size -= len(tail)
        else:
            tail = []
            for block in reversed(content):
                if not injected_source(block):
                    break
                tail.insert(0, block)
        found = [*tail, *found]
        whole = len(tail) == len(content) if size is None else size > 0
        if messages[k - 1].get("role") != "assistant" or not whole:
            return found
        k -= 1
    return found


def rendered(messages: list[dict]) -> list[dict]:
    """The messages the model reads: a turn-scoped entry that a later user message follows is
    cleared (it stays on the wire, shows nothing, costs nothing)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return [m for i, m in enumerate(messages) if not (i < last_user and m.get("clear_at") == "next_user_message")]
