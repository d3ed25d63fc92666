"""Structural checks on a Messages API request, with errors that name the offending field.

The real API answers 400 ``invalid_request_error`` to each of these; the messages here are our own
wording, each naming the path of the problem (``messages.3.content.0``) so a learner can find it.
One pass over the messages: this runs on every emulated call, so it stays cheap.
"""

from __future__ import annotations

from typing import Any

from ..provider.models import ModelSpec
from .errors import bad_request

BLOCK_TYPES = {
    "user": {"text", "image", "document", "tool_result", "search_result"},
    "assistant": {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result"},
}


def validate(request: Any, spec: ModelSpec, *, needs_max_tokens: bool = True) -> None:
    if not isinstance(request, dict):
        raise bad_request("request body must be a JSON object")
    if needs_max_tokens and not isinstance(request.get("max_tokens"), int):
        raise bad_request("max_tokens: Field required (an integer)")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages: at least one message is required")
    _check_system(request.get("system"))
    _check_tools(request)

    # Consecutive same-role messages are one turn, as the API merges them. A tool_result must
    # answer a tool_use of the turn before; each tool_use must be answered in the turn after.
    role = None
    asked: set[str] = set()  # tool_use ids of the previous assistant turn
    open_ids: list[str] = []  # tool_use ids of the current assistant turn
    answered: set[str] = set()  # tool_result ids of the current user turn
    for m, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in BLOCK_TYPES:
            raise bad_request(f"messages.{m}.role: must be 'user' or 'assistant'")
        if message["role"] != role:
            if role == "user" and asked - answered:
                _unanswered(asked - answered)
            if message["role"] == "user":
                asked, answered = set(open_ids), set()
            else:
                open_ids = []
            role = message["role"]
        content = message.get("content")
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            raise bad_request(f"messages.{m}.content: must be a string or a list of content blocks")
        allowed = BLOCK_TYPES[role]
        for i, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in allowed:
                raise bad_request(f"messages.{m}.content.{i}.type: {kind!r} is not a valid block type in a {role} message")
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    raise bad_request(f"messages.{m}.content.{i}.text: Field required (a string)")
            elif kind == "tool_use":
                open_ids.append(block.get("id"))
            elif kind == "tool_result":
                if block.get("tool_use_id") not in asked:
                    raise bad_request(
                        f"messages.{m}.content.{i}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message.")
                answered.add(block["tool_use_id"])
    if role == "user" and asked - answered:
        _unanswered(asked - answered)
    if role == "assistant" and not spec.supports_prefill:
        raise bad_request(
            f"This model ({spec.id}) does not support assistant message prefill. "
            "The conversation must end with a user message."
        )


def _unanswered(ids: set[str]) -> None:
    raise bad_request(
        f"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(sorted(ids))}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list) or any(not isinstance(b, dict) or b.get("type") != "text" for b in system):
        raise bad_request("system: must be a string or a list of text blocks")


def _check_tools(request: dict) -> None:
    names = []
    for t, tool in enumerate(request.get("tools") or []):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise bad_request(f"tools.{t}.name: Field required")
        if "type" not in tool and not isinstance(tool.get("input_schema"), dict):
            raise bad_request(f"tools.{t}.input_schema: Field required")
        names.append(tool["name"])
    if len(set(names)) != len(names):
        raise bad_request("tools: Tool names must be unique.")
    choice = request.get("tool_choice")
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in {"auto", "any", "tool", "none"}:
        raise bad_request("tool_choice.type: must be one of auto, any, tool, none")
    if choice["type"] == "tool" and choice.get("name") not in names:
        raise bad_request(f"tool_choice.name: tool {choice.get('name')!r} is not in tools")
