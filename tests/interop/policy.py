"""The simulated model of the real-client suite: call one offered tool for N rounds, then answer.

A simulation, not a property of Claude. It reads only the request (stateless), so any number of
clients and processes can share one emulator: in the current turn (the messages after the last
user message that is more than tool results) it counts the tool rounds already answered, and calls
a tool until there are ``rounds`` of them. Round k calls the k-th of the ``prefer`` tools that the
client offers (cycling; with the input given there), else the first tool offered, with an input
made from its JSON schema. A request with no tools (a client's side call: a title, a summary) gets text, or a
schema-conforming JSON text where ``output_config.format`` asks for one.
"""

from __future__ import annotations

import json
import os
from typing import Any

from minimal_runtime.emulator import Turn, text, tool_use


class ToolRounds:
    def __init__(self, rounds: int = 2, prefer: dict[str, dict] | None = None):
        self.rounds = rounds
        self.prefer = prefer or {}

    def __call__(self, request: dict[str, Any]) -> Turn:
        messages = [m for m in request["messages"] if m.get("role") in ("user", "assistant")]
        done = tool_rounds_in_turn(messages)
        tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and "input_schema" in t]
        fmt = (request.get("output_config") or {}).get("format")
        if fmt and fmt.get("type") == "json_schema":
            return Turn(content=[text(json.dumps(instance(fmt.get("schema") or {})))])
        if tools and done < self.rounds and (request.get("tool_choice") or {}).get("type") != "none":
            offered = [t for name in self.prefer for t in tools if t["name"] == name]
            tool = offered[done % len(offered)] if offered else tools[0]
            given = self.prefer.get(tool["name"])
            return Turn(content=[text(f"Round {done + 1}: calling {tool['name']}."),
                                 tool_use(tool["name"], given if given is not None else instance(tool["input_schema"]))],
                        thinking=f"round {done + 1} of {self.rounds}: {tool['name']}")
        turn_text = f"Done after {done} tool rounds; {len(messages)} messages in this conversation."
        return Turn(content=[text(turn_text)], thinking="answering")


class Configured(ToolRounds):
    """``ToolRounds`` as ``serve --policy tests.interop.policy:Configured`` builds it: ``serve``
    instantiates a policy class with no arguments, so the settings come from ``INTEROP_POLICY``
    (JSON ``{"rounds": N, "prefer": {...}}``, set by the harness)."""

    def __init__(self):
        super().__init__(**json.loads(os.environ.get("INTEROP_POLICY") or "{}"))


def tool_rounds_in_turn(messages: list[dict]) -> int:
    """Tool-result messages after the last user message that carries anything but tool results."""
    rounds = 0
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        # a tool-result message may carry a reminder text too (Claude Code appends some): still the loop
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            rounds += 1
        else:
            return rounds
    return rounds


def instance(schema: dict, depth: int = 0) -> Any:
    """A small value that conforms to a JSON schema: required properties only, first enum value,
    minimum lengths and bounds respected. Enough for tool inputs and structured-output stand-ins."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance(schema[key][0], depth + 1)
    if schema.get("allOf"):
        merged: dict = {}
        for part in schema["allOf"]:
            merged.update(part)
        return instance(merged, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {name: instance(props.get(name, {}), depth + 1) for name in schema.get("required", [])}
    if kind == "array":
        return [instance(schema.get("items") or {}, depth + 1) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1)) if "format" not in schema else "2026-12-01"
    if kind == "integer":
        return max(schema.get("minimum", 1), 1) if "maximum" not in schema else schema.get("minimum", schema["maximum"])
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return None
