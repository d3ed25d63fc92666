"""``serve --upstream URL``: a recording proxy in front of a real Messages API server.

Each request goes to the upstream unchanged (its body, its headers, the client's own key); the
upstream's answer goes back unchanged (a stream as it arrives, event by event). Next to it, the same request is run through this process's
emulator, which only keeps the accounting (its cache sees the same sequence of requests the
upstream's does): its usage is the *prediction* the report shows next to the real usage. Its answer
is never sent to the client.

A thinking block whose signature the emulator cannot read (one the real API made) is left out of
the predicted request: the emulator can neither verify it nor bind to it, so the prediction is
made without it and says so.

The proxy goes nowhere but its upstream: only a path is forwarded (the HTTP layer refuses an
absolute-form target, and so does ``forward``), and the URL it shows (in a 502, the log, the
banner) is ``shown``: credentials in it (``http://user:password@...``, a secret-looking query
parameter) are used to reach the upstream and never printed.
"""

from __future__ import annotations

import json
from typing import Any, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx2  # the SDK's own HTTP client: nothing more to install

from ..emulator import Emulator
from ..emulator.binding import THINKING_TYPES, read
from .exchange import SECRET_NAME

# Hop-by-hop headers (RFC 9110 §7.6.1) and those the HTTP client sets itself: not forwarded.
HOP = {"host", "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
       "content-length", "accept-encoding", "content-encoding"}


class Upstream:
    def __init__(self, url: str, timeout: float = 600.0):
        self.url, self._secrets = shown(url.rstrip("/"))  # the URL as printed and logged
        self.client = httpx2.Client(base_url=url.rstrip("/"), timeout=timeout, follow_redirects=False)

    def forward(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """The upstream's answer; a connection failure is a 502 in the API's error shape."""
        if not path.startswith("/") or path.startswith("//"):  # a path on the upstream, nothing else
            return _error(400, "invalid_request_error", "only a path is forwarded (origin-form, RFC 9112 §3.2.1)")
        sent = {k: v for k, v in headers.items() if k.lower() not in HOP}
        try:
            answer = self.client.send(self.client.build_request(method, path, content=body, headers=sent), stream=True)
        except httpx2.HTTPError as e:
            return self._unreachable(e)
        # the client decodes a compressed answer: its content-encoding no longer applies.
        out = {k: v for k, v in answer.headers.items() if k.lower() not in HOP}
        if out.get("content-type", "").startswith("text/event-stream"):
            return answer.status_code, out, _relay(answer)  # relayed as it arrives
        try:
            return answer.status_code, out, answer.read()
        except httpx2.HTTPError as e:
            return self._unreachable(e)
        finally:
            answer.close()

    def _unreachable(self, e: Exception) -> tuple[int, dict[str, str], bytes]:
        message = f"the upstream {self.url} could not be reached: {type(e).__name__}: {e}"
        for secret in self._secrets:  # an error's text may quote the URL as given
            message = message.replace(secret, "[redacted]")
        return _error(502, "api_error", message)

    def close(self) -> None:
        self.client.close()


def _relay(answer: httpx2.Response) -> Iterator[bytes]:
    try:
        yield from answer.iter_bytes()
    finally:
        answer.close()


def shown(url: str) -> tuple[str, list[str]]:
    """``url`` without its credentials (user and password gone, a query value whose name says key,
    token, secret, auth or cookie redacted), and the secrets taken out."""
    parts = urlsplit(url)
    secrets = [s for s in (parts.username, parts.password) if s]
    query = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if SECRET_NAME.search(name) and value:
            secrets.append(value)
            value = "[redacted]"
        query.append((name, value))
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="[]"))), secrets


def _error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps(
        {"type": "error", "error": {"type": kind, "message": message}}).encode()


def predict(emulator: Emulator, path: str, request: Any, headers: dict[str, str]) -> dict | str | None:
    """The emulator's answer to the same request (its usage is the prediction), or why there is none."""
    if not path.split("?")[0] == "/v1/messages" or not isinstance(request, dict):
        return None
    request, left_out = _without_foreign_thinking(request)
    body = json.dumps(request).encode()
    status, answer_headers, payload = emulator.handle("POST", "/v1/messages", body, headers)
    from .exchange import Exchange
    answer = Exchange.of("POST", path, headers, b"", status, answer_headers, payload).response
    if status >= 400:
        error = (answer or {}).get("error", {}) if isinstance(answer, dict) else {}
        return f"the emulator refuses it ({status}): {error.get('message', '')}"
    if left_out and isinstance(answer, dict):
        answer["note"] = f"predicted without {left_out} thinking block(s) signed by the upstream"
    return answer


def _without_foreign_thinking(request: dict) -> tuple[dict, int]:
    left_out, messages = 0, []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            kept = [b for b in content if not (isinstance(b, dict) and b.get("type") in THINKING_TYPES
                                               and read(b.get("signature")) is None)]
            left_out += len(content) - len(kept)
            message = {**message, "content": kept}
        messages.append(message)
    return ({**request, "messages": messages} if left_out else request), left_out
