"""The emulator over HTTP on loopback, for clients that are not this process's SDK."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Iterator

from .errors import ApiError

if TYPE_CHECKING:
    from . import Emulator

MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API's request size limit


@contextlib.contextmanager
def serve(emulator: "Emulator", host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            try:
                length = int(self.headers.get("content-length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_REQUEST_BYTES:  # refused before the body is read
                error = ApiError(413 if length > 0 else 400, f"Request exceeds the maximum allowed number of bytes "
                                 f"({MAX_REQUEST_BYTES:,})." if length > 0 else "content-length must be a number")
                status, headers, payload = error.status, {"content-type": "application/json", "connection": "close"}, error.body()
                self.close_connection = True
            else:
                body = self.rfile.read(length)
                status, headers, payload = emulator.handle("POST", self.path.split("?")[0], body,
                                                           {k.lower(): v for k, v in self.headers.items()})
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:  # keep test and notebook output clean
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
