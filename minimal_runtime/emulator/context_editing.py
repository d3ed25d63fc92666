"""Server-side context editing: ``clear_tool_uses_20250919`` and ``clear_thinking_20251015``.

From https://platform.claude.com/docs/en/build-with-claude/context-editing (beta header
``context-management-2025-06-27``): when the prompt exceeds the trigger (default 100,000 input
tokens, or a number of tool uses), the API clears the oldest tool results in chronological order,
keeping the most recent ``keep`` tool uses (default 3) and any tool named in ``exclude_tools``,
and replaces each cleared result with placeholder text. ``clear_tool_inputs`` (true, or a list of
tool names) clears the matching tool_use inputs too. ``clear_at_least`` makes an edit happen only
if at least that many input tokens would be removed. The edit is applied to the prompt before the
model reads it, so it is also what the cache sees: clearing content changes the prefix from the
first cleared block on. The client keeps its full history; nothing is edited on its side.

``clear_thinking_20251015`` removes the thinking blocks of all but the last ``keep`` thinking
turns (``{"type": "thinking_turns", "value": N}`` or ``"all"``; the default is all turns on Opus
4.5+ and Sonnet 4.6+, the last one elsewhere); with several edits it must come first. A turn is an
assistant turn as the thinking page counts them: "A tool-use loop is one assistant turn", from a
user message that is not only tool results to the next ([TH] "Thinking with tool use"), so the
assistant messages of one loop are cleared, or kept, together.
Thinking kept costs nothing extra; thinking cleared misses the cache from the first cleared block.

Neither is an edit for the prefix check of preserved thinking: the check compares what was sent.
``compact_20260112`` is also a ``context_management`` edit; it is handled in ``compaction.py``.

The placeholder wording is ours (the docs describe it, not its text).
"""

from __future__ import annotations

import copy
from typing import Callable

from ..provider.models import CONTEXT_EDITING_BETA as BETA, ModelSpec  # noqa: F401  (BETA: read by the pipeline)
from .errors import bad_request

PLACEHOLDER = "[This tool result was cleared to save context.]"
CLEARED_INPUT: dict = {}


def _tool_uses(messages: list[dict]) -> list[tuple[int, int, dict]]:
    return [(m, i, b) for m, msg in enumerate(messages) if msg["role"] == "assistant" and isinstance(msg["content"], list)
            for i, b in enumerate(msg["content"]) if b.get("type") == "tool_use"]


def _results(messages: list[dict]) -> dict[str, tuple[int, int]]:
    return {b["tool_use_id"]: (m, i) for m, msg in enumerate(messages) if msg["role"] == "user"
            and isinstance(msg["content"], list) for i, b in enumerate(msg["content"]) if b.get("type") == "tool_result"}


KINDS = ("clear_tool_uses_20250919", "clear_thinking_20251015", "compact_20260112")


def validate_edits(request: dict) -> None:
    config = request.get("context_management")
    if not isinstance(config, dict) or not isinstance(config.get("edits", []), list):
        raise bad_request("context_management: must be an object with a list of edits")
    for k, edit in enumerate(config.get("edits") or []):
        kind = edit.get("type") if isinstance(edit, dict) else None
        if kind not in KINDS:
            raise bad_request(f"context_management.edits.{k}.type: must be one of {', '.join(KINDS)}")
        if kind == "clear_thinking_20251015" and k != 0:
            raise bad_request(f"context_management.edits.{k}: clear_thinking_20251015 must come first in edits")
        if kind == "clear_tool_uses_20250919":
            _check_clear_tool_uses(edit, f"context_management.edits.{k}")
        if kind == "clear_thinking_20251015" and "keep" in edit:
            keep = edit["keep"]
            if not (keep == "all" or (isinstance(keep, dict) and (keep.get("type") == "all" or (
                    keep.get("type") == "thinking_turns" and _count(keep.get("value")) and keep["value"] > 0)))):
                raise bad_request(f"context_management.edits.{k}.keep: thinking_turns with a value above 0, or 'all'")


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_clear_tool_uses(edit: dict, where: str) -> None:
    for key, kinds in (("trigger", ("input_tokens", "tool_uses")), ("keep", ("tool_uses",)),
                       ("clear_at_least", ("input_tokens",))):
        value = edit.get(key)
        if value is not None and not (isinstance(value, dict) and value.get("type") in kinds and _count(value.get("value"))):
            raise bad_request(f"{where}.{key}: expected {{'type': {' or '.join(kinds)}, 'value': a count}}")
    exclude = edit.get("exclude_tools")
    if exclude is not None and not (isinstance(exclude, list) and all(isinstance(n, str) for n in exclude)):
        raise bad_request(f"{where}.exclude_tools: must be a list of tool names")
    inputs = edit.get("clear_tool_inputs")
    if inputs is not None and not isinstance(inputs, bool) and not (
            isinstance(inputs, list) and all(isinstance(n, str) for n in inputs)):
        raise bad_request(f"{where}.clear_tool_inputs: must be a boolean or a list of tool names")


