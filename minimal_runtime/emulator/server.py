"""The emulator over HTTP on loopback, for clients that are not this process's SDK.

``serve(app)`` serves anything with the emulator's ``handle(method, path, body, headers)``: the
emulator itself, or ``minimal_runtime.serve``'s reporting front. What the HTTP layer adds:

- request bodies sent with ``transfer-encoding: chunked`` or ``content-encoding: gzip``/``deflate``
  are decoded here, so ``handle`` always sees the plain JSON bytes (both are refused past the API's
  size limit, a compressed one measured after decoding);
- ``GET /v1/models`` and ``GET /v1/models/{id}``, answered from the model table in the shapes of the
  SDK's ``ModelInfo`` and its page (``data``, ``first_id``, ``last_id``, ``has_more``);
- a bounded pool of worker threads (``WORKERS``) that serve requests, not connections: between
  requests a connection waits in a selector, holding a socket but no thread; one silent for
  ``IDLE_TIMEOUT`` (also the socket timeout mid-request) is closed, as other servers close idle
  keep-alive connections (uvicorn's default is the same 5 s).
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import selectors
import socket
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Iterable, Iterator, Protocol
from urllib.parse import parse_qs

from ..provider.models import MODELS, ModelSpec, lookup
from .errors import ApiError

MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API's request size limit
WORKERS = 16  # requests served at once; more connections wait in the queue without a thread
IDLE_TIMEOUT = 5.0  # seconds a connection may be silent (between requests or mid-body) before it is closed


class App(Protocol):
    """The emulator's ``handle``; a payload may also be an iterable of bytes (sent chunked, as it comes)."""

    def handle(self, method: str, path: str, body: bytes,
               request_headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes | Iterable[bytes]]: ...


class _BodyError(Exception):
    def __init__(self, error: ApiError):
        self.error = error


