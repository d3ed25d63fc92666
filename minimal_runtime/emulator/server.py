"""The emulator over HTTP on loopback, for clients that are not this process's SDK.

``serve(app)`` serves anything with the emulator's ``handle(method, path, body, headers)``: the
emulator itself, or ``minimal_runtime.serve``'s reporting front. The in-process transport calls the
same ``handle``, so an endpoint, a header or a stream added there is served here as it is.

The HTTP is uvicorn's, on h11 (see docs/serve.md for why not aiohttp): it parses and frames every
request (a chunked body included: a chunk size that is not hex, ``-1`` say, is a 400 before a
byte of it is read), and its limits are settings here: ``HEADER_BYTES`` of request line and headers
(past it a 431, however the head arrives: h11 measures only a head still incomplete), ``IDLE_TIMEOUT``
between requests on a keep-alive connection (and before the first). Connections are asyncio's, so a
slow client costs a socket, not a thread. What this module adds on top:

- a deadline for each whole request (``DEADLINE``): from the moment the server waits for it to its
  body's last byte, however slowly it trickles in, else a 408 and the connection is closed;
- at most ``CONNECTIONS`` requests arriving at once: a connection past it closes the one that has
  been arriving the longest (a 503 to it), as the steering server does, so a flood of connections that
  never finish their requests never turns a new client away (uvicorn's own ``limit_concurrency``
  answered every new request with a 503 while 1,000 of them were open);
- a request whose reading has cost the event loop more than ``BUDGET`` seconds, at more than
  ``COSTLY`` seconds a byte, is paced: read ``PACED_READ`` bytes at a time, and after each read left
  waiting so that it takes at most ``SHARE`` of the loop (at least ``PACE`` seconds between reads).
  A body of 1-byte chunks (chunked encoding, 1 MB in about 15 s) costs h11 and uvicorn a few
  microseconds per chunk, so one 256 KB read of it held the loop, and every other client, for most
  of a second (other calls took 3-5 s or timed out); paced, it gets its share and meets its deadline.
  A body sent in large pieces costs about a microsecond a kilobyte, whatever its size: never paced.
  Every read is at most ``READ`` bytes, so the first, before a request is known to be costly, is bounded too;
- a body cap enforced while reading, the API's for the path (``body_limit``: 32 MB, 256 MB for a
  Message Batch; a declared length past it is refused before reading, a ``gzip``/``deflate`` body is
  measured after decoding);
- only a path is served (origin-form, RFC 9112 §3.2.1): an absolute-form target
  (``POST http://elsewhere/v1/messages``) is a 400, so a proxying app cannot be sent elsewhere;
- the ``Host`` must name loopback or the host served: a web page on a name of its own that
  resolves to 127.0.0.1 (DNS rebinding) gets a 403;
- ``handle`` runs on a pool of ``WORKERS`` threads, and only once its request is whole: a slow
  client never holds one. A payload may be an iterable of bytes (a proxied stream): it is relayed
  piece by piece as it comes, chunked. ``handle`` answers every path (``/v1/models`` too, see
  ``catalog.py``) and reads the query itself;
- a request the server answers itself (the 400s, 403, 408, 413 and 431 above; uvicorn's own 400 for what
  h11 cannot parse is answered as the API's JSON error too) never reaches ``handle``: an app that
  has a ``refused(refusal)`` method is told of each (a ``Refusal``, on a worker, once the answer is
  sent), so ``serve``'s front reports every request; an app without one (the emulator served
  in-process) is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import sys
import threading
import time
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from typing import Callable, Iterable, Iterator, Protocol

from . import batches
from .errors import ApiError

MAX_REQUEST_BYTES = 32 * 1024 * 1024  # Messages and count_tokens [API-2026 §13]; a batch's: batches.MAX_BYTES
WORKERS = 16  # requests answered at once (threads running ``handle``); reading them takes none
IDLE_TIMEOUT = 5.0  # seconds a connection may wait silent for its next request (uvicorn's default)
DEADLINE = 30.0  # seconds a whole request (headers and body) may take to arrive
CONNECTIONS = 1000  # requests arriving at once; past it the one arriving the longest is closed (each costs a socket)
READ = 64 * 1024  # bytes a connection is read at a time (asyncio's default, 256 KB, is a long hold of chunks)
BUDGET = 0.02  # seconds of the event loop a request may take to be read before it may be paced
COSTLY = 50e-9  # seconds a byte: a request read at this cost or more is paced past BUDGET (1-byte chunks: ~1e-6;
# a body in large pieces: ~1e-9, so a 32 MB body at full speed is never paced, however long it takes to read)
PACED_READ = 8 * 1024  # bytes a paced request is read at a time
SHARE = 0.25  # of the event loop's time a paced request may take
PACE = 0.01  # seconds, at least, between two reads of a paced request
HEADER_BYTES = 64 * 1024  # the request line and headers, at most
BACKLOG = 1024  # connections waiting to be accepted: a burst of connects is not dropped

logging.getLogger("uvicorn").addHandler(logging.NullHandler())  # a library's logger: silent unless configured


class App(Protocol):
    """The emulator's ``handle``; a payload may also be an iterable of bytes (sent chunked, as it comes).
    An app may also have ``refused(refusal: Refusal) -> None``, to hear of the requests the server
    answered itself (``serve``'s front reports them); the server looks for it, nothing requires it."""

    def handle(self, method: str, path: str, body: bytes,
               request_headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes | Iterable[bytes]]: ...


@dataclass(frozen=True)
class Refusal:
    """A request the server answered itself, before ``handle`` saw it. Its body was not read, or not
    whole: there is none to give."""

    method: str | None  # None: the request line never arrived whole (or was not HTTP)
    target: str | None  # as sent: a path with its query, or the absolute form that was refused
    headers: dict[str, str]  # as sent (names lower-case); those of a head that never arrived whole: its whole lines
    status: int
    body: bytes  # the answer's body: the API's JSON error


def body_limit(path: str) -> int:
    """The most bytes a request body to ``path`` may have: 256 MB for the Message Batches endpoints,
    32 MB for the rest [API-2026 §12.3, §13: "32 MB for Messages and count_tokens, 256 MB for Batch"].
    The server enforces it while reading; the emulator applies the same to a body handed to it in-process."""
    return batches.MAX_BYTES if path == batches.PATH or path.startswith(batches.PATH + "/") else MAX_REQUEST_BYTES


class _BodyError(Exception):
    def __init__(self, error: ApiError):
        self.error = error


class _Gone(Exception):
    """The client went away before its request was whole: nobody to answer."""


@contextlib.contextmanager
def serve(app: App, host: str = "127.0.0.1", port: int = 0, *, workers: int = WORKERS,
          idle_timeout: float = IDLE_TIMEOUT, deadline: float = DEADLINE, connections: int = CONNECTIONS,
          raw: bool = False) -> Iterator[str]:
    """Serve ``app`` on ``host`` (loopback by default); yields the base URL. The app gets every
    request as sent (the path with its query); ``raw`` is kept for callers that still pass it."""
    import uvicorn  # here, not at the top: importing the emulator (every notebook) does not pay for it

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.create_server((host, port), family=family, backlog=BACKLOG)  # a port taken: a plain OSError
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="emulator-http")
    told = getattr(app, "refused", None)

    def tell(refusal: Refusal) -> None:  # on a worker: the event loop never waits for an app's report
        if told is not None:
            with contextlib.suppress(RuntimeError):  # the server is stopping: the pool takes no more
                pool.submit(told, refusal)

    config = uvicorn.Config(
        _Asgi(app, raw, host, pool, tell), http=_protocol(deadline, tell, connections), loop="asyncio", lifespan="off",
        log_config=None, access_log=False, proxy_headers=False, server_header=False,
        limit_concurrency=None, backlog=BACKLOG, timeout_keep_alive=idle_timeout,  # type: ignore[arg-type]
        h11_max_incomplete_event_size=HEADER_BYTES, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True, name="emulator-http")
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.002)
    try:
        if not server.started:
            raise RuntimeError("the HTTP server did not start")
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        yield f"http://{shown}:{listener.getsockname()[1]}"
    finally:
        server.should_exit = server.force_exit = True  # force: no waiting for clients that keep a connection
        thread.join()
        pool.shutdown(wait=False, cancel_futures=True)
        listener.close()


