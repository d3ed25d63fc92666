"""One HTTP exchange as data, and the ``--log`` file that keeps them.

The log is JSON lines, one object per exchange, in order (``replay`` and any script can read it):

    {"n": 1, "time": "2026-12-01T09:00:00.000Z", "method": "POST", "path": "/v1/messages",
     "request_headers": {...}, "request": {...} | null, "status": 200, "response_headers": {...},
     "response": {...} | null, "stream": false, "model": "claude-sonnet-5-5",
     "usage": {...} | null, "predicted_usage": {...} | null, "upstream": "https://..." | null,
     "prefix": "ok (2 thinking sent back)" | null, "thread": "continue of msg_... (+1 message, 6 held)" | null,
     "attendee": "ada" | "key-3f9a1c07" | null, "line": "#1 claude-sonnet-5-5 200 | ..."}

``request`` and ``response`` are the parsed JSON bodies; a streamed answer is kept as the message
its events assemble to (``stream: true``), the form a non-streamed call would have had; a body that is
not JSON is kept as text under ``request_text`` / ``response_text``. A request the HTTP server
refused itself (a target that is not a path, a foreign ``Host``, a body past its cap or not valid
HTTP, the deadline: ``emulator/server.py``) has ``"refused_by_server": true``, what arrived of its
head (``method`` and ``path`` ``"-"`` when its request line never did) and no ``request``. ``usage`` is what the server
reported; ``predicted_usage`` (proxy mode only) is what the emulator's accounting predicted for the
same request. ``prefix`` is the prefix check's verdict on models that run it (``REFUSED at ...``,
``ok, dropped N: ...``, ``ok ...``), ``thread`` what a message thread did (``request`` keeps what was
sent: a continue's new messages only), ``attendee`` who sent it (``room.py``: ``metadata.user_id``, an
``--attendee`` label, or a short hash of the key, never the key), ``line`` the line ``serve`` printed. Only the headers known to be
safe to share (``LOGGED_HEADERS``: what the SDKs and the API send about the protocol, the client and the
rate limits) are written as sent; every other header is named with the value ``"[redacted]"``, so the
log says which it left out: a key, a token, a cookie, and the headers nobody listed (``x-api-pass``,
``x-credentials``, ``x-signature``, ``x-session`` ...). A log can be shared. A lone surrogate (a JSON ``\\ud800`` a client sent) is kept, escaped.

A Message Batch is logged bounded, about 500 bytes a request however long its requests and answers:
its create with its first ``BATCH_KEPT`` requests (``request_omitted`` says how many more), its results
with each message's id, model, stop reason and usage but not its content (``response_trimmed``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

BATCHES = "/v1/messages/batches"
BATCH_KEPT = 10  # requests of a batch's create the log keeps: a batch costs the log about 500 bytes a request
# Written as sent: the headers the Anthropic SDKs and the API send that say nothing a reader of a shared
# log should not see (what was asked for and how, which client, the request's id, the rate limits).
# A name not listed here is written with "[redacted]": an allow-list, since a deny-list of what a
# secret's name says misses the names no one thought of (issue 61: x-api-pass, x-signature, x-session).
LOGGED_HEADERS = frozenset({
    "accept", "accept-encoding", "anthropic-beta", "anthropic-version", "connection", "content-encoding",
    "content-length", "content-type", "date", "host", "keep-alive", "request-id", "retry-after", "server",
    "transfer-encoding", "user-agent", "via", "x-should-retry", "anthropic-dangerous-direct-browser-access",
})
LOGGED_PREFIXES = ("x-stainless-", "anthropic-ratelimit-")  # the SDK's client facts; the API's limits
SECRET_NAME = re.compile(r"key|token|secret|auth|cookie|passw", re.IGNORECASE)  # a URL's query parameters (proxy)


def logged(name: str) -> bool:
    """Is the header ``name`` written to the log as sent?"""
    name = name.lower()
    return name in LOGGED_HEADERS or name.startswith(LOGGED_PREFIXES)


def redact(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` as the log writes them: the listed ones as sent, every other one named, "[redacted]"."""
    return {k: v if logged(k) else "[redacted]" for k, v in headers.items()}


