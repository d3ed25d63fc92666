"""Structural checks on a Messages API request, with errors that name the offending field.

The real API answers 400 ``invalid_request_error`` to each of these; the messages here are our own
wording, each naming the path of the problem (``messages.3.content.0``) so a learner can find it.
"""

from __future__ import annotations

from typing import Any

from ..models import ModelSpec
from .errors import bad_request
from .prompt import as_blocks

BLOCK_TYPES = {
    "user": {"text", "image", "document", "tool_result", "search_result"},
    "assistant": {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result"},
}


def merged_turns(messages: list[dict]) -> list[tuple[str, list[dict], list[str]]]:
    """Consecutive same-role messages are combined into one turn, as the API does.
    Returns (role, blocks, paths of blocks) per turn."""
    turns: list[tuple[str, list[dict], list[str]]] = []
    for m, message in enumerate(messages):
        blocks = as_blocks(message["content"])
        paths = [f"messages.{m}.content.{i}" for i in range(len(blocks))]
        if turns and turns[-1][0] == message["role"]:
            turns[-1][1].extend(blocks)
            turns[-1][2].extend(paths)
        else:
            turns.append((message["role"], list(blocks), paths))
    return turns


def validate(request: Any, spec: ModelSpec, *, needs_max_tokens: bool = True) -> None:
    if not isinstance(request, dict):
        raise bad_request("request body must be a JSON object")
    if needs_max_tokens and not isinstance(request.get("max_tokens"), int):
        raise bad_request("max_tokens: Field required (an integer)")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages: at least one message is required")
    for m, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in BLOCK_TYPES:
            raise bad_request(f"messages.{m}.role: must be 'user' or 'assistant'")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise bad_request(f"messages.{m}.content: must be a string or a list of content blocks")
        for i, block in enumerate(as_blocks(content)):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in BLOCK_TYPES[message["role"]]:
                raise bad_request(f"messages.{m}.content.{i}.type: {kind!r} is not a valid block type in a {message['role']} message")
            if kind == "text" and not isinstance(block.get("text"), str):
                raise bad_request(f"messages.{m}.content.{i}.text: Field required (a string)")
    _check_system(request.get("system"))
    _check_tools(request)
    _check_tool_pairing(messages)
    if merged_turns(messages)[-1][0] == "assistant" and not spec.supports_prefill:
        raise bad_request(
            f"This model ({spec.id}) does not support assistant message prefill. "
            "The conversation must end with a user message."
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
    if choice.get("type") not in {"auto", "any", "tool", "none"}:
        raise bad_request(f"tool_choice.type: {choice.get('type')!r} is not one of auto, any, tool, none")
    if choice["type"] == "tool" and choice.get("name") not in names:
        raise bad_request(f"tool_choice.name: tool {choice.get('name')!r} is not in tools")


def _check_tool_pairing(messages: list[dict]) -> None:
    """Each tool_result answers a tool_use of the turn right before it, and each tool_use is
    answered in the turn right after it."""
    turns = merged_turns(messages)
    for t, (role, blocks, paths) in enumerate(turns):
        if role == "user":
            asked = {b["id"] for b in turns[t - 1][1] if b.get("type") == "tool_use"} if t > 0 else set()
            for block, path in zip(blocks, paths):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                    raise bad_request(
                        f"{path}: unexpected `tool_use_id` found in `tool_result` blocks: {block.get('tool_use_id')}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    )
        else:
            ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if ids and t + 1 < len(turns):
                answered = {b.get("tool_use_id") for b in turns[t + 1][1] if b.get("type") == "tool_result"}
                missing = [i for i in ids if i not in answered]
                if missing:
                    raise bad_request(
                        f"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(missing)}. "
                        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
                    )
