"""One line per call, and the summary: what the cache and the prefix check did, and why.

A line reads, left to right:

    #3 claude-sonnet-5-5 200 | in 46 write 1,210 read 9,512 out 31 | read 88% $0.00307 | prefix ok | miss: ...

call number, model, HTTP status; the prompt split three ways as billed (``input_tokens`` after the
last breakpoint, ``cache_creation_input_tokens``, ``cache_read_input_tokens``) and the output; the
share of the prompt read from cache and the call's dollars; on models that bind thinking to its
prefix, the prefix check's verdict (``ok``, ``ok, dropped ...``, ``REFUSED at ...``); and, when the
call read less from the cache than the previous call of its conversation had cached, the diagnosis:
where the request stops being an append-only extension of that call (``first_edit``), or the other
causes a cache misses for (no breakpoint, a prefix under the model's minimum, a changed model or
parameter, an expired entry), with the server's own ``cache_miss_reason`` when the client asked.

A conversation is the requests of one attendee (``room.py``) that begin with the same first message:
a client's side calls (a title, a summary) do not count as edits of its main loop, and no call
continues another attendee's. In a room (``Room.named``) each line names its attendee after the
call's number (``#3 [ada] claude-sonnet-5-5 200 | ...``) and the summary adds each attendee's figures.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from ..core.context import first_edit, unmarked, without_markers
from ..emulator.binding import canon
from ..emulator.prompt import Render, flatten
from ..emulator.validate import drop_null_markers
from ..provider.cost import CallRecord
from ..provider.models import lookup

ERROR_SHOWN = 2000  # characters of an error the line shows: whole, as the API wrote it (an upstream's page is cut)
TTL_SECONDS = 300  # the default cache entry lives 5 minutes [caching]
LOOKBACK = 20  # a read looks back at most 20 blocks from each breakpoint [caching]
CANDIDATES = 8  # recent calls kept per first message, to find the one a call continues
KEPT_BYTES = 32 * 2**20  # the request bytes of the calls kept to compare with: past it the oldest go


@dataclass
class Previous:
    request: dict
    record: CallRecord
    at: float
    n: int = 0  # the call's number, where the caller numbers calls (the page does)
    answer: dict | None = None  # its reply as a message: what a thread held after it, and a replay resends
    size: int = 0  # the bytes its request was sent as (what keeping it costs; 0: counted by the caller)


class Conversations:
    """Which earlier call a request continues. A conversation is the requests that begin with the
    same first message; of its recent calls, the one a request continues is the one it shares the most
    leading messages with (cache_control markers are not content), on a tie one it extends whole (the
    same system and tools, every message sent again, some appended), then the latest. A call that
    holds the whole request and more (another run of the same script, its answers byte-identical, a
    turn ahead) comes last, the nearest its length first: a request never continues a call that is
    ahead of it while another call it extends is there. So two agents, or two runs of one script, interleaved or one after the
    other, are told apart. The report and ``serve --ui``'s page both group by it."""

    def __init__(self) -> None:
        self._recent: OrderedDict[bytes, list[Previous]] = OrderedDict()
        self.kept_bytes = 0  # the ``size`` of every call kept

    @staticmethod
    def key(request: dict, attendee: str | None = None) -> bytes:
        """The conversation a request belongs to: its attendee's, by its first message (or, with none,
        its system)."""
        messages = request.get("messages") or []
        first = messages[0] if messages else {"system": request.get("system")}
        return hashlib.blake2b(canon(first) + b"\0" + (attendee or "").encode("utf-8", "surrogatepass"),
                               digest_size=16).digest()

    def previous(self, request: dict, attendee: str | None = None) -> Previous | None:
        try:
            candidates = self._recent.get(self.key(request, attendee)) or []
        except (TypeError, ValueError):
            return None
        messages = request.get("messages") or []

        def continued(p: Previous) -> tuple[int, bool, int]:
            before = p.request.get("messages") or []
            shared = common_prefix(before, messages)
            if holds(p.request, request, shared):
                return -1, False, -len(before)  # holds this whole request (of those, the nearest its length)
            whole = shared == len(before) and all(_same(p.request.get(k), request.get(k)) for k in ("system", "tools"))
            return shared, whole, 0
        return max(reversed(candidates), key=continued, default=None)

    def remember(self, request: dict, record: CallRecord, at: float, n: int = 0, answer: dict | None = None,
                 size: int = 0, attendee: str | None = None) -> None:
        """Keep a call to compare later ones with: ``CANDIDATES`` a conversation, 256 conversations,
        and ``KEPT_BYTES`` of requests (by ``size``) in all, the least recent going first (never the
        call just kept: a call past the bound is compared with the next one only)."""
        try:
            key = self.key(request, attendee)
        except (TypeError, ValueError):
            return
        recent = self._recent.setdefault(key, [])
        recent.append(Previous(request, record, at, n, answer, size))
        self.kept_bytes += size
        for gone in recent[:-CANDIDATES]:
            self.kept_bytes -= gone.size
        del recent[:-CANDIDATES]
        self._recent.move_to_end(key)
        while len(self._recent) > 256:
            self.kept_bytes -= sum(p.size for p in self._recent.popitem(last=False)[1])
        while self.kept_bytes > KEPT_BYTES and (len(self._recent) > 1 or len(recent) > 1):
            oldest = next(iter(self._recent))
            self.kept_bytes -= self._recent[oldest].pop(0).size
            if not self._recent[oldest]:
                del self._recent[oldest]

    def forget_key(self, key: bytes, keep: int | None = None) -> None:
        """Keep no call of the conversation ``key`` (but the one numbered ``keep``)."""
        recent = self._recent.pop(key, [])
        kept = [p for p in recent if p.n == keep]
        self.kept_bytes -= sum(p.size for p in recent) - sum(p.size for p in kept)
        if kept:
            self._recent[key] = kept


