"""Structural checks on a Messages API request, with errors that name the offending field.

The real API answers 400 ``invalid_request_error`` to each of these. Where the docs or captured
API answers quote the message, it is used verbatim (text blocks "must be non-empty", the prefill
message, unanswered tool_use ids); elsewhere the wording is ours, always naming the path of the
problem (``messages.3.content.0``) so a learner can find it. Every malformed shape ends here as a
400, never as an exception. One pass over the messages: this runs on every emulated call.
"""

from __future__ import annotations

from typing import Any

from ..provider.models import BINDING_BETA, TASK_BUDGET_BETA, ModelSpec
from .models import CACHE_SCOPE_BETA
from . import structured, system_messages
from .errors import bad_request
from .versions import V2026, check_fields

BLOCK_TYPES = {
    "user": {"text", "image", "document", "tool_result", "search_result", "compaction"},
    "assistant": {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
                  "compaction"},
}
# [VER] 2026-10-21 refuses a document block in an assistant message; 2023-06-01 accepted it.
BLOCK_TYPES_2023 = {**BLOCK_TYPES, "assistant": BLOCK_TYPES["assistant"] | {"document"}}
MIN_TASK_BUDGET = 20_000
EFFORTS = system_messages.EFFORTS


def validate(request: Any, spec: ModelSpec, betas: set[str], *, needs_max_tokens: bool = True,
             resume: dict | None = None, shared: int = 0, version: str = V2026) -> dict:
    """Raise the 400 the API would answer, or return what a later request repeating this one's
    first messages may skip: the walk's state after each of the last messages (``resume``), so that
    only what is new is checked again (the checks of a message depend on what came before it and on
    its direct neighbours, so the last repeated message is checked again too)."""
    if not isinstance(request, dict):
        raise bad_request("request body must be a JSON object")
    check_fields(request, version)
    if needs_max_tokens:
        max_tokens = request.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            raise bad_request("max_tokens: Field required (an integer, 0 or more)")
        if max_tokens == 0 and request.get("stream"):
            raise bad_request("max_tokens: must be at least 1 when streaming")
        if spec.max_output is not None and max_tokens > spec.max_output:
            raise bad_request(f"max_tokens: {max_tokens} > {spec.max_output}, which is the maximum allowed number of "
                              f"output tokens for {spec.id}")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages: at least one message is required")
    _check_system(request.get("system"))
    for where, cc in _head_markers(request):
        _check_scope(cc, where, betas)
    tool_names, deferred = _check_tools(request, spec)
    _check_thinking(request, spec, betas)
    _check_output_config(request, spec, betas)
    _check_params(request)
    structured.schema_of(request)  # a malformed output format is a 400

    # Consecutive same-role messages are one turn, as the API merges them. A tool_result must
    # answer a tool_use of the turn before; each tool_use must be answered in the turn after.
    # System messages sit between turns and are checked on their own.
    first, state = 0, (None, set(), [], set(), frozenset())
    key = (spec.id, frozenset(betas), frozenset(tool_names.items()), version)
    snapshots: list[tuple] = []  # the walk's state after each message
    if resume and resume.get("key") == key and 2 <= shared <= len(resume["after"]) + 1:
        first, state, snapshots = shared - 1, resume["after"][shared - 2], resume["after"][:shared - 1]
    role, asked, open_ids, answered, defined = state[0], set(state[1]), list(state[2]), set(state[3]), dict(state[4])
    for m in range(first, len(messages)):
        message = messages[m]
        if m > first:  # the state after message m - 1
            snapshots.append((role, frozenset(asked), tuple(open_ids), frozenset(answered), frozenset(defined.items())))
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "system"):
            raise bad_request(f"messages.{m}.role: must be 'user', 'assistant' or 'system'")
        if "clear_at" in message and message["role"] != "system":
            raise bad_request(f"messages.{m}.clear_at: clear_at is only permitted on role 'system' messages")
        if message["role"] == "system":
            if role == "assistant" and open_ids:
                raise bad_request(f"messages.{m}: a system message cannot sit between a tool_use and its tool_result")
            system_messages.validate_system_message(messages, m, spec, betas, tool_names, deferred, defined)
            continue
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
            if not content:
                raise bad_request("messages: text content blocks must be non-empty")
            continue
        if not isinstance(content, list):
            raise bad_request(f"messages.{m}.content: must be a string or a list of content blocks")
        if not content and not (role == "assistant" and m == len(messages) - 1):
            raise bad_request("messages: all messages must have non-empty content except for the optional final "
                              "assistant message")
        allowed = BLOCK_TYPES[role] if version == V2026 else BLOCK_TYPES_2023[role]
        for i, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind is not None and "cache_control" in block:
                _check_scope(block["cache_control"], f"messages.{m}.content.{i}", betas)
            if kind not in allowed:
                raise bad_request(f"messages.{m}.content.{i}.type: {kind!r} is not a valid block type in a {role} message"
                                  + (f" (anthropic-version {V2026})" if kind == "document" else ""))
            if kind == "text":
                _check_text(block, f"messages.{m}.content.{i}")
                if role == "user" and block.get("citations") and version == V2026:  # [VER]
                    raise bad_request(f"messages.{m}.content.{i}.citations: citations on a user text block are not "
                                      f"permitted (anthropic-version {V2026})")
            elif kind == "tool_use":
                if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str) \
                        or not isinstance(block.get("input"), dict):
                    raise bad_request(f"messages.{m}.content.{i}: a tool_use needs a string id and name and an object input")
                open_ids.append(block["id"])
            elif kind == "tool_result":
                if block.get("tool_use_id") not in asked:
                    raise bad_request(
                        f"messages.{m}.content.{i}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message.")
                inner = block.get("content", "")
                if not isinstance(inner, (str, list)):
                    raise bad_request(f"messages.{m}.content.{i}.content: must be a string or a list of blocks")
                if "cache_control" in block and inner == "":
                    raise bad_request(f"messages.{m}.content.{i}: cache_control cannot be set for empty content")
                answered.add(block["tool_use_id"])
            elif kind in ("thinking", "redacted_thinking"):
                if "cache_control" in block:
                    raise bad_request(f"messages.{m}.content.{i}.cache_control: cannot be set on a {kind} block")
                field = "thinking" if kind == "thinking" else "data"
                if not isinstance(block.get(field), str):
                    raise bad_request(f"messages.{m}.content.{i}.{field}: Field required (a string)")
    snapshots.append((role, frozenset(asked), tuple(open_ids), frozenset(answered), frozenset(defined.items())))
    if role == "user" and asked - answered:
        _unanswered(asked - answered)
    if _ends_in_assistant(messages) and not spec.supports_prefill and not request.get("compaction"):
        raise bad_request(
            f"This model ({spec.id}) does not support assistant message prefill. "
            "The conversation must end with a user message."
        )
    return {"key": key, "after": snapshots}