def apply_edits(request: dict, count: Callable[[dict], int], spec: ModelSpec) -> tuple[dict, list[dict]]:
    """The request as the model will see it, and the ``applied_edits`` to report."""
    config = request.get("context_management") or {}
    applied, edited = [], request
    for k, edit in enumerate(config.get("edits") or []):
        if edit["type"] == "clear_tool_uses_20250919":
            edited, done = _clear_tool_uses(edited, edit, count, k)
        elif edit["type"] == "clear_thinking_20251015":
            edited, done = _clear_thinking(edited, edit, count, k, spec)
        else:
            continue
        if done:
            applied.append(done)
    return edited, applied


def _clear_thinking(request: dict, edit: dict, count: Callable[[dict], int], k: int,
                    spec: ModelSpec) -> tuple[dict, dict | None]:
    keep = edit.get("keep", "all" if spec.clear_thinking_keeps_all else {"type": "thinking_turns", "value": 1})
    if keep == "all" or keep.get("type") == "all":
        return request, None
    turns = [t for t in _assistant_turns(request["messages"]) if any(_thinks(request["messages"][m]) for m in t)]
    cleared = turns[:-keep["value"]]
    if not cleared:
        return request, None
    edited = {**request, "messages": list(request["messages"])}
    for m in (m for turn in cleared for m in turn if _thinks(request["messages"][m])):
        message = edited["messages"][m]
        edited["messages"][m] = {**message, "content": [b for b in message["content"]
                                                       if b.get("type") not in ("thinking", "redacted_thinking")]}
    return edited, {"type": "clear_thinking_20251015", "cleared_thinking_turns": len(cleared),
                    "cleared_input_tokens": count(request) - count(edited)}


def _thinks(message: dict) -> bool:
    return message["role"] == "assistant" and isinstance(message["content"], list) and any(
        b.get("type") in ("thinking", "redacted_thinking") for b in message["content"])


def _assistant_turns(messages: list[dict]) -> list[list[int]]:
    """The assistant messages of each assistant turn, in order: a new turn starts at a user message
    that carries more than tool results ("A tool-use loop is one assistant turn" [TH])."""
    turns: list[list[int]] = []
    new_turn = True
    for m, message in enumerate(messages):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str) or not all(isinstance(b, dict) and b.get("type") == "tool_result"
                                                   for b in content):
                new_turn = True
        elif message["role"] == "assistant":
            if new_turn:
                turns.append([])
                new_turn = False
            turns[-1].append(m)
    return turns


def _clear_tool_uses(request: dict, edit: dict, count: Callable[[dict], int], k: int) -> tuple[dict, dict | None]:
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
    keep = (edit.get("keep") or {"type": "tool_uses", "value": 3}).get("value", 3)
    exclude = set(edit.get("exclude_tools") or [])
    inputs = edit.get("clear_tool_inputs") or False
    uses = _tool_uses(request["messages"])
    if trigger.get("type") == "input_tokens":
        fired = count(request) > trigger["value"]
    elif trigger.get("type") == "tool_uses":
        fired = len(uses) > trigger["value"]
    else:
        raise bad_request(f"context_management.edits.{k}.trigger.type: must be input_tokens or tool_uses")
    if not fired:
        return request, None
    results = _results(request["messages"])
    candidates = [(m, i, b) for m, i, b in (uses[:-keep] if keep else uses) if b.get("name") not in exclude]
    edited = copy.deepcopy(request)
    cleared = 0
    for m, i, use in candidates:
        where = results.get(use["id"])
        if where is not None and edited["messages"][where[0]]["content"][where[1]].get("content") != PLACEHOLDER:
            edited["messages"][where[0]]["content"][where[1]]["content"] = PLACEHOLDER
            cleared += 1
        if inputs is True or (isinstance(inputs, list) and use.get("name") in inputs):
            edited["messages"][m]["content"][i]["input"] = CLEARED_INPUT
    if not cleared:
        return request, None
    removed = count(request) - count(edited)
    at_least = edit.get("clear_at_least")
    if at_least and removed < at_least.get("value", 0):
        return request, None  # not worth invalidating the cache for
    return edited, {"type": "clear_tool_uses_20250919", "cleared_tool_uses": cleared, "cleared_input_tokens": removed}