@dataclass
class Report:
    """Keeps the state the lines need (the previous call of each conversation) and the totals."""

    clock: Callable[[], float] = time.monotonic
    calls: list[CallRecord] = field(default_factory=list, repr=False)
    predicted: list[tuple[CallRecord, CallRecord]] = field(default_factory=list, repr=False)  # (real, predicted)
    refused: int = 0  # calls answered with an error: calls too, as the page counts them
    turned_away: int = 0  # requests the HTTP server refused before reading them: not calls (no model, no body)
    unpredicted: int = 0  # proxy mode: calls the upstream answered and the emulator would have refused
    retries: int = 0  # calls an SDK sent again (x-stainless-retry-count > 0): in the count, and said apart
    conversations: Conversations = field(default_factory=Conversations, repr=False)
    _batches_counted: set = field(default_factory=set, repr=False)  # batch ids whose results are in the totals
    attendees: dict = field(default_factory=dict, repr=False)  # attendee -> its calls, misses, tokens, cost
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _n: int = 0

    def line(self, exchange, prefix: str | None = None, named: bool = False) -> tuple[int, str]:
        """Number the exchange and describe it in one line (thread-safe); ``named``: say whose it is."""
        with self._lock:
            self._n += 1
            who, before = getattr(exchange, "attendee", None), len(self.calls)
            text = self._describe(exchange, prefix)
            if who is not None and exchange.path == "/v1/messages" and not exchange.refused_by_server:
                mine = self.attendees.setdefault(who, {"calls": 0, "misses": 0, "prompt": 0, "read": 0, "cost": 0.0})
                mine["calls"] += 1
                mine["misses"] += " | miss: " in text
                for record in self.calls[before:]:  # its billed call, if it was answered
                    mine["prompt"] += record.prompt_tokens
                    mine["read"] += record.cache_read_input_tokens
                    mine["cost"] += record.cost
            return self._n, f"#{self._n} " + (f"[{who}] " if named and who is not None else "") + text

    def _describe(self, x, prefix: str | None) -> str:
        if x.refused_by_server:  # no body was read: no model, no conversation, no thread to speak of
            self.turned_away += 1
            return f"{x.method} {x.path} {x.status} | refused by the server: {_short(x.error or '', ERROR_SHOWN)}"
        if not x.path.startswith("/v1/messages"):
            return f"{x.method} {x.path} {x.status}" + (f" | {_short(x.error, ERROR_SHOWN)}" if x.error else "")
        if x.path.startswith("/v1/messages/batches"):
            return self._batch(x)
        # A thread continue is judged as the full request it stood for: the held turns, then the new ones.
        request = x.conversation if isinstance(x.conversation, dict) else x.request if isinstance(x.request, dict) else {}
        who = getattr(x, "attendee", None)
        thread = f"thread {thread_note(x.thread, request, self.conversations.previous(request, who))}" if x.thread else None
        model = x.model or "?"
        if x.asked and x.asked != model:
            model = f"{x.asked} (served as {model})"
        if x.path.endswith("count_tokens"):
            tokens = (x.response or {}).get("input_tokens") if isinstance(x.response, dict) else None
            return f"{model} {x.status} | count_tokens {tokens if tokens is not None else '-'}" + \
                (f" | {x.error}" if x.error else "")
        retry = sdk_retry(x.request_headers)
        self.retries += retry > 0
        again = f"SDK retry {retry} (x-stainless-retry-count): the call sent again, not a new one" if retry else None
        if x.status >= 400 or x.usage is None:
            self.refused += 1
            parts = [f"{model} {x.status} | refused: {_short(x.error or 'no usage in the answer', ERROR_SHOWN)}"]
            if prefix:
                parts.append(f"prefix {prefix}")
            parts += [p for p in (thread, again) if p]
            previous = self.conversations.previous(request, who)
            if previous is not None and (edit := edit_if_wellformed(previous.request, request)):
                parts.append(f"edit: {edit}")
            return " | ".join(parts)
        record = CallRecord.from_usage(x.usage, price_name(x.model or "?"))
        self.calls.append(record)
        parts = [f"{model} {x.status}", _tokens(record), f"read {record.cache_read_share:.0%} {_dollars(record.cost)}"]
        if isinstance(x.predicted, dict) and isinstance(x.predicted.get("usage"), dict):
            # The prediction is of the prompt's accounting; the output is the real model's.
            guess = CallRecord.from_usage({**x.predicted["usage"], "output_tokens": record.output_tokens},
                                          price_name(x.model or "?"))
            self.predicted.append((record, guess))
            parts.append(f"predicted {_tokens(guess, output=False)} read {guess.cache_read_share:.0%} "
                         f"{_dollars(guess.cost)}")
        elif x.predicted is not None:
            self.unpredicted += 1
            parts.append(f"predicted: {_short(str(x.predicted), 160)}")
        if prefix:
            parts.append(f"prefix {prefix}")
        parts += [p for p in (thread, again) if p]
        previous = self.conversations.previous(request, who)
        miss = diagnose(previous, request, record, x.response, self.clock())
        if miss:
            parts.append(f"miss: {miss}")
        self.conversations.remember(request, record, self.clock(), self._n, answer_of(x.response), x.size, who)
        return " | ".join(parts)

    def _batch(self, x) -> str:
        """A Message Batches call: the batch's state; for its results, what they cost at the batch
        price (in the totals once per batch, however often they are downloaded)."""
        where = f"{x.method} {x.path} {x.status}"
        body = x.response if isinstance(x.response, dict) else {}
        if x.status >= 400:
            self.refused += 1
            return f"{where} | refused: {_short(x.error or '', ERROR_SHOWN)}"
        if is_results(x.path):
            results = BatchResults.read(x.path, x.response_text, x.response)
            if results.batch not in self._batches_counted:
                self._batches_counted.add(results.batch)
                self.calls.extend(results.records)
            records = results.records
            tokens = {k: sum(getattr(r, k) for r in records) for k in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")}
            prompt = sum(r.prompt_tokens for r in records)
            return (f"{where} | {results.count} results: {results.tally} | in {tokens['input_tokens']:,} write "
                    f"{tokens['cache_creation_input_tokens']:,} read {tokens['cache_read_input_tokens']:,} out "
                    f"{tokens['output_tokens']:,} | read {tokens['cache_read_input_tokens'] / prompt if prompt else 0:.0%} "
                    f"{_dollars(sum(r.cost for r in records))} at the batch price (50%)")
        if isinstance(body.get("data"), list):
            return f"{where} | {len(body['data'])} batches"
        counts = ", ".join(f"{n} {k}" for k, n in (body.get("request_counts") or {}).items() if n)
        return f"{where} | {body.get('id')} {body.get('processing_status') or body.get('type')}" + \
            (f" ({counts})" if counts else "")

    def summary(self) -> str:
        with self._lock:
            calls = self.calls
            prompt = sum(c.prompt_tokens for c in calls)
            read = sum(c.cache_read_input_tokens for c in calls)
            cost, plain = sum(c.cost for c in calls), sum(c.cost_without_cache for c in calls)
            away = (f" (and {self.turned_away} request{'s' * (self.turned_away != 1)} the server refused before "
                    f"reading {'them' if self.turned_away != 1 else 'it'})") if self.turned_away else ""
            again = f" ({self.retries} of them SDK retries of an earlier one)" if self.retries else ""
            text = (f"summary: {len(calls) + self.refused} calls{again}, {self.refused} refused{away}, cache-read share "
                    f"{read / prompt if prompt else 0:.1%} of {prompt:,} prompt tokens, cost {_dollars(cost)}, "
                    f"without caching {_dollars(plain)}")
            if cost and not math.isnan(cost) and not math.isnan(plain):
                text += f" ({_saving(cost, plain)})"
            if len(self.attendees) > 1:  # a room: each attendee's own
                text += "; by attendee: " + "; ".join(
                    f"{who} {a['calls']} calls, read {a['read'] / a['prompt'] if a['prompt'] else 0:.0%}, "
                    f"{a['misses']} miss{'es' * (a['misses'] != 1)}, {_dollars(a['cost'])}"
                    for who, a in self.attendees.items())
            if self.predicted or self.unpredicted:
                real, guess = [p[0] for p in self.predicted], [p[1] for p in self.predicted]
                text += (f"; on the {len(guess)} calls the emulator accepted it predicted cache-read share "
                         f"{_share(guess):.1%} (real {_share(real):.1%}), cost {_dollars(sum(c.cost for c in guess))} "
                         f"(real {_dollars(sum(c.cost for c in real))}); {self.unpredicted} answered that it refuses")
            return text


@dataclass
class BatchResults:
    """A batch's results as downloaded (``GET /v1/messages/batches/{id}/results``: JSON lines, one
    ``{"custom_id", "result"}`` each): how many of each result type, and a record for each that
    succeeded, at the batch price (its usage says ``service_tier: "batch"``; only those are billed
    [batch-processing]). The report and the page both count a batch from this, once per batch id."""

    batch: str
    kinds: dict[str, int]
    records: list[CallRecord]

    @classmethod
    def read(cls, path: str, text: str | None, parsed: Any) -> "BatchResults":
        """From an exchange or a ``--log`` record: the body as text, or as JSON where one line parsed whole."""
        if text is None:
            text = json.dumps(parsed) if parsed is not None else ""
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        kinds: dict[str, int] = {}
        for line in lines:
            kinds[line["result"]["type"]] = kinds.get(line["result"]["type"], 0) + 1
        records = [CallRecord.from_usage(m["usage"], price_name(m.get("model") or "?")) for m in
                   (line["result"]["message"] for line in lines if line["result"]["type"] == "succeeded")]
        return cls(path.split("/")[-2], kinds, records)

    @property
    def count(self) -> int:
        return sum(self.kinds.values())

    @property
    def tally(self) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in self.kinds.items())


