"""The emulator over HTTP on loopback, for clients that are not this process's SDK."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from . import Emulator


@contextlib.contextmanager
def serve(emulator: "Emulator", host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
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
