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
from . import binding, compaction, context_editing
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
                       version=version)
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
                              memo.get("binding"), shared)
        dropped, transformations = _enforce(emu, request, spec, betas, bound, batch)
    render = Render(start=(at_m, at_b) if record else (0, -1), drop=frozenset(dropped), last_user=last_user_index(messages),
                    system_messages=spec.system_messages,
                    tools={t["name"]: t for t in request.get("tools") or [] if isinstance(t, dict) and "name" in t})
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
    prepared.memo = {"validation": checked, "special": special, "seed": seed}
    return prepared


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
        raise bad_request("compaction: the messages end in a tool_use without its tool_result")


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

def content_of(emu: "Emulator", prepared: Prepared, turn: Turn, message_digest: bytes, max_tokens: int
               ) -> tuple[list[dict], int, str]:
    """The answer's blocks (thinking first, where the model thinks), output tokens, stop reason."""
    spec, request = prepared.spec, prepared.request
    blocks = [_complete(b, message_digest, k) for k, b in enumerate(turn.content)]
    own, thought = None, 0  # the answer's thinking block, and its output tokens, shown or not
    if thinks(spec, request):
        bound = prepared.bound  # always made for a thinking model (see prepare)
        prefix = binding.response_prefix(bound, len(bound.chain))
        previous = binding.last_kept(bound, prepared.render.drop)
        # display "omitted": "thinking content is redacted but a signature is returned for multi-turn
        # continuity" [SDK beta_thinking_config_adaptive_param.py]; it is billed all the same.
        shown = "" if (request.get("thinking") or {}).get("display") == "omitted" else turn.thinking or ""
        block = binding.thinking_block(spec, emu.account, prefix, previous, shown)
        emu.remember_block(block, bound)
        blocks = [block, *blocks]
        own, thought = block, estimate_tokens(turn.thinking) if turn.thinking else 0
    stop = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
    out, used = [], 0
    for b in blocks:  # output is cut at max_tokens, mid-text if need be; a cut tool call is dropped
        if b is own:
            n = thought
        elif b["type"] == "thinking":
            n = estimate_tokens(b["thinking"]) if b["thinking"] else 0
        else:
            n = estimate_tokens(render_block(b))
        if used + n > max_tokens:
            room = max_tokens - used
            if b["type"] == "text" and room > 0:
                out.append({**b, "text": b["text"][: room * CHARS_PER_TOKEN]})
            used, stop = max_tokens, "max_tokens"
            break
        out.append(b)
        used += n
    # Even an empty answer reports an output token [API reference: usage]; max_tokens 0 reports none.
    return out, max(used, 1) if max_tokens else 0, stop


def thinks(spec: ModelSpec, request: dict) -> bool:
    """Does the answer begin with a thinking block? Always on some models, by default on others,
    only when asked on older ones [models]."""
    kind = (request.get("thinking") or {}).get("type")
    if spec.thinking == "always_on":
        return True
    if spec.thinking == "default_on":
        return kind not in ("disabled", "between_tools")
    return kind in ("enabled", "adaptive")


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


__all__ = ["Prepared", "prepare", "content_of", "thinks", "usage", "task_budget_remaining", "CLEAR_AT_BETA",
           "ApiError"]
