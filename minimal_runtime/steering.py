"""Steering over HTTP: a person (or a supervisor) pushes a user message into a live run.

Unlike an injection, a steering message is durable: it lands in the history as a user turn, because
the model should still know ten turns later that it was told to change direction.

    POST /steer   {"text": "..."}   Authorization: Bearer <token>
    200 queued · 400 bad body · 401 no or wrong token · 403 a Host not served here · 404 · 405
    408 too slow · 409 no active run · 411 no length · 413 too large · 503 too many connections
    507 the steer could not be recorded (a full disk): not queued

Loopback only by default; the token is required because anyone on the machine can reach loopback,
and the Host must name loopback (or the host served) because a web page can reach loopback too,
under a name of its own that resolves to 127.0.0.1 (DNS rebinding).

An add-on outside ``core/``: the loop needs only what it fills (``agent.steer``, which queues the
message, durable, for the next call), so a fork copies this file only if it wants steering over HTTP.
The server is built to be poked at, with nothing but the standard library. One thread owns every socket: a selector accepts connections
and reads each request whole (headers, then exactly the body its content-length declares) before a
worker sees it, so a slow client holds a socket and a few bytes, never a thread. The token is
checked from the headers before a byte of the body is read, and a body needs a length, a positive
one under the cap. A whole request must arrive within ``deadline`` seconds however slowly it
trickles in (408 past it). At most ``max_connections`` requests are read at once: a new connection
past the cap ends the one that has been arriving the longest (a 503), so a flood of slow clients
cannot keep out a request that arrives whole. The workers only run ``agent.steer``. Every answer is
delivered: after it the server stops writing and reads what the client still sends until it hangs
up, because closing a socket with unread input resets the connection and the client loses the
answer it was about to read.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import queue
import re
import selectors
import socket
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from http.client import HTTPException, parse_headers
from io import BytesIO
from typing import TYPE_CHECKING, Iterator

from .core.agent import SteerTooLarge

if TYPE_CHECKING:
    from .core.protocols import AgentView

HEAD_BYTES = 8192  # the request line and headers, at most
BAD_BODY = 'body must be {"text": "<non-empty string>"}'


@contextlib.contextmanager
def steering_server(agent: "AgentView", token: str, host: str = "127.0.0.1", port: int = 0, *,
                    max_bytes: int = 32_768, deadline: float = 10.0, max_connections: int = 64,
                    workers: int = 2) -> Iterator[str]:
    """Serve ``POST /steer`` for ``agent``; yields the base URL. ``deadline``: the longest a whole
    request may take to arrive (and an answered client to hang up); ``max_connections``: requests
    read at once; ``workers``: threads running ``agent.steer``."""
    if not token:
        raise ValueError("a steering token is required")
    server = _SteeringServer(agent, token, host, port, max_bytes=max_bytes, deadline=deadline,
                             max_connections=max_connections, workers=workers)
    try:
        yield f"http://{host}:{server.port}"
    finally:
        server.close()


def foreign_host(header: str | None, served: str) -> str | None:
    """The name a Host header gives when it is neither loopback nor ``served``; else None. No Host
    at all passes: only an HTTP/1.0 client omits it, and every browser sends one."""
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


@dataclass(eq=False)
class _Connection:
    sock: socket.socket
    until: float  # read whole by then; once answered, closed by then at the latest
    data: bytearray = field(default_factory=bytearray)
    body_at: int = 0  # where the body starts, once the headers are in
    need: int = 0  # bytes of the whole request, once the headers are in


class _SteeringServer:
    def __init__(self, agent: "AgentView", token: str, host: str, port: int, *, max_bytes: int, deadline: float,
                 max_connections: int, workers: int) -> None:
        self.agent, self.token, self.host = agent, token, host
        self.max_bytes, self.deadline, self.max_connections = max_bytes, deadline, max_connections
        # the listen backlog, from the cap: a burst of four times the cap waits to be accepted
        # instead of finding the queue full (and being reset)
        self.backlog = 4 * max_connections
        self._listener = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                              backlog=self.backlog)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._reading: OrderedDict[socket.socket, _Connection] = OrderedDict()  # oldest first
        self._draining: OrderedDict[socket.socket, float] = OrderedDict()  # answered -> closed by then
        self._answers: queue.SimpleQueue = queue.SimpleQueue()  # (connection, status, body) from the workers
        self._wake_read, self._wake_write = socket.socketpair()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._workers = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="steer")
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="steer-selector", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed = True
        self._wake()
        self._thread.join()
        self._workers.shutdown(wait=True)
        while not self._answers.empty():  # answered after the loop stopped: closed unanswered
            self._answers.get()[0].sock.close()
        for sock in [*self._reading, *self._draining]:
            sock.close()
        for sock in (self._listener, self._wake_read, self._wake_write):
            sock.close()
        self._selector.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\0")

    # -- the selector thread: every socket operation happens here ---------------------------------

    def _loop(self) -> None:
        while not self._closed:
            now = time.monotonic()
            soonest = min([c.until for c in self._reading.values()] + list(self._draining.values()), default=now + 1)
            for key, _ in self._selector.select(timeout=min(1.0, max(0.0, soonest - now))):
                if key.fileobj is self._listener:
                    self._accept()
                elif key.fileobj is self._wake_read:
                    with contextlib.suppress(OSError):
                        self._wake_read.recv(4096)
                elif key.fileobj in self._draining:
                    self._discard(key.fileobj)
                else:
                    self._read(key.data)
            while not self._answers.empty():
                self._respond(*self._answers.get())
            now = time.monotonic()
            for connection in [c for c in self._reading.values() if c.until <= now]:
                self._respond(connection, 408, {"error": "the request took longer than its deadline"})
            for sock in [s for s, until in self._draining.items() if until <= now]:
                self._end(sock)

    def _accept(self) -> None:
        for _ in range(self.max_connections):  # a burst at a time: the sockets already open get their turn
            try:
                sock, _ = self._listener.accept()
            except OSError:  # none left (BlockingIOError), or out of file descriptors: next round
                return
            sock.setblocking(False)
            if len(self._reading) >= self.max_connections:  # the one arriving the longest makes room
                self._respond(next(iter(self._reading.values())), 503, {"error": "too many connections: try again"})
            connection = _Connection(sock, time.monotonic() + self.deadline)
            self._reading[sock] = connection
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _read(self, connection: _Connection) -> None:
        try:
            chunk = connection.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client hung up before its request was whole: nobody to answer
            self._selector.unregister(connection.sock)
            del self._reading[connection.sock]
            connection.sock.close()
            return
        connection.data += chunk
        if not connection.need:
            end = connection.data.find(b"\r\n\r\n")
            if end < 0 or end + 4 > HEAD_BYTES:  # also a head that arrived whole in one read
                if len(connection.data) > HEAD_BYTES:
                    self._respond(connection, 431, {"error": f"the request's headers are over {HEAD_BYTES} bytes"})
                return
            refusal = self._refusal(bytes(connection.data[:end + 4]), connection)
            if refusal is not None:
                return self._respond(connection, *refusal)
        if len(connection.data) >= connection.need:  # whole: a worker steers, the answer comes back here
            self._selector.unregister(connection.sock)
            del self._reading[connection.sock]
            self._workers.submit(self._steer, connection, bytes(connection.data[connection.body_at:connection.need]))

    def _refusal(self, head: bytes, connection: _Connection) -> tuple[int, dict] | None:
        """What the headers alone decide (nothing, for a request whose body is worth reading)."""
        line, _, fields = head.partition(b"\r\n")
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            return 400, {"error": "not an HTTP/1.x request"}
        try:
            headers = parse_headers(BytesIO(fields))
        except HTTPException:
            return 400, {"error": "malformed headers"}
        if len(headers.get_all("host") or []) > 1:  # RFC 9112 §3.2: "MUST respond with a 400", as serve does
            return 400, {"error": "more than one Host header"}
        if (name := foreign_host(headers.get("host"), self.host)) is not None:
            return 403, {"error": f"Host {name!r} is not served here"}
        if parts[1] != b"/steer":
            return 404, {"error": "no such endpoint"}
        if parts[0] != b"POST":
            return 405, {"error": "only POST /steer"}
        if not hmac.compare_digest(headers.get("authorization", "").encode(), f"Bearer {self.token}".encode()):
            return 401, {"error": "missing or wrong token"}  # before reading a byte of the body
        if headers.get("content-length") is None or headers.get("transfer-encoding") is not None:
            return 411, {"error": "a content-length is required"}
        # RFC 9110 §8.6: Content-Length = 1*DIGIT ("+17", "1_7", "-1", " 17 x" are not lengths: int() took
        # the first two). RFC 9112 §6.3: differing values (two fields, or a list "17, 18") leave the
        # framing unknown, so a 400; the same value repeated is the one length.
        values = [v.strip() for field in headers.get_all("content-length") for v in field.split(",")]
        if not all(re.fullmatch(r"[0-9]+", v) for v in values):
            return 400, {"error": "content-length must be a number" + (
                "" if not any(v.startswith("-") for v in values) else ": a length is never negative")}
        if len({int(v) for v in values}) > 1:
            return 400, {"error": "differing content-length values"}
        length = int(values[0])
        if length > self.max_bytes:
            return 413, {"error": f"the body is over {self.max_bytes} bytes"}
        connection.body_at, connection.need = len(head), len(head) + length
        return None

    def _respond(self, connection: _Connection, status: int, body: dict) -> None:
        """Send the answer (small: it fits the socket's buffer at once), stop writing, and read what
        the client still sends until it hangs up or the deadline passes."""
        if connection.sock in self._reading:
            self._selector.unregister(connection.sock)
            del self._reading[connection.sock]
        payload = json.dumps(body).encode()
        head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n")
        try:
            connection.sock.sendall(head.encode() + payload)  # non-blocking: a short send is an error, and ends it
            connection.sock.shutdown(socket.SHUT_WR)
        except OSError:
            return connection.sock.close()
        self._draining[connection.sock] = time.monotonic() + self.deadline
        self._selector.register(connection.sock, selectors.EVENT_READ)
        while len(self._draining) > 4 * self.max_connections:  # a flood: the oldest is closed as it is
            self._end(next(iter(self._draining)))

    def _discard(self, sock: socket.socket) -> None:
        try:
            if sock.recv(65536):
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        self._end(sock)  # the client hung up (or the connection broke)

    def _end(self, sock: socket.socket) -> None:
        self._draining.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)
        sock.close()

    # -- a worker ------------------------------------------------------------------------------------

    def _steer(self, connection: _Connection, body: bytes) -> None:
        self._answers.put((connection, *self._answer(body)))
        self._wake()

    def _answer(self, body: bytes) -> tuple[int, dict]:
        try:
            text = json.loads(body)["text"]
            if not isinstance(text, str) or not text.strip():
                raise ValueError
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):  # nesting past the
            return 400, {"error": BAD_BODY}  # interpreter's recursion limit is a bad body like any other
        try:
            accepted = self.agent.steer(text)
        except SteerTooLarge as e:
            return 413, {"error": str(e)}
        except OSError as e:  # the store could not write it (a full disk): not accepted, so not lost either
            return 507, {"error": f"the steer could not be recorded ({e}): it is not queued; send it again"}
        except Exception as e:  # noqa: BLE001  (a bug of the agent's: still an answer)
            return 500, {"error": f"the steer failed: {type(e).__name__}: {e}"}
        if not accepted:
            return 409, {"error": "the run is not active"}
        return 200, {"status": "queued"}
