"""Behaviour: what the emulated model answers. A *simulation*, never a property of Claude.

A policy is any callable from the request (a Messages API dict, to be treated as read-only) to a
``Turn`` (or a string, a block, a list of blocks: ``Turn.of`` reads each).
It decides the content blocks only; the emulator does all accounting before the policy runs and
never lets the policy see or touch it.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Iterable, Optional, Protocol

from pydantic import BaseModel

from . import structured
from .memory_tool import check_memory_first


class Policy(Protocol):
    """The emulated model's behaviour: from the request (read-only) to the answer's content. It
    runs after the emulator has done all the accounting and cannot change it."""

    def __call__(self, request: dict[str, Any]) -> "Turn": ...


class Turn(BaseModel):
    """One assistant answer: content blocks (text, tool_use) and optionally a stop reason.
    Leave ``stop_reason`` empty and the emulator infers it (``tool_use`` if any tool is called)."""

    content: list[dict] = []
    stop_reason: Optional[str] = None
    thinking: Optional[str] = None  # the reasoning, on models that think: billed in full, shown only when the
    # request's display (or the model's default) is "summarized"
    redacted: bool = False  # the reasoning comes back as a redacted_thinking block (safety-redacted) [TH]

    @classmethod
    def of(cls, value: "Turn | str | list[dict] | dict") -> "Turn":
        if isinstance(value, Turn):
            return value
        if isinstance(value, str):
            return cls(content=[{"type": "text", "text": value}])
        if isinstance(value, dict):
            return cls(content=[value])
        return cls(content=list(value))


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def tool_use(name: str, input: dict, id: str | None = None) -> dict:
    """A tool_use block; the emulator assigns a deterministic id when none is given."""
    block = {"type": "tool_use", "name": name, "input": input}
    if id:
        block["id"] = id
    return block


class ScriptedPolicy:
    """Answers with the given turns, one per request, in order; fails clearly when it runs out."""

    def __init__(self, turns: Iterable[Turn | str | list[dict] | dict]):
        self.turns = [Turn.of(t) for t in turns]
        self._next = 0
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Turn:
        with self._lock:
            if self._next >= len(self.turns):
                raise RuntimeError(f"scripted policy exhausted: all {len(self.turns)} turns were used")
            turn = self.turns[self._next]
            self._next += 1
            return turn


def echo_policy(request: dict) -> Turn:
    """The default: a short text answer naming how many messages it was sent, or, when the request
    asks for structured output, the smallest JSON value its schema allows (see ``structured``). With
    the memory tool offered, it first views ``/memories`` (``memory_tool.check_memory_first``)."""
    if (view := check_memory_first(request)) is not None:  # "checks its memory directory before starting" [MEM]
        return Turn.of([text("Let me check my memory directory first."), view])
    schema = structured.schema_of(request)
    if schema is not None:
        return Turn.of(json.dumps(structured.stand_in(schema)))
    return Turn.of(f"(simulated reply to {len(request['messages'])} messages)")