def _ends_in_assistant(messages: list) -> bool:
    last = next((m for m in reversed(messages) if m.get("role") != "system"), None)
    return last is not None and last.get("role") == "assistant" and messages[-1].get("role") != "system"


def _check_text(block: dict, where: str) -> None:
    text = block.get("text")
    if not isinstance(text, str):
        raise bad_request(f"{where}.text: Field required (a string)")
    if not text:
        if "cache_control" in block:
            raise bad_request(f"{where}.text: cache_control cannot be set for empty text blocks")
        raise bad_request("messages: text content blocks must be non-empty")
    if not text.strip():
        raise bad_request("messages: text content blocks must contain non-whitespace text")


def _unanswered(ids: set[str]) -> None:
    raise bad_request(
        f"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(sorted(ids))}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def _head_markers(request: dict) -> list[tuple[str, Any]]:
    """The cache_control markers outside the messages: top-level, on tools, on system blocks."""
    found = [("", request["cache_control"])] if "cache_control" in request else []
    for segment in ("tools", "system"):
        blocks = request.get(segment)
        if isinstance(blocks, list):
            found += [(f"{segment}.{i}", b["cache_control"]) for i, b in enumerate(blocks)
                      if isinstance(b, dict) and "cache_control" in b]
    return found


def _check_scope(cc: Any, where: str, betas: set[str]) -> None:
    """``cache_control.scope`` needs the beta ``prompt-caching-scope-2026-01-05``; without it the API
    answers "system.1.cache_control.ephemeral.scope: Extra inputs are not permitted" (captured in
    github.com/caozhiyuan/copilot-api/issues/145). With it we accept a string: "global" is the value
    clients send (litellm's fixtures, Claude Code's system blocks); no first-party page listing the
    values was found [UNCERTAIN], and offline there is one account, so the scope changes nothing."""
    if not isinstance(cc, dict) or "scope" not in cc:
        return
    field = f"{where}.cache_control" if where else "cache_control"
    if CACHE_SCOPE_BETA not in betas:
        raise bad_request(f"{field}.ephemeral.scope: Extra inputs are not permitted")
    if not isinstance(cc["scope"], str) or not cc["scope"]:
        raise bad_request(f"{field}.scope: must be a string such as 'global'")


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list) or any(not isinstance(b, dict) or b.get("type") != "text" for b in system):
        raise bad_request("system: must be a string or a list of text blocks")
    for i, block in enumerate(system):
        if not isinstance(block.get("text"), str):
            raise bad_request(f"system.{i}.text: Field required (a string)")
        if not block["text"]:
            raise bad_request("system: text content blocks must be non-empty")


