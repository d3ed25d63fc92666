"""An OTLP/HTTP receiver on loopback: what a tracing tool's collector does with spans, decoded with
``opentelemetry-proto`` (the protocol's own messages), so a test reads what a real consumer would."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse


def value_of(any_value):
    """An attribute's value as Python: its one field set (a list for an array)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


class Received:
    def __init__(self):
        self.spans: list[dict] = []  # each: name, kind, ids, parent, status, attributes, the resource's
        self.lock = threading.Lock()

    def add(self, body: bytes) -> None:
        export = ExportTraceServiceRequest.FromString(body)
        for resource_spans in export.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    with self.lock:
                        self.spans.append({
                            "name": span.name, "kind": span.kind, "id": span.span_id.hex(),
                            "trace": span.trace_id.hex(), "parent": span.parent_span_id.hex() or None,
                            "status": span.status.code, "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano, "resource": resource,
                            "attributes": {a.key: value_of(a.value) for a in span.attributes}})

    def named(self, prefix: str) -> list[dict]:
        return [s for s in self.spans if s["name"].startswith(prefix)]


@contextlib.contextmanager
def receiver() -> Iterator[tuple[str, Received]]:
    """(the traces endpoint, what arrived there)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
                self.send_response(404)
                self.end_headers()
                return
            received.add(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", received
    finally:
        server.shutdown()
        server.server_close()
