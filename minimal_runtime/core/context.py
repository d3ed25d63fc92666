"""One call's context: the durable history, the ephemeral batch, and how they are laid out.

The history is what the run remembers; the batch is what this one call needs right now (the plan
position, the budget, a note) and is thrown away after the call. The batch goes at the *tail*,
after everything the previous call sent, so the provider's prompt cache can serve the whole history
from the last call's entry. Two consequences of the caching rules shape the layout:

1. The cache breakpoint goes on the last *durable* block. An entry is the prefix ending at its
   breakpoint; a breakpoint on the batch writes an entry no later call repeats, so nothing is read.
2. Models of the 4.6 generation and later reject a request that ends in an assistant message, so
   there the batch rides as extra blocks at the end of the final user turn, in this call's *copy*
   of that turn. Older models take it as a trailing assistant message in the first person.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..provider.models import LOOKBACK_BLOCKS
from .messages import text_block


class Injection(BaseModel):
    """One entry of the batch: who produced it and what it says, in the agent's first person."""

    source: str
    text: str

    def block(self) -> dict:
        # The marker lets anyone grep a transcript for every injection of a kind.
        return text_block(f"<!-- {self.source} -->\n{self.text}")


def injected_source(block: dict) -> str | None:
    """The source of an injected block (``plan`` for ``<!-- plan -->``), None for anything else."""
    text = block.get("text", "") if block.get("type") == "text" else ""
    if not text.startswith("<!-- ") or " -->" not in text:
        return None
    return text[5:text.index(" -->")]


class EphemeralQueue:
    """Injections for the next call only. ``drain`` hands them over and empties the queue.
    Thread-safe: a background process may inject while the agent works."""

    def __init__(self) -> None:
        self._items: list[Injection] = []
        self._lock = threading.Lock()

    def inject(self, source: str, text: str) -> None:
        with self._lock:
            self._items.append(Injection(source=source, text=text))

    def drain(self) -> list[Injection]:
        with self._lock:
            items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class CallParts:
    """Everything one call is made of, before layout."""

    system: list[dict]
    tools: list[dict]
    durable: list[dict]  # the history; never modified by a layout
    batch: list[Injection] = field(default_factory=list)
    prefill_ok: bool = False  # may the request end in an assistant message?
    previous_durable_len: int | None = None  # history length at the previous call
    tool_choice: dict | None = None


def with_breakpoints(durable: list[dict], previous_len: int | None = None) -> list[dict]:
    """A copy of the history with a cache breakpoint on its last block, and on the last block of
    the previous call's history when that is more than the lookback away. Only the messages that
    get a marker are copied; the history itself is untouched."""
    messages = list(durable)
    # A read walks back at most LOOKBACK_BLOCKS positions from a breakpoint: a call that added more
    # blocks than that since the last entry would miss it, so the previous call's end is marked too.
    targets = [len(messages) - 1]
    if previous_len and 0 < previous_len < len(messages):
        blocks_since = sum(len(m["content"]) for m in messages[previous_len:])
        if blocks_since >= LOOKBACK_BLOCKS:
            targets.insert(0, previous_len - 1)
    for i in targets:
        content = list(messages[i]["content"])
        content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}
        messages[i] = {**messages[i], "content": content}
    return messages


def append_batch(messages: list[dict], batch: list[Injection], prefill_ok: bool) -> list[dict]:
    """The call's messages: ``messages`` with the batch at the tail. Never modifies ``messages``."""
    if not batch:
        return messages
    blocks = [injection.block() for injection in batch]
    if prefill_ok:
        return [*messages, {"role": "assistant", "content": blocks}]
    last = messages[-1]
    return [*messages[:-1], {**last, "content": [*last["content"], *blocks]}]


def system_with_breakpoint(system: list[dict]) -> list[dict]:
    """Tools and system are the stable head of every request; a breakpoint on the last system block
    keeps them cached even when the messages cache is invalidated (a ``tool_choice`` change)."""
    if not system:
        return system
    return [*system[:-1], {**system[-1], "cache_control": {"type": "ephemeral"}}]


def request_for(parts: CallParts, messages: list[dict], system: list[dict]) -> dict[str, Any]:
    """The request keywords of a call from its laid-out messages and system blocks."""
    request: dict[str, Any] = {"system": system, "messages": messages}
    if parts.tools:
        request["tools"] = parts.tools
    if parts.tool_choice:
        request["tool_choice"] = parts.tool_choice
    return request


def tail_layout(parts: CallParts) -> dict[str, Any]:
    """The layout this runtime uses: breakpoints on durable blocks, the batch after them."""
    messages = append_batch(with_breakpoints(parts.durable, parts.previous_durable_len), parts.batch, parts.prefill_ok)
    return request_for(parts, messages, system_with_breakpoint(parts.system))
