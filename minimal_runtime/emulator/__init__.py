"""An offline Messages API under the real ``anthropic`` SDK.

    emu = Emulator(model="claude-sonnet-4-6", policy=..., clock=...)
    client = emu.client()          # anthropic.Anthropic wired through an in-process transport
    aclient = emu.async_client()   # anthropic.AsyncAnthropic, same emulator
    with emu.serve() as base_url:  # a loopback HTTP server for any Messages API client
        ...

Two parts, kept apart: *accounting* (tokens, cache, cost: faithful to the provider's published
rules, see ``prompt.py`` and ``cache.py``) and *behaviour* (a policy: a simulation). One emulator
holds one cache for its lifetime and serialises requests, so several threads or asyncio tasks can
share it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import deque
from typing import Any, Callable, Iterator

import anthropic
import httpx2

from ..provider.cost import CallRecord
from ..provider.models import lookup, model_spec
from . import context_editing
from .body import BodyParser
from .cache import PromptCache
from .diagnostics import Fingerprint, cache_miss_reason
from .errors import ApiError, bad_request
from .policies import Policy, ScriptedPolicy, Turn, echo_policy, text, tool_use
from .prompt import flatten, render_block
from .streaming import sse
from .tokens import estimate_tokens
from .validate import validate

__all__ = ["Emulator", "ApiError", "Policy", "Turn", "ScriptedPolicy", "text", "tool_use"]

OFFLINE_BASE_URL = "http://emulator.invalid"


class Emulator:
    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        policy: Policy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        # A model that is not in the table is served as the model table describes unknown models
        # (with a warning): the emulator then stands in for a local server of that name.
        self.model = model_spec(model).id
        self.policy = policy or echo_policy
        self.clock = clock
        self.cache = PromptCache()
        self.calls: list[CallRecord] = []  # every successful /v1/messages call, in order
        self._faults: deque[tuple[int, float]] = deque()
        self._fingerprints: dict[str, Fingerprint] = {}
        self._lock = threading.Lock()
        self._ids = 0
        self._bodies = BodyParser()

    # -- wiring ---------------------------------------------------------------------------------

    def transport(self) -> httpx2.MockTransport:
        """An httpx transport that answers from this emulator (sync and async)."""
        def handler(request: httpx2.Request) -> httpx2.Response:
            status, headers, body = self.handle(request.method, request.url.path, request.read(), dict(request.headers))
            return httpx2.Response(status, headers=headers, content=body)
        return httpx2.MockTransport(handler)

    def client(self, **kwargs: Any) -> anthropic.Anthropic:
        kwargs.setdefault("api_key", "offline-emulator")
        kwargs.setdefault("base_url", OFFLINE_BASE_URL)
        return anthropic.Anthropic(http_client=httpx2.Client(transport=self.transport()), **kwargs)

    def async_client(self, **kwargs: Any) -> anthropic.AsyncAnthropic:
        kwargs.setdefault("api_key", "offline-emulator")
        kwargs.setdefault("base_url", OFFLINE_BASE_URL)
        return anthropic.AsyncAnthropic(http_client=httpx2.AsyncClient(transport=self.transport()), **kwargs)

    @contextlib.contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """Serve this emulator over HTTP on loopback; yields the base URL."""
        from .server import serve
        with serve(self, host, port) as base_url:
            yield base_url

    def inject_fault(self, status: int, count: int = 1, retry_after: float = 0.01) -> None:
        """Answer the next ``count`` requests with ``status`` (429, 500, 529 ...) and a
        ``retry-after``, so the SDK's own retry logic is exercised."""
        with self._lock:
            self._faults.extend([(status, retry_after)] * count)

    # -- the API --------------------------------------------------------------------------------

    def handle(self, method: str, path: str, body: bytes,
               request_headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """One HTTP exchange: (status, headers, body). Shared by the transport and the server."""
        betas = {b.strip() for b in (request_headers or {}).get("anthropic-beta", "").split(",") if b.strip()}
        headers = {"content-type": "application/json", "request-id": f"req_emu_{self._next_id():06d}"}
        try:
            if method != "POST" or path not in ("/v1/messages", "/v1/messages/count_tokens"):
                raise ApiError(404, f"{method} {path}: no such endpoint")
            self._maybe_fault()
            if path.endswith("count_tokens"):
                return 200, headers, json.dumps(self._count_tokens(body, betas)).encode()
            result, streaming = self._messages(body, betas)
            if streaming:
                return 200, {**headers, "content-type": "text/event-stream"}, sse(result)
            return 200, headers, json.dumps(result).encode()
        except ApiError as e:
            return e.status, {**headers, **e.headers}, e.body()

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _maybe_fault(self) -> None:
        with self._lock:
            if not self._faults:
                return
            status, retry_after = self._faults.popleft()
        messages = {429: "Number of request tokens has exceeded your rate limit (emulated fault).",
                    529: "Overloaded (emulated fault).", 500: "Internal server error (emulated fault)."}
        raise ApiError(status, messages.get(status, "emulated fault"), {
            "retry-after": str(max(1, round(retry_after))),
            "retry-after-ms": str(int(retry_after * 1000)),
        })

    def _prompt(self, request: dict, betas: set[str], *, needs_max_tokens: bool = True, reuse=None):
        """Validate, apply server-side context edits, flatten.
        Returns (spec, prompt, applied edits, the request as the model will read it)."""
        name = request.get("model") if isinstance(request, dict) else None
        spec = lookup(name) if isinstance(name, str) else None
        if spec is None and name == self.model:  # the emulator's own model, unknown to the table
            spec = model_spec(name)
        if spec is None:  # the API's answer to a model it does not serve
            raise ApiError(404, f"model: {name}")
        validate(request, spec, needs_max_tokens=needs_max_tokens)
        applied = []
        if request.get("context_management") is not None:
            if context_editing.BETA not in betas:
                raise bad_request(f"context_management: requires the anthropic-beta header {context_editing.BETA}")
            request, applied = context_editing.apply_edits(request, lambda r: flatten(r).total)
            reuse = None  # the edited prompt is not the body that was parsed
        prompt = flatten(request, reuse)
        if spec.context_window is not None and prompt.total > spec.context_window:
            raise bad_request(f"prompt is too long: {prompt.total} tokens > {spec.context_window} maximum")
        return spec, prompt, applied, request

    def _count_tokens(self, body: bytes, betas: set[str]) -> dict:
        request = _json(body)
        _, prompt, _, _ = self._prompt(request, betas, needs_max_tokens=False)
        result = {"input_tokens": prompt.total}
        if isinstance(request, dict) and request.get("context_management") is not None:
            result["context_management"] = {"original_input_tokens": flatten(request).total}
        return result

    def _messages(self, body: bytes, betas: set[str]) -> tuple[dict, bool]:
        with self._lock:
            try:
                parsed, earlier, shared = self._bodies.parse(body)
            except ValueError as e:
                raise bad_request(f"request body is not valid JSON: {e}") from None
            request = parsed.request
            spec, prompt, applied, seen = self._prompt(request, betas,
                                                       reuse=(earlier.prompt, shared) if earlier and earlier.prompt else None)
            parsed.prompt = prompt if not applied else None
            outcome = self.cache.apply(prompt, spec.min_cacheable_tokens or 0, self.clock())
            self._ids += 1
            message_id = f"msg_emu_{self._ids:020d}"
            current = Fingerprint.of(spec.id, prompt, outcome.read + outcome.written)
            diagnostics = None
            if "diagnostics" in request:
                previous_id = (request["diagnostics"] or {}).get("previous_message_id")
                if previous_id is not None:
                    reason = cache_miss_reason(self._fingerprints.get(previous_id), current, outcome.read)
                    diagnostics = {"cache_miss_reason": reason} if reason else None
            self._fingerprints[message_id] = current
            if len(self._fingerprints) > 10_000:  # the API keeps them for a while, not forever
                del self._fingerprints[next(iter(self._fingerprints))]

        # Behaviour runs after accounting is complete, so a policy cannot change what was billed.
        # Policies treat the request as read-only: its messages are shared with later parses.
        model, max_tokens, streaming = request["model"], request["max_tokens"], bool(request.get("stream"))
        try:
            turn = Turn.of(self.policy(seen))  # the model reads the prompt after server-side edits
        except Exception as e:  # a broken policy is a server-side bug: say so, don't retry
            raise ApiError(500, f"policy failed: {type(e).__name__}: {e}", {"x-should-retry": "false"}) from None
        last = prompt.digests[-1] if prompt.digests else b""
        content = [self._complete_block(b, last, k) for k, b in enumerate(turn.content)]
        output_tokens = sum(estimate_tokens(render_block(b)) for b in content) if content else 1
        stop_reason = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        if output_tokens > max_tokens:
            output_tokens, stop_reason = max_tokens, "max_tokens"

        usage = {
            "input_tokens": outcome.uncached,
            "cache_creation_input_tokens": outcome.written,
            "cache_read_input_tokens": outcome.read,
            "cache_creation": {"ephemeral_5m_input_tokens": outcome.written_5m,
                               "ephemeral_1h_input_tokens": outcome.written_1h},
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }
        with self._lock:
            self.calls.append(CallRecord.from_usage(usage, spec.id))
        message = {
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage, "diagnostics": diagnostics,
        }
        if request.get("context_management") is not None:
            message["context_management"] = {"applied_edits": applied}
        return message, streaming

    @staticmethod
    def _complete_block(block: dict, prompt_digest: bytes, index: int) -> dict:
        """Give a tool_use an id if the policy did not: derived from the prompt, so it is unique
        within a conversation and the same when a resumed run repeats a request."""
        if block.get("type") == "tool_use" and not block.get("id"):
            return {**block, "id": "toolu_" + hashlib.blake2b(prompt_digest + index.to_bytes(4, "big"), digest_size=12).hexdigest()}
        return block


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError as e:
        raise bad_request(f"request body is not valid JSON: {e}") from None