@contextlib.contextmanager
def serve(app: App, host: str = "127.0.0.1", port: int = 0, *, workers: int = WORKERS,
          idle_timeout: float = IDLE_TIMEOUT, raw: bool = False) -> Iterator[str]:
    """Serve ``app`` on loopback; yields the base URL. ``raw``: the app gets every request as sent
    (the path with its query, ``/v1/models`` included), as a proxy needs; otherwise the query is cut
    off and the model listing is answered here."""
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = idle_timeout  # applied to the socket by StreamRequestHandler.setup

        def _answer(self) -> None:
            method, (path, _, query) = self.command, self.path.partition("?")
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                body = _read_body(self.rfile, headers)
            except _BodyError as e:  # the body cannot be read to its end: answer, then close
                status, out, payload = e.error.status, {"content-type": "application/json"}, e.error.body()
                out["connection"] = "close"
                self.close_connection = True
            else:
                headers = {k: v for k, v in headers.items() if k not in ("transfer-encoding", "content-encoding")}
                if raw:
                    status, out, payload = app.handle(method, self.path, body, headers)
                elif method in ("GET", "HEAD") and _MODELS_PATH.match(path):
                    status, out, payload = models_answer(path, query)
                else:  # with its query: a batch listing is paged by it
                    status, out, payload = app.handle(method, self.path, body, headers)
            self.send_response(status)
            for name, value in out.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            if self.close_connection:
                self.send_header("connection", "close")
            if isinstance(payload, (bytes, bytearray)):
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                if method != "HEAD":
                    self.wfile.write(payload)
                return
            # An iterable payload (a proxied stream) is relayed piece by piece, chunked [RFC 9112 §7.1].
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for piece in payload:
                if piece:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

        def handle(self) -> None:  # one request per turn: the server parks the connection between requests
            self.close_connection = True
            self.handle_one_request()

        def finish(self) -> None:  # keep the connection's files open for its next request
            with contextlib.suppress(OSError):
                self.wfile.flush()

        def close(self) -> None:
            super().finish()

        def has_more(self) -> bool:
            """Bytes of a next request already buffered? (checked without blocking)"""
            try:
                self.connection.setblocking(False)
                return bool(self.rfile.peek(1))
            except (OSError, ValueError):
                return False
            finally:
                with contextlib.suppress(OSError):
                    self.connection.settimeout(self.timeout)

        def log_message(self, *args: object) -> None:  # keep test and notebook output clean
            pass

    server = _PooledServer((host, port), Handler, workers, idle_timeout)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _PooledServer(HTTPServer):
    """An HTTPServer that holds a thread only while a request is being read and answered.

    A connection waiting for its next request is parked in a selector (one watcher thread for all
    of them) and handed to the pool of ``workers`` when it has bytes to read; one silent for
    ``idle_timeout`` is closed. So idle keep-alive connections cost a socket each, not a thread,
    and cannot keep a client that has something to send waiting."""

    request_queue_size = 1024  # the listen backlog: the default 5 drops a burst of connects (each retried after 1 s)

    def __init__(self, address, handler, workers: int, idle_timeout: float):
        self._closed = False
        self._waiting: dict = {}  # socket -> (its handler or None before the first request, address, parked at)
        self._watcher: threading.Thread | None = None
        super().__init__(address, handler)  # a port already taken raises here, after server_close
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="emulator-http")
        self._idle = idle_timeout
        self._selector = selectors.DefaultSelector()
        self._arrivals: queue.SimpleQueue = queue.SimpleQueue()
        self._wake_read, self._wake_write = socket.socketpair()
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._watcher = threading.Thread(target=self._watch, daemon=True, name="emulator-http-idle")
        self._watcher.start()

    def process_request(self, request, client_address) -> None:
        self._park(request, None, client_address)

    def _park(self, sock, connection, address) -> None:
        self._arrivals.put((sock, connection, address))
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\0")

    def _watch(self) -> None:
        """The only thread touching the selector: registers parked sockets, hands ready ones to the
        pool, closes the ones silent for too long."""
        while not self._closed:
            for key, _ in self._selector.select(timeout=min(self._idle, 0.25)):
                if key.fileobj is self._wake_read:
                    with contextlib.suppress(OSError):
                        self._wake_read.recv(4096)
                    continue
                self._selector.unregister(key.fileobj)
                connection, address, _ = self._waiting.pop(key.fileobj)
                self._pool.submit(self._serve_one, key.fileobj, connection, address)
            while not self._arrivals.empty():
                sock, connection, address = self._arrivals.get()
                self._waiting[sock] = (connection, address, time.monotonic())
                self._selector.register(sock, selectors.EVENT_READ)
            now = time.monotonic()
            for sock, (_, _, since) in list(self._waiting.items()):
                if now - since > self._idle:
                    self._selector.unregister(sock)
                    del self._waiting[sock]
                    self.shutdown_request(sock)

    def _serve_one(self, sock, connection, address) -> None:
        """Read and answer one request on ``sock``; park the connection again if it stays open."""
        try:
            if connection is None:
                connection = self.RequestHandlerClass(sock, address, self)  # reads and answers the first request
            else:
                connection.handle_one_request()
                connection.wfile.flush()
        except Exception:  # a client that went away mid-answer: nothing to tell anyone
            self.shutdown_request(sock)
            return
        if connection.close_connection or self._closed:
            connection.close()
            self.shutdown_request(sock)
        elif connection.has_more():  # a request already read ahead (pipelined): answer it now
            self._pool.submit(self._serve_one, sock, connection, address)
        else:
            self._park(sock, connection, address)

    def server_close(self) -> None:
        self._closed = True
        super().server_close()
        if self._watcher is None:  # the address could not be bound: nothing else was started
            return
        self._watcher.join(timeout=1)
        for sock in list(self._waiting):
            self.shutdown_request(sock)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._wake_read.close()
        self._wake_write.close()


# -- request bodies -------------------------------------------------------------------------------

def _too_large() -> _BodyError:
    return _BodyError(ApiError(413, f"Request exceeds the maximum allowed number of bytes ({MAX_REQUEST_BYTES:,})."))


