"""One ``POST /v1/messages`` (or ``/count_tokens``): from the parsed body to the answer.

The order is the API's: validate; find the newest compaction block; run the binding check of
preserved thinking on what was *sent* (error, drop, or let through per model and account); decide
how the request *renders* (cleared system messages, dropped thinking, server-side edits); flatten
and check the window; maybe compact; bill against the cache; ask the policy (behaviour, after all
accounting); build the answer with its usage, ``input_transformations`` and ``context_management``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..provider.models import ModelSpec
from . import binding, compaction, context_editing, documents, structured
from .errors import ApiError, bad_request
from .policies import Turn
from .prompt import Prompt, Render, flatten, render_block
from .system_messages import CLEAR_AT_BETA, is_turn_scoped, last_user_index, tools_in_effect
from .tokens import CHARS_PER_TOKEN, estimate_tokens
from .validate import BINDING_BETA, validate  # noqa: F401  (BINDING_BETA: read by the emulator)
from .versions import V2026

if TYPE_CHECKING:
    from . import Emulator

CONTEXT_BETA = context_editing.BETA


@dataclass
class Prepared:
    """A validated request, checked and rendered, ready to bill and answer."""

    spec: ModelSpec
    request: dict
    prompt: Prompt
    render: Render
    bound: binding.Binding | None
    transformations: list[dict] = field(default_factory=list)
    applied: list[dict] = field(default_factory=list)
    seen: dict = field(default_factory=dict)  # the request as the model reads it
    memo: dict = field(default_factory=dict)  # what a later request repeating these messages may skip


def prepare(emu: "Emulator", request: Any, betas: set[str], spec: ModelSpec, *, counting: bool = False,
            earlier=None, shared: int = 0, version: str = V2026, batch: bool = False) -> Prepared:
    memo = earlier.memo if earlier is not None else {}
    checked = validate(request, spec, betas, needs_max_tokens=not counting, resume=memo.get("validation"), shared=shared,
                       version=version, batch=batch)
    messages = request["messages"]
    if request.get("context_management") is not None:
        if CONTEXT_BETA not in betas and not _only_compaction(request):
            raise bad_request(f"context_management: requires the anthropic-beta header {CONTEXT_BETA}")
        context_editing.validate_edits(request)
    threshold = compaction.threshold_edit(request)
    if threshold is not None:
        if compaction.THRESHOLD_BETA not in betas:
            raise bad_request(f"context_management.edits: compact_20260112 requires anthropic-beta: {compaction.THRESHOLD_BETA}")
        if not spec.compaction:
            raise bad_request(f"context_management.edits: compaction is not supported on {spec.id}")
        if ((request.get("output_config") or {}).get("task_budget") or {}).get("remaining") is not None:
            raise bad_request("output_config.task_budget.remaining: cannot be combined with compact_20260112")
    if not counting and request.get("compaction") is not None:
        _check_on_demand(request, spec, betas)

    # The newest compaction block: content before it is ignored, the binding check starts there.
    special = _special_blocks(messages, memo, shared)
    at_m, at_b, record = compaction.check_blocks([s for s in special if s[2]["type"] == "compaction"], betas)
    if record and record.get("k") == "cod" and \
            ((request.get("output_config") or {}).get("task_budget") or {}).get("remaining") is not None:
        # [COD]: task_budget.remaining is rejected with on-demand compaction "and on later requests that carry the block"
        raise bad_request("output_config.task_budget.remaining: cannot be combined with an on-demand compaction block")
    # the body parser hands out the earlier body's tools and system objects when their bytes are unchanged
    same_head = earlier is not None and "seed" in memo and \
        all(request.get(key) is earlier.request.get(key) for key in ("tools", "system"))
    seed = memo["seed"] if same_head else binding.seed(request)
    start_digest = compaction.start_digest(record, seed)

    bound, dropped, transformations = None, set(), []
    # The binding is needed to check the blocks sent back, and to sign the block the answer will
    # carry: on every thinking model, including one without the check, since the conversation may
    # move to a successor that runs it and "keeps its reasoning" [PT].
    if spec.prefix_check != "none" or thinks(spec, request) or memo.get("thinking") \
            or any(_has_thinking(m) for m in messages[shared:]):
        bound = binding.check(request, spec, emu.account, at_m if record else 0, start_digest,
                              memo.get("binding"), shared, emu.omitted)
        dropped, transformations = _enforce(emu, request, spec, betas, bound, batch)
    found = _documents_from(messages, memo, shared)
    if any(documents.is_file(b) for _, _, _, b in found):
        request = _with_files(emu, request, found, spec)
    documents.check_all_or_none([(m, b["type"], documents.enabled(b)) for m, _, _, b in found
                                 if b["type"] in ("document", "search_result")])
    citations = next((m for m, _, _, b in found if b["type"] == "document" and documents.enabled(b)), None)
    if citations is not None and structured.schema_of(request) is not None:
        # [SO] structured outputs are "not compatible" with citations; the words are ours
        raise bad_request(f"messages.{citations}: citations cannot be enabled together with output_config.format")
    render = Render(start=(at_m, at_b) if record else (0, -1), drop=frozenset(dropped), last_user=last_user_index(messages),
                    system_messages=spec.system_messages,
                    tools={t["name"]: t for t in request.get("tools") or [] if isinstance(t, dict) and "name" in t},
                    params=cache_params(request, spec), head=_head_label(request, special, spec),
                    citations=citations is not None)
    if not spec.keeps_prior_thinking:
        render.prior_thinking_before = _last_new_user_turn(messages)

    edited, applied = request, []
    if any(e.get("type") != compaction.EDIT for e in (request.get("context_management") or {}).get("edits") or []):
        edited, applied = context_editing.apply_edits(request, lambda r: flatten(r, render=render).total, spec)
    reuse = None
    if edited is request and earlier is not None and earlier.prompt is not None and memo.get("start") == render.start:
        # Messages up to the earlier request's last user message render the same for any request that
        # repeats them; after it a turn-scoped message may now be cleared. On models that do not
        # count earlier turns' thinking, a new user turn also hides the thinking before it.
        k = min(shared, memo.get("stable", 0))
        if not spec.keeps_prior_thinking and memo.get("prior") != render.prior_thinking_before:
            k = min(k, max(0, memo.get("prior", 0)))
        reuse = (earlier.prompt, k)
    prompt = flatten(edited, reuse, render)
    if spec.context_window is not None and prompt.total > spec.context_window:
        raise bad_request(f"prompt is too long: {prompt.total} tokens > {spec.context_window} maximum")
    prepared = Prepared(spec, request, prompt, render, bound, transformations, applied)
    changes = [s for s in special if s[2]["type"] != "compaction"]
    prepared.seen = _seen(edited, render, dropped, changes, memo if edited is request else {}, shared)
    prepared.memo = {"validation": checked, "special": special, "seed": seed, "documents": found}
    return prepared


def cache_params(request: dict, spec: ModelSpec) -> dict:
    """The parameters that shape how the messages are read, resolved: thinking by its type (and
    budget), the effort the model uses when none is sent, ``display`` and ``block_binding`` left out.
    "Setting a parameter explicitly to its default value is equivalent to omitting it" ([TH] "Thinking
    and prompt caching"; "Setting effort explicitly to the model's default is equivalent to omitting
    it and does not break the cache" [TSC]); ``display`` does not change the prompt (the signature "is
    identical whichever display value you set" [TH]), nor does ``block_binding`` unless a block is
    dropped, which changes the rendered messages anyway [PT]."""
    thinking = request.get("thinking") or {}
    kind = thinking.get("type") or ("disabled" if spec.thinking == "on_request" else "adaptive")
    resolved = {"type": kind, **({"budget_tokens": thinking.get("budget_tokens")} if kind == "enabled" else {})}
    config = dict(request.get("output_config") or {})
    if spec.efforts and spec.default_effort:
        config["effort"] = config.get("effort") or spec.default_effort
    return {"tool_choice": request.get("tool_choice"), "thinking": resolved, "output_config": config}


def speed(spec: ModelSpec, request: dict) -> str | None:
    """The speed a request runs at (None when it sets none): "fast" on Opus 4.6, which left fast mode,
    runs at standard speed and rates and reports usage.speed "standard" [FM; issue 48 item 3]."""
    asked = request.get("speed")
    return "standard" if asked == "fast" and getattr(spec, "fast_runs_standard", False) else asked


def _head_label(request: dict, special: list, spec: ModelSpec) -> str:
    """What changes the start of the rendered prompt besides tools and system:
    - the speed it runs at: requests at different speeds "do not share cached prefixes" [FM]. The
      caching page's table marks the tools cache kept when ``speed`` changes [caching, "What
      invalidates the cache"]; the fast-mode page is the more specific page on speed, so we follow it:
      a speed change misses from the first tool (issue 48 item 8);
    - every tool deferred (a tool search tool counts as not deferred) while a tool is defined by value
      in the messages: "the first by-value definition changes the start of the rendered prompt and
      costs one full cache miss" [MCSM, "Keep at least one non-deferred tool in tools"]."""
    label = "|fast" if speed(spec, request) == "fast" else ""
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    if not any(not t.get("defer_loading") or str(t.get("type", "")).startswith("tool_search") for t in tools) and any(
            b[2].get("type") == "tool_addition" and (b[2].get("tool") or {}).get("type") == "tool_definition"
            for b in special):
        label += "|tools-defined-inline"
    return label


def _documents_from(messages: list, memo: dict, shared: int) -> list[tuple[int, int, int, dict]]:
    """Every document, search result and file-sourced image (``documents.scan``): only messages an
    earlier request did not have are scanned (the rest comes from ``memo``). A document whose citations
    are enabled turns citations on, which "modifies the system prompt" [caching, "What invalidates the cache"]."""
    if "documents" not in memo:
        return documents.scan(messages, 0)
    return [d for d in memo["documents"] if d[0] < shared] + documents.scan(messages, shared)


def _with_files(emu: "Emulator", request: dict, found: list, spec: ModelSpec) -> dict:
    """A copy of ``request`` whose ``file`` sources hold the files' content (files.py), checked as if
    sent inline: it is counted as its content [FILES "Usage and billing"]."""
    messages = list(request["messages"])
    for m, i, k, block in found:
        if not documents.is_file(block):
            continue
        where = f"messages.{m}.content.{i}" + (f".content.{k}" if k >= 0 else "")
        resolved = emu.files.resolved(block, where)
        if resolved["type"] == "document" and resolved["source"]["type"] == "base64":
            documents.check_pdf(resolved["source"]["data"], where, spec.context_window)
        content = list(messages[m]["content"])
        if k < 0:
            content[i] = resolved
        else:
            inner = list(content[i]["content"])
            inner[k] = resolved
            content[i] = {**content[i], "content": inner}
        messages[m] = {**messages[m], "content": content}
    return {**request, "messages": messages}


def _special_blocks(messages: list, memo: dict, shared: int) -> list[tuple[int, int, dict]]:
    """Compaction blocks and tool changes, in order: only messages an earlier request did not have
    are scanned (the rest comes from ``memo``)."""
    found = [s for s in memo.get("special", []) if s[0] < shared] if "special" in memo else []
    for i in range(shared if "special" in memo else 0, len(messages)):
        content = messages[i].get("content")
        if isinstance(content, list):
            found += [(i, j, b) for j, b in enumerate(content)
                      if isinstance(b, dict) and b.get("type") in ("compaction", "tool_addition", "tool_removal")]
    return found


def _only_compaction(request: dict) -> bool:
    edits = (request.get("context_management") or {}).get("edits") or []
    return bool(edits) and all(isinstance(e, dict) and e.get("type") == compaction.EDIT for e in edits)


def _check_on_demand(request: dict, spec: ModelSpec, betas: set[str]) -> None:
    config = request["compaction"]
    if compaction.ON_DEMAND_BETA not in betas:
        raise bad_request(f"compaction: requires anthropic-beta: {compaction.ON_DEMAND_BETA}")
    if not isinstance(config, dict) or config.get("type") != "summarize":
        raise bad_request("compaction.type: must be 'summarize'")
    if not isinstance(config.get("instructions"), (str, type(None))):
        raise bad_request("compaction.instructions: must be a string")
    if not spec.compaction:
        raise bad_request(f"compaction: on-demand compaction is not supported on {spec.id}")
    if request.get("context_management") is not None:
        raise bad_request("compaction: cannot be combined with context_management")
    if request.get("stop_sequences"):
        raise bad_request("compaction: cannot be combined with stop_sequences")
    if (request.get("output_config") or {}).get("format") is not None:
        raise bad_request("compaction: cannot be combined with output_config.format")
    if (request.get("tool_choice") or {}).get("type") in ("any", "tool"):
        raise bad_request("compaction: cannot be combined with a forced tool_choice")
    if ((request.get("output_config") or {}).get("task_budget") or {}).get("remaining") is not None:
        raise bad_request("output_config.task_budget.remaining: cannot be combined with on-demand compaction")
    last = request["messages"][-1]
    if last.get("role") == "assistant" and any(isinstance(b, dict) and b.get("type") == "tool_use"
                                               for b in last.get("content") or [] if isinstance(last.get("content"), list)):
        # [COD]; the code is the SDK 2.15's for it: "The compaction request ends on an `assistant` turn that
        # is not finished" (types/compaction_incomplete_turn_error_details.py)
        raise bad_request("compaction: the messages end in a tool_use without its tool_result",
                          "compaction_incomplete_turn")


def _has_thinking(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in binding.THINKING_TYPES
                                             for b in content)


def _last_new_user_turn(messages: list) -> int:
    """The last user message that starts a new turn (it carries more than tool results): thinking
    before it belongs to earlier turns, which models before Opus 4.5 do not count [context-windows].
    Where "earlier" ends when a tool-result message also carries text is our reading: such a
    message continues the tool loop."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str) or not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
                return i
    return -1


def memo_of(prepared: Prepared) -> dict:
    """What a later request that repeats this one's messages may reuse (see ``prepare``)."""
    r = prepared.render
    return {**prepared.memo, "binding": prepared.bound, "stable": r.last_user + 1, "prior": r.prior_thinking_before,
            "start": r.start, "thinking": prepared.bound is not None,
            "seen": None if prepared.applied else prepared.seen.pop("_memo", None)}


def _enforce(emu: "Emulator", request: dict, spec: ModelSpec, betas: set[str],
             bound: binding.Binding, batch: bool = False) -> tuple[set[tuple[int, int]], list[dict]]:
    """Apply the verdicts: a 400, dropped blocks, or blocks let through, as the model, the account
    and the request decide [PT]."""
    behaviour = ((request.get("thinking") or {}).get("block_binding") or {}).get("prefix_mismatch_behavior")
    enforced = behaviour is not None or spec.enforces_prefix_check(emu.account_created)
    if batch and behaviour is None:  # a batch request that leaves it unset never fails: the blocks are dropped [PT]
        behaviour = "drop_block"
    report = BINDING_BETA in betas
    dropped, out = set(), []
    for v in bound.verdicts:
        if v.tampered:
            raise bad_request(f"{v.path}: Invalid `signature` in `thinking` block")
        if v.reason is None:
            continue
        if v.reason == "model_binding_mismatch" or spec.prefix_check == "none":
            if v.reason == "model_binding_mismatch":  # always dropped silently, whatever was asked [PT]
                dropped.add((v.message, v.block))
                out.append({"type": "thinking_dropped", "path": v.path, "reason": v.reason})
            continue
        if enforced and behaviour != "drop_block":
            raise bad_request(binding.error_message(v, report, emu.changed_since(v.ident, bound)))
        if enforced:
            dropped.add((v.message, v.block))
            out.append({"type": "thinking_dropped", "path": v.path, "reason": v.reason})
        elif v.alone:  # record-only: "a lower bound on what enforcement would remove" [PT], so not
            # the later blocks that fail only because an earlier one did
            out.append({"type": "thinking_mismatch_allowed", "path": v.path, "reason": "prefix_binding_mismatch"})
    return dropped, out


def _seen(request: dict, render: Render, dropped: set, changes: list, memo: dict, shared: int) -> dict:
    """The request as the model reads it: what renders, in order; tools in effect at the end. The
    messages an earlier request already rendered the same way are taken from it."""
    key = (render.start, render.prior_thinking_before, frozenset(dropped))
    cached = memo.get("seen")
    first, pairs = 0, []
    if cached and cached["key"] == key:
        first = min(shared, cached["upto"])
        pairs = [p for p in cached["pairs"] if p[0] < first]
    for m in range(first, len(request["messages"])):
        message = request["messages"][m]
        if m < render.start[0] or (message.get("role") == "system" and render.cleared(m, message)):
            continue
        content = message.get("content")
        if isinstance(content, list) and (m == render.start[0] and render.start[1] >= 0 or dropped
                                          or render.prior_thinking_before > 0):
            skip = render.start[1] if m == render.start[0] else 0
            content = [b for i, b in enumerate(content) if i >= skip and render.shows(m, i, b)]
            message = {**message, "content": content}
        pairs.append((m, message))
    memo_out = {"key": key, "upto": render.last_user + 1, "pairs": pairs}
    seen = {**request, "messages": [message for _, message in pairs], "tools": tools_in_effect(request, changes)}
    seen["_memo"] = memo_out
    budget = (request.get("output_config") or {}).get("task_budget")
    if budget:
        seen["task_budget_remaining"] = task_budget_remaining(request, budget)
    return seen


def task_budget_remaining(request: dict, budget: dict) -> int:
    """What the budget-countdown marker tells the model [TB]: the budget minus what it has seen in
    this agentic loop (tool results and its own output since the last user turn that was not only
    tool results). History resent from before the loop is not counted again."""
    start = budget.get("remaining", budget["total"])
    messages = request["messages"]
    loop_from = _last_new_user_turn(messages) + 1
    spent = 0
    for message in messages[loop_from:]:
        if message.get("role") in ("assistant", "user") and isinstance(message.get("content"), list):
            spent += sum(estimate_tokens(render_block(b, message["role"])) for b in message["content"])
    return max(0, start - spent)


# -- the answer ---------------------------------------------------------------------------------

@dataclass
class Answer:
    """What the model wrote: the blocks, the output tokens billed, why it stopped."""

    content: list[dict] = field(default_factory=list)
    output_tokens: int = 0
    stop_reason: str = "end_turn"
    stop_sequence: str | None = None
    thinking_tokens: int | None = None  # the reasoning's share of output_tokens, when the model thought


def content_of(emu: "Emulator", prepared: Prepared, turn: Turn, message_digest: bytes, max_tokens: int) -> Answer:
    """The answer's blocks (thinking first, where the model thinks), output tokens, stop reason."""
    spec, request = prepared.spec, prepared.request
    if max_tokens == 0:  # a cache pre-warm: the prompt is processed, nothing is generated
        return Answer([], 0, "max_tokens")
    blocks = [_complete(b, message_digest, k) for k, b in enumerate(turn.content)]
    own, thought = None, 0  # the answer's thinking block, and its output tokens, shown or not
    if thinks(spec, request):
        bound = prepared.bound  # always made for a thinking model (see prepare)
        prefix = binding.response_prefix(bound, len(bound.chain))
        previous = binding.last_kept(bound, prepared.render.drop)
        # Billed in full whatever is shown: "You're still charged for the full thinking tokens" [TH].
        thought = estimate_tokens(turn.thinking, spec.tokenizer) if turn.thinking else 0
        shown = turn.thinking or "" if display(spec, request) == "summarized" else ""
        own = binding.thinking_block(spec, emu.account, prefix, previous, turn.thinking or "", shown, thought,
                                     redacted=turn.redacted)
        emu.remember_block(own, bound)
        if not shown:  # "Any text you place in the thinking field of a round-tripped omitted block is ignored" [TH]
            emu.omitted[binding.read(binding.signature_of(own))["i"]] = None
            while len(emu.omitted) > 4096:
                emu.omitted.popitem(last=False)
        blocks = [own, *blocks]
    stop = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
    blocks, matched = _stop_sequence(blocks, request.get("stop_sequences") or [])
    if matched is not None:
        stop = "stop_sequence"
    # [TH "Thinking and the context window"]: on 4.5 models and newer a request whose input plus
    # max_tokens exceeds the window is accepted; generation that reaches the window stops with
    # "model_context_window_exceeded".
    limit, cut = max_tokens, "max_tokens"
    room = spec.context_window - prepared.prompt.total if spec.context_window is not None else None
    if room is not None and room < max_tokens:
        limit, cut = max(room, 0), "model_context_window_exceeded"
    out, used = [], 0
    for b in blocks:  # output is cut at the limit, mid-text if need be; a cut tool call is dropped
        if b is own:
            n = thought
        elif b["type"] == "thinking":
            n = estimate_tokens(b["thinking"], spec.tokenizer) if b["thinking"] else 0
        else:
            # output is text in the same tokenizer [TOK]; cited_text "does not count toward output tokens" [CIT]
            n = estimate_tokens(render_block(documents.uncited(b) if b.get("citations") else b), spec.tokenizer)
        if used + n > limit:
            room_left = limit - used
            if b["type"] == "text" and room_left > 0:
                out.append({**b, "text": b["text"][: int(room_left * CHARS_PER_TOKEN / spec.tokenizer)]})
            used, stop, matched = limit, cut, None
            break
        out.append(b)
        used += n
    # Even an empty answer reports an output token [API reference: usage].
    return Answer(out, max(used, 1), stop, matched, min(thought, used) if own is not None else None)


def _stop_sequence(blocks: list[dict], sequences: list[str]) -> tuple[list[dict], str | None]:
    """Cut the answer where the first stop sequence appears in its text: the sequence itself is not
    returned, nothing after it is generated, and the response names it ([API reference]
    ``stop_sequences``: "the response stop_reason value will be "stop_sequence" and the response
    stop_sequence value will contain the matched stop sequence")."""
    if not sequences:
        return blocks, None
    for k, b in enumerate(blocks):
        if b.get("type") != "text":
            continue
        found = [(b["text"].find(seq), seq) for seq in sequences if seq and seq in b["text"]]
        if found:
            at, seq = min(found)
            kept = [{**b, "text": b["text"][:at]}] if at else []
            return blocks[:k] + kept, seq
    return blocks, None


def display(spec: ModelSpec, request: dict) -> str:
    """What a thinking block shows: the request's ``display``, or the model's default [TH]."""
    return (request.get("thinking") or {}).get("display") or spec.thinking_display


def thinks(spec: ModelSpec, request: dict) -> bool:
    """Does the answer begin with a thinking block? Always on some models, by default on others,
    only when asked on older ones [models]."""
    kind = (request.get("thinking") or {}).get("type")
    if spec.thinking == "always_on":
        return True
    if spec.thinking == "default_on":
        return kind not in ("disabled", "between_tools")
    return kind in ("enabled", "adaptive") and not _switched_on_mid_turn(request["messages"])


def _switched_on_mid_turn(messages: list) -> bool:
    """[TH "Thinking with tool use"]: "If you toggle thinking mid-turn (for example, between sending a
    tool call and returning its result), the API doesn't error. Instead, it silently disables thinking
    for that request." A turn is mid-way when the request ends in tool results; it began without
    thinking when its first assistant message has none."""
    start = _last_new_user_turn(messages)
    if start < 0 or last_user_index(messages) <= start:
        return False
    first = next((m for m in messages[start + 1:] if m.get("role") == "assistant"), None)
    return first is not None and not _has_thinking(first)


def _complete(block: dict, prompt_digest: bytes, index: int) -> dict:
    """Give a tool_use an id if the policy did not: derived from the prompt, so it is unique
    within a conversation and the same when a resumed run repeats a request."""
    if block.get("type") == "tool_use" and not block.get("id"):
        return {**block, "id": "toolu_" + hashlib.blake2b(prompt_digest + index.to_bytes(4, "big"), digest_size=12).hexdigest()}
    return block


def usage(outcome, output_tokens: int) -> dict:
    return {
        "input_tokens": outcome.uncached,
        "cache_creation_input_tokens": outcome.written,
        "cache_read_input_tokens": outcome.read,
        "cache_creation": {"ephemeral_5m_input_tokens": outcome.written_5m, "ephemeral_1h_input_tokens": outcome.written_1h},
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def usage_details(spec: ModelSpec, request: dict, answer: Answer) -> dict:
    """The usage fields that describe the answer rather than the cache:
    - ``output_tokens_details.thinking_tokens``, "the raw reasoning the model generated" [TSC
      #pricing], when the model thought;
    - ``inference_geo`` where the request may set it ("global" when left out) [DR];
    - ``speed`` when the request set it [FM]. Whether the API reports it on a request that leaves
      ``speed`` out we did not find [UNCERTAIN]: we leave it out there."""
    out: dict[str, Any] = {}
    if answer.thinking_tokens is not None:
        out["output_tokens_details"] = {"thinking_tokens": answer.thinking_tokens}
    if spec.us_inference is not None:
        out["inference_geo"] = request.get("inference_geo") or "global"
    if request.get("speed") is not None:
        out["speed"] = speed(spec, request)
    return out


def account_time(value: Any) -> datetime:
    from datetime import date, time, timezone
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    raise TypeError("account_created must be a date or a datetime")


def turn_scoped_rendered(request: dict) -> list[str]:
    """The text of the turn-scoped system messages this request renders (for tests and views)."""
    last_user = last_user_index(request["messages"])
    return [b.get("text", "") for m, msg in enumerate(request["messages"]) if is_turn_scoped(msg) and m > last_user
            for b in (msg["content"] if isinstance(msg["content"], list) else [{"text": msg["content"]}])]


__all__ = ["Prepared", "prepare", "Answer", "content_of", "thinks", "display", "usage", "usage_details", "task_budget_remaining", "CLEAR_AT_BETA",
           "ApiError"]
