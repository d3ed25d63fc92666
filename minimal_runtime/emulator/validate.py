"""Structural checks on a Messages API request, with errors that name the offending field.

The real API answers 400 ``invalid_request_error`` to each of these. Where the docs or captured
API answers quote the message, it is used verbatim (text blocks "must be non-empty", the prefill
message, unanswered tool_use ids); elsewhere the wording is ours, always naming the path of the
problem (``messages.3.content.0``) so a learner can find it. Every malformed shape ends here as a
400, never as an exception. One pass over the messages: this runs on every emulated call.
"""

from __future__ import annotations

from typing import Any

import base64
import binascii

from ..provider.models import BINDING_BETA, TASK_BUDGET_BETA, ModelSpec
from .models import CACHE_SCOPE_BETA, DISPLAY_UPDATES_BETA, FAST_BETA, INTERLEAVED_BETA
from . import documents, structured, system_messages
from .errors import ApiError, bad_request
from .memory_tool import check_memory_tool, is_memory_tool
from .tokens import image_format, image_size
from .versions import V2023, V2026, check_fields

BLOCK_TYPES = {
    "user": {"text", "image", "document", "tool_result", "search_result", "compaction"},
    "assistant": {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
                  "compaction"},
}
# [VER] 2026-10-21 refuses a document block in an assistant message; 2023-06-01 accepted it.
BLOCK_TYPES_2023 = {**BLOCK_TYPES, "assistant": BLOCK_TYPES["assistant"] | {"document"}}
MIN_TASK_BUDGET = 20_000
MAX_STRICT_TOOLS = 20
EFFORTS = system_messages.EFFORTS  # in order, low to max


# Extended output: max_tokens up to 300,000 with this beta, on the Batch API only [BP "Extended output",
# September: Opus 5, 4.8, 4.7, 4.6, Sonnet 5, 4.6; API-2026 §7, later: Opus 5/5.5, Sonnet 5.5, Haiku 5.5].
# The models are the two lists together [INFERRED: the later list adds the newer models].
EXTENDED_OUTPUT_BETA, EXTENDED_OUTPUT = "output-300k-2026-03-24", 300_000
EXTENDED_OUTPUT_MODELS = frozenset({"claude-opus-5-5", "claude-opus-5", "claude-opus-4-8", "claude-opus-4-7",
                                    "claude-opus-4-6", "claude-sonnet-5-5", "claude-sonnet-5", "claude-sonnet-4-6",
                                    "claude-haiku-5-5"})


def drop_null_markers(request: Any, shared: int = 0) -> None:
    """``"cache_control": null`` on a block, a system block or a tool is no breakpoint: the key is
    dropped, in place, before any check reads it (a top-level null was already no marker).
    [INFERRED] The SDKs type the field nullable on every block (anthropic-python 2.16
    ``types/text_block_param.py`` and ``tool_param.py``: ``cache_control: Optional[CacheControlEphemeralParam]``,
    as on the image, document, tool_use and tool_result params; the Ruby SDK's ``CacheControlEphemeral?``);
    the docs do not say what the API does with a null. Public notes disagree (issue 51 counts two that
    say it is accepted, one that says refused), so we follow the SDK's type. mirascope clears its earlier
    breakpoint this way. Messages before ``shared`` are the earlier body's objects, already cleaned."""
    if not isinstance(request, dict):
        return
    for key in ("system", "tools"):
        blocks = request.get(key)
        if isinstance(blocks, list):
            _drop_null(blocks)
    messages = request.get("messages")
    if isinstance(messages, list):
        for message in messages[shared:]:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                _drop_null(content)
                for block in content:
                    if isinstance(block, dict) and isinstance(block.get("content"), list):
                        _drop_null(block["content"])  # the blocks of a tool_result


def _drop_null(blocks: list) -> None:
    for block in blocks:
        if isinstance(block, dict) and "cache_control" in block and block["cache_control"] is None:
            del block["cache_control"]