def is_results(path: str) -> bool:
    """``/v1/messages/batches/{id}/results``: a batch's results downloaded."""
    parts = path.split("/")
    return len(parts) == 6 and parts[1:4] == ["v1", "messages", "batches"] and parts[5] == "results"


def sdk_retry(headers: dict | None) -> int:
    """How many times an SDK had sent this request before (its ``x-stainless-retry-count`` header, which
    the Anthropic SDKs send on every request: 0 the first time); 0 when absent or not a number."""
    value = next((v for k, v in (headers or {}).items() if k.lower() == "x-stainless-retry-count"), "0")
    try:
        return max(0, int(str(value).strip()))
    except ValueError:
        return 0


def thread_note(kind: str, request: dict, previous: Previous | None) -> str:
    """What a message thread did, as the line and ``serve --ui``'s page say it: ``kind`` as it is
    (``continue ...``, ``create``), but a create that resends more than the first message of a
    conversation seen before (``previous``, the call it continues) is a replay (after a lost thread, or
    a client's own restart): ``create (replays N messages of an earlier call)``.

    What it resends is the earlier call's messages and that call's reply (the thread held both; the
    continue that was to extend them is the call that failed, so no call this report kept sent the
    reply), compared without ``cache_control``: a replay drops the markers each turn set for itself
    (the SDK's ``_thread_state.py``, and ``core.context.threaded_layout``), and markers are not content."""
    if kind != "create" or previous is None:
        return kind
    before = [*(previous.request.get("messages") or []), *([previous.answer] if previous.answer else [])]
    shared = common_prefix(unmarked(before), unmarked(request.get("messages") or []))
    return f"create (replays {shared} messages of an earlier call)" if shared > 1 else "create"


