"""Steering over HTTP: a person (or a supervisor) pushes a user message into a live run.

Unlike an injection, a steering message is durable: it lands in the history as a user turn, because
the model should still know ten turns later that it was told to change course.

    POST /steer   {"text": "..."}   Authorization: Bearer <token>
    200 queued · 400 bad body · 401 no or wrong token · 409 no active run · 411 no length
    413 too large · 503 too many connections

Loopback only by default; the token is required because anyone on the machine can reach loopback.
The server is built to be poked at: the token is checked from the headers before any of the body is
read; a body needs a length, a positive one under the cap, before a byte of it is read; a whole
request (headers and body) must arrive within ``deadline`` seconds however slowly it trickles in;
the number of connections served at once is bounded (extra ones get a 503 at once instead of a
thread each) and the listen backlog is sized from that bound, so a burst waits instead of being
reset. Every answer is delivered: after it the server stops writing and reads what the client
still sends until it hangs up (``_Drain``), because closing a socket with unread input resets the
connection and the client loses the answer it was about to read.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import json
import queue
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from .protocols import AgentView


class SteerTooLarge(ValueError):
    """The steer would not fit: over the server's cap, or past the model's context window."""


@contextlib.contextmanager
def steering_server(agent: "AgentView", token: str, host: str = "127.0.0.1", port: int = 0, *,
                    max_bytes: int = 32_768, timeout: float = 5.0, deadline: float = 10.0,
                    max_connections: int = 16) -> Iterator[str]:
    """Serve ``POST /steer`` for ``agent``; yields the base URL. ``timeout``: the longest silence
    of a client; ``deadline``: the longest a whole request may take to arrive."""
    if not token:
        raise ValueError("a steering token is required")
    server = _SteeringServer((host, port), agent, token, max_bytes, timeout, deadline, max_connections)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _SteeringServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], agent: "AgentView", token: str, max_bytes: int,
                 client_timeout: float, deadline: float, max_connections: int) -> None:
        self.agent, self.token, self.max_bytes, self.client_timeout = agent, token, max_bytes, client_timeout
        self.deadline = deadline
        self.slots = threading.BoundedSemaphore(max_connections)
        # the listen backlog, from the cap: a burst of four times the cap waits for its answer (a 503
        # at worst) instead of finding the queue full (the default is 5, whatever the cap)
        self.request_queue_size = 4 * max_connections
        self.drain = _Drain(deadline, limit=4 * max_connections)
        super().__init__(address, _SteerHandler)

    def process_request(self, request, client_address) -> None:
        if not self.slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001  (as ThreadingMixIn does: logged, the connection ends)
            self.handle_error(request, client_address)
        finally:
            self.slots.release()  # before the client sees the end: its next request finds the slot free
            self.shutdown_request(request)

    def shutdown_request(self, request) -> None:
        """The answer is out: stop writing, and let the drain read the rest and close."""
        with contextlib.suppress(OSError):
            request.shutdown(socket.SHUT_WR)
        self.drain.add(request)

    def server_close(self) -> None:
        super().server_close()
        self.drain.close()


class _Drain:
    """One thread that reads and discards what clients still send after their answer, and closes each
    connection when its client hangs up or ``deadline`` seconds have passed. At most ``limit`` at
    once: past it the oldest is closed as it is (a flood may then see a reset; nothing else does)."""

    def __init__(self, deadline: float, limit: int):
        self.deadline, self.limit = deadline, limit
        self._new: queue.SimpleQueue = queue.SimpleQueue()
        self._open: dict[socket.socket, float] = {}  # connection -> when it is closed at the latest
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="steer-drain", daemon=True)
        self._thread.start()

    def add(self, connection: socket.socket) -> None:
        self._new.put(connection)

    def close(self) -> None:
        self._closed.set()
        self._thread.join()

    def _loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            while not self._closed.is_set():
                while not self._new.empty():
                    connection = self._new.get()
                    with contextlib.suppress(OSError, ValueError):
                        connection.setblocking(False)
                        selector.register(connection, selectors.EVENT_READ)
                        self._open[connection] = time.monotonic() + self.deadline
                    while len(self._open) > self.limit:
                        self._end(selector, next(iter(self._open)))
                for key, _ in selector.select(timeout=0.05):
                    try:
                        if key.fileobj.recv(65536):
                            continue
                    except BlockingIOError:
                        continue
                    except OSError:
                        pass
                    self._end(selector, key.fileobj)  # the client hung up (or the connection broke)
                now = time.monotonic()
                for connection in [c for c, until in self._open.items() if until <= now]:
                    self._end(selector, connection)
            for connection in list(self._open):
                self._end(selector, connection)

    def _end(self, selector, connection) -> None:
        self._open.pop(connection, None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            selector.unregister(connection)
        with contextlib.suppress(OSError):
            connection.close()


class _DeadlineReader(io.RawIOBase):
    """The connection's input, with a deadline for all of it: each read may wait the client's
    ``timeout`` at most, and never past ``until`` (a client sending a byte every few seconds, each
    well inside the timeout, cannot hold its slot for good)."""

    def __init__(self, connection: socket.socket, timeout: float, until: float):
        self.connection, self.timeout, self.until = connection, timeout, until

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self.until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took longer than its deadline")
        self.connection.settimeout(min(self.timeout, left))
        return self.connection.recv_into(buffer)


class _SteerHandler(BaseHTTPRequestHandler):
    server: _SteeringServer

    def setup(self) -> None:
        self.request.settimeout(self.server.client_timeout)  # a half-open or slow client cannot hold a thread
        super().setup()
        until = time.monotonic() + self.server.deadline
        self.rfile.close()  # the plain reader: an open one would keep the socket from closing
        self.rfile = io.BufferedReader(_DeadlineReader(self.request, self.server.client_timeout, until))

    def _answer(self, status: int, body: dict) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:
        if self.path != "/steer":
            return self._answer(404, {"error": "no such endpoint"})
        given = self.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.server.token}".encode()):
            return self._answer(401, {"error": "missing or wrong token"})  # before reading a byte of the body
        if self.headers.get("content-length") is None:
            return self._answer(411, {"error": "a content-length is required"})
        try:
            length = int(self.headers["content-length"])
        except ValueError:
            return self._answer(400, {"error": "content-length must be a number"})
        if length < 0:  # read(-1) would read to the end of the stream, past any cap
            return self._answer(400, {"error": "content-length must not be negative"})
        if length > self.server.max_bytes:
            return self._answer(413, {"error": f"the body is over {self.server.max_bytes} bytes"})
        try:
            text = json.loads(self.rfile.read(length))["text"]
            if not isinstance(text, str) or not text.strip():
                raise ValueError
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return self._answer(400, {"error": 'body must be {"text": "<non-empty string>"}'})
        except OSError:
            return None  # the client went away or timed out: nothing to answer
        try:
            accepted = self.server.agent.steer(text)
        except SteerTooLarge as e:
            return self._answer(413, {"error": str(e)})
        if not accepted:
            return self._answer(409, {"error": "the run is not active"})
        return self._answer(200, {"status": "queued"})

    def log_message(self, *args: object) -> None:
        pass