def extended_output(spec: ModelSpec, betas: set[str]) -> int | None:
    """The most a batch request may ask to write: 300,000 with the beta on the models that take it."""
    return EXTENDED_OUTPUT if EXTENDED_OUTPUT_BETA in betas and spec.id in EXTENDED_OUTPUT_MODELS else spec.max_output


def validate(request: Any, spec: ModelSpec, betas: set[str], *, needs_max_tokens: bool = True,
             resume: dict | None = None, shared: int = 0, version: str = V2026, batch: bool = False) -> dict:
    """Raise the 400 the API would answer, or return what a later request repeating this one's
    first messages may skip: the walk's state after each of the last messages (``resume``), so that
    only what is new is checked again (the checks of a message depend on what came before it and on
    its direct neighbours, so the last repeated message is checked again too)."""
    if not isinstance(request, dict):
        raise bad_request("request body must be a JSON object")
    check_fields(request, version)
    if not needs_max_tokens and "max_tokens" in request:  # count_tokens takes no max_tokens (live: "Extra
        # inputs are not permitted", github.com/Wei-Shaw/sub2api/pull/4913)
        raise bad_request("max_tokens: Extra inputs are not permitted")
    if needs_max_tokens:
        max_tokens = request.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            raise bad_request("max_tokens: Field required (an integer, 0 or more)")
        if max_tokens == 0 and request.get("stream"):
            raise bad_request("max_tokens: must be at least 1 when streaming")
        extended = extended_output(spec, betas)
        limit = extended if batch else spec.max_output
        if limit is not None and max_tokens > limit:
            only = f" ({EXTENDED_OUTPUT_BETA} raises it in a Message Batch only)" if extended != limit else ""
            raise bad_request(f"max_tokens: {max_tokens} > {limit}, which is the maximum allowed number of "
                              f"output tokens for {spec.id}{only}")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages: at least one message is required")
    _check_system(request.get("system"))
    for where, cc in _head_markers(request):
        _check_scope(cc, where, betas)
    tool_names, deferred = _check_tools(request, spec)
    _check_output_config(request, spec, betas)
    check_thinking(request, spec, betas)
    _check_params(request, spec, betas, version)
    schema = structured.schema_of(request)  # a malformed output format is a 400
    if schema is not None:
        where = "output_config.format" if (request.get("output_config") or {}).get("format") else "output_format"
        if (why := structured.unsupported(schema, schema)) is not None:
            raise bad_request(f"{where}.{why}")
    strict = [t for t in request.get("tools") or [] if isinstance(t, dict) and t.get("strict")]
    if len(strict) > MAX_STRICT_TOOLS:  # [SO; issue 37 item 16]: "more than 20 strict tools"; the words are ours
        raise bad_request(f"tools: at most {MAX_STRICT_TOOLS} tools may set strict: true, found {len(strict)}")
    structured.check_complexity([t.get("input_schema") for t in strict] + ([schema] if schema is not None else []))

    # Consecutive same-role messages are one turn, as the API merges them. A tool_result must
    # answer a tool_use of the turn before; each tool_use must be answered in the turn after.
    # System messages sit between turns and are checked on their own.
    first, state = 0, (None, set(), [], set(), frozenset(), ())
    key = (spec.id, frozenset(betas), frozenset(tool_names.items()), version)
    snapshots: list[tuple] = []  # the walk's state after each message
    if resume and resume.get("key") == key and 2 <= shared <= len(resume["after"]) + 1:
        first, state, snapshots = shared - 1, resume["after"][shared - 2], resume["after"][:shared - 1]
    role, asked, open_ids, answered, defined = state[0], set(state[1]), list(state[2]), set(state[3]), dict(state[4])
    images = list(state[5])  # (path, longest side or None) of every image so far, for the size limit
    for m in range(first, len(messages)):
        message = messages[m]
        if m > first:  # the state after message m - 1
            snapshots.append((role, frozenset(asked), tuple(open_ids), frozenset(answered), frozenset(defined.items()),
                              tuple(images)))
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
                for k, part in enumerate(inner if isinstance(inner, list) else []):
                    where = f"messages.{m}.content.{i}.content.{k}"
                    if isinstance(part, dict) and part.get("type") == "image":
                        images.append((where, _check_image(part, where)))
                    elif isinstance(part, dict) and part.get("type") == "document":
                        documents.check_document(part, where, spec.context_window)
                    elif isinstance(part, dict) and part.get("type") == "search_result":
                        documents.check_search_result(part, where)
                if "cache_control" in block and inner == "":
                    raise bad_request(f"messages.{m}.content.{i}: cache_control cannot be set for empty content")
                answered.add(block["tool_use_id"])
            elif kind == "image":
                images.append((f"messages.{m}.content.{i}", _check_image(block, f"messages.{m}.content.{i}")))
            elif kind == "document":  # [PDF; CIT] (documents.py)
                documents.check_document(block, f"messages.{m}.content.{i}", spec.context_window)
            elif kind == "search_result":  # [SR] (documents.py)
                documents.check_search_result(block, f"messages.{m}.content.{i}")
            elif kind in ("thinking", "redacted_thinking"):
                if "cache_control" in block:
                    raise bad_request(f"messages.{m}.content.{i}.cache_control: cannot be set on a {kind} block")
                field = "thinking" if kind == "thinking" else "data"
                if not isinstance(block.get(field), str):
                    raise bad_request(f"messages.{m}.content.{i}.{field}: Field required (a string)")
    snapshots.append((role, frozenset(asked), tuple(open_ids), frozenset(answered), frozenset(defined.items()),
                      tuple(images)))
    if role == "user" and asked - answered:
        _unanswered(asked - answered)
    _check_image_sizes(images)
    if len(images) > spec.max_images:
        # [VIS] "General limits": "100 per request on the API, for models with a 200k-token context
        # window", "600 per request on the API, for all other models"; the words are ours.
        raise bad_request(f"messages: too many images: {len(images)} in one request, at most {spec.max_images} "
                          f"on {spec.id}")
    if _ends_in_assistant(messages) and not request.get("compaction"):
        if not spec.supports_prefill:  # the live text carries no model id (API-2026 §7, GitHub issues quoting it)
            raise bad_request("This model does not support assistant message prefill. "
                              "The conversation must end with a user message.")
        if (request.get("output_config") or {}).get("format") is not None or request.get("output_format") is not None:
            # [SO] structured outputs are "incompatible with message prefilling"; the words are ours.
            raise bad_request("output_config.format: structured outputs are incompatible with a prefilled assistant "
                              "message (the conversation must end with a user message)")
        last = len(messages) - 1
        first = _blocks(messages[last].get("content"))[:1]
        if (request.get("thinking") or {}).get("type") in ("enabled", "adaptive") and \
                not (first and first[0].get("type") in ("thinking", "redacted_thinking")):
            # "You can't prefill the assistant response while thinking is on" [TH "Response prefill and
            # forced tool use"]; the live words to a prefill, quoted in github.com/Aider-AI/aider/issues/3820
            found = first[0].get("type") if first else "text"
            raise bad_request(
                f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
                "When `thinking` is enabled, a final `assistant` message must start with a thinking block. We "
                "recommend you include thinking blocks from previous turns. To avoid this requirement, disable "
                "`thinking`. Please consult our documentation at "
                "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
    return {"key": key, "after": snapshots}


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


MAX_IMAGE_BYTES = 5 * 1024 * 1024


def _check_image(block: dict, where: str) -> int | None:
    """A base64 image the API cannot read is a 400, in the live words API-2026.md §13 quotes:
    empty data [CCI #12750, #9007]; a payload that does not decode to an image [CCI #8647, #49403]
    ("Could not process image", no path); more than 5 MB; bytes of another type than the declared
    media type (the 2026 wording of the two seen [UNCERTAIN which is current]). Returns the image's
    longest side where its header gives one (for ``_check_image_sizes``)."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    data = source.get("data")
    if not isinstance(data, str) or not data:
        raise bad_request(f"{where}.image.source.base64: image cannot be empty")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise bad_request("Could not process image") from None
    if len(raw) > MAX_IMAGE_BYTES:
        raise bad_request(f"{where}.image.source.base64: image exceeds 5 MB maximum: {len(raw)} bytes > "
                          f"{MAX_IMAGE_BYTES} bytes")
    actual = image_format(raw)
    if actual is None:
        raise bad_request("Could not process image")
    declared = source.get("media_type")
    if declared != actual:
        raise bad_request(f"{where}.image.source.base64: The image was specified using the {declared} media type, "
                          f"but the image appears to be a {actual} image")
    size = image_size(raw)
    return max(size) if size else None


MAX_IMAGE_SIDE, MANY_IMAGES, MANY_IMAGES_SIDE = 8000, 20, 2000


def _check_image_sizes(images: list[tuple[str, int | None]]) -> None:
    """No side over 8000 pixels, or over 2000 when the request holds more than 20 images: the live
    words [API-2026.md §13, CAP ids 70365336000, 67141985279] name the first image over the limit; the
    SDK 2.15 types the details, the limit and the path of every image over it, a tool_result's
    included (``types/image_dimensions_too_large_error_details.py``)."""
    many = len(images) > MANY_IMAGES
    limit = MANY_IMAGES_SIDE if many else MAX_IMAGE_SIDE
    over = [where for where, side in images if side is not None and side > limit]
    if over:
        raise ApiError(400, f"{over[0]}.image.source.base64.data: At least one of the image dimensions exceed max "
                            f"allowed size{' for many-image requests' if many else ''}: {limit} pixels",
                       details={"error_code": "image_dimensions_too_large", "max_side_length_pixels": limit,
                                "paths": over})


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
        if is_memory_tool(tool):
            check_memory_tool(tool, t, str(request.get("model")))
        if tool.get("defer_loading"):
            if "cache_control" in tool:
                raise bad_request(f"tools.{t}: a deferred tool cannot carry cache_control")
            deferred.add(tool["name"])
        names.append(tool["name"])
    # Every tool deferred: the docs disagree. The tool-search page answers it with a 400; the
    # mid-conversation tool-changes page allows it and says what it costs ("the first by-value
    # definition changes the start of the rendered prompt and costs one full cache miss" [MCSM]). We
    # follow MCSM, the newer and more specific page, and model that miss (``messages._head_label``):
    # a request whose tools are all deferred is accepted (issue 63 item 12; docs/emulator.md).
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


# The live words of the thinking-type refusals, verbatim [TT, 2026-09-02].
ENABLED_REFUSED = ('"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
                   '"output_config.effort" to control thinking behavior.')
DISABLED_REFUSED = ('"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode '
                    'when not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.')
FORCED_REFUSED = "Thinking may not be enabled when tool_choice forces tool use."  # live, API-2026 §13


def check_thinking(request: dict, spec: ModelSpec, betas: set[str]) -> None:
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
    if spec.thinking == "always_on" and kind == "disabled":
        raise bad_request(DISABLED_REFUSED)
    if spec.thinking == "always_on" and kind == "between_tools":
        raise bad_request(f"thinking.type: {kind!r} is not supported on {spec.id}: thinking is always on")
    if kind == "adaptive" and kind in spec.thinking_refused:  # Opus 4.5, Haiku 4.5, Sonnet 4.5: extended only [TT]
        raise bad_request("adaptive thinking is not supported on this model")
    if kind == "enabled" and spec.thinking != "on_request" or (kind == "enabled" and spec.id in (
            "claude-opus-4-7", "claude-opus-4-8")):
        raise bad_request(ENABLED_REFUSED)
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1024:
            # live: github.com/workglow-dev/libs/pull/746 (probed on claude-haiku-4-5)
            raise bad_request("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        max_tokens = request.get("max_tokens")
        interleaved = INTERLEAVED_BETA in betas and spec.interleaved_manual
        if isinstance(max_tokens, int) and budget >= max_tokens and not interleaved:
            # "budget_tokens must be less than max_tokens", except with interleaved thinking, where the
            # budget spans the turn [TH; extended-thinking]; Haiku 4.5 "accepts the header but ignores it"
            # and Opus 4.6's manual mode has no interleaving, so there the rule holds [TH, issue 48 item 5].
            # Live words: github.com/router-for-me/CLIProxyAPI/issues/413
            raise bad_request("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                              "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                              "#max-tokens-and-context-window-size")
        if (request.get("tool_choice") or {}).get("type") in ("any", "tool"):
            raise bad_request(FORCED_REFUSED)  # [TH "Thinking with tool use"]: manual mode only
    # [SDK beta_thinking_config_adaptive_param.py] display: "summarized" | "omitted" | "updates"; "updates"
    # without its beta "is rejected with the same 400 invalid_request_error as an unknown display value" [TH].
    display = thinking.get("display")
    if display not in (None, "summarized", "omitted", "updates") or (
            display == "updates" and DISPLAY_UPDATES_BETA not in betas):
        raise bad_request("thinking.display: Input should be 'summarized', 'omitted' or 'updates'")
    if display is not None and kind == "disabled":  # "display is invalid with thinking.type: disabled" [TH]
        raise bad_request("thinking.display: display is not permitted with thinking.type 'disabled' "
                          "(there is nothing to display)")
    effort = (request.get("output_config") or {}).get("effort")
    cap = spec.effort_without_thinking
    if cap and kind in ("disabled", "between_tools") and effort in EFFORTS[EFFORTS.index(cap) + 1:]:
        # Opus 5: "disabled" only at effort high or below [TT]; Sonnet and Haiku 5.5 alike [PAI]
        raise bad_request(DISABLED_REFUSED)
    if "block_binding" in thinking:
        if BINDING_BETA not in betas:
            raise bad_request("thinking.block_binding: Extra inputs are not permitted")
        bb = thinking["block_binding"]
        if bb is not None and (not isinstance(bb, dict) or bb.get("prefix_mismatch_behavior") not in (None, "error", "drop_block")):
            raise bad_request("thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'")


SAMPLING_WITH_THINKING = {
    # Live words, quoted in github.com/dotCipher/opencode-claude-bridge/pull/1 (Sonnet 4.6, adaptive) and
    # github.com/workglow-dev/libs/pull/746 (Haiku 4.5, enabled); the top_k and top_p wordings are ours.
    "adaptive": "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode",
    "enabled": "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at "
               "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when"
               "-using-extended-thinking",
}


def _check_sampling(request: dict, spec: ModelSpec) -> None:
    """``temperature``, ``top_p``, ``top_k`` under 2023-06-01 (2026-10-21 refuses them by name, ``versions.py``).
    - ``"temperature": null`` is a schema error on every model [API-2026 §13, live probe].
    - 4.7 and later, every 5.x: "non-default temperature, top_p, or top_k values return a 400 error on
      every request" [TH "Sampling parameters"]; probed: temperature 1.0 passes, top_p fails at any
      value, top_k too; the live words are "`temperature` is deprecated for this model." and alike
      [API-2026 §13, CAP ids 66228617006, 59289697875].
    - Older models, only while thinking is on: "temperature and top_k are incompatible with thinking,
      and top_p is allowed at values between 0.95 and 1" [TH]."""
    present = [key for key in ("temperature", "top_p", "top_k") if key in request]
    for key in present:
        if request[key] is None:
            raise bad_request(f"{key}: Input should be a valid number")
    if spec.sampling_deprecated:
        for key in present:
            if key != "temperature" or request[key] != 1:
                raise bad_request(f"`{key}` is deprecated for this model.")
        return
    kind = (request.get("thinking") or {}).get("type")
    if kind not in ("enabled", "adaptive") or spec.thinking != "on_request":
        return
    if "temperature" in present and request["temperature"] != 1:
        raise bad_request(SAMPLING_WITH_THINKING[kind])
    if "top_k" in present:
        raise bad_request("`top_k` is not compatible with thinking")
    if "top_p" in present and not 0.95 <= request["top_p"] <= 1:
        raise bad_request("`top_p` must be between 0.95 and 1 when thinking is enabled")


def _check_params(request: dict, spec: ModelSpec, betas: set[str], version: str) -> None:
    """The plain top-level parameters: their types, so nothing later trips over a wrong one, and the
    values a model refuses."""
    if version == V2023:
        _check_sampling(request, spec)
    # [DR] "us" or "global"; "Requests with inference_geo on legacy models return a 400 error". The
    # words of both 400s are ours.
    geo = request.get("inference_geo")
    if geo is not None:
        if geo not in ("global", "us"):
            raise bad_request(f"inference_geo: Input should be 'global' or 'us', got {geo!r}")
        if spec.known and spec.us_inference is None:
            raise bad_request(f"inference_geo: not supported on {spec.id} (Claude Opus 4.6 and later models only)")
    speed = request.get("speed")
    if speed is not None:  # [FM]; the words are ours
        if speed not in ("standard", "fast"):
            raise bad_request("speed: Input should be 'standard' or 'fast'")
        if speed == "fast" and spec.known and spec.fast is None and not spec.fast_runs_standard:
            raise bad_request(f"speed: fast mode is not supported on {spec.id}")
        if speed == "fast" and spec.fast_beta and FAST_BETA not in betas:
            raise bad_request(f"speed: fast mode on {spec.id} requires the anthropic-beta header {FAST_BETA}")
    tier = request.get("service_tier")
    if tier is not None and tier not in ("auto", "standard_only"):  # [SDK message_create_params.py]
        raise bad_request("service_tier: Input should be 'auto' or 'standard_only'")
    if request.get("max_tokens") == 0:
        # A cache pre-warm (max_tokens 0) is refused with stream (above), manual thinking, a structured
        # output format or a forced tool_choice, and nothing else: the caching page lists those four and
        # tells users to warm "with the same thinking configuration" as the follow-up, so adaptive
        # thinking is accepted [caching, "Pre-warming the cache"; issue 48 item 4]. The words are ours.
        if (request.get("thinking") or {}).get("type") == "enabled":
            raise bad_request("max_tokens: 0 cannot be combined with manual thinking (thinking.type 'enabled')")
        if (request.get("output_config") or {}).get("format") is not None:
            raise bad_request("max_tokens: 0 cannot be combined with output_config.format")
        if (request.get("tool_choice") or {}).get("type") in ("any", "tool"):
            raise bad_request("max_tokens: 0 cannot be combined with a forced tool_choice")
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
    effort = config.get("effort")
    if effort not in (None, *EFFORTS):
        raise bad_request(f"output_config.effort: Input should be one of {', '.join(EFFORTS)}")
    if effort is not None and not spec.efforts:  # live words: github.com/oratis/LISA/pull/218 (Haiku 4.5)
        raise bad_request("This model does not support the effort parameter.")
    if effort is not None and effort not in spec.efforts:  # [EFF] the per-model lists; the words are ours
        raise bad_request(f"output_config.effort: {effort!r} is not supported on {spec.id} "
                          f"(supported: {', '.join(spec.efforts)})")
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
