"""Message Batches (``/v1/messages/batches``): bulk requests on the emulator's clock, at half price.

The API [API-2026.md §12; BP = .../build-with-claude/batch-processing, BAPI = .../api/messages/batches/*,
the SDK's ``resources/messages/batches.py`` and ``types/messages/``]:

- create (``{"requests": [{"custom_id", "params"}]}``: 1 to 100,000 requests, at most 256 MB, else
  413 ``request_too_large``; ``custom_id`` matches ``^[a-zA-Z0-9_-]{1,64}$`` and is unique in the batch),
  retrieve, list (newest first; ``limit`` 1..1000, default 20; ``after_id`` / ``before_id``), cancel,
  results (JSONL at ``results_url``, one ``{"custom_id", "result"}`` a line) and delete (only once
  the batch has ended).
- A batch ends when every request has a result, and at the latest 24 hours after it was created
  (``expires_at``): requests not sent by then are ``expired``. ``request_counts`` shows every request
  as ``processing`` until the batch has ended. Results are kept 29 days after ``created_at``; then
  the batch is ``archived_at`` and still viewable, its results not.
- Validation is asynchronous: a request that fails resolves as ``errored`` with the error body a
  direct call gets, and costs nothing; the others run. A batch refuses some parameters a direct call
  takes (``stream``, ``speed`` fast mode, ``max_tokens: 0`` pre-warming, threads, hints, a user
  profile paying) [BP table, 2026-09-02; the messages are ours].
- Everything a batch request uses costs 50% of the standard price, stacking with the cache
  multipliers [BP; PRC]: ``usage.service_tier`` is ``"batch"`` and ``provider/cost.py`` halves it.

How the emulator runs a batch (a model of the provider's scheduler, deterministic, SIMULATED where it
decides a cache hit):

- Each request goes through the same path as ``POST /v1/messages`` (``Emulator._messages``): the same
  validation, prefix check (unset ``prefix_mismatch_behavior`` drops failing blocks instead of
  failing, where the check is enforced [PT]), caching, policy and usage.
- Requests are sent in submission order in waves of ``CONCURRENCY``, spread evenly over the batch's
  ``delay`` on the emulator's clock: wave ``w`` of ``W`` at ``created + delay * w / W``, the batch
  ending at ``created + delay``. With no delay (``serve``'s default) every wave is sent at creation.
- Caching in a batch is best effort, "because asynchronous batch requests can be processed
  concurrently and in any order" (hit rates 30%-98%) [BP]. Here the requests of one wave run
  concurrently: none reads what another of its wave writes, while later waves read what earlier
  ones wrote if the entry is still alive at their time. So 100 requests sharing a cached prefix read
  it 90 times (the first wave writes it 10 times), 20 requests 10 times; with 5-minute entries and
  waves more than 5 minutes apart, never, which is why BP advises the 1-hour TTL.
- A batch is processed beside the other clients' requests, never inside one nor under a lock they
  wait on: on the emulator's batch processor (a thread, alive while a batch is open), which yields
  to direct calls (it sends no request of a batch while one is being answered). Every request the
  emulator handles hands it the clock's reading and goes on; the processor sends the waves whose
  time has come by then, each at its own time on the clock, and reads no clock itself. A poll that
  depends on the processor's progress (a batch that has ended by now on the clock, a cancel, a
  delete) waits for it to reach the poll's reading, so what it answers is deterministic on the
  clock; a poll of a batch still in progress answers at once. In-process tests move the clock
  instead of sleeping. (A direct call during a batch sees the cache as the batch has left it so far:
  best effort, as BP says of caching in a batch.)
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterator

from . import paging, threads
from .errors import ApiError, bad_request

if TYPE_CHECKING:
    from . import Emulator

PATH = "/v1/messages/batches"
MAX_REQUESTS = 100_000  # [BP "Batch limitations"; BAPI create: maxItems 100000]
MAX_BYTES = 256 * 1024 * 1024  # over it: 413 request_too_large [BP; ERR "Request size limits"]
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # [BP; BAPI create]
EXPIRY = 24 * 3600  # seconds from creation until the batch expires [BP]
RETENTION = 29 * 24 * 3600  # seconds from creation that results are kept [BP "Data retention"]
CONCURRENCY = 10  # requests per wave: the emulator's choice, not a documented figure (SIMULATED)
YIELD = 0.1  # seconds the processor waits, before each request of a batch, for direct calls to end (at most)

# Parameters a batch request may not carry, each a validation error [BP table, 2026-09-02; §11.7 for
# ``thread``, which the table names by its pre-launch fields]. The wording is ours.
_STATEFUL = "message threads are stateful and batch requests are not"
_REFUSED = {
    "thread": _STATEFUL, "store": _STATEFUL, "previous_thread_event_id": _STATEFUL,
    "cache_hint": "not supported in a Message Batch", "context_hint": "not supported in a Message Batch",
    "research_preview_2026_02": "not supported in a Message Batch",
}


@dataclass
class Wave:
    """What changes for a request sent in a batch (read by ``Emulator._messages``): it is billed at the
    wave's time and the batch price, and its cache writes become readable only once the whole wave
    has been sent, as concurrent requests' would."""

    now: float
    writes: list = field(default_factory=list)  # cache outcomes, committed together after the wave


