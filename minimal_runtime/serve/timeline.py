"""A run as ``serve --ui``'s page shows it, built from the records ``--log`` writes.

Each ``POST /v1/messages`` record becomes a ``Call``: its figures, the conversation it belongs to
(grouped as the per-call report groups calls: ``report.Conversations``), the earlier call it
continues, the diagnosis of a miss (``report.diagnose``) and the prefix check's verdict. On demand a
call is drawn as its prompt in cache regions (``view.call.placed``, what a notebook's ``CallView``
draws), and two calls are compared: where the later one stops being an append-only extension of the
earlier one (``first_edit``), down to the first block that differs.

A Message Batch is not a call: once its results are downloaded (``GET .../results``) it is a
``Batch``, one entry with its results' count and cost at the batch price, in the run's totals once
however often they are downloaded, as the report counts it (both read them with ``report.BatchResults``).

A request the HTTP server refused itself (``refused_by_server``: a 400, 403, 408 or 413 answered
before its body was read) is not a call either: it is listed apart, as what arrived and why it was
refused.

The records come from a live ``serve`` (``Front`` hands each over as it logs it) or from a log read
back (``python -m minimal_runtime view calls.jsonl``): one page for both.

A message thread's continue (API-2026 §11) sends only the new messages; the conversation it stands
for is rebuilt from the call whose answer it continues (that call's conversation, its answer, then
the new messages; ``system`` and ``tools`` from the create), and the rebuilt part is drawn as *held*.
Messages are kept once however many calls resend them (a long run resends its history every call).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core.context import unmarked
from ..emulator.prompt import render_block
from ..emulator.tokens import block_tokens
from ..provider.cost import CallRecord
from ..provider.models import ModelSpec, lookup
from ..view.call import placed
from .exchange import request_flaw
from .report import ERROR_SHOWN, BatchResults, Conversations, answer_of, diagnose, holds, is_results, sdk_retry, thread_note
from .report import edit_if_wellformed, price_name, common_prefix

KEPT_BYTES = 32 * 2**20  # the messages and answers (their JSON) the page keeps of calls
FORGOTTEN: list = []  # the messages of a call whose prompt the page no longer keeps (past KEPT_BYTES)
PREVIEW = 160  # characters of a block shown in its row
TEXT = 4000  # characters of a block sent when a call is opened
SHOWN_HEAD, SHOWN_TAIL, SHOWN_NEAR = 50, 250, 25  # blocks a call's detail sends, past 300: the start, the end, a difference


@dataclass
class Call:
    n: int
    at: float  # seconds since the epoch
    model: str
    status: int
    request: dict  # the conversation the call stands for (a continue's rebuilt), messages interned
    sent: int  # messages the request itself carried (fewer than the conversation's on a thread continue)
    held: int | None  # leading messages a thread held: 0 none, None a part this run's record does not have
    record: CallRecord | None  # None: refused
    response: dict | None
    conversation: int
    previous: int | None  # the call it continues
    miss: str | None
    edit: str | None  # refused: where it edits the call it continues
    prefix: str | None
    error: str | None
    thread: str | None  # "create", "create (replays N messages of an earlier call)", "continue"
    predicted: dict | None = None  # proxy mode: the usage the emulator's accounting predicted
    attendee: str | None = None  # who sent it (``room.py``): its conversations are its own

    def summary(self) -> dict:
        r = self.record
        cost = r.cost if r is not None else None
        return {"n": self.n, "at": self.at, "model": self.model, "status": self.status,
                "conversation": self.conversation, "previous": self.previous,
                "input": r.input_tokens if r else 0, "write": r.cache_creation_input_tokens if r else 0,
                "read": r.cache_read_input_tokens if r else 0, "output": r.output_tokens if r else 0,
                "share": r.cache_read_share if r else 0.0, "cost": None if cost is None or math.isnan(cost) else cost,
                "plain": None if r is None or math.isnan(r.cost_without_cache) else r.cost_without_cache,
                "miss": self.miss, "edit": self.edit, "prefix": self.prefix, "error": self.error,
                "thread": self.thread, "held": self.held, "predicted": self.predicted, "attendee": self.attendee}


@dataclass
class Batch:
    """A Message Batch whose results were downloaded, first by the exchange numbered ``n``, at ``at``."""

    n: int
    at: float
    results: BatchResults

    def summary(self) -> dict:
        records = self.results.records
        cost, plain = sum(r.cost for r in records), sum(r.cost_without_cache for r in records)
        return {"id": self.results.batch, "n": self.n, "at": self.at, "results": self.results.count,
                "tally": self.results.tally, "succeeded": len(records),
                **{key: sum(getattr(r, name) for r in records) for key, name in (
                    ("input", "input_tokens"), ("write", "cache_creation_input_tokens"),
                    ("read", "cache_read_input_tokens"), ("output", "output_tokens"))},
                "cost": None if math.isnan(cost) else cost, "plain": None if math.isnan(plain) else plain}


class Timeline:
    """Every call of a run, in order; thread-safe (``serve`` adds from its worker threads)."""

    def __init__(self, source: str, live: bool):
        self.source, self.live = source, live
        self.calls: list[Call] = []
        self.batches: dict[str, Batch] = {}  # batch id -> the batch, in the order its results were first read
        self.skipped: list[str] = []  # what was not a call (a log line that is not JSON, ...), said on the page
        self.refusals: list[dict] = []  # requests the HTTP server refused before serve's front saw them
        self._conversations = Conversations()
        self._ids: dict[bytes, int] = {}  # conversation key -> the number of its latest conversation
        self._in: dict[int, int] = {}  # call number -> its conversation's
        self._totals: dict[int, dict] = {}  # conversation -> its totals, in the order first seen
        self._labels: dict[int, str] = {}
        self._answered: dict[str, Call] = {}  # response id -> the call, for a thread continue
        self._messages: dict[int, dict[bytes, tuple[Any, int]]] = {}  # each distinct message once a conversation
        self.kept_bytes = 0  # their JSON bytes
        self._of: dict[int, list[Call]] = {}  # conversation -> its calls whose prompts are kept
        self._used: dict[int, bytes] = {}  # conversation -> its key, the least recently used first
        self._answer_bytes: dict[int, int] = {}  # call -> the JSON bytes of its answer, while it is kept
        self._lock = threading.Lock()

    def add(self, record: dict) -> Call | None:
        """One ``--log`` record (``Exchange.record``): a Messages call, a batch's results (kept as
        its ``Batch``, the first time they are read), or a request the server refused; any other
        record is left out."""
        path = str(record.get("path"))
        if record.get("refused_by_server"):
            with self._lock:
                self.refusals.append({"n": int(record.get("n") or 0), "at": _seconds(record.get("time")),
                                      "method": str(record.get("method")), "path": path,
                                      "status": int(record.get("status") or 0), "error": _error(record)})
            return None
        if record.get("method") == "GET" and is_results(path) and int(record.get("status") or 0) < 400:
            results = BatchResults.read(path, record.get("response_text"), record.get("response"))
            with self._lock:
                if results.batch not in self.batches:
                    self.batches[results.batch] = Batch(int(record.get("n") or 0), _seconds(record.get("time")), results)
            return None
        if record.get("method") != "POST" or path != "/v1/messages":
            return None
        request = record.get("request")
        if not isinstance(request, dict) or request_flaw(request):  # a refused request the page cannot draw
            request = {}
        with self._lock:
            return self._add(record, request)

    def _add(self, record: dict, sent: dict) -> Call:
        attendee = record.get("attendee") if isinstance(record.get("attendee"), str) else None
        conversation, held = self._rebuilt(sent, attendee)
        previous = self._conversations.previous(conversation, attendee)  # never another attendee's call
        try:
            key = Conversations.key(conversation, attendee)
        except (TypeError, ValueError):
            key = b""
        number = self._number(key, previous, conversation, record)
        # Kept once: the messages it shares with the call it continues are that call's (compared, not
        # serialized again: a long run would otherwise serialize its whole history on every call)
        messages = [m for m in conversation.get("messages") or [] if isinstance(m, dict)]
        kept = previous.request["messages"] if previous is not None else []
        shared = common_prefix(kept, messages, exact=True)
        conversation = {**conversation, "messages": kept[:shared] + [self._intern(m, number) for m in messages[shared:]]}
        for name in ("system", "tools"):  # sent again by every call: kept once too
            if name in conversation:
                conversation[name] = self._intern(conversation[name], number)
        response = record.get("response") if isinstance(record.get("response"), dict) else None
        status = int(record.get("status") or 0)
        usage = record.get("usage") if isinstance(record.get("usage"), dict) else None
        model = record.get("model") or sent.get("model") or "?"
        at = _seconds(record.get("time"))
        error, miss, edit, call_record = None, None, None, None
        if status >= 400 or usage is None:
            error = _error(record)
            edit = edit_if_wellformed(previous.request, conversation) if previous is not None else None
        else:
            call_record = CallRecord.from_usage(usage, price_name(model))
            miss = diagnose(previous, conversation, call_record, response, at)
        thread = sent.get("thread").get("type") if isinstance(sent.get("thread"), dict) else None
        if thread is not None:  # a create that replays a lost thread says so, as serve's line does
            thread = thread_note(thread, conversation, previous)
        call = Call(int(record.get("n") or len(self.calls) + 1), at, model, status, conversation,
                    len(sent.get("messages") or []), held, call_record, response, number,
                    previous.n if previous is not None else None, miss, edit, record.get("prefix"), error, thread,
                    _predicted(record.get("predicted_usage")), attendee)
        self.calls.append(call)
        self._count(call)
        self._in[call.n] = number
        self._of.setdefault(number, []).append(call)
        if response is not None:  # an answer is kept too (behind --upstream it may be long)
            self._answer_bytes[call.n] = len(json.dumps(response, default=str))
            self.kept_bytes += self._answer_bytes[call.n]
        self._used.pop(number, None)
        self._used[number] = key
        if call_record is not None:
            self._conversations.remember(conversation, call_record, at, call.n, answer_of(response), attendee=attendee)
            if response is not None and isinstance(response.get("id"), str):
                self._answered[response["id"]] = call
        self._bound(call)
        return call

    def _number(self, key: bytes, previous, request: dict, record: dict) -> int:
        """The conversation a call is in: the one of the call it continues. A call that only repeats
        an earlier one whole (the first request of a second run of the same script is the first run's,
        byte for byte) starts a new one, unless an SDK resent it (``x-stainless-retry-count``)."""
        if previous is not None and previous.n in self._in and not (
                holds(previous.request, request) and not sdk_retry(record.get("request_headers"))):
            return self._in[previous.n]
        if previous is None and key in self._ids:  # none kept to continue (a refused first call): its key's
            return self._ids[key]
        number = self._ids[key] = len(self._labels) + 1
        self._labels[number] = _label(request)
        return number

    def _bound(self, newest: Call) -> None:
        """Past ``KEPT_BYTES`` of messages the page forgets the prompts of the conversations used
        least recently (their calls' figures stay: only the blocks of an opened call are gone); a
        conversation past it by itself keeps its latest call's prompt alone."""
        while self.kept_bytes > KEPT_BYTES:
            oldest = next((c for c in self._used if c != newest.conversation), None)
            if oldest is None:
                return self._trim(newest)
            self._forget(oldest, self._of.pop(oldest, []))
            self._conversations.forget_key(self._used.pop(oldest))

    def _forget(self, number: int, calls: list, keep: Call | None = None) -> None:
        for call in calls:
            if call is not keep and call.request.get("messages") is not FORGOTTEN:
                call.request = {"model": call.request.get("model"), "messages": FORGOTTEN}
                if call.response is not None:
                    self._answered.pop(call.response.get("id"), None)
                    call.response = {k: call.response[k] for k in ("id", "model", "stop_reason", "usage")
                                     if k in call.response}
                    self.kept_bytes -= self._answer_bytes.pop(call.n, 0)
        table = self._messages.pop(number, {})
        if keep is not None:  # what the kept call's prompt is made of stays
            made_of = {id(v) for v in [*(keep.request.get("messages") or []), keep.request.get("system"),
                                        keep.request.get("tools")]}
            self._messages[number] = {d: e for d, e in table.items() if id(e[0]) in made_of}
        self.kept_bytes -= sum(size for _, size in table.values()) - \
            sum(size for _, size in self._messages.get(number, {}).values())

    def _trim(self, newest: Call) -> None:
        number = newest.conversation
        self._forget(number, self._of.get(number, []), keep=newest)
        self._of[number] = [newest]
        self._conversations.forget_key(self._used[number], keep=newest.n)

    def _rebuilt(self, sent: dict, attendee: str | None = None) -> tuple[dict, int | None]:
        """The conversation a request stands for, and how many of its messages a thread held."""
        thread = sent.get("thread")
        if not isinstance(thread, dict) or thread.get("type") != "continue":
            return sent, 0
        before = self._answered.get(thread.get("previous_message_id"))
        if before is None or before.attendee != attendee:  # a thread answers only its creator's key
            return sent, None  # the call it continues is not in this run's record
        answer = {"role": "assistant", "content": (before.response or {}).get("content") or []}
        # held without the breakpoints of the turns that sent them, as the emulator holds them
        # (emulator/threads.py: an inference from the SDK's replay, API-2026 §11.5)
        held = [*unmarked(before.request.get("messages", [])), answer]
        rebuilt = {k: v for k, v in sent.items() if k not in ("system", "tools")}
        for key in ("system", "tools"):  # a continue leaves them out: the thread keeps the create's
            if key in before.request:
                rebuilt[key] = before.request[key]
        rebuilt["messages"] = held + list(sent.get("messages") or [])
        return rebuilt, len(held)

    def _intern(self, value: Any, conversation: int) -> Any:
        """``value`` kept once in its conversation (each keeps its own: a conversation forgotten frees
        exactly what it kept), its bytes counted."""
        try:
            exact = json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError, RecursionError):
            return value
        table = self._messages.setdefault(conversation, {})
        digest = hashlib.blake2b(exact, digest_size=16).digest()  # cache_control too
        if digest not in table:
            table[digest] = (value, len(exact))
            self.kept_bytes += len(exact)
        return table[digest][0]

    # -- what the page asks for ------------------------------------------------------------------

    def since(self, after: int = 0) -> dict:
        """What changed after call ``after``: the calls and the server's refusals numbered after it,
        the totals of the conversations those calls are in (every conversation's when ``after`` is 0),
        and every batch. The page polls this once a second: what it sends grows with what is new,
        not with the run."""
        with self._lock:
            fresh = [c for c in self.calls if c.n > after]
            touched = self._totals if not after else {c.conversation: self._totals[c.conversation] for c in fresh}
            return {"source": self.source, "live": self.live, "skipped": self.skipped,
                    "conversations": [dict(e) for e in touched.values()], "calls": [c.summary() for c in fresh],
                    "batches": [b.summary() for b in self.batches.values()],
                    "refusals": [r for r in self.refusals if r["n"] > after]}

    def _count(self, c: Call) -> None:
        """The call in its conversation's totals (kept as calls come: a poll does not add them up again)."""
        entry = self._totals.setdefault(c.conversation, {
            "id": c.conversation, "label": self._labels.get(c.conversation, ""), "attendee": c.attendee,
            "calls": 0, "refused": 0,
            "misses": 0, "cost": 0.0, "prompt": 0, "read": 0})
        entry["calls"] += 1
        entry["refused"] += c.record is None
        entry["misses"] += c.miss is not None
        if c.record is not None:
            entry["prompt"] += c.record.prompt_tokens
            entry["read"] += c.record.cache_read_input_tokens
            entry["cost"] += 0.0 if math.isnan(c.record.cost) else c.record.cost

    def call(self, n: int) -> Call | None:
        with self._lock:
            return next((c for c in self.calls if c.n == n), None)

    def detail(self, n: int, around: str | None = None) -> dict | None:
        """A call opened: its summary, and its prompt block by block in cache regions. Bounded: past
        ``SHOWN_HEAD + SHOWN_TAIL`` blocks, the first and the last are sent (and those near the block
        ``around``, the first difference a comparison points at), each run of the others as one gap
        entry (how many blocks, their tokens by region, their breakpoints), so a call of 100,000 blocks
        opens as fast as one of 300."""
        call = self.call(n)
        if call is None:
            return None
        usage = call.record or CallRecord(model=price_name(call.model), input_tokens=0)  # refused: nothing was billed
        blocks, every = [], placed(call.request, usage)
        spec = lookup(call.model) if isinstance(call.model, str) else None  # its images' and tokenizer's counts
        automatic = _automatic(every) if call.request.get("cache_control") is not None else None
        shown = _shown(len(every), next((k for k, b in enumerate(every) if b.path == around), None))
        for k, b in enumerate(every):
            region = b.region if call.record else "refused"
            if k not in shown:
                if not blocks or not blocks[-1].get("gap"):
                    blocks.append({"gap": True, "count": 0, "from": b.path, "to": b.path, "regions": {}, "tokens": 0,
                                   "breakpoints": 0})
                gap, tokens = blocks[-1], _counted(b, spec)
                gap["count"] += 1
                gap["to"] = b.path
                gap["tokens"] += tokens
                gap["regions"][region] = gap["regions"].get(region, 0) + tokens
                gap["breakpoints"] += b.breakpoint or k == automatic
                continue
            text, marked = _text(b.block, b.preview), b.breakpoint
            message = int(b.path.split(".")[1]) if b.path.startswith("messages.") else None
            held = call.held is not None and call.held > 0 and (message is None or message < call.held)
            blocks.append({"path": b.path, "where": b.where, "region": region,
                           "breakpoint": "automatic" if k == automatic and not marked else marked,
                           "turn_scoped": b.turn_scoped, "held": held,
                           "tokens": _counted(b, spec), "preview": _shorten(text, PREVIEW),
                           "text": text[:TEXT], "chars": len(text)})
        answer = [_text(b, "") for b in (call.response or {}).get("content") or [] if isinstance(b, dict)]
        settings = {k: call.request[k] for k in ("max_tokens", "thinking", "tool_choice", "cache_control",
                                                 "output_config", "context_management", "thread")
                    if k in call.request}
        return {**call.summary(), "blocks": blocks, "answer": [_shorten(a, 400) for a in answer],
                "stop_reason": (call.response or {}).get("stop_reason"), "settings": settings,
                "label": self._labels.get(call.conversation, ""),
                "forgotten": KEPT_BYTES if call.request.get("messages") is FORGOTTEN else None}  # its bound, in bytes

    def compare(self, a: int, b: int) -> dict | None:
        """Two calls side by side, the earlier first: whether the later is an append-only extension of
        the earlier (``first_edit``), and the path of the first block where it stops repeating it."""
        first, second = self.call(min(a, b)), self.call(max(a, b))
        if first is None or second is None:
            return None
        edit = edit_if_wellformed(first.request, second.request)
        highlight = first_difference(first.request, second.request, edit)
        return {"a": self.detail(first.n, highlight), "b": self.detail(second.n, highlight), "edit": edit,
                "highlight": highlight, "appended": edit is None}