def answer_of(response: Any) -> dict | None:
    """A call's reply as the message a thread held after it (what a replay resends)."""
    content = response.get("content") if isinstance(response, dict) else None
    return {"role": "assistant", "content": content} if isinstance(content, list) else None


def diagnose(previous: Previous | None, request: dict, record: CallRecord, response: Any, now: float) -> str | None:
    """Why this call read less from the cache than its conversation had cached (None: it did not);
    a reason found by comparing with the call it continues ends by naming it (``compared with #N``)."""
    spec = lookup(record.model)
    if previous is None:
        if record.cache_read_input_tokens == 0 and record.cache_creation_input_tokens == 0:
            return _nothing_cached(request, record, spec)
        return None
    had = previous.record.cache_read_input_tokens + previous.record.cache_creation_input_tokens
    if record.cache_read_input_tokens >= had and (record.cache_read_input_tokens or record.cache_creation_input_tokens):
        return None
    reasons = []
    server = ((response or {}).get("diagnostics") or {}).get("cache_miss_reason") if isinstance(response, dict) else None
    if isinstance(server, dict) and server.get("type"):
        reasons.append(f"server says {server['type']}")
    compared = f"; compared with #{previous.n}" if previous.n else ""
    if (none := _nothing_cached(request, record, spec)) is not None:
        reasons.append(none)
        compared = ""  # judged on this request alone
    elif previous.request.get("model") != request.get("model"):
        reasons.append(f"model changed ({previous.request.get('model')} -> {request.get('model')}): a cache is per model")
    elif edit := edit_if_wellformed(previous.request, request):
        reasons.append(edit)
    else:
        changed = [k for k in ("tool_choice", "thinking", "output_config") if previous.request.get(k) != request.get(k)]
        if changed:
            reasons.append(f"{', '.join(changed)} changed: the messages cache is invalidated (tools and system keep)")
        elif now - previous.at > TTL_SECONDS:
            reasons.append(f"the previous call was {now - previous.at:.0f} s ago: its 5-minute entries expired")
        elif _new_blocks(previous.request, request) >= LOOKBACK:
            reasons.append(f"{_new_blocks(previous.request, request)} new blocks since the previous call: the last "
                           f"breakpoint looks back only {LOOKBACK} blocks; add one nearer the previous end")
        else:
            reasons.append("append-only, but the breakpoints do not reach the previous call's entries")
    return "; ".join(reasons) + compared