@dataclass
class _Batch:
    id: str
    custom_ids: list[str]
    params: list[Any]  # as sent; dropped once a request is sent
    created: float
    delay: float
    betas: set[str]
    version: str
    profile: str | None  # the anthropic-user-profile-id header
    owner: str  # the credential that created it (threads.credential): its requests read and write that key's cache
    results: list[dict | None]
    sent: int = 0  # requests sent so far, whole waves
    sending: int = 0  # the end of the wave in flight (a cancel cancels what comes after it)
    status: str = "in_progress"
    cancel_at: float | None = None
    ended: float | None = None


class Batches:
    """The batches of one emulator (its account)."""

    def __init__(self, emulator: "Emulator", delay: float = 0.0):
        if not 0 <= delay < math.inf:
            raise ValueError(f"batch_delay must be a number of seconds, 0 or more, not {delay}")
        self.emu, self.delay = emulator, float(delay)
        self._batches: dict[str, _Batch] = {}  # in creation order
        self._open: dict[str, _Batch] = {}  # the ones not ended yet (without any, the clock is not even read)
        # Guards the bookkeeping only: never held while a request of a batch is answered.
        self._lock = threading.Condition()
        self._ids = 0
        self._epoch: datetime | None = None  # the wall time at clock reading 0, fixed at the first batch
        self._due = -math.inf  # the latest clock reading handed to the processor
        self._asked = self._done = 0  # readings handed in, and how many of them the processor has finished
        self._worker: threading.Thread | None = None  # the processor, while a batch is open
        self._quiet = threading.Condition()  # direct calls being answered: the processor waits for none
        self._direct = 0

    # -- time ---------------------------------------------------------------------------------------

    def catch_up(self, now: float | None = None) -> int:
        """Hand the processor the clock's reading (``now``, else read here): it sends the waves whose
        time has come by then and ends the batches that are done, on its own thread. Returns at once,
        with the reading's number (``settle`` waits for it). Every request the emulator handles calls
        this first."""
        if not self._open:
            return self._asked
        now = self.emu.clock() if now is None else now
        with self._lock:
            return self._hand_in(now)

    def _hand_in(self, now: float) -> int:  # the lock held
        self._due, self._asked = max(self._due, now), self._asked + 1
        if self._worker is None and self._open:
            self._worker = threading.Thread(target=self._process, daemon=True, name="emulator-batches")
            self._worker.start()
        self._lock.notify_all()
        return self._asked

    def _settle(self, asked: int) -> None:
        """Wait (the lock held, released while waiting) until the processor has finished the reading
        numbered ``asked``: what a batch endpoint answers is what the batches had done by its time.
        Not on the processor itself (a policy calling a batch endpoint from inside a batch)."""
        if threading.current_thread() is self._worker:
            return
        self._lock.wait_for(lambda: self._done >= asked or not self._open)

    @contextlib.contextmanager
    def direct(self) -> Iterator[None]:
        """Around a request that is not a batch's (a Messages call, count_tokens, the model listing):
        the processor sends no request of a batch while one is being answered."""
        with self._quiet:
            self._direct += 1
        try:
            yield
        finally:
            with self._quiet:
                self._direct -= 1
                self._quiet.notify_all()

    def _process(self) -> None:
        """The processor's thread: a batch is processed beside the other clients' requests, never
        inside one and never under a lock they wait on. It yields to them: between two requests of a
        batch it waits while a direct call is being answered (the emulator's choice, SIMULATED: batch
        usage does not count against the Messages rate limits [BP FAQ], so it is other capacity), for
        ``YIELD`` seconds at most (a direct call may be waiting for the batch: a policy polling it). It
        reads no clock (a chapter's clock steps at every reading), and ends once no batch is open."""
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._done < self._asked or not self._open)
                if not self._open:
                    self._worker = None
                    self._lock.notify_all()
                    return
                now, asked, batches = self._due, self._asked, list(self._open.values())
            for batch in batches:
                self._advance(batch, now)
            with self._lock:
                for batch in batches:
                    if batch.status == "ended":
                        self._open.pop(batch.id, None)
                self._done = asked
                self._lock.notify_all()

    def _advance(self, b: _Batch, now: float) -> None:
        with self._lock:
            if b.status == "canceling":  # it ends when it was canceled, once no wave is in flight
                b.status, b.ended = "ended", b.cancel_at
            if b.status != "in_progress":
                return
        n, expires = len(b.params), b.created + EXPIRY
        waves = math.ceil(n / CONCURRENCY)
        while b.sent < n:
            at = b.created + b.delay * (b.sent // CONCURRENCY) / waves
            if at >= expires:
                break  # never sent: expired
            if at > now:
                return
            if not self._send_wave(b, at):
                return  # canceled meanwhile
        end = _end(b)
        if now < end:
            return
        with self._lock:
            for i in range(b.sent, n):
                b.results[i] = {"type": "expired"}
                b.params[i] = None
            b.status, b.ended = "ended", end

    def _send_wave(self, b: _Batch, at: float) -> bool:
        """Send the next wave (at ``at`` on the clock); False if the batch was canceled before it."""
        with self._lock:
            if b.status != "in_progress":
                self._advance_canceled(b)
                return False
            upto = b.sending = min(b.sent + CONCURRENCY, len(b.params))
        wave, results = Wave(now=at), []
        for i in range(b.sent, upto):
            with self._quiet:  # at most YIELD: a direct call may itself wait for this batch (a policy polling it)
                self._quiet.wait_for(lambda: self._direct == 0, timeout=YIELD)
            results.append(self._run(b, b.params[i], wave))
        self.emu._commit(wave.writes)
        with self._lock:
            for i, result in zip(range(b.sent, upto), results):
                b.results[i], b.params[i] = result, None
            b.sent = upto
            self._advance_canceled(b)
        return True

    @staticmethod
    def _advance_canceled(b: _Batch) -> None:
        if b.status == "canceling":  # the wave in flight has finished: the batch has ended
            b.status, b.ended = "ended", b.cancel_at

    def _run(self, b: _Batch, params: dict, wave: Wave) -> dict:
        """One request, as a direct call runs it: its result (succeeded or errored)."""
        request_id = f"req_emu_{self.emu._next_id():06d}"
        try:
            _refuse(params, b.profile)
            body = json.dumps({k: v for k, v in params.items() if k != "user_profile_id"}).encode()
            message, _ = self.emu._messages(body, b.betas, b.version, wave=wave, owner=b.owner)
            return {"type": "succeeded", "message": message}
        except ApiError as e:
            error = e
        except RecursionError:
            error = bad_request("request body is nested too deeply")
        except Exception as e:  # a bug of ours fails this request only, and says whose it is
            error = ApiError(500, f"emulator error (a bug in the offline emulator, not in your request): "
                                  f"{type(e).__name__}: {e}")
        return {"type": "errored", "error": json.loads(error.body(request_id))}

    def _wall(self, t: float | None) -> str | None:
        if t is None:
            return None
        if self._epoch is None:
            self._epoch = datetime.now(timezone.utc) - timedelta(seconds=self.emu.clock())
        return (self._epoch + timedelta(seconds=t)).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    # -- the endpoints ----------------------------------------------------------------------------

    def handle(self, method: str, route: str, query: str, body: bytes, headers: dict[str, str],
               betas: set[str], version: str) -> tuple[int, dict[str, str], bytes]:
        """One request under ``/v1/messages/batches`` (auth, version and size already checked)."""
        parts = route[len(PATH):].strip("/").split("/") if route.rstrip("/") != PATH else []
        host = headers.get("host") or "emulator.invalid"
        now = self.emu.clock()
        items = _items(body) if not parts and method == "POST" else None  # parsed before the lock is taken
        with self._lock:
            asked = self._hand_in(now) if self._open else self._asked
            # A cancel cancels only what was not sent by this very reading, a delete and a poll of a
            # batch that has ended by now on the clock (or was canceled) see it ended: those wait for
            # the processor to reach it. A poll of batches still in progress (every request
            # "processing" until the end) answers at once.
            if parts[1:] == ["cancel"] or method == "DELETE" or any(
                    _end(b) <= now or b.status == "canceling" for b in self._open.values()):
                self._settle(asked)
            if items is not None:
                batch = self._create(items, headers, betas, version, now)
                self._hand_in(now)  # its first waves are due at once: the processor starts on them now
                return self._json(self._view(batch, host, now))
            if not parts and method == "GET":
                return self._json(self._list(query, host, now))
            batch = self._find(parts[0]) if parts else None
            if batch is not None and len(parts) == 1 and method == "GET":
                return self._json(self._view(batch, host, now))
            if batch is not None and len(parts) == 1 and method == "DELETE":
                if batch.status != "ended":  # [BAPI delete]; status and wording ours [INFERRED]
                    raise bad_request(f"{batch.id} is still being processed: cancel it first; a batch can be "
                                      f"deleted only once processing_status is 'ended'")
                del self._batches[batch.id]
                return self._json({"id": batch.id, "type": "message_batch_deleted"})
            if batch is not None and parts[1:] == ["cancel"] and method == "POST":
                return self._json(self._view(self._cancel(batch, now), host, now))
            if batch is not None and parts[1:] == ["results"] and method == "GET":
                return 200, {"content-type": "application/binary"}, self._results(batch, now)
        raise ApiError(404, f"{method} {route}: no such endpoint")

    def _find(self, ident: str) -> _Batch | None:
        batch = self._batches.get(ident)
        if batch is None:
            raise ApiError(404, f"message_batch_id: no batch {ident!r} (never created, or deleted)")
        return batch

    def _create(self, items: list, headers: dict[str, str], betas: set[str], version: str, now: float) -> _Batch:
        self._ids += 1
        batch = _Batch(id=f"msgbatch_emu_{self._ids:012d}", custom_ids=[item["custom_id"] for item in items],
                       created=now, delay=self.delay, params=[item["params"] for item in items], betas=set(betas), version=version,
                       profile=headers.get("anthropic-user-profile-id"), owner=threads.credential(headers),
                       results=[None] * len(items))
        self._batches[batch.id] = self._open[batch.id] = batch
        return batch

    def _cancel(self, b: _Batch, now: float) -> _Batch:
        if b.status == "ended":  # wording ours [INFERRED]
            raise bad_request(f"{b.id} has already ended (processing_status 'ended'): there is nothing to cancel")
        if b.status == "in_progress":  # "any time before processing ends" [BAPI cancel]
            for i in range(max(b.sent, b.sending), len(b.params)):
                b.results[i] = {"type": "canceled"}
                b.params[i] = None
            b.status, b.cancel_at = "canceling", now
        return b

    def _results(self, b: _Batch, now: float) -> bytes:
        if b.status != "ended":
            raise bad_request(f"{b.id} has not ended: its results are available once processing_status is 'ended'")
        if now >= b.created + RETENTION:  # [BP "Data retention"]; a 404 is our reading [INFERRED]
            raise ApiError(404, f"the results of {b.id} are no longer available: results are kept 29 days after "
                                f"created_at (archived_at {self._wall(b.created + RETENTION)})")
        # "not guaranteed to be in the same order as requests" [SDK]: here they are, don't rely on it.
        return b"".join(json.dumps({"custom_id": c, "result": r}).encode() + b"\n"
                        for c, r in zip(b.custom_ids, b.results))

    def _list(self, query: str, host: str, now: float) -> dict:
        """Newest first, paged like every list endpoint [OV "Pagination"; PY batch_list_params.py]."""
        ordered = list(reversed(self._batches.values()))
        return paging.page(ordered, [b.id for b in ordered], query, "batch", lambda b: self._view(b, host, now))

    def _view(self, b: _Batch, host: str, now: float) -> dict:
        """The ``MessageBatch`` object [PY types/messages/message_batch.py]."""
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if b.status == "ended":
            for result in b.results:
                counts[result["type"]] += 1
        else:  # "Requests start as processing and move ... only once processing of the entire batch ends"
            counts["processing"] = len(b.results)
        archived = b.created + RETENTION if now >= b.created + RETENTION else None
        return {
            "id": b.id, "type": "message_batch", "processing_status": b.status, "request_counts": counts,
            "created_at": self._wall(b.created), "expires_at": self._wall(b.created + EXPIRY),
            "ended_at": self._wall(b.ended), "cancel_initiated_at": self._wall(b.cancel_at),
            "archived_at": self._wall(archived),
            # the server actually answering: the in-process base URL or serve's loopback address
            "results_url": f"http://{host}{PATH}/{b.id}/results" if b.status == "ended" else None,
        }

    @staticmethod
    def _json(value: dict) -> tuple[int, dict[str, str], bytes]:
        return 200, {}, json.dumps(value).encode()


def _refuse(params: dict, profile: str | None) -> None:
    """The 400 for a parameter a batch request may not carry (a direct call may) [BP]."""
    for key, why in _REFUSED.items():
        if params.get(key) is not None:
            raise bad_request(f"{key}: {why}")
    if params.get("stream"):
        raise bad_request("stream: a batch request cannot stream; its result is in the batch's results")
    if params.get("speed") not in (None, "standard"):  # "Fast mode is not available with the Batch API" [PRC]
        raise bad_request("speed: fast mode is not available in a Message Batch")
    if params.get("max_tokens") == 0:  # pre-warming: the entry would likely expire first [BP]
        raise bad_request("max_tokens: must be at least 1 in a Message Batch (pre-warming the cache with "
                          "max_tokens 0 is not supported)")
    if isinstance(params.get("billing_policy"), dict) and params["billing_policy"].get("bill_to") == "user_profile":
        # [PY types/beta/message_create_params.py billing_policy]
        raise bad_request("billing_policy.bill_to: Message Batches cannot bill a user profile; omit billing_policy "
                          "or send \"bill_to\": \"self\"")
    own = params.get("user_profile_id")
    if own is not None and profile is not None and own != profile:  # [PY types/messages/batch_create_params.py]
        raise bad_request(f"user_profile_id: {own!r} conflicts with the batch's anthropic-user-profile-id {profile!r}")


def _end(b: _Batch) -> float:
    """When a batch ends on the clock: once its delay has passed, or when it expires."""
    return min(b.created + b.delay, b.created + EXPIRY)


def _items(body: bytes) -> list:
    """A create's ``requests``, checked as the API checks them at create time (the params are checked
    when each request is sent: an ``errored`` result, not a 400)."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"request body is not valid JSON: {e}") from None
    if not isinstance(request, dict):
        raise bad_request("request body must be a JSON object")
    for key in request:
        if key != "requests":
            raise bad_request(f"{key}: Extra inputs are not permitted")
    items = request.get("requests")
    if not isinstance(items, list) or not items:
        raise bad_request("requests: a list of at least 1 request is required")
    if len(items) > MAX_REQUESTS:
        raise bad_request(f"requests: at most {MAX_REQUESTS:,} requests per batch, got {len(items):,}")
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise bad_request(f"requests.{i}: must be an object with custom_id and params")
        ident = item.get("custom_id")
        if not isinstance(ident, str) or not CUSTOM_ID.match(ident):
            raise bad_request(f"requests.{i}.custom_id: must be 1 to 64 characters of letters, digits, '_' "
                              f"and '-' (^[a-zA-Z0-9_-]{{1,64}}$)")
        if ident in seen:
            raise bad_request(f"requests.{i}.custom_id: {ident!r} is also the custom_id of requests.{seen[ident]}; "
                              f"each must be unique within the batch")
        seen[ident] = i
        if not isinstance(item.get("params"), dict):
            raise bad_request(f"requests.{i}.params: must be an object (the body of a Messages API request)")
    return items