def _check_tools(request: dict, spec: ModelSpec) -> tuple[dict[str, str], set[str]]:
    """The declared tools (name -> tool type) and the deferred ones' names."""
    tools = request.get("tools") or []
    if not isinstance(tools, list):
        raise bad_request("tools: must be a list")
    names, deferred = [], set()
    for t, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise bad_request(f"tools.{t}.name: Field required")
        if "type" not in tool and not isinstance(tool.get("input_schema"), dict):
            raise bad_request(f"tools.{t}.input_schema: Field required")
        if tool.get("defer_loading"):
            if "cache_control" in tool:
                raise bad_request(f"tools.{t}: a deferred tool cannot carry cache_control")
            deferred.add(tool["name"])
        names.append(tool["name"])
    if len(set(names)) != len(names):
        raise bad_request("tools: Tool names must be unique.")
    choice = request.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in {"auto", "any", "tool", "none"}:
            raise bad_request("tool_choice.type: must be one of auto, any, tool, none")
        if choice["type"] == "tool" and choice.get("name") not in names:
            raise bad_request(f"tool_choice.name: tool {choice.get('name')!r} is not in tools")
        if choice["type"] in ("any", "tool") and spec.rejects_forced_tool_choice:
            raise bad_request(f"tool_choice: forced tool use (type {choice['type']!r}) is not supported on {spec.id}; "
                              "use 'auto' or 'none'")
    return {t["name"]: t.get("type", "custom") for t in tools}, deferred


def _check_thinking(request: dict, spec: ModelSpec, betas: set[str]) -> None:
    thinking = request.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive", "disabled", "between_tools"):
        raise bad_request("thinking.type: must be one of enabled, adaptive, disabled, between_tools")
    kind = thinking["type"]
    # Sonnet 5.5 turns thinking off only with between_tools: its overview lists "disabled" among the
    # breaking changes (API-2026.md section 7, PAI profiles/anthropic.py verified live).
    if spec.id == "claude-sonnet-5-5" and kind == "disabled":
        raise bad_request(f"thinking.type: 'disabled' is not supported on {spec.id}; use 'between_tools'")
    if spec.thinking == "always_on" and kind in ("disabled", "between_tools"):
        raise bad_request(f"thinking.type: {kind!r} is not supported on {spec.id}: thinking is always on")
    if kind == "enabled" and spec.thinking != "on_request" or (kind == "enabled" and spec.id in (
            "claude-opus-4-7", "claude-opus-4-8")):
        raise bad_request(f"thinking.type.enabled: manual budget_tokens thinking is not supported on {spec.id}; "
                          "use adaptive thinking")
    if kind == "enabled" and (not isinstance(thinking.get("budget_tokens"), int) or thinking["budget_tokens"] < 1024):
        raise bad_request("thinking.budget_tokens: must be an integer of at least 1024")
    # [SDK beta_thinking_config_adaptive_param.py] display: "summarized" | "omitted" | "updates".
    if thinking.get("display") not in (None, "summarized", "omitted", "updates"):
        raise bad_request("thinking.display: Input should be 'summarized', 'omitted' or 'updates'")
    if "block_binding" in thinking:
        if BINDING_BETA not in betas:
            raise bad_request("thinking.block_binding: Extra inputs are not permitted")
        bb = thinking["block_binding"]
        if bb is not None and (not isinstance(bb, dict) or bb.get("prefix_mismatch_behavior") not in (None, "error", "drop_block")):
            raise bad_request("thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'")


def _check_params(request: dict) -> None:
    """The plain top-level parameters: their types, so nothing later trips over a wrong one."""
    diagnostics = request.get("diagnostics")
    if "diagnostics" in request and diagnostics is not None:
        if not isinstance(diagnostics, dict) or not isinstance(diagnostics.get("previous_message_id"), (str, type(None))):
            raise bad_request("diagnostics.previous_message_id: must be a message id or null")
    for key, kind in (("stream", bool), ("stop_sequences", list), ("metadata", dict), ("model", str)):
        if request.get(key) is not None and not isinstance(request[key], kind):
            raise bad_request(f"{key}: must be a {kind.__name__}")
    if request.get("compaction") is not None and not isinstance(request["compaction"], dict):
        raise bad_request("compaction: must be an object")


def _check_output_config(request: dict, spec: ModelSpec, betas: set[str]) -> None:
    config = request.get("output_config")
    if config is None:
        return
    if not isinstance(config, dict):
        raise bad_request("output_config: must be an object")
    if config.get("effort") not in (None, *EFFORTS):
        raise bad_request(f"output_config.effort: Input should be one of {', '.join(EFFORTS)}")
    budget = config.get("task_budget")
    if budget is None:
        return
    if TASK_BUDGET_BETA not in betas:
        raise bad_request("output_config.task_budget: Extra inputs are not permitted")
    if not spec.task_budgets:
        raise bad_request(f"output_config.task_budget: task budgets are not supported on {spec.id}")
    if not isinstance(budget, dict) or budget.get("type") != "tokens":
        raise bad_request("output_config.task_budget.type: only 'tokens' is supported")
    total = budget.get("total")
    if not isinstance(total, int) or isinstance(total, bool) or total < MIN_TASK_BUDGET:
        raise bad_request(f"output_config.task_budget.total: must be at least {MIN_TASK_BUDGET}")
    remaining = budget.get("remaining")
    if remaining is not None and (not isinstance(remaining, int) or not 0 <= remaining <= total):
        raise bad_request("output_config.task_budget.remaining: must be between 0 and total")