def _shown(count: int, around: int | None) -> set[int]:
    """The blocks a call's detail sends: all of a call up to ``SHOWN_HEAD + SHOWN_TAIL`` blocks; past
    that the first, the last, and those near ``around``."""
    if count <= SHOWN_HEAD + SHOWN_TAIL:
        return set(range(count))
    near = range(max(0, around - SHOWN_NEAR), min(count, around + SHOWN_NEAR + 1)) if around is not None else ()
    return {*range(SHOWN_HEAD), *range(count - SHOWN_TAIL, count), *near}


def _counted(b, spec: ModelSpec | None) -> int:
    """A block's tokens as the emulator counts its own bytes (``emulator.tokens``): the same bytes
    get the same figure in every call, so the compare view shows only what changed. The regions are
    still placed by the call's billed usage (``placed``); behind the proxy this figure is the
    emulator's estimate, not the upstream's tokenizer. ``spec``: the call's model, whose image limits
    and tokenizer the emulator counts by."""
    if b.region == "cleared":
        return 0
    role = b.where.split()[1] if b.path.startswith("messages.") and len(b.where.split()) > 1 else ""
    try:
        facts = (spec.image_limits, spec.tokenizer) if spec is not None else ()  # else the emulator's defaults
        return block_tokens(b.block, render_block(b.block, role), *facts)
    except (AttributeError, KeyError, TypeError, ValueError):  # a malformed block a server refused
        return 0