def _read_body(stream, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _read_chunked(stream)
    else:
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            raise _BodyError(ApiError(400, "content-length must be a number"))
        if length > MAX_REQUEST_BYTES:  # refused before the body is read
            raise _too_large()
        body = stream.read(length)
    return _decode(body, headers.get("content-encoding", "identity"))


def _read_chunked(stream) -> bytes:
    """RFC 9112 §7.1: size line (hex, optional extensions), data, CRLF; a zero size ends it, then trailers."""
    parts, total = [], 0
    while True:
        line = stream.readline(1024)
        try:
            size = int(line.split(b";")[0].strip(), 16)
        except ValueError:
            raise _BodyError(ApiError(400, "malformed chunked request body")) from None
        if size == 0:
            while stream.readline(1024).strip():  # trailer fields, up to the empty line
                pass
            return b"".join(parts)
        total += size
        if total > MAX_REQUEST_BYTES:
            raise _too_large()
        parts.append(stream.read(size))
        stream.readline(8)  # the CRLF after the data


def _decode(body: bytes, encoding: str) -> bytes:
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip() and c.strip().lower() != "identity"]
    for coding in reversed(codings):  # listed in the order they were applied
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise _BodyError(ApiError(415, f"Unsupported content-encoding {coding!r}: use gzip, deflate or none"))
        inflate = zlib.decompressobj(wbits=31 if "gzip" in coding else 15)
        try:
            out = inflate.decompress(body, MAX_REQUEST_BYTES + 1)  # a bounded inflate: no decompression bomb
        except zlib.error as e:
            raise _BodyError(ApiError(400, f"request body is not valid {coding}: {e}")) from None
        if len(out) > MAX_REQUEST_BYTES:
            raise _too_large()
        body = out
    return body


# -- GET /v1/models ---------------------------------------------------------------------------------

_MODELS_PATH = re.compile(r"^/v1/models(?:/(?P<id>[^/]+))?/?$")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def model_info(spec: ModelSpec) -> dict:
    """The SDK's ``types/model_info.py`` shape. ``capabilities`` is null: the table does not record
    them (the field is optional in the type), and guessing them would be inventing facts."""
    released = datetime(spec.released.year, spec.released.month, spec.released.day, tzinfo=timezone.utc) \
        if spec.released else _EPOCH  # "May be set to an epoch value if the release date is unknown"
    family = spec.id.removeprefix("claude-").split("-")
    line = family[0] if family[0] in ("haiku", "sonnet", "opus", "fable", "mythos") else None
    version = ".".join(p for p in family[1:] if p.isdigit())
    return {
        "type": "model", "id": spec.id,
        "display_name": f"Claude {family[0].capitalize()} {version}".strip(),
        "created_at": released.isoformat().replace("+00:00", "Z"),
        "lifecycle": "deprecated" if spec.status == "deprecated" else "active",
        "deprecated_at": None, "retires_at": None, "line": line,
        "max_input_tokens": spec.context_window, "max_tokens": spec.max_output, "capabilities": None,
    }


def models_answer(path: str, query: str = "") -> tuple[int, dict[str, str], bytes]:
    """``GET /v1/models[/{id}]``: newest first, paged by ``limit`` (1..1000, default 20), ``after_id``
    and ``before_id`` [https://platform.claude.com/docs/en/api/models-list]."""
    headers = {"content-type": "application/json"}
    match = _MODELS_PATH.match(path)
    if match is None:
        return 404, headers, ApiError(404, f"GET {path}: no such endpoint").body()
    if match["id"]:
        spec = lookup(match["id"])
        if spec is None:
            return 404, headers, ApiError(404, f"model: {match['id']}").body()
        return 200, headers, json.dumps(model_info(spec)).encode()
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    try:
        limit = int(params.get("limit", 20))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 1000:
        return 400, headers, ApiError(400, "limit: must be an integer from 1 to 1000").body()
    ordered = sorted(MODELS.values(), key=lambda m: (m.released or _EPOCH.date(), m.id), reverse=True)
    ids = [m.id for m in ordered]
    start, end = 0, len(ordered)
    for key in ("after_id", "before_id"):
        if key in params and params[key] not in ids:
            return 400, headers, ApiError(400, f"{key}: no model {params[key]!r}").body()
    if "before_id" in params:
        end = ids.index(params["before_id"])
        start = max(0, end - limit)
    elif "after_id" in params:
        start = ids.index(params["after_id"]) + 1
        end = min(len(ordered), start + limit)
    else:
        end = min(len(ordered), limit)
    page = [model_info(m) for m in ordered[start:end]]
    more = start > 0 if "before_id" in params else end < len(ordered)
    return 200, headers, json.dumps({"data": page, "first_id": page[0]["id"] if page else None,
                                     "last_id": page[-1]["id"] if page else None, "has_more": more}).encode()
