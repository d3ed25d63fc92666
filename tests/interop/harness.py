"""The emulator as a client sees it over HTTP, with a server-side record of every exchange.

``serve_emulator(policy)`` is the one place that starts the server: today ``Emulator.serve()`` in
this process; when ``python -m minimal_runtime serve`` exists, only its body changes (start the
command, read its per-call log into ``Exchange`` records).

Each record says what the client sent that matters for fidelity (API version, auth scheme, betas,
how many signed thinking blocks it resent) and what the emulator did: the status, the error text,
and the prefix check's verdicts. The verdicts are recomputed here with the emulator's own
``binding.check`` for every accepted request, on every model, so a client that edits history
shows up even on a model where the API does not enforce the check. For a refused request the record
keeps a shape of the request (field paths, block types, headers), never the client's prose.
"""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from minimal_runtime.emulator import Emulator, binding
from minimal_runtime.provider.models import lookup

PREFIX_ERROR = "bound to a different conversation"
_SCALARS = ("model", "max_tokens", "stream", "temperature", "top_p", "top_k", "thinking", "output_config",
            "tool_choice", "context_management", "compaction", "service_tier", "inference_geo")


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    model: str | None = None
    error: str | None = None
    version: str | None = None  # anthropic-version
    auth: str | None = None  # "x-api-key" or "bearer"
    betas: list[str] = field(default_factory=list)
    stream: bool = False
    keys: list[str] = field(default_factory=list)  # the request's top-level fields
    settings: dict = field(default_factory=dict)  # the values of those that select behaviour (no prose)
    signed_blocks: int = 0  # thinking blocks with a signature, resent in messages
    prefix_failures: list[str] = field(default_factory=list)  # paths of blocks the check rejects
    shape: dict | None = None  # refused requests only: what was sent, without prose

    @property
    def refused(self) -> bool:
        return self.status >= 400

    def to_json(self) -> dict:
        return asdict(self)


class RecordingEmulator(Emulator):
    """An emulator that keeps an ``Exchange`` for every HTTP request it answers."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.exchanges: list[Exchange] = []
        self._record_lock = threading.Lock()

    def handle(self, method: str, path: str, body: bytes, request_headers: dict[str, str] | None = None):
        status, headers, payload = super().handle(method, path, body, request_headers)
        with self._record_lock:
            self.exchanges.append(self._exchange(method, path, body, request_headers or {}, status, payload))
        return status, headers, payload

    def _exchange(self, method, path, body, request_headers, status, payload) -> Exchange:
        h = {k.lower(): v for k, v in request_headers.items()}
        auth = "bearer" if h.get("authorization", "").lower().startswith("bearer") else (
            "x-api-key" if "x-api-key" in h else None)
        betas = sorted(b.strip() for b in h.get("anthropic-beta", "").split(",") if b.strip())
        x = Exchange(method, path, status, version=h.get("anthropic-version"), auth=auth, betas=betas)
        try:
            request = json.loads(body) if body else None
        except (ValueError, UnicodeDecodeError):
            request = None
        if isinstance(request, dict):
            x.model, x.stream = request.get("model"), bool(request.get("stream"))
            x.keys = sorted(request)
            x.settings = {k: request[k] for k in _SCALARS if k in request and k not in ("model", "stream")}
            x.signed_blocks = sum(1 for _, b in _thinking_blocks(request) if b.get("signature"))
        if status >= 400:
            try:
                x.error = json.loads(payload)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                x.error = payload[:300].decode(errors="replace")
            x.shape = shape(request, h)
            if x.error and PREFIX_ERROR in x.error:
                x.prefix_failures.append(x.error.split(":")[0])
        elif isinstance(request, dict) and path == "/v1/messages" and x.signed_blocks:
            spec = lookup(x.model or "")
            if spec is not None:
                bound = binding.check(request, spec, self.account, 0, None)
                x.prefix_failures = [v.path for v in bound.verdicts if v.reason is not None or v.tampered]
        return x


def _thinking_blocks(request: dict) -> Iterator[tuple[int, dict]]:
    for i, message in enumerate(request.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in binding.THINKING_TYPES:
                yield i, block


def shape(request: Any, headers: dict[str, str]) -> dict:
    """What a refused request looked like, minus the client's prose: parameter values, field
    paths, block types, tool names, and the headers that select behaviour."""
    out: dict[str, Any] = {"headers": {k: v for k, v in headers.items()
                                       if k in ("anthropic-version", "anthropic-beta", "content-type",
                                                "content-encoding", "transfer-encoding", "user-agent")}}
    if not isinstance(request, dict):
        out["body"] = "not a JSON object"
        return out
    out["keys"] = sorted(request)
    out.update({k: request[k] for k in _SCALARS if k in request})
    system = request.get("system")
    if isinstance(system, list):
        out["system"] = [_block_shape(b) for b in system]
    out["tools"] = [t.get("name", t.get("type")) for t in request.get("tools") or [] if isinstance(t, dict)]
    out["messages"] = [
        {"role": m.get("role"), **{k: v for k, v in m.items() if k not in ("role", "content")},
         "content": [_block_shape(b) for b in m["content"]] if isinstance(m.get("content"), list) else "str"}
        for m in request.get("messages") or [] if isinstance(m, dict)]
    return out


def _block_shape(block: Any) -> Any:
    if not isinstance(block, dict):
        return type(block).__name__
    return {"type": block.get("type"), **{k: block[k] for k in ("cache_control", "citations", "is_error")
                                          if k in block}}


@contextlib.contextmanager
def serve_emulator(policy, model: str = "claude-sonnet-5-5") -> Iterator[tuple[str, list[Exchange]]]:
    """Start the emulator over HTTP on loopback; yields (base URL, the list its exchanges land in).
    The one function to change when the ``serve`` command replaces ``Emulator.serve()``."""
    emulator = RecordingEmulator(model=model, policy=policy)
    with emulator.serve() as base_url:
        yield base_url, emulator.exchanges


# -- the summary ----------------------------------------------------------------------------------

def summary_table(rows: list[dict]) -> str:
    """One line per client and model: requests, refused, prefix failures, and what it sent."""
    header = ("client", "model", "requests", "refused", "prefix failures", "signed blocks resent", "api versions",
              "seconds", "result")
    lines = [header]
    for r in rows:
        xs: list[Exchange] = r["exchanges"]
        versions = sorted({x.version or "-" for x in xs})
        lines.append((r["client"], r["model"], str(len(xs)), str(sum(x.refused for x in xs)),
                      str(sum(bool(x.prefix_failures) for x in xs)), str(sum(x.signed_blocks for x in xs)),
                      ",".join(versions), f"{r['seconds']:.1f}", r["result"]))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    fmt = lambda line: "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(lines[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, lines[1:])])


def what_clients_send(rows: list[dict]) -> list[str]:
    """Per client, over all its requests: API versions, auth schemes, betas, and the distinct values
    of the fields that select behaviour (temperature, thinking, output_config ...)."""
    out = []
    for client in dict.fromkeys(r["client"] for r in rows):
        xs = [x for r in rows if r["client"] == client for x in r["exchanges"]]
        settings: dict[str, set] = {}
        for x in xs:
            for k, v in x.settings.items():
                if k not in ("max_tokens",):
                    settings.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
        values = "; ".join(f"{k}: " + " | ".join(sorted(v)) for k, v in settings.items())
        out.append(f"{client}: anthropic-version {sorted({x.version for x in xs if x.version})}, "
                   f"auth {sorted({x.auth for x in xs if x.auth})}, "
                   f"betas {sorted({b for x in xs for b in x.betas})}, settings {{{values}}}")
    return out
