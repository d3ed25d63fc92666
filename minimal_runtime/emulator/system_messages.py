"""Mid-conversation system messages, turn-scoped ones, and the tool changes they carry.

From https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
([MCSM], API-2026.md §2 and §3):

- ``{"role": "system", "content": ..., "clear_at": "never" | "next_user_message"}`` entries in
  ``messages``. One with content cannot be first; it must directly follow a user turn (a
  tool_result-only one counts) and be followed by an assistant turn or end the array.
  Consecutive system messages are judged together. An effort-only message (empty content,
  ``output_config``) renders nothing and is accepted anywhere.
- ``clear_at: "next_user_message"`` (beta ``mid-conversation-system-clear-at-2026-08-21``): the text
  renders only while no later ``user`` message exists; after that the message is *cleared*: it stays
  in the array, renders nothing, costs nothing, and must be resent verbatim. Text blocks only; no
  ``cache_control``, no ``output_config``.
- ``tool_addition`` / ``tool_removal`` blocks (beta ``inline-tools-2026-09-15``, or by reference
  only ``mid-conversation-tool-changes-2026-07-01``) change the tools on offer from their position
  on, leaving ``tools`` byte-identical. A ``defer_loading`` tool is not offered until added. An
  unresolved reference is a 400 with ``error_code`` ``tool_reference_unresolved``.
- Per-message ``output_config`` (build-with-claude/effort-per-message): ``{"effort": ...}`` only
  ("format remains top-level only", SDK ``BetaSystemMessageOutputConfigParam``), under the beta
  ``mid-conversation-output-config-2026-07-01`` or Claude Code's ``per-turn-control-2026-07-01``
  (see ``provider/models.py``); without either it is "Extra inputs are not permitted".

Error texts quoted in [MCSM] are used verbatim; the others are our wording, naming the path.
"""

from __future__ import annotations

import re

from typing import Any

from ..provider.models import CLEAR_AT_BETA, INLINE_TOOLS_BETA, ModelSpec
from .models import OUTPUT_CONFIG_BETA, PER_TURN_CONTROL_BETA, TOOL_CHANGES_BETA
from .errors import ApiError, bad_request

CHANGE_TYPES = ("tool_addition", "tool_removal")
EFFORTS = ("low", "medium", "high", "xhigh", "max")  # [effort], the same set as the top-level parameter


def is_turn_scoped(message: dict) -> bool:
    return message.get("role") == "system" and message.get("clear_at") == "next_user_message"


def has_content(message: dict) -> bool:
    content = message.get("content")
    return bool(content) if isinstance(content, (str, list)) else False


