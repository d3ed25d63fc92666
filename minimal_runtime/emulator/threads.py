"""Message threads (beta ``message-threads-2026-08-12``): the server holds the conversation, so each
turn sends only what is new.

Sources (API-2026.md §11): [MT] the message-threads page (its opening; read 2026-12-02), [PY] the
``anthropic`` 2.15 SDK's ``lib/threads`` and ``types/beta`` (the error codes and what each means),
[CAP] live captures quoted in public repositories. What the emulator does, and where it infers:

- ``thread: {"type": "create"}`` on a full request: the answer's ``id`` holds the conversation
  (``system``, ``tools``, the messages, the reply) [MT]. There is no other thread id.
- ``thread: {"type": "continue", "previous_message_id": id}`` carries the new messages only (none
  after a ``pause_turn`` or ``compaction`` stop: "the server holds the unfinished turn and resumes
  it" [PY ``_thread_state.py``]) and leaves ``system`` and ``tools`` out [MT]. The emulator rebuilds
  the full request and runs everything on that: validation, the prefix check over the whole held
  conversation, caching, billing and the policy. So a thread is billed as the full request would be
  ("prices and rate limits are unchanged"; "a thread does not cache your prompt for you" [MT, as
  quoted in API-2026.md §11.5]): a cache read only where the request asks for caching.
- The held messages keep no ``cache_control`` of the turns that sent them [INFERRED: the SDK strips
  them the same way when it replays a thread, "because each was set for the turn that sent it
  first"]; the held ``system`` and ``tools`` keep theirs. With ``thread`` set a request may carry 3
  block markers, the 4th slot being the server's own [CAP, quoted verbatim below].
- Each response can be continued once, by one request at a time; ``output_config`` must stay as
  the thread was created [CAP: a changed effort gave ``thread_fingerprint_mismatch``]. A thread
  expires ``ttl`` seconds (5 minutes [MT]) after its last response, on the emulator's clock.
- A thread answers only the credential that created it: a continue sent with another ``x-api-key``
  or bearer token gets the 404 of a thread it cannot see, ``thread_not_found`` ("bound to the
  upstream account that creates them ... thread_not_found" [CAP, API-2026 §11.6]). Whether the API
  binds per organization, workspace or key is [UNCERTAIN]; the emulator binds to the credential, the
  strictest reading (one secret, sent as ``x-api-key`` or as a bearer token, is one credential).
- What is held is bounded per credential and in all, in count and in bytes (``PER_CREDENTIAL``,
  ``CREDENTIAL_BYTES``, ``HELD_BYTES``): past its own bounds a credential's oldest responses go first;
  past the bound in all a new response is simply not held (its continue gets the 404, and the SDKs
  replay), so one client's creates never evict another's live thread. "A thread is best-effort" and
  "no response tells you whether the API stored the turn" [MT]; the figures are the emulator's.
- Claude Code's continues carry a ``system`` of its billing-header block alone [CAP], which the API
  evidently accepts: it is ignored. Any other ``system``, or any ``tools``, on a continue is a 400
  [PY: "fields the server takes from the thread on a continue and rejects if the request repeats
  them"; the wording of that 400 is ours].
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from ..provider.models import THREAD_TTL_SECONDS, THREADS_BETA
from .body import ParsedBody
from .errors import ApiError, bad_request

FIXED_FIELDS = ("output_config", "output_format")  # at least output_config [CAP]; the SDK lets a turn change the rest
MAX_BLOCK_MARKERS = 3
BILLING_HEADER = "x-anthropic-billing-header:"
RESUMABLE = ("pause_turn", "compaction")  # a continue with messages: [] resumes these [PY]
PER_CREDENTIAL = 4096  # held responses per credential at most (its oldest go first, as expired ones would)
CREDENTIAL_BYTES = 24 * 2**20  # the request bytes a credential's held responses stand for, at most
HELD_BYTES = 32 * 2**20  # the same for every credential together: past it a new response is not held
SPENT_BYTES = 256  # what a continued response costs once its conversation has moved on (kept to say so)

# The live 400 for a 4th block marker, verbatim [CAP id 71009773403, claude -p with Opus, 2026-09-30].
TOO_MANY_MARKERS = ("thread: a maximum of 3 blocks with cache_control may be provided when thread is set -- the "
                    "fourth marker slot is reserved for the marker the server places on the conversation last "
                    "cache-eligible block. Found {n}.")
# As quoted by proxies that saw it live [CAP]; they disagree on the backticks [UNCERTAIN].
NOT_FOUND = ("No thread state was found for the requested `previous_message_id`. Replay the full conversation "
             'with thread: {"type": "create"} to start a new Thread.')


@dataclass
class Held:
    """One stored response: the request that made it (rebuilt in full) and the reply."""

    body: ParsedBody | None  # its request is the full one, with the emulator's prompt and memo (None once spent)
    reply: dict  # {"role": "assistant", "content": [...]}
    messages: list  # the conversation a continue extends: the request's messages without markers, the reply
    same: int  # how many leading ``messages`` are the very objects of ``body.request["messages"]``
    fixed: dict
    stop_reason: str | None
    expires: float
    owner: str  # the credential that created the thread (a digest of it)
    size: int  # the bytes of the request it stands for, and of the reply: what holding it costs
    continued: bool = False
    in_flight: bool = False


class Threads:
    """The responses the emulator holds, by id; thread-safe."""

    def __init__(self, clock: Callable[[], float], ttl: float = THREAD_TTL_SECONDS):
        self.clock = clock
        self.ttl = ttl
        self._held: OrderedDict[str, Held] = OrderedDict()  # in the order they were stored
        self._owned: dict[str, OrderedDict[str, None]] = {}  # credential -> its held ids, oldest first
        self._bytes: dict[str, int] = {}  # credential -> the bytes its held responses cost
        self.held_bytes = 0  # all of them
        self._lock = threading.Lock()

    def visit(self, owner: str = "") -> "Visit":
        """The thread side of one ``POST /v1/messages`` sent with the credential ``owner`` (see
        ``credential``): ``open`` it, ``close`` it with the answer; a request that fails in between
        leaves the thread as it was (``release``)."""
        return Visit(self, owner)

    def request_of(self, message_id: str) -> dict | None:
        """The full request that made ``message_id``, if a thread holds it (for ``serve``'s report)."""
        with self._lock:
            held = self._held.get(message_id)
            return held.body.request if held is not None and held.body is not None else None

    def size_of(self, message_id: str) -> int:
        """The bytes the request that made ``message_id`` stands for, if a thread holds it."""
        with self._lock:
            held = self._held.get(message_id)
            return held.size if held is not None else 0

    def _prune(self, now: float) -> None:
        for key in [k for k, h in self._held.items() if h.expires <= now and not h.in_flight]:
            self._drop(key)

    def _drop(self, key: str) -> None:
        held = self._held.pop(key)
        owned = self._owned[held.owner]
        del owned[key]
        self._resize(held, 0)
        if not owned:
            del self._owned[held.owner], self._bytes[held.owner]

    def _resize(self, held: Held, size: int) -> None:
        self._bytes[held.owner] += size - held.size
        self.held_bytes += size - held.size
        held.size = size

    def _hold(self, key: str, held: Held, now: float) -> None:
        """Store ``held``: within its credential's bounds its oldest go first; past the bound in all
        it is not stored at all (the others' live threads stay)."""
        self._prune(now)
        owned = self._owned.setdefault(held.owner, OrderedDict())
        self._bytes.setdefault(held.owner, 0)
        size, held.size = held.size, 0
        self._held[key], owned[key] = held, None
        self._resize(held, size)
        for old in [k for k in owned if k != key and not self._held[k].in_flight]:
            if len(owned) <= PER_CREDENTIAL and self._bytes[held.owner] <= CREDENTIAL_BYTES:
                break
            self._drop(old)
        if self.held_bytes > HELD_BYTES or self._bytes[held.owner] > CREDENTIAL_BYTES:
            self._drop(key)


def credential(headers: dict[str, str]) -> str:
    """Who sent a request, for binding a thread to it: a digest (the key is not kept) of its
    ``x-api-key``, else of its bearer token. The same secret is one credential either way it is sent:
    the ``anthropic`` 2.15 SDK sends an ``api_key`` as ``Authorization: Bearer`` (``_client.py``)."""
    secret = headers.get("x-api-key") or headers.get("authorization", "")[7:].strip()
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Visit:
    threads: Threads
    owner: str = ""
    kind: str | None = None  # "create", "continue", or None: no thread
    previous: Held | None = None
    new_messages: int = 0
    previous_id: str | None = None
    sent: int = 0  # the bytes of the request this visit stands for (a continue's: the held ones too)
    _extra: dict = field(default_factory=dict)

    def open(self, parsed: ParsedBody, earlier: ParsedBody | None, shared: int, betas: set[str], spec: Any
             ) -> tuple[ParsedBody, ParsedBody | None, int, Any]:
        """Check the ``thread`` field; on a continue, the full request rebuilt (with the earlier turn
        to reuse) and, after a paused turn, the spec to check it with. Raises the API's errors."""
        request = parsed.request
        if not isinstance(request, dict) or "thread" not in request:
            return parsed, earlier, shared, spec
        if THREADS_BETA not in betas:  # as the API refuses any beta field sent without its header [INFERRED, §11.6]
            raise bad_request("thread: Extra inputs are not permitted")
        thread = request["thread"]
        if thread is None:
            return parsed, earlier, shared, spec
        kind = thread.get("type") if isinstance(thread, dict) else None
        if kind not in ("create", "continue"):
            raise bad_request("thread.type: Input should be 'create' or 'continue'")
        # The model table's ``threads`` [MT]: Fable/Mythos 5.2 came out after the page's list and are
        # not on it [UNCERTAIN]; they, and models the table does not know, answer thread_unsupported_request,
        # which makes the SDKs carry on without a thread [INFERRED].
        if not spec.threads:
            raise ApiError(400, f"thread: message threads are not available on {spec.id}",
                           details={"error_code": "thread_unsupported_request"})
        if kind == "create":
            _check_markers(request, request.get("messages"))
            self.kind, self.sent = "create", len(parsed.text)
            return parsed, earlier, shared, spec
        previous_id = thread.get("previous_message_id")
        if not isinstance(previous_id, str) or not previous_id:
            raise bad_request("thread.previous_message_id: Field required")
        extra = set(thread) - {"type", "previous_message_id"}
        if extra:
            raise bad_request(f"thread.{sorted(extra)[0]}: Extra inputs are not permitted")
        new = request.get("messages")
        if not isinstance(new, list):
            raise bad_request("messages: Field required (a list, empty to resume a paused turn)")
        _check_head(request)
        threads = self.threads
        with threads._lock:
            now = threads.clock()
            threads._prune(now)
            held = threads._held.get(previous_id)
            if held is None or held.expires <= now or held.owner != self.owner:  # another's: as if unknown
                raise ApiError(404, NOT_FOUND, details={"error_code": "thread_not_found"})
            if held.in_flight:
                raise bad_request(f"thread: another request is continuing from {previous_id}; wait for its answer "
                                  "and continue from that", "thread_continue_in_flight")
            if held.continued:
                raise bad_request(f"thread: {previous_id} has already been continued, and a response can be "
                                  "continued only once: continue from the thread's latest response",
                                  "thread_already_continued")
            differ = [f for f in FIXED_FIELDS if request.get(f) != held.fixed.get(f)]
            if differ:
                raise bad_request("thread: a field that must stay the same across a thread's turns differs from the "
                                  f"value stored with it; differing field(s): {', '.join(differ)}",
                                  "thread_fingerprint_mismatch")
            prior = held.body.request
            _check_markers(prior, new)
            held.in_flight = True
            self.kind, self.previous, self.previous_id, self.new_messages = "continue", held, previous_id, len(new)
            self.sent = held.size + len(parsed.text)  # the held conversation and what this turn adds
        full = {k: v for k, v in request.items() if k not in ("thread", "system", "tools")}
        full.update({k: prior[k] for k in ("system", "tools") if k in prior})
        full["messages"] = [*held.messages, *new]
        if not new and held.stop_reason in RESUMABLE:
            # The turn goes on from the held, unfinished reply: a resumption, not a prefill [PY; API-2026 §7].
            spec = spec.model_copy(update={"supports_prefill": True})
        return ParsedBody(text="", request=full), held.body, held.same, spec

    def close(self, parsed: ParsedBody, message: dict) -> None:
        """Store the answer under its id (a create or a continue; nothing without a thread)."""
        if self.kind is None:
            return
        request = parsed.request
        if any(i.get("type") == "fallback_message" for i in message["usage"].get("iterations") or []):
            # "The server stores no turn that a fallback model wrote" [PY]: the next continue gets a 404.
            self.release(continued=True)
            return
        messages = request["messages"]
        start = len(self.previous.messages) if self.previous is not None else 0  # held ones have no markers
        same = next((i for i in range(start, len(messages)) if _has_marker(messages[i])), len(messages))
        held_messages = [*messages[:same], *(_unmarked(m) for m in messages[same:])]
        reply = {"role": "assistant", "content": message["content"]}
        # A reply cut before any content (max_tokens inside omitted thinking) adds nothing to hold: kept,
        # it would make every continue a request the API refuses (an empty non-final message), and no
        # error code tells a client to replay [INFERRED: no source says what the API holds then].
        kept = [*held_messages, reply] if reply["content"] else held_messages
        threads = self.threads
        with threads._lock:
            now = threads.clock()
            size = self.sent + len(json.dumps(reply, default=str))
            held = Held(parsed, reply, kept, same, {f: request.get(f) for f in FIXED_FIELDS},
                        message.get("stop_reason"), now + threads.ttl, self.owner, size)
            threads._hold(message["id"], held, now)
        self.release(continued=True)

    def release(self, continued: bool = False) -> None:
        """The request is over: the response it continued is free again, or (``continued``) spent."""
        held, self.previous = self.previous, None
        if held is None:
            return
        with self.threads._lock:
            held.in_flight = False
            if continued:
                # Kept only to say so (thread_already_continued); its conversation lives on in the next one.
                held.continued, held.body, held.messages = True, None, []
                if self.threads._held.get(self.previous_id) is held:  # still stored: it now costs little
                    self.threads._resize(held, SPENT_BYTES)


def refuse_in_count_tokens(request: Any) -> None:
    """``count_tokens`` has no ``thread`` parameter [PY ``message_count_tokens_params.py``]."""
    if isinstance(request, dict) and "thread" in request:
        raise bad_request("thread: Extra inputs are not permitted")


def _check_head(request: dict) -> None:
    if "tools" in request:
        raise bad_request("tools: a continue keeps the tools its thread was created with; leave tools out (to "
                          "change what is offered, send tool_addition or tool_removal in a system message)")
    system = request.get("system")
    if system is None or _billing_header_only(system):
        return
    raise bad_request("system: a continue keeps the system its thread was created with; leave system out")


def _billing_header_only(system: Any) -> bool:
    """Claude Code's continues: a ``system`` made of its attribution block alone [CAP]."""
    if isinstance(system, str):
        return system.startswith(BILLING_HEADER)
    return isinstance(system, list) and bool(system) and all(
        isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).startswith(BILLING_HEADER)
        for b in system)


def _check_markers(head: dict, messages: Any) -> None:
    """At most 3 block-level ``cache_control`` markers with ``thread`` set (``head``'s system and
    tools, and ``messages``) [CAP]; the request's top-level one is not a block marker."""
    n = sum(_markers(head.get(k)) for k in ("system", "tools")) + sum(_markers(m) for m in messages or [])
    if n > MAX_BLOCK_MARKERS:
        raise ApiError(400, TOO_MANY_MARKERS.format(n=n),
                       details={"error_code": "thread_unsupported_request", "unsupported": ["cache_control"]})


def _markers(value: Any) -> int:
    if isinstance(value, dict):
        content = value.get("content")
        own = 1 if "cache_control" in value and "role" not in value else 0
        return own + (sum(_markers(b) for b in content) if isinstance(content, list) and "role" in value else 0)
    if isinstance(value, list):
        return sum(_markers(v) for v in value)
    return 0


def _has_marker(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and "cache_control" in b for b in content)


def _unmarked(message: dict) -> dict:
    if not _has_marker(message):
        return message
    return {**message, "content": [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                                   for b in message["content"]]}
