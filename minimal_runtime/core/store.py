"""The durable run record: what survives a crash.

One JSON line per event in ``events.jsonl``: a completed turn (the messages it appended to the
history), a call's usage, a tool's raw output, a compaction (the history as rewritten), counters,
a status change. A line is written whole with one
``write`` and flushed to disk before the run goes on, so a kill between any two steps leaves a file
that ends on a complete line; a kill in the middle of a write leaves a torn last line, which
opening the store cuts off. Ephemeral content (the batch) is never written here: the store only
accepts turns of the durable history.

``MemoryStore`` keeps the same events in memory: the agent's default, so the loop has one code path
whether or not a run is meant to survive a crash.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..provider.cost import CallRecord
from .messages import dumps


class StoredRun(BaseModel):
    messages: list[dict] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    tool_outputs: dict[str, str] = Field(default_factory=dict)
    counters: dict[str, int] = Field(default_factory=dict)
    compactions: int = 0
    status: str = "new"


class _Events:
    """The store's event kinds, written by ``_write`` and folded back into a ``StoredRun`` by ``load``."""

    def _write(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def _events(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def append_turn(self, messages: list[dict], call: CallRecord | None = None) -> None:
        """A completed turn: the messages it adds to the history and the record of the call that
        produced it, in one line: a kill can never leave one without the other."""
        event: dict[str, Any] = {"type": "turn", "messages": messages}
        if call is not None:
            event["call"] = call.model_dump()
        self._write(event)

    def append_tool_output(self, tool_use_id: str, raw: str) -> None:
        self._write({"type": "tool_output", "tool_use_id": tool_use_id, "raw": raw})

    def append_compaction(self, messages: list[dict]) -> None:
        """The history was rewritten (compaction): from here on it is ``messages``."""
        self._write({"type": "compaction", "messages": messages})

    def set_counters(self, counters: dict[str, int]) -> None:
        self._write({"type": "counters", "counters": counters})

    def set_status(self, status: str) -> None:
        self._write({"type": "status", "status": status})

    def load(self) -> StoredRun:
        run = StoredRun()
        for event in self._events():
            kind = event.pop("type")
            if kind == "turn":
                run.messages.extend(event["messages"])
                if "call" in event:
                    run.calls.append(CallRecord(**event["call"]))
            elif kind == "tool_output":
                run.tool_outputs[event["tool_use_id"]] = event["raw"]
            elif kind == "compaction":
                run.messages = list(event["messages"])
                run.compactions += 1
            elif kind == "counters":
                run.counters = event["counters"]
            elif kind == "status":
                run.status = event["status"]
        return run


class MemoryStore(_Events):
    """The run record in memory: nothing survives the process, everything else is the same."""

    def __init__(self) -> None:
        self._log: list[str] = []

    def _write(self, event: dict[str, Any]) -> None:
        self._log.append(dumps(event))  # serialized, as on disk: later edits of a dict cannot reach it

    def _events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._log]


class RunStore(_Events):
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "events.jsonl"
        self._repair()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair(self) -> None:
        """Cut a torn last line left by a kill in the middle of a write."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        good = data.rfind(b"\n") + 1
        if good < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(good)

    def _write(self, event: dict[str, Any]) -> None:
        os.write(self._fd, (dumps(event) + "\n").encode())
        os.fsync(self._fd)

    def _events(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines()]

    def close(self) -> None:
        os.close(self._fd)