def _automatic(blocks: list) -> int | None:
    """Where a top-level ``cache_control`` puts its breakpoint: the last block that can carry one
    (not a thinking block, not in a turn-scoped system message) [caching: "Automatic caching"; the
    emulator's ``prompt._add_automatic_breakpoint``]."""
    return next((k for k in range(len(blocks) - 1, -1, -1) if not blocks[k].turn_scoped
                 and blocks[k].block.get("type") not in ("thinking", "redacted_thinking")), None)


def first_difference(before: dict, after: dict, edit: str | None) -> str | None:
    """The block ``first_edit`` points into: ``system.i``, ``tools.i`` or ``messages.m.i`` (a path
    of ``placed``); with no edit, the first block ``after`` appended (None if it appended none)."""
    if edit is None:
        messages = len(before.get("messages") or [])
        return f"messages.{messages}.0" if len(after.get("messages") or []) > messages else None
    where = edit.split(":")[0].split(".")
    if where[0] in ("system", "tools"):
        old, new = _listed(before.get(where[0])), _listed(after.get(where[0]))
        return f"{where[0]}.{_first_unequal(old, new)}"
    if len(where) == 1:  # messages: some are missing: the first the later call does not send
        return f"messages.{len(after.get('messages') or [])}.0"
    m = int(where[1])
    if len(where) == 4:  # messages.m.content.j: a thinking block left out
        return f"messages.{m}.{where[3]}"
    old, new = (_listed((r.get("messages") or [])[m].get("content")) for r in (before, after))
    return f"messages.{m}.{_first_unequal(old, new)}"


