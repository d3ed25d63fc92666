"""``python -m minimal_runtime serve``: bring your own agent.

The emulator on loopback for any Messages API client (Claude Code, the SDKs, pydantic-ai, your own
agent), printing one line per call: what the cache did, what the call cost, why a cache missed, and
on the current models what the prefix check of preserved thinking did. With ``--upstream URL`` the
same report is made in front of a real server, with the emulator's prediction next to each real
usage. Behaviour offline is a SIMULATED policy (``policy.py``); accounting is the emulator's.

    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())) as (base_url, front):
        ...  # point any client at base_url; front.report has the lines' state and the totals
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import sys
import threading
from typing import IO, Iterator
from urllib.parse import urlsplit

from ..emulator import Emulator
from ..emulator import messages as pipeline
from ..emulator.binding import THINKING_TYPES
from ..emulator.errors import ApiError
from ..emulator.server import Refusal, serve as serve_http
from ..emulator.models import lookup
from .exchange import Exchange, Log
from .faults import Faults
from .page import Page, is_page, listen_hint
from .policy import ToolThenAnswer
from .proxy import Upstream, predict, shown
from .report import Report
from .room import Room
from .timeline import Timeline
from .. import tracing

DEFAULT_PORT = 8765
DUMMY_KEY = "dummy-key-for-the-offline-emulator"
LINES_KEPT = 10_000  # printed lines kept in memory (``Front.lines``)

__all__ = ["DEFAULT_PORT", "Front", "room_of", "started", "ToolThenAnswer"]


class Front:
    """What the HTTP server serves: each exchange goes to the emulator (or the upstream), then gets
    its line printed and its record logged."""

    def __init__(self, emulator: Emulator, *, upstream: str | None = None, log: str | None = None,
                 out: IO[str] | None = None, ui: bool = False, room: Room | None = None):
        self.emulator = emulator
        self.room = room or Room()  # who sent each call (named, the key never shown), and the room token
        self.upstream = Upstream(upstream) if upstream else None
        self.log = Log(log) if log else None
        self.out = out
        self.report = Report()
        self.timeline = Timeline(f"serve: the recording proxy for {shown(upstream)[0]}" if upstream
                                 else "serve: the offline emulator", live=True) \
            if ui else None  # --ui: the page's record of the run
        self.page = Page(self.timeline, self.room) if self.timeline is not None else None
        self.lines: list[str] = []  # the lines printed, the last LINES_KEPT of them
        self.spans = tracing.for_serve()  # None unless the OTEL_EXPORTER_OTLP_* variables ask for spans
        self._print = threading.Lock()

    def handle(self, method: str, path: str, body: bytes,
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        headers = headers or {}
        if self.spans is not None:
            self.spans.begin()
        bare, _, query = path.partition("?")
        if self.page is not None and is_page(path):  # the page, not an API call: neither reported nor forwarded
            if self.page.needs_token(bare) and (why := self.room.refusal(headers, query)):
                return 401, {"content-type": "application/json"}, ApiError(401, why).body()
            return self.page.handle(method, path, body, headers)
        if why := self.room.refusal(headers):  # a room's: answered by serve, never the emulator or the upstream
            status, out, payload = 401, {"content-type": "application/json"}, ApiError(401, why).body()
            self._report(method, path, body, headers, status, out, payload)
            return status, out, payload
        if self.upstream is not None:
            status, out, payload = self.upstream.forward(method, path, body, headers)
        else:  # the emulator answers every path (the model listing too) and reads the query itself
            status, out, payload = self.emulator.handle(method, path, self._served_as_default(bare, body), headers)
        if not isinstance(payload, (bytes, bytearray)):  # a relayed stream: reported once it has ended
            return status, out, self._tee(method, path, body, headers, status, out, payload)
        self._report(method, path, body, headers, status, out, payload)
        if len(body) > TRIM_AFTER:
            give_back_heap()
        return status, out, payload

    @property
    def any_host(self) -> bool:
        """A room with a token takes any ``Host`` (the server's check, ``emulator/server.py``): its
        attendees name it by the room's address, and every request must carry the token anyway."""
        return self.room.token is not None

    def answering(self, path: str):
        """The HTTP server holds this while a request is answered: the emulator's batches yield to it
        (``Emulator.answering``); the page's own requests, and a proxy's, are not the emulator's."""
        if self.upstream is not None or (self.page is not None and is_page(path)):
            return contextlib.nullcontext()
        return self.emulator.answering(path)

    def _tee(self, method, path, body, headers, status, out, pieces) -> Iterator[bytes]:
        seen = []
        try:
            for piece in pieces:
                seen.append(piece)
                yield piece
        finally:  # also when the client goes away mid-stream: the upstream answer is closed, the call reported
            getattr(pieces, "close", lambda: None)()
            self._report(method, path, body, headers, status, out, b"".join(seen))

    def refused(self, refusal: Refusal) -> None:
        """A request the HTTP server answered itself (a 400, 403, 408, 413: see ``emulator/server.py``),
        never handed to ``handle``: reported like any refused call, its line and its record, with what
        arrived of it (no body) and the error it was sent."""
        target = refusal.target or "-"
        if self.page is not None and is_page(target):  # the page's own requests are not the run's, as in handle
            return
        try:
            if not target.startswith("/"):  # an absolute-form target: shown without credentials
                target = shown(target)[0]
            exchange = Exchange.of(refusal.method or "-", target.split("?")[0], refusal.headers, b"", refusal.status,
                                   {"content-type": "application/json"}, refusal.body, refused_by_server=True,
                                   attendee=self.room.attendee(refusal.headers, seen=False))
            self._publish(exchange)
        except Exception as e:  # as for a call: a report that fails is said, and the server goes on
            self._emit(f"(serve: could not report a refused request: {type(e).__name__}: {e})")

    def _report(self, *exchange) -> None:
        try:
            self._record(*exchange)
        except Exception as e:  # the report must never cost the client its answer
            self._emit(f"(serve: could not report this call: {type(e).__name__}: {e})")

    def _served_as_default(self, path: str, body: bytes) -> bytes:
        """A model the table does not know is answered as the emulator's own (``--model``)."""
        if not path.startswith("/v1/messages"):
            return body
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return body
        if path == "/v1/messages/batches" and isinstance(request, dict) and isinstance(request.get("requests"), list):
            served = [self._as_default(item["params"]) if isinstance(item, dict) and isinstance(item.get("params"), dict)
                      else None for item in request["requests"]]
            if all(s is None or s is item["params"] for s, item in zip(served, request["requests"])):
                return body
            items = [item if s is None else {**item, "params": s} for s, item in zip(served, request["requests"])]
            return json.dumps({**request, "requests": items}).encode()
        if isinstance(request, dict) and request is not (served := self._as_default(request)):
            return json.dumps(served).encode()
        return body

    def _as_default(self, request: dict) -> dict:
        if isinstance(request.get("model"), str) and lookup(request["model"]) is None \
                and request["model"] != self.emulator.model:
            return {**request, "model": self.emulator.model}
        return request

    def _record(self, method, path, body, headers, status, out, payload) -> None:
        exchange = Exchange.of(method, path.split("?")[0], headers, body, status, out, payload,
                               upstream=self.upstream.url if self.upstream else None)
        exchange.attendee = self.room.attendee(headers, exchange.request)
        if isinstance(exchange.request, dict) and isinstance(exchange.request.get("model"), str):
            exchange.asked = exchange.request["model"]
        exchange.thread, exchange.conversation = thread_of(self.emulator, exchange)
        if exchange.conversation is not None:  # what keeping it costs: the held conversation too
            exchange.size += self.emulator.threads.size_of(exchange.response["id"])
        if self.upstream is not None and status < 400:
            exchange.predicted = predict(self.emulator, path, exchange.request, headers)
        exchange.prefix = prefix_verdict(self.emulator, exchange, headers)
        self._publish(exchange)

    def _publish(self, exchange: Exchange) -> None:
        """Number the exchange, print its line, and write its record to the log and the page."""
        n, line = self.report.line(exchange, exchange.prefix, named=self.room.named)
        if self.log:
            self.log.write(n, exchange, line)
        if self.timeline is not None:
            self.timeline.add(exchange.record(n, line))
        if self.spans is not None:
            self.spans.export(exchange.record(n, line))
        self._emit(line)

    def _emit(self, line: str) -> None:
        with self._print:
            self.lines.append(line)
            if len(self.lines) > 2 * LINES_KEPT:  # bounded: the log and the terminal have every line
                del self.lines[:-LINES_KEPT]
            if self.out is not None:  # a lone surrogate a client sent is printed escaped
                print(line.encode("utf-8", "backslashreplace").decode("utf-8"), file=self.out, flush=True)

    def close(self) -> None:
        if self.upstream:
            self.upstream.close()
        if self.log:
            self.log.close()
        if self.spans is not None:
            self.spans.close()  # what the batch processor holds goes out first


TRIM_AFTER = 8 * 2**20  # a request body past this many bytes: the heap its parse freed is given back


@functools.cache
def _libc():
    try:
        return ctypes.CDLL("libc.so.6")  # glibc (Linux); elsewhere the allocator returns memory on its own
    except OSError:
        return None


def give_back_heap() -> None:
    """glibc keeps the heap a big request's parses freed: after 26 MB calls serve's resident memory
    stood about 100 MB above what anything still held (measured: 157 MB, 59 MB after ``malloc_trim``).
    Given back after each request past ``TRIM_AFTER``, so what serve keeps is what its bounds say."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def thread_of(emulator: Emulator, x: Exchange) -> tuple[str | None, dict | None]:
    """What a message thread did (``create``, ``continue of msg_... (+N messages, M held)``), and for an
    answered continue the full request the emulator rebuilt from the thread it holds."""
    thread = x.request.get("thread") if isinstance(x.request, dict) else None
    kind = thread.get("type") if isinstance(thread, dict) else None
    if kind != "continue":
        return kind, None
    note = f"continue of {thread.get('previous_message_id')}"
    answer = x.response.get("id") if isinstance(x.response, dict) and x.status < 400 else None
    full = emulator.threads.request_of(answer) if isinstance(answer, str) else None
    if full is None:
        return note, None
    new = len(x.request.get("messages") or [])
    return f"{note} (+{new} message{'s' * (new != 1)}, {len(full['messages']) - new} held)", full


def prefix_verdict(emulator: Emulator, x: Exchange, headers: dict[str, str]) -> str | None:
    """On a model that binds thinking to its prefix: did the request pass, and what was dropped?
    The emulator says so in ``input_transformations`` only when the client sent the beta, so
    without it the check is run again, read-only (as ``count_tokens`` runs it)."""
    request = x.conversation if isinstance(x.conversation, dict) else x.request if isinstance(x.request, dict) else None
    spec = lookup(x.model) if request and x.model else None  # the model that answered (an alias resolved)
    if spec is None or spec.prefix_check == "none" or x.path != "/v1/messages":
        return None
    if x.status >= 400:
        message = x.error or ""
        if "bound to a different conversation" in message:
            return f"REFUSED at {message.split(':')[1].strip().split(' ')[0] if ':' in message else '?'}"
        return None
    sent_thinking = sum(1 for m in request.get("messages") or [] if isinstance(m, dict) and isinstance(
        m.get("content"), list) for b in m["content"] if isinstance(b, dict) and b.get("type") in THINKING_TYPES)
    if not sent_thinking:
        return "ok (no thinking sent back)"
    where = "held by the thread" if x.conversation is not None else "sent back"  # a continue sends none itself
    changes = (x.response or {}).get("input_transformations") if isinstance(x.response, dict) else None
    if changes is None and x.upstream is not None:  # a real server tells only clients that send the beta
        return f"answered ({sent_thinking} thinking sent back; drops are reported only with {pipeline.BINDING_BETA})"
    if changes is None:
        betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}
        try:
            changes = pipeline.prepare(emulator, request, betas | {pipeline.BINDING_BETA}, spec, counting=True).transformations
        except Exception:  # the request was answered; a check we cannot rerun says nothing
            return f"ok ({sent_thinking} thinking {where})"
    dropped = [c for c in changes or [] if c.get("type") == "thinking_dropped"]
    allowed = [c for c in changes or [] if c.get("type") == "thinking_mismatch_allowed"]
    if dropped:
        shown = ", ".join(f"{c['path']} ({c['reason']})" for c in dropped[:3])
        return f"ok, dropped {len(dropped)}: {shown}{', ...' if len(dropped) > 3 else ''}"
    if allowed:
        return f"mismatch let through (account before the check): {', '.join(c['path'] for c in allowed)}"
    return f"ok ({sent_thinking} thinking {where})"


@contextlib.contextmanager
def started(emulator: Emulator, host: str = "127.0.0.1", port: int = 0, *, upstream: str | None = None,
            log: str | None = None, out: IO[str] | None = None, ui: bool = False, room: Room | None = None,
            **server_options) -> Iterator[tuple[str, Front]]:
    """Serve ``emulator`` (or proxy ``upstream``) with the per-call report (and with ``ui`` the page at
    ``/ui``); yields (base URL, front)."""
    front = Front(emulator, upstream=upstream, log=log, out=out, ui=ui, room=room)
    try:
        with serve_http(front, host, port, raw=True, **server_options) as base_url:
            yield base_url, front
    finally:
        front.close()


def bounds() -> str:
    """What ``serve`` keeps of what clients send, at most (``serve --help`` says it)."""
    from ..emulator import body, threads
    from ..emulator.server import CONNECTIONS, DEADLINE, HEADER_BYTES, IDLE_TIMEOUT, MAX_REQUEST_BYTES, SHARE
    from . import exchange, report, timeline
    mb = lambda n: f"{n / 2**20:g} MB"  # noqa: E731
    return (f"What serve keeps is bounded in bytes, whatever clients send: the report compares each call with "
            f"earlier ones it keeps, {mb(report.KEPT_BYTES)} of their requests at most (the least recent go first); "
            f"the --ui page keeps every call's figures but the prompts of {mb(timeline.KEPT_BYTES)} of messages at "
            f"most (and of their answers), forgetting the least recent conversations' first; message threads hold "
            f"{mb(threads.CREDENTIAL_BYTES)} of requests per credential (and {threads.PER_CREDENTIAL:,} responses; "
            f"its own oldest go first) and {mb(threads.HELD_BYTES)} in all (past it a new response is not held: its "
            f"continue gets the 404 the SDKs replay after, and no client's live thread is evicted); the emulator "
            f"reuses the parse of recent bodies up to {mb(body.KEPT_BYTES)}. A request is at most "
            f"{mb(MAX_REQUEST_BYTES)} (256 MB for a Message Batch) and its head {HEADER_BYTES // 1024} KB (a 431 past "
            f"it); --log writes every request whole but a batch's, about 500 bytes a request (its create's first "
            f"{exchange.BATCH_KEPT} requests, its results without their content). Slow and many clients: a request "
            f"must arrive whole within {DEADLINE:g} s of the server waiting for it (a 408 and the connection closed "
            f"past it); a keep-alive connection may sit silent {IDLE_TIMEOUT:g} s; at most {CONNECTIONS:,} requests "
            f"may be arriving at once: one more closes the one arriving the longest (a 503 to it), never the new "
            f"client; a request costly to read (a body of 1-byte chunks) takes at most {SHARE:.0%} of the server's "
            f"time, so it does not hold other clients up.")


def banner(base_url: str, emulator: Emulator, policy_name: str, upstream: str | None, extras: str = "") -> str:
    if upstream:
        head = f"serve: recording proxy for {shown(upstream)[0]} at {base_url} (predictions: the emulator, account created " \
               f"{emulator.account_created.date()})"
        key = "  export ANTHROPIC_API_KEY=<your own key: it is forwarded to the upstream unchanged>"
    else:
        head = (f"serve: the offline emulator at {base_url} (default model {emulator.model}, account created "
                f"{emulator.account_created.date()}, policy {policy_name}: SIMULATED behaviour{extras})")
        key = f"  export ANTHROPIC_API_KEY={DUMMY_KEY}"
    # Clients differ in where the path starts: the Anthropic SDKs append /v1/messages to their base URL,
    # the Vercel AI SDK (@ai-sdk/anthropic, which also reads ANTHROPIC_BASE_URL) appends /messages.
    return "\n".join([head, f"  export ANTHROPIC_BASE_URL={base_url}", key,
                      f"  base URL without /v1: {base_url}  (the Anthropic SDKs, Claude Code, pydantic-ai, LangChain, "
                      "LiteLLM)",
                      f"  base URL with /v1:    {base_url}/v1  (the Vercel AI SDK: createAnthropic({{ baseURL }}), "
                      "or its ANTHROPIC_BASE_URL)",
                      "one line per call: #n model status | in write read out | read-share cost | prefix | thread | "
                      "miss (Ctrl-C for the summary)"])


def room_of(attendees: list[str], token: str | None, host: str) -> Room:
    """The room ``--attendee KEY=NAME`` (repeatable), ``--room-token`` and ``--host`` make: beyond
    loopback a token is required, generated when none is given."""
    from .room import is_loopback, new_token
    labels = {}
    for given in attendees:
        key, equals, name = given.partition("=")
        if not equals or not key.strip() or not name.strip():  # the value is not echoed: it holds a key
            raise ValueError("--attendee takes KEY=NAME (an API key, then the attendee's name)")
        labels[key.strip()] = " ".join(name.split())
    if token is not None and not token.strip():
        raise ValueError("--room-token must not be empty")
    return Room(labels, token or (None if is_loopback(host) else new_token()))


def main(args) -> None:
    """The ``serve`` subcommand (see ``__main__.py`` for its options)."""
    import signal
    from datetime import date

    from . import policy as policies
    try:
        if args.script:
            chosen, name = policies.script(args.script), f"script {args.script}"
        elif args.policy and args.policy != "tool-then-answer":
            chosen, name = policies.load(args.policy), args.policy
        else:
            chosen = ToolThenAnswer(rounds=args.tool_rounds)
            name = chosen.describe()
        try:
            created = date.fromisoformat(args.account_created) if args.account_created else None
        except ValueError:
            raise ValueError(f"--account-created {args.account_created!r}: expected a date, YYYY-MM-DD") from None
        if not 0 <= args.batch_delay < float("inf"):
            raise ValueError(f"--batch-delay must be a number of seconds, 0 or more, not {args.batch_delay}")
        if args.thread_ttl is not None and not 0 <= args.thread_ttl < float("inf"):
            raise ValueError(f"--thread-ttl must be a number of seconds, 0 or more, not {args.thread_ttl}")
        if args.tool_rounds < 0:
            raise ValueError(f"--tool-rounds must be 0 or more, not {args.tool_rounds}")
        if args.upstream is not None and urlsplit(args.upstream).scheme not in ("http", "https"):
            # the value is not echoed: without a scheme, user:password@host does not parse as credentials
            raise ValueError("--upstream must be an http:// or https:// URL, e.g. https://api.anthropic.com")
        faults = Faults.parse(args.faults, args.fault_seed, chosen if isinstance(chosen, policies.Script) else None)
        room = room_of(getattr(args, "attendee", []), getattr(args, "room_token", None), args.host)
    except (ValueError, OSError, ImportError, AttributeError) as e:
        raise SystemExit(f"serve: {e}")
    import warnings
    from ..provider.models import UnknownModelWarning
    with warnings.catch_warnings(record=True) as said:  # a --model the table does not know: one line, not a warning
        warnings.simplefilter("always", UnknownModelWarning)
        emulator = Emulator(model=args.model, policy=chosen, batch_delay=args.batch_delay,
                            **({"account_created": created} if created else {}))
    for warning in said:
        print(f"serve: note: {warning.message}", file=sys.stderr, flush=True)
    emulator.faults = faults if faults.rates or faults.script is not None else None
    extras = f", faults {args.faults} (seed {args.fault_seed})" if faults.rates else ""
    if args.thread_ttl is not None:
        emulator.threads.ttl = args.thread_ttl
        extras += f", threads expire after {args.thread_ttl:g} s"
    try:
        front = Front(emulator, upstream=args.upstream, log=args.log, out=sys.stdout, ui=args.ui, room=room)
    except OSError as e:
        raise SystemExit(f"serve: cannot write the log {args.log}: {e.strerror or e}")
    except (ValueError, ImportError) as e:  # the OTEL_* variables ask for what cannot be sent
        raise SystemExit(f"serve: {e}")
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # set here: a shell starts background jobs ignoring SIGINT
        signal.signal(signum, lambda *_: stop.set())
    with contextlib.ExitStack() as stack:
        stack.callback(front.close)
        try:
            url = stack.enter_context(serve_http(front, args.host, args.port, raw=True))
        except OSError as e:  # the port is taken, most often
            raise SystemExit(f"serve: cannot listen on {args.host}:{args.port}: {e.strerror or e}; {listen_hint(e)}")
        print(banner(url, emulator, name, args.upstream, extras), flush=True)
        if room.token:  # the instructor hands it out: attendees add it to their client (docs/serve.md)
            print(f"  room token: {room.token}  (every request must carry it: default_headers={{'x-room-token': "
                  f"'{room.token}'}}, or an API key starting '{room.token}:')", flush=True)
        if front.page is not None:
            token = f"?token={room.token}" if room.token else ""
            print(f"  the page: {url}/ui{token}  (conversations, calls, prompts in cache regions; updates as the run "
                  f"goes on); the room, for a projector: {url}/ui?room{'&token=' + room.token if room.token else ''}",
                  flush=True)
        while not stop.wait(0.5):
            pass
        print("\n" + front.report.summary(), flush=True)