def last_user_index(messages: list) -> int:
    """Index of the last ``user`` message (a turn-scoped message before it is cleared), or -1."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], dict) and messages[i].get("role") == "user":
            return i
    return -1


def validate_system_message(messages: list, m: int, spec: ModelSpec, betas: set[str], tool_names: dict[str, str],
                            deferred: set[str], defined: dict[str, str]) -> None:
    """The checks of one ``role: "system"`` entry; ``defined`` collects inline-defined tools (name -> type)."""
    message = messages[m]
    if spec.system_messages == "no":
        raise bad_request(f"messages.{m}.role: role 'system' is not supported on this model ({spec.id})")
    if "clear_at" in message:
        if CLEAR_AT_BETA not in betas:
            raise bad_request(f"messages.{m}.clear_at: Extra inputs are not permitted")
        if message["clear_at"] not in ("next_user_message", "never", None):
            raise bad_request(f"messages.{m}.clear_at: Input should be 'next_user_message' or 'never'")
    config = message.get("output_config")
    if config is not None:
        if not isinstance(config, dict):
            raise bad_request(f"messages.{m}.output_config: must be an object")
        if is_turn_scoped(message):
            raise bad_request(f"messages.{m}: output_config is not permitted on a turn-scoped system message "
                              "(clear_at: 'next_user_message')")
        if config and not {OUTPUT_CONFIG_BETA, PER_TURN_CONTROL_BETA} & betas:
            raise bad_request(f"messages.{m}.output_config: Extra inputs are not permitted")
        if "format" in config:
            raise bad_request(f"messages.{m}.output_config.format: format is only permitted at the top level")
        for key in config.keys() - {"effort"}:
            raise bad_request(f"messages.{m}.output_config.{key}: Extra inputs are not permitted")
        if config.get("effort") not in (None, *EFFORTS):
            raise bad_request(f"messages.{m}.output_config.effort: Input should be one of {', '.join(EFFORTS)}")
    content = message.get("content")
    if content is None or content == "" or content == []:
        if config is None:
            raise bad_request(f"messages.{m}: a system message needs content or output_config")
        return  # effort-only: renders nothing, accepted anywhere
    _check_placement(messages, m)
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        raise bad_request(f"messages.{m}.content: must be a string or a list of content blocks")
    for i, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if is_turn_scoped(message):
            if kind != "text":
                raise bad_request(f"messages.{m}: a turn-scoped system message supports text blocks only "
                                  "(clear_at: 'next_user_message')")
            if "cache_control" in block:
                raise bad_request(f"messages.{m}.content.{i}: cache_control is not permitted on a turn-scoped "
                                  "system message (clear_at: 'next_user_message')")
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise bad_request(f"messages.{m}.content.{i}.text: Field required (a string)")
        elif kind in CHANGE_TYPES:
            _check_tool_change(block, f"messages.{m}.content.{i}", spec, betas, tool_names, defined, messages, m)
        else:
            raise bad_request(f"messages.{m}.content.{i}.type: {kind!r} is not a valid block type in a system message")


def _check_placement(messages: list, m: int) -> None:
    first = m  # consecutive system messages are judged together, as one section
    while first > 0 and _role(messages[first - 1]) == "system":
        first -= 1
    last = m
    while last + 1 < len(messages) and _role(messages[last + 1]) == "system":
        last += 1
    if first == 0:
        raise bad_request(f"messages.{m}: a system message with content cannot be the first message")
    before = messages[first - 1]
    if not (_role(before) == "user" or (_role(before) == "assistant" and _ends_in_server_tool_result(before))):
        raise bad_request(f"messages.{m}: a system message must immediately follow a user turn")
    if last + 1 < len(messages) and _role(messages[last + 1]) != "assistant":
        if is_turn_scoped(messages[m]):
            raise bad_request(f"messages.{m}: a turn-scoped system message must be followed by an assistant turn "
                              "or end the messages; it is followed by a user message")
        raise bad_request(f"messages.{m}: a system message must be followed by an assistant turn or end the messages")


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _ends_in_server_tool_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and bool(content) and isinstance(content[-1], dict) \
        and str(content[-1].get("type", "")).endswith("_tool_result")


def _check_tool_change(block: dict, where: str, spec: ModelSpec, betas: set[str], tool_names: dict[str, str],
                       defined: dict[str, str], messages: list, m: int) -> None:
    if not spec.tool_changes:
        raise bad_request(f"{where}: tool_addition/tool_removal is not supported on this model ({spec.id})")
    if INLINE_TOOLS_BETA not in betas and TOOL_CHANGES_BETA not in betas:
        raise bad_request(f"{where}.type: {block['type']!r} requires the anthropic-beta header {INLINE_TOOLS_BETA}")
    if m > 0 and _role(messages[m - 1]) == "assistant" and _stop_paused(messages[m - 1]):
        raise bad_request(f"{where}: tool changes are not accepted right after a paused assistant turn")
    if "cache_control" in block and "definition" in (block.get("tool") or {}) and \
            "cache_control" in ((block.get("tool") or {}).get("definition") or {}):
        raise bad_request(f"{where}: cache_control goes on the block or in the definition, not both")
    tool = block.get("tool")
    if not isinstance(tool, dict):
        raise bad_request(f"{where}.tool: Field required")
    kind = tool.get("type")
    if kind == "tool_definition":
        if block["type"] != "tool_addition":
            raise bad_request(f"{where}.tool.type: a tool_removal takes a reference, not a definition")
        if INLINE_TOOLS_BETA not in betas:
            raise bad_request(f"{where}.tool: a tool_definition requires the anthropic-beta header {INLINE_TOOLS_BETA}")
        definition = tool.get("definition")
        if not isinstance(definition, dict) or not isinstance(definition.get("name"), str):
            raise bad_request(f"{where}.tool.definition.name: Field required")
        if definition.get("defer_loading") and ("cache_control" in block or "cache_control" in definition):
            raise bad_request(f"{where}: a deferred definition cannot carry cache_control")  # [MCSM]
        # [MCSM] (2026-09-26): "send a different definition under the same name. The new definition
        # replaces the earlier one from that position onward. A definition that reuses the name of a
        # different type of tool returns a 400 error with ... tool_name_conflict. A newer version of the
        # same tool doesn't count as a different type." The latest definition of the name is what a later
        # one is compared with: the one in `tools`, or an earlier inline one.
        kind = definition.get("type", "custom")
        declared = defined.get(definition["name"], tool_names.get(definition["name"]))
        if declared is not None and tool_family(declared) != tool_family(kind):
            raise ApiError(400, f"{where}.tool.definition: tool {definition['name']!r} is already declared as a "
                           f"{declared!r} tool", details={"error_code": "tool_name_conflict"})
        defined[definition["name"]] = kind
    elif kind == "tool_reference":
        name = tool.get("name")
        if name not in tool_names and name not in defined:
            raise ApiError(400, f"tool_addition/tool_removal references unknown tool {name!r}",
                           details={"error_code": "tool_reference_unresolved"})
    elif kind in ("mcp_tool_reference", "mcp_toolset_reference"):
        raise bad_request(f"{where}.tool.type: MCP tool references are not emulated offline")
    else:
        raise bad_request(f"{where}.tool.type: must be tool_reference or tool_definition")


def tool_family(kind: str) -> str:
    """A tool type without its version date: ``web_search_20250305`` and ``web_search_20260209`` are one."""
    return re.sub(r"_\d{8}$", "", kind)


def _stop_paused(message: dict) -> bool:
    return False  # pause_turn continuations are not emulated: a paused turn never reaches us


def tools_in_effect(request: dict, changes: list[tuple[int, int, dict]]) -> list[dict]:
    """The tool set at the end of the request, given its tool changes (message, block, the block)
    in order: what the model is offered for its answer."""
    offered = {t["name"]: t for t in request.get("tools") or [] if isinstance(t, dict) and not t.get("defer_loading")}
    declared = {t["name"]: t for t in request.get("tools") or [] if isinstance(t, dict) and "name" in t}
    for m, _, block in changes:
        if _role(request["messages"][m]) == "system":
            tool = block.get("tool") or {}
            if tool.get("type") == "tool_definition":
                definition = tool["definition"]
                declared[definition["name"]] = definition
                offered[definition["name"]] = definition
            elif block["type"] == "tool_addition" and tool.get("name") in declared:
                offered[tool["name"]] = declared[tool["name"]]
            elif block["type"] == "tool_removal":
                offered.pop(tool.get("name"), None)
    return [{k: v for k, v in t.items() if k != "defer_loading"} for t in offered.values()]