def _first_unequal(old: list, new: list) -> int:
    strip = lambda b: {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b  # noqa: E731
    return next((i for i, (x, y) in enumerate(zip(old, new)) if strip(x) != strip(y)), min(len(old), len(new)))


def _listed(value: Any) -> list:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return value if isinstance(value, list) else []


def _text(block: dict, preview: str) -> str:
    """What a block says, as a person reads it: its text, or its JSON."""
    for key in ("text", "thinking"):
        if isinstance(block.get(key), str):
            return block[key]
    if block.get("type") == "tool_use":
        return f"{block.get('name')}({json.dumps(block.get('input'), ensure_ascii=False)})"
    if isinstance(block.get("content"), str):
        return block["content"]
    if isinstance(block.get("content"), list):
        return "\n".join(_text(b, "") for b in block["content"] if isinstance(b, dict))
    if "input_schema" in block or block.get("type") in (None, "custom"):
        return f"{block.get('name', '')}: {block.get('description', '')}".strip(": ")
    return preview or json.dumps(block, ensure_ascii=False)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label(request: dict) -> str:
    """A conversation's name on the page: the task its first call asked, that is the last user message
    with text (a client may put a few-shot example first: aider's first user message is one), past the
    reminders a client puts before the task (Claude Code opens with ``<system-reminder>`` blocks)."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = _listed(message.get("content"))
            texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].strip()]
            if not texts:
                continue  # tool results only
            told = [t for t in texts if not t.lstrip().startswith("<system-reminder>")] or texts
            return _shorten(" ".join(told), 90)
    return "(no user message)" if not any(isinstance(m, dict) and m.get("role") == "user"
                                          for m in request.get("messages") or []) else "(no text)"


def _predicted(usage: Any) -> dict | None:
    if not isinstance(usage, dict):
        return None
    return {"input": usage.get("input_tokens") or 0, "write": usage.get("cache_creation_input_tokens") or 0,
            "read": usage.get("cache_read_input_tokens") or 0}


def _error(record: dict) -> str:
    response = record.get("response")
    error = response.get("error") if isinstance(response, dict) else None
    if isinstance(error, dict):
        return _shorten(f"{error.get('type', 'error')}: {error.get('message', '')}", ERROR_SHOWN)
    return _shorten(str(record.get("response_text") or f"HTTP {record.get('status')}: no usage in the answer"), ERROR_SHOWN)


def _seconds(stamp: Any) -> float:
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
