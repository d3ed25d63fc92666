"""Layouts that look equivalent to ``context.tail_layout`` and are not: kept for measurement.

Every one sends the same information; they differ only in where the batch and the cache
breakpoints go. Chapter 02 runs each over a long run and compares cache-read share and cost;
the replay tool prices them on recorded runs. Use ``tail_layout`` in real agents.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from ..core.protocols import Layout
from ..core.context import CallParts, append_batch, request_for, system_with_breakpoint, tail_layout, with_breakpoints


def naive_layout(parts: CallParts) -> dict[str, Any]:
    """No cache breakpoints at all: every call pays full price for the whole prompt."""
    return request_for(parts, append_batch(parts.durable, parts.batch, parts.prefill_ok), parts.system)


def batch_on_breakpoint_layout(parts: CallParts) -> dict[str, Any]:
    """The breakpoint on the last block of the call, which is the batch: each entry ends in a batch
    that no later call repeats, so nothing past the system prompt is ever read."""
    messages = append_batch(parts.durable, parts.batch, parts.prefill_ok)
    messages = with_breakpoints(messages)
    return request_for(parts, messages, system_with_breakpoint(parts.system))


def automatic_caching_layout(parts: CallParts) -> dict[str, Any]:
    """Top-level ``cache_control``: the API puts the breakpoint on the last cacheable block, which,
    with a batch at the tail, is the batch: the failure of ``batch_on_breakpoint_layout``, and worse,
    since the system prompt gets no breakpoint of its own (chapter 02 measures both)."""
    request = request_for(parts, append_batch(parts.durable, parts.batch, parts.prefill_ok), parts.system)
    request["cache_control"] = {"type": "ephemeral"}
    return request


def _batch_message(parts: CallParts) -> dict:
    return {"role": "user", "content": [injection.block() for injection in parts.batch]}


def batch_after_system_layout(parts: CallParts) -> dict[str, Any]:
    """The batch as the first user turn, right after the system prompt: everything after it
    changes on every call, so only tools and system are ever read from cache."""
    durable = with_breakpoints(parts.durable, parts.previous_durable_len)
    messages = ([_batch_message(parts)] if parts.batch else []) + durable
    return request_for(parts, messages, system_with_breakpoint(parts.system))


def batch_before_last_user_layout(parts: CallParts) -> dict[str, Any]:
    """The batch just before the final user turn: the newest turn moves behind the batch, so the
    previous call's entry (which ended in its own final turn) is never matched."""
    durable = with_breakpoints(parts.durable, parts.previous_durable_len)
    messages = durable[:-1] + ([_batch_message(parts)] if parts.batch else []) + durable[-1:]
    return request_for(parts, messages, system_with_breakpoint(parts.system))


class TimestampInSystemLayout:
    """The tail layout with "Current time: ..." (to the second) at the top of the system prompt."""

    def __init__(self, clock):
        self.clock = clock

    def __call__(self, parts: CallParts) -> dict[str, Any]:
        stamp = {"type": "text", "text": f"Current time: {self.clock():.0f} seconds since the start of the run."}
        return tail_layout(replace(parts, system=[stamp, *parts.system]))


class ShuffledJsonLayout:
    """The tail layout, but tool inputs in the history are re-serialized with their keys in a
    random order on every call (a seeded RNG): what a set or an unordered map does to a prompt."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def _shuffle(self, block: dict) -> dict:
        if block.get("type") != "tool_use" or len(block["input"]) < 2:
            return block
        keys = list(block["input"])
        self.rng.shuffle(keys)
        return {**block, "input": {k: block["input"][k] for k in keys}}

    def __call__(self, parts: CallParts) -> dict[str, Any]:
        durable = [{**m, "content": [self._shuffle(b) for b in m["content"]]} if m["role"] == "assistant" else m
                   for m in parts.durable]
        return tail_layout(replace(parts, durable=durable))


class EditedToolsLayout:
    """A layout (the tail layout by default), but the tool list is edited as the task moves through
    phases (a tool is removed for ``phase_calls`` calls, then put back), instead of masking it."""

    def __init__(self, tool: str, phase_calls: int, inner: Layout = tail_layout):
        self.tool, self.phase_calls, self.inner, self.calls = tool, phase_calls, inner, 0

    def __call__(self, parts: CallParts) -> dict[str, Any]:
        self.calls += 1
        if (self.calls // self.phase_calls) % 2:
            parts = replace(parts, tools=[t for t in parts.tools if t["name"] != self.tool])
        return self.inner(parts)


class ToolChoicePhasesLayout:
    """A layout (the tail layout by default), masking by ``tool_choice``: it changes with each
    phase, and every change invalidates the messages cache (tools and system stay cached)."""

    def __init__(self, tool: str, phase_calls: int, inner: Layout = tail_layout):
        self.tool, self.phase_calls, self.inner, self.calls = tool, phase_calls, inner, 0

    def __call__(self, parts: CallParts) -> dict[str, Any]:
        self.calls += 1
        choice = {"type": "tool", "name": self.tool} if (self.calls // self.phase_calls) % 2 else {"type": "auto"}
        return self.inner(replace(parts, tool_choice=choice))
