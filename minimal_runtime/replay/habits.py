"""What a recorded run spent its actions on: the habits the course's simulated agents are *given*
(chapter 04's todo recitation, chapter 06's re-reads), counted in real logs instead.

- plan upkeep: calls of a todo or plan tool (Claude Code's ``TodoWrite``, and the like);
- unchanged re-reads: a read of the same part of a file the run had already read (same range), with
  no write or edit of that file since;
- repeated failures: a call identical (tool and input) to an earlier one whose result was an error;
  immediate retries: the same, right after it;
- identical runs: an action identical to the action just before it (whatever their results).
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from .recorded import RecordedRun

PLAN_TOOLS = {"TodoWrite", "todo_write", "update_plan", "plan"}
READS = {"Read": "file_path", "read_file": "path", "view": "path"}  # tool -> the input naming the file
WRITES = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",
          "write_file": "path"}


class Habits(BaseModel):
    actions: int = 0
    plan_updates: int = 0
    reads: int = 0
    unchanged_rereads: int = 0
    failed: int = 0
    repeated_failures: int = 0
    immediate_retries: int = 0
    identical_runs: int = 0

    @property
    def plan_share(self) -> float:
        return self.plan_updates / max(1, self.actions)


RANGE_KEYS = ("offset", "limit", "view_range", "start", "end")


def _file(name: str, args: dict) -> tuple[str | None, str | None, str]:
    """(file read, file written, the part read) by one tool call, as far as its input says."""
    part = json.dumps({k: args.get(k) for k in RANGE_KEYS if args.get(k) is not None}, sort_keys=True)
    if name == "str_replace_editor":  # OpenHands: one tool, the command says which
        path = args.get("path")
        return (path, None, part) if args.get("command") == "view" else (None, path, part)
    return args.get(READS.get(name, ""), None), args.get(WRITES.get(name, ""), None), part


def habits(run: RecordedRun) -> Habits:
    counted = Habits()
    read_since_write: set[tuple[str, str]] = set()  # (file, part) read since the file was last written
    failed_before: set[str] = set()
    previous: tuple[str, bool] | None = None  # the last action and whether it failed
    for call in run.calls:
        for block in call.assistant["content"]:
            if block.get("type") != "tool_use":
                continue
            name, args = block["name"], block.get("input") or {}
            counted.actions += 1
            counted.plan_updates += name in PLAN_TOOLS
            read, written, part = _file(name, args)
            if read:
                counted.reads += 1
                counted.unchanged_rereads += (read, part) in read_since_write
                read_since_write.add((read, part))
            if written:
                read_since_write = {(f, p) for f, p in read_since_write if f != written}
            key = f"{name} {json.dumps(args, sort_keys=True)}"
            result = call.results.get(block.get("id"), {})
            counted.repeated_failures += key in failed_before
            if previous is not None and previous[0] == key:
                counted.identical_runs += 1
                counted.immediate_retries += previous[1]
            if result.get("is_error"):
                counted.failed += 1
                failed_before.add(key)
            previous = (key, bool(result.get("is_error")))
    return counted