def holds(earlier: dict, request: dict, shared: int | None = None) -> bool:
    """``earlier`` sent every message of ``request`` (and maybe more): the request repeats it, or is
    behind it (another run of the same script, a turn behind), rather than continuing it."""
    before, messages = earlier.get("messages") or [], request.get("messages") or []
    shared = common_prefix(before, messages) if shared is None else shared
    return shared == len(messages) and len(before) >= len(messages)


def common_prefix(before: list, after: list, exact: bool = False) -> int:
    """How many leading messages two requests have in common (a moved breakpoint is no difference,
    unless ``exact``)."""
    n = 0
    for old, new in zip(before, after):
        if not (old == new if exact else _same(old, new)):
            break
        n += 1
    return n


def _same(old: Any, new: Any) -> bool:
    """Equal once cache_control markers are left out (markers are not content)."""
    return old is new or old == new or without_markers(old) == without_markers(new)


def edit_if_wellformed(previous: dict, request: dict) -> str | None:
    """``first_edit``, or None for a malformed request (the server's own error says why)."""
    try:
        return first_edit(previous, request)
    except (AttributeError, TypeError, KeyError):
        return None


def _nothing_cached(request: dict, record: CallRecord, spec) -> str | None:
    """Why a call cached nothing, when it cached nothing: no breakpoint, or the longest prefix a
    breakpoint marks shorter than the model's minimum (that prefix, not the whole prompt, is what is
    judged [caching: "Cache limitations"]; the emulator's ``cache.apply``)."""
    if record.cache_read_input_tokens or record.cache_creation_input_tokens:
        return None
    if not _has_breakpoint(request):
        return "no cache_control breakpoint in the request: nothing is written or read (add a top-level cache_control)"
    minimum = spec.min_cacheable_tokens if spec else None
    if not minimum:
        return None
    reach = breakpoint_reach(request, record, spec)
    if reach is not None and reach[0] < minimum:
        tokens, where = reach
        return (f"the longest prefix a breakpoint marks (through {where}) is {tokens:,} tokens < {minimum:,}, the "
                f"model's minimum cacheable prefix: nothing is written (mark a block further on)")
    if reach is None and record.prompt_tokens < minimum:
        return f"prompt {record.prompt_tokens:,} tokens < {minimum:,}, the model's minimum cacheable prefix"
    return None


