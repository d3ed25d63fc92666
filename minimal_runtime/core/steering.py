"""Steering over HTTP: a person (or a supervisor) pushes a user message into a live run.

Unlike an injection, a steering message is durable: it lands in the history as a user turn, because
the model should still know ten turns later that it was told to change course.

    POST /steer   {"text": "..."}   Authorization: Bearer <token>
    200 queued · 400 bad body · 401 no or wrong token · 409 no active run

Loopback only by default; the token is required because anyone on the machine can reach loopback.
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


@contextlib.contextmanager
def steering_server(agent: "AgentView", token: str, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``POST /steer`` for ``agent``; yields the base URL."""
    if not token:
        raise ValueError("a steering token is required")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: dict) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path != "/steer":
                return self._answer(404, {"error": "no such endpoint"})
            given = self.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return self._answer(401, {"error": "missing or wrong token"})
            try:
                text = json.loads(raw)["text"]
                if not isinstance(text, str) or not text.strip():
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                return self._answer(400, {"error": 'body must be {"text": "<non-empty string>"}'})
            if not agent.steer(text):
                return self._answer(409, {"error": "the run is not active"})
            return self._answer(200, {"status": "queued"})

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