@dataclass
class Exchange:
    """A request and its answer, parsed."""

    method: str
    path: str
    request_headers: dict[str, str]
    request: Any  # the JSON body, or None
    status: int
    response_headers: dict[str, str]
    response: Any  # the JSON answer (a streamed one assembled), or None
    stream: bool = False
    request_text: str | None = None
    response_text: str | None = None
    predicted: Any = None  # proxy mode: the emulator's answer to the same request
    upstream: str | None = None
    asked: str | None = None  # the model the client named, when it was served as another
    prefix: str | None = None  # the prefix check's verdict, on models that run it
    thread: str | None = None  # what a message thread did: "continue ...", "create", "create (replays ...)"
    conversation: Any = None  # a thread continue: the full request it stood for (``request`` is what was sent)
    refused_by_server: bool = False  # answered by the HTTP server before the front saw it: no body was read
    attendee: str | None = None  # who sent it (``room.Room.attendee``: a name, never the key)
    size: int = 0  # the bytes the request stands for (its body's; a thread continue's, the held ones too)
    time: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="milliseconds")
                      .replace("+00:00", "Z"))

    @classmethod
    def of(cls, method: str, path: str, request_headers: dict[str, str], body: bytes,
           status: int, response_headers: dict[str, str], payload: bytes, **extra: Any) -> "Exchange":
        request, request_text = _json_or_text(body)
        kind = {k.lower(): v for k, v in response_headers.items()}.get("content-type", "")
        stream = kind.startswith("text/event-stream")
        response, response_text = (assemble(payload), None) if stream else _json_or_text(payload)
        extra.setdefault("size", len(body))
        return cls(method, path, request_headers, request, status, response_headers, response, stream,
                   request_text, response_text, **extra)

    @property
    def model(self) -> str | None:
        for body in (self.response, self.request):
            if isinstance(body, dict) and isinstance(body.get("model"), str):
                return body["model"]
        return None

    @property
    def usage(self) -> dict | None:
        usage = self.response.get("usage") if isinstance(self.response, dict) else None
        return usage if isinstance(usage, dict) else None

    @property
    def error(self) -> str | None:
        if self.status < 400:
            return None
        error = self.response.get("error") if isinstance(self.response, dict) else None
        if isinstance(error, dict):
            return f"{error.get('type', 'error')}: {error.get('message', '')}"
        return (self.response_text or "")[:200]

    def record(self, n: int, line: str | None = None) -> dict:
        request, response_text, said = self.request, self.response_text, {}
        if self.path == BATCHES and isinstance(request, dict) and isinstance(request.get("requests"), list) \
                and len(request["requests"]) > BATCH_KEPT:
            request = {**request, "requests": request["requests"][:BATCH_KEPT]}
            said["request_omitted"] = f"{len(self.request['requests']) - BATCH_KEPT:,} more requests of the batch " \
                                      f"(a batch's create is logged with its first {BATCH_KEPT})"
        if response_text is not None and self.path.startswith(BATCHES + "/") and self.path.endswith("/results"):
            response_text = "".join(_counted(line) + "\n" for line in response_text.splitlines() if line.strip())
            said["response_trimmed"] = "each result's message without its content: what the report counts"
        out: dict[str, Any] = {"n": n, "time": self.time, "method": self.method, "path": self.path,
                               "request_headers": redact(self.request_headers), "request": request, **said}
        if self.request_text is not None:
            out["request_text"] = self.request_text
        out.update(status=self.status, response_headers=redact(self.response_headers), response=self.response,
                   stream=self.stream)
        if response_text is not None:
            out["response_text"] = response_text
        predicted = self.predicted.get("usage") if isinstance(self.predicted, dict) else None
        out.update(model=self.model, usage=self.usage, predicted_usage=predicted, upstream=self.upstream,
                   prefix=self.prefix, thread=self.thread, attendee=self.attendee, line=line)
        if self.refused_by_server:
            out["refused_by_server"] = True
        return out