def _protocol(deadline: float, tell: Callable[[Refusal], None], connections: int = CONNECTIONS) -> type:
    """uvicorn's h11 protocol with a deadline for each whole request, at most ``connections``
    requests arriving at once, trickled requests paced, and the requests it refuses itself (past the
    deadline, evicted, or not HTTP that h11 can read) answered as the API's JSON errors and told to the app.

    A request is *arriving* from the moment the server waits for it (the connection opened, the
    previous answer ended) until h11 has read its last byte: the deadline's timer runs meanwhile (if
    it fires first, a 408 and the connection is closed), and the request is in ``arriving``, oldest
    first, which a new connection past the limit evicts from (a 503)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    arriving: OrderedDict = OrderedDict()  # protocol -> None: the requests still arriving, oldest first

    class GuardedProtocol(H11Protocol):
        _timer: asyncio.TimerHandle | None = None
        _cost = 0.0  # seconds of the event loop the arriving request's reads have taken
        _bytes = 0  # and the bytes they read
        _paced: asyncio.TimerHandle | None = None  # a paced request's next read

        def connection_made(self, transport) -> None:  # type: ignore[override]
            if len(arriving) >= connections:  # room for this one: the request arriving the longest goes
                oldest = next(iter(arriving))
                oldest._stop()  # out of ``arriving`` now: its close ends it later, and a burst of connects evicts one each
                oldest._refuse(ApiError(503, f"over {connections:,} requests were arriving at once: this one, the "
                                             "longest arriving, was closed to make room"))
            transport.max_size = READ  # asyncio's selector transport reads at most this much a callback
            super().connection_made(transport)
            # uvicorn times out an idle connection only between requests: one that never sends is timed out too
            self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)
            self._start()

        def _start(self) -> None:
            self._stop()
            self._timer = self.loop.call_later(deadline, self._expired)
            self._cost, self._bytes = 0.0, 0
            self.transport.max_size = READ
            arriving[self] = None

        def _stop(self) -> None:
            arriving.pop(self, None)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def data_received(self, data: bytes) -> None:
            began = time.perf_counter()
            super().data_received(data)
            if self._timer is None or self.transport.is_closing():  # read whole, or refused: nothing to pace
                return
            cost = time.perf_counter() - began
            self._cost, self._bytes = self._cost + cost, self._bytes + len(data)
            if self._cost > BUDGET and self._cost > COSTLY * self._bytes and self._paced is None:
                # costly to read: its share of the loop, no more
                self.transport.max_size = PACED_READ
                self.transport.pause_reading()
                self._paced = self.loop.call_later(max(PACE, cost * (1 - SHARE) / SHARE), self._resume)

        def _resume(self) -> None:
            self._paced = None
            if not self.transport.is_closing() and not self.flow.read_paused:  # uvicorn's own pause stands
                self.transport.resume_reading()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):  # read whole (or ended)
                self._stop()

        def on_response_complete(self) -> None:
            self._start()  # the next request's turn (a pipelined one already whole stops it at once)
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop()
            if self._paced is not None:
                self._paced.cancel()
                self._paced = None
            super().connection_lost(exc)

        def _expired(self) -> None:
            self._timer = None
            if not self.transport.is_closing():  # the app, if it is reading the body, hears a disconnect
                self._refuse(ApiError(408, f"the request did not arrive whole within {deadline:g} s"))

        def send_400_response(self, msg: str) -> None:
            # uvicorn calls this inside its ``except h11.RemoteProtocolError``: h11's reason is the one raised
            reason = sys.exc_info()[1] or msg
            if str(reason).startswith("Receive buffer too long"):  # a head past HEADER_BYTES, still arriving
                return self._refuse(_head_too_large())
            self._refuse(ApiError(400, f"the request is not HTTP/1.1 this server can read: {reason}"))

        def _refuse(self, error: ApiError) -> None:
            """Answer ``error`` if no answer has begun, close the connection, and tell the app which
            request it was: the one whose head arrived, or what arrived of one."""
            if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                body = error.body()
                self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                                     b"connection: close\r\n\r\n%s" % (error.status, HTTPStatus(error.status).phrase.encode(),
                                                                       len(body), body))
                if self.conn.our_state is h11.SEND_RESPONSE:  # its head arrived: uvicorn's scope has it
                    tell(Refusal(self.scope["method"], _target(self.scope), _headers(self.scope), error.status, body))
                elif self.conn.their_state is h11.ERROR or self.conn.trailing_data[0]:  # not a connection left idle
                    tell(Refusal(*_partial_head(self.conn.trailing_data[0]), error.status, body))
            self.transport.close()

    return GuardedProtocol


def _target(scope) -> str:
    return scope["raw_path"].decode("latin-1") + (f"?{scope['query_string'].decode('latin-1')}"
                                                  if scope["query_string"] else "")


def _headers(scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text  # RFC 9110 §5.3
    return headers


def _partial_head(head: bytes) -> tuple[str | None, str | None, dict[str, str]]:
    """What arrived of a request's head (at most h11's ``HEADER_BYTES``): its method and target once
    the request line is whole, and the header lines that are whole. Nothing, after an error in the head:
    h11 has consumed it (its message quotes the line it could not read)."""
    lines = [line.rstrip("\r") for line in head.decode("latin-1").split("\n")][:-1]  # the last is not whole
    if not lines or len(lines[0].split(" ")) != 3:
        return None, None, {}
    method, target, _ = lines[0].split(" ")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon and name.strip():
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    return method, target, headers


class _Asgi:
    """The ASGI app between uvicorn and ``handle``: checks the target and the Host, reads the body
    whole (capped), hands the request to a worker thread, and sends its answer back."""

    def __init__(self, app: App, raw: bool, host: str, pool: ThreadPoolExecutor, tell: Callable[[Refusal], None]):
        self.app, self.raw, self.host, self.pool, self.tell = app, raw, host, pool, tell

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        method, headers, target = scope["method"], _headers(scope), _target(scope)
        try:
            self._check(scope, target, headers)
            limit = body_limit(target.partition("?")[0])
            body = _decode(await _read_body(receive, headers, limit), headers.get("content-encoding", "identity"), limit)
        except _BodyError as e:  # answered, then closed: what is left of the body is not read
            answer = e.error.body()
            await _send_bytes(send, e.error.status, {"content-type": "application/json", "connection": "close"}, answer)
            return self.tell(Refusal(method, target, headers, e.error.status, answer))
        except _Gone:
            return
        headers = {k: v for k, v in headers.items() if k not in ("transfer-encoding", "content-encoding")}
        loop = asyncio.get_running_loop()
        # While it is answered (read whole, to its last byte sent), an app's Message Batches yield to it
        # (``Emulator.answering``): a batch is processed beside the clients' requests, not against them.
        answering = getattr(self.app, "answering", None)
        with answering(target.partition("?")[0]) if answering else contextlib.nullcontext():
            status, out, payload = await loop.run_in_executor(self.pool, self._answer, method, target, body, headers)
            if isinstance(payload, (bytes, bytearray)):
                return await _send_bytes(send, status, out, bytes(payload))
            await _relay(send, receive, status, out, iter(payload), loop, self.pool)

    def _check(self, scope, target: str, headers: dict[str, str]) -> None:
        # h11 measures a head only while it is incomplete: one that arrived whole in a single read
        # passes its limit, so the request line and header lines are measured here too.
        head = len(scope["method"]) + len(target) + 12 + sum(len(k) + len(v) + 4 for k, v in scope["headers"])
        if head > HEADER_BYTES:
            raise _BodyError(_head_too_large())
        if not target.startswith("/"):
            raise _BodyError(ApiError(400, "the request target must be a path (origin-form, RFC 9112 §3.2.1): "
                                           "this server forwards nowhere"))
        # An app that asks every request for a secret (serve's room token) takes any Host: the check
        # keeps out a web page under another name (DNS rebinding), which cannot know the secret, and a
        # room's attendees reach the server by whatever name or address the network gives it.
        if not getattr(self.app, "any_host", False) and (name := foreign_host(headers.get("host"), self.host)) is not None:
            raise _BodyError(ApiError(403, f"Host {name!r} is not served here: only loopback and {self.host} are"))

    def _answer(self, method: str, target: str, body: bytes, headers: dict[str, str]):
        # the app answers every path, /v1/models included, with its query (the listings are paged by it)
        return self.app.handle(method, target, body, headers)


def foreign_host(header: str | None, served: str) -> str | None:
    """The name a Host header gives when it is neither loopback nor ``served``; else None. No Host
    at all passes: only an HTTP/1.0 client omits it, and every browser sends one. (The steering
    server, ``minimal_runtime/steering.py``, keeps the same rule: a fork carries it without the
    emulator, and the emulator imports nothing of the runtime.)"""
    if header is None:
        return None
    name = header.strip().lower()
    name = name[1:name.find("]")] if name.startswith("[") else name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    if name in ("localhost", served.lower().strip("[]")):
        return None
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(name).is_loopback:
            return None
    return name


def _head_too_large() -> ApiError:  # RFC 6585 §5
    return ApiError(431, f"Request header fields exceed the maximum allowed number of bytes ({HEADER_BYTES:,}).")


def _too_large(limit: int) -> _BodyError:
    return _BodyError(ApiError(413, f"Request exceeds the maximum allowed number of bytes ({limit:,})."))


async def _read_body(receive, headers: dict[str, str], limit: int) -> bytes:
    """The body, whole; refused past ``limit`` as soon as the declared length or the bytes read say so."""
    if int(headers.get("content-length") or 0) > limit:  # h11 has checked it is a number
        raise _too_large(limit)
    parts, total = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        piece = message.get("body", b"")
        total += len(piece)
        if total > limit:
            raise _too_large(limit)
        parts.append(piece)
        if not message.get("more_body", False):
            return b"".join(parts)


def _response_headers(out: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in out.items()
            if k.lower() not in ("content-length", "transfer-encoding")]


async def _send_bytes(send, status: int, out: dict[str, str], payload: bytes) -> None:
    headers = _response_headers(out) + [(b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


_END = object()


async def _relay(send, receive, status: int, out: dict[str, str], pieces: Iterator[bytes], loop, pool) -> None:
    """Send each piece as the iterator gives it (on a worker: it may wait on an upstream), chunked
    [RFC 9112 §7.1]; stop when the client goes away, and close the iterator either way."""
    await send({"type": "http.response.start", "status": status, "headers": _response_headers(out)})
    gone = asyncio.ensure_future(receive())  # the request is read: the next message is the disconnect
    try:
        while not gone.done():
            piece = await loop.run_in_executor(pool, next, pieces, _END)
            if piece is _END:
                break
            if piece:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    finally:
        gone.cancel()
        with contextlib.suppress(ValueError):  # still running on a worker (a shutdown): it ends on its own
            getattr(pieces, "close", lambda: None)()


def _decode(body: bytes, encoding: str, limit: int) -> bytes:
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip() and c.strip().lower() != "identity"]
    for coding in reversed(codings):  # listed in the order they were applied
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise _BodyError(ApiError(415, f"Unsupported content-encoding {coding!r}: use gzip, deflate or none"))
        inflate = zlib.decompressobj(wbits=31 if "gzip" in coding else 15)
        try:
            out = inflate.decompress(body, limit + 1)  # a bounded inflate: no decompression bomb
        except zlib.error as e:
            raise _BodyError(ApiError(400, f"request body is not valid {coding}: {e}")) from None
        if len(out) > limit:
            raise _too_large(limit)
        body = out
    return body