def breakpoint_reach(request: dict, record: CallRecord, spec=None) -> tuple[int, str] | None:
    """The tokens of the longest prefix a breakpoint marks and where it ends (``system.0``,
    ``messages.3.content.1``, or the block the top-level ``cache_control`` lands on): the emulator's
    rendering of the request, its count scaled to the call's billed prompt (exact against the
    emulator; behind the proxy an estimate). None when the request does not render."""
    try:
        request = copy.deepcopy(request)  # as the emulator reads it: a null marker is none (in place, so a copy)
        drop_null_markers(request)
        prompt = flatten(request, render=Render(system_messages=spec.system_messages) if spec else None)
    except Exception:  # a request the server refused, or one the emulator cannot render: no estimate
        return None
    if not prompt.breakpoints or not prompt.total:
        return None
    last = prompt.breakpoints[-1][0]
    where = prompt.marker_at.get(last)
    where = (f"messages.{where[0]}.content.{where[1]}" if isinstance(where, tuple) else str(where)) if where is not None \
        else "the block the top-level cache_control marks"
    return round(prompt.cum[last] * record.prompt_tokens / prompt.total), where


def _has_breakpoint(value: Any) -> bool:
    if isinstance(value, dict):
        return value.get("cache_control") is not None or any(_has_breakpoint(v) for k, v in value.items() if k in (
            "system", "tools", "messages", "content"))
    if isinstance(value, list):
        return any(_has_breakpoint(v) for v in value)
    return False


def _new_blocks(previous: dict, request: dict) -> int:
    def blocks(messages: list) -> int:
        return sum(len(m["content"]) if isinstance(m.get("content"), list) else 1 for m in messages if isinstance(m, dict))
    return blocks(request.get("messages") or []) - blocks(previous.get("messages") or [])


def _share(calls: list[CallRecord]) -> float:
    prompt = sum(c.prompt_tokens for c in calls)
    return sum(c.cache_read_input_tokens for c in calls) / prompt if prompt else 0.0


def price_name(model: str) -> str:
    """The model's id in the price table (an alias or a dated name priced as its model), else as given."""
    spec = lookup(model)
    return spec.id if spec else model


def _tokens(r: CallRecord, output: bool = True) -> str:
    text = f"in {r.input_tokens:,} write {r.cache_creation_input_tokens:,} read {r.cache_read_input_tokens:,}"
    return text + f" out {r.output_tokens:,}" if output else text


def _dollars(value: float) -> str:
    return "$?" if math.isnan(value) else f"${value:.5f}"


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _saving(cost: float, plain: float) -> str:
    """What caching did to the bill: a writes-only run costs more with it, and "1.0x" would hide that."""
    if plain < cost:
        return f"caching cost {cost / plain - 1:.1%} more: what it wrote was not read back enough"
    return f"{plain / cost:.1f}x" if plain >= 1.05 * cost else f"caching saved {1 - cost / plain:.1%}"
