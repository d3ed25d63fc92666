"""Steering over HTTP: a person (or a supervisor) pushes a user message into a live run.

Unlike an injection, a steering message is durable: it lands in the history as a user turn, because
the model should still know ten turns later that it was told to change course.

    POST /steer   {"text": "..."}   Authorization: Bearer <token>
    200 queued · 400 bad body · 401 no or wrong token · 409 no active run · 413 too large
    503 too many connections

Loopback only by default; the token is required because anyone on the machine can reach loopback.
The server is built to be poked at: the token is checked from the headers before any of the body is
read, the body is capped and read with a socket timeout, and the number of connections served at
once is bounded (extra ones get a 503 at once instead of a thread each).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from .protocols import AgentView


class SteerTooLarge(ValueError):
    """The steer would not fit: over the server's cap, or past the model's context window."""


@contextlib.contextmanager
def steering_server(agent: "AgentView", token: str, host: str = "127.0.0.1", port: int = 0, *,
                    max_bytes: int = 32_768, timeout: float = 5.0, max_connections: int = 16) -> Iterator[str]:
    """Serve ``POST /steer`` for ``agent``; yields the base URL."""
    if not token:
        raise ValueError("a steering token is required")
    server = _SteeringServer((host, port), agent, token, max_bytes, timeout, max_connections)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _SteeringServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], agent: "AgentView", token: str, max_bytes: int,
                 client_timeout: float, max_connections: int) -> None:
        self.agent, self.token, self.max_bytes, self.client_timeout = agent, token, max_bytes, client_timeout
        self.slots = threading.BoundedSemaphore(max_connections)
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
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class _SteerHandler(BaseHTTPRequestHandler):
    server: _SteeringServer

    def setup(self) -> None:
        self.request.settimeout(self.server.client_timeout)  # a half-open or slow client cannot hold a thread
        super().setup()

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
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            return self._answer(400, {"error": "content-length must be a number"})
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