class Log:
    """Appends one JSON line per exchange; flushed per line, so a killed server loses nothing."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._file = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, n: int, exchange: Exchange, printed: str | None = None) -> None:
        record = exchange.record(n, printed)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: written as its JSON escape, read back exactly
            line = json.dumps(record, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


FIGURE = 10**15  # no count a record carries (a call's number, a status, a token count) comes near it


def flaw(record: dict) -> str | None:
    """What makes ``record`` one ``serve`` never writes, in a few words (None: none): a figure that is
    not a whole number under ``FIGURE`` (``Infinity``, ``1e400``, 400 digits), a verdict or a line that
    is not text, a request whose ``system``, ``tools`` or ``messages`` is not what the API takes. A log
    is shared: ``view`` leaves such a line out and names it, as it does a line that is not JSON."""
    for name in ("n", "status"):
        if not _whole(record.get(name), allow_none=name == "n"):
            return f"{name}: {_shown(record.get(name))} is not a whole number"
    for name in ("usage", "predicted_usage"):
        usage = record.get(name)
        if usage is not None and not isinstance(usage, dict):
            return f"{name}: not an object"
        for key, value in (usage or {}).items():
            if key.endswith("tokens") and not _whole(value, allow_none=True):
                return f"{name}.{key}: {_shown(value)} is not a whole number of tokens"
            if isinstance(value, dict) and not all(_whole(v, allow_none=True) for v in value.values()
                                                   if not isinstance(v, str)):
                return f"{name}.{key}: a figure that is not a whole number"
    for name in ("method", "path", "time", "model", "prefix", "thread", "attendee", "line", "upstream"):
        if record.get(name) is not None and not isinstance(record[name], str):
            return f"{name}: a JSON {type(record[name]).__name__}, not text"
    return request_flaw(record.get("request"))


def request_flaw(request: Any) -> str | None:
    """What makes a logged request one the page cannot draw (its ``system``, ``tools`` or ``messages``
    not what the API takes: a request a server refused, or a hostile log's); None: none."""
    if not isinstance(request, dict):
        return None
    system, tools, messages = request.get("system"), request.get("tools"), request.get("messages")
    if system is not None and not isinstance(system, str) and not _objects(system):
        return f"request.system: a JSON {type(system).__name__}, not text or a list of blocks"
    if tools is not None and not _objects(tools):
        return "request.tools: not a list of tools"
    if messages is not None and not (_objects(messages) and all(
            isinstance(m.get("content"), str) or _objects(m.get("content")) for m in messages)):
        return "request.messages: not a list of messages with text or blocks"
    return None


def _whole(value: Any, allow_none: bool = False) -> bool:
    if value is None:
        return allow_none
    return isinstance(value, int) and not isinstance(value, bool) and -FIGURE < value < FIGURE


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _shown(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (int, float, str, bool)) or value is None else type(value).__name__
    return text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"


def _counted(line: str) -> str:
    """One line of a batch's results as the log keeps it: a succeeded message without its content
    (its id, model, stop reason and usage: what the report and the page count); others as they are."""
    try:
        item = json.loads(line)
        message = item["result"]["message"]
        trimmed = {k: message[k] for k in ("id", "type", "model", "stop_reason", "usage") if k in message}
        return json.dumps({**item, "result": {**item["result"], "message": trimmed}}, separators=(",", ":"))
    except (ValueError, KeyError, TypeError, RecursionError):
        return line


def _json_or_text(body: bytes) -> tuple[Any, str | None]:
    if not body:
        return None, None
    try:
        return json.loads(body), None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None, body.decode("utf-8", "replace")


def assemble(payload: bytes) -> dict | None:
    """The message a stream of server-sent events stands for (the Messages API's event sequence)."""
    message: dict | None = None
    partial: dict[int, str] = {}
    for event in payload.decode("utf-8", "replace").split("\n\n"):
        data = "".join(line[5:].strip() for line in event.splitlines() if line.startswith("data:"))
        if not data:
            continue
        try:
            item = json.loads(data)
        except ValueError:
            continue
        kind = item.get("type")
        if kind == "message_start":
            message = dict(item.get("message") or {})
            message["content"] = list(message.get("content") or [])
        elif message is None:
            if kind == "error":  # an error mid-stream ends it
                return item
            continue
        elif kind == "content_block_start":
            message["content"].append(dict(item.get("content_block") or {}))
        elif kind == "content_block_delta" and message["content"]:
            index = item.get("index", len(message["content"]) - 1)
            block, delta = message["content"][min(index, len(message["content"]) - 1)], item.get("delta") or {}
            for key in ("text", "thinking", "signature", "content"):
                name = {"text": "text_delta", "thinking": "thinking_delta", "signature": "signature_delta",
                        "content": "compaction_delta"}[key]
                if delta.get("type") == name:
                    block[key] = (block.get(key) or "") + (delta.get(key) or "")
            if delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + delta.get("partial_json", "")
        elif kind == "content_block_stop":
            index = item.get("index", len(message["content"]) - 1)
            if index in partial and index < len(message["content"]):
                try:
                    message["content"][index]["input"] = json.loads(partial.pop(index) or "{}")
                except ValueError:
                    pass
        elif kind == "message_delta":
            message.update({k: v for k, v in (item.get("delta") or {}).items()})
            usage = {**(message.get("usage") or {}), **{k: v for k, v in (item.get("usage") or {}).items() if v is not None}}
            message["usage"] = usage
            if "context_management" in item:
                message["context_management"] = item["context_management"]
        elif kind == "error":
            return item
    return message
