"""An offline Messages API under the real ``anthropic`` SDK.

    emu = Emulator(model="claude-sonnet-5-5", policy=..., clock=..., account_created=date(2026, 11, 30))
    client = emu.client()          # anthropic.Anthropic wired through an in-process transport
    aclient = emu.async_client()   # anthropic.AsyncAnthropic, same emulator
    with emu.serve() as base_url:  # a loopback HTTP server for any Messages API client
        ...

Two parts, kept apart: *accounting* (tokens, cache, cost, and what the API accepts: faithful to the
provider's published rules, see ``prompt.py``, ``cache.py``, ``binding.py``, ``system_messages.py``,
``compaction.py``, ``context_editing.py``, ``validate.py``, ``versions.py``, ``structured.py``) and
*behaviour* (a policy: a simulation). One emulator holds one cache and one account for its lifetime; several threads or
asyncio tasks can share it (requests are billed one at a time; policies run concurrently, and a
request's cache writes become readable once its answer has begun).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import OrderedDict, deque
from datetime import date, datetime
from typing import Any, Callable, Iterator

import anthropic
import httpx2

from ..provider.cost import CallRecord
from .models import lookup, model_spec
from . import batches, binding, catalog, compaction, files, messages as pipeline, structured, threads, versions
from .body import BodyParser
from .cache import PromptCache
from .diagnostics import Fingerprint, cache_miss_reason
from .errors import ApiError, bad_request, fault
from .limits import fast_ratelimit_headers, ratelimit_headers
from .policies import Policy, ScriptedPolicy, Turn, echo_policy, text, tool_use
from .prompt import Render, flatten, render_block
from .server import body_limit
from .streaming import sse
from .tokens import estimate_tokens
from .validate import drop_null_markers

__all__ = ["Emulator", "ApiError", "Policy", "Turn", "ScriptedPolicy", "text", "tool_use"]

OFFLINE_BASE_URL = "http://emulator.invalid"
DEFAULT_ACCOUNT_CREATED = date(2026, 11, 30)  # a learner signing up today: the prefix check is enforced


class Emulator:
    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        policy: Policy | None = None,
        clock: Callable[[], float] = time.monotonic,
        account_created: date | datetime = DEFAULT_ACCOUNT_CREATED,
        account: str = "emulated-account",
        batch_delay: float = 0.0,
    ):
        # A model that is not in the table is served as the model table describes unknown models
        # (with a warning): the emulator then stands in for a local server of that name.
        self.model = model_spec(model).id
        self.policy = policy or echo_policy
        self.clock = clock
        self.account, self.account_created = account, pipeline.account_time(account_created)
        self.cache = PromptCache()
        self.calls: list[CallRecord] = []  # every successful /v1/messages call, in order
        self._faults: deque[tuple[int, float]] = deque()
        self._fingerprints: OrderedDict[tuple[str, str], Fingerprint] = OrderedDict()  # (owner, message id) ->
        self._created: OrderedDict[str, binding.Binding] = OrderedDict()  # block id -> the binding it was made in
        self.omitted: OrderedDict[str, None] = OrderedDict()  # ids of thinking blocks answered without their text
        self._lock = threading.Lock()
        self._ids = 0
        self._bodies = BodyParser()
        self.batches = batches.Batches(self, delay=batch_delay)  # Message Batches, on this emulator's clock
        self.files = files.Files()  # the Files API, per API key (files.py); created_at on the wall clock
        self.threads = threads.Threads(clock)  # message threads: the responses held for a continue
        self.faults = None  # errors on demand (serve --faults, --script): has draw(path) -> ApiError | None

    def copy(self, policy: Policy | None = None, clock: Callable[[], float] | None = None) -> Emulator:
        """A twin that goes on from here separately, answering with ``policy`` on ``clock`` (these
        by default): the same prompt cache (``PromptCache.copy``), ids, and thinking blocks handed out
        (what binds them and which went out without their text), so a conversation continued on the
        twin is answered and billed as it would be here (a replay's strategies go on from ``tail``'s
        state where they part from it). Message Batches, Files and held threads are not carried: the
        twin starts with none (a conversation on a thread is not continued by a copy)."""
        twin = Emulator(self.model, policy or self.policy, clock or self.clock, self.account_created, self.account,
                        self.batches.delay)
        with self._lock:
            twin.cache = self.cache.copy()
            twin.calls = list(self.calls)
            twin._faults = deque(self._faults)
            twin._fingerprints = OrderedDict(self._fingerprints)
            twin._created = OrderedDict(self._created)
            twin.omitted = OrderedDict(self.omitted)
            twin._ids = self._ids
        twin.faults = self.faults
        return twin

    # -- wiring ---------------------------------------------------------------------------------

    def transport(self) -> httpx2.MockTransport:
        """An httpx transport that answers from this emulator (sync and async)."""
        def handler(request: httpx2.Request) -> httpx2.Response:
            # items(): one pass over the headers (a dict of the Headers looks each key up again, O(n^2))
            status, headers, body = self.handle(request.method, request.url.raw_path.decode(), request.read(),
                                                dict(request.headers.items()))
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
        """One HTTP exchange: (status, headers, body). Shared by the transport and the server.
        ``path`` may carry its query string (a batch listing and the model listing are paged by it).
        Whatever the request, the answer is a status and a body: nothing raises out of here. Every
        answer carries a ``request-id`` (also in an error's body) and the rate-limit headers [OV; RL]."""
        request_headers = {k.lower(): v for k, v in (request_headers or {}).items()}
        betas = {b.strip() for b in request_headers.get("anthropic-beta", "").split(",") if b.strip()}
        request_id = f"req_emu_{self._next_id():06d}"
        headers = {"content-type": "application/json", "request-id": request_id, **ratelimit_headers()}
        path, _, query = path.partition("?")
        batch = path == batches.PATH or path.startswith(batches.PATH + "/")
        # A batch is processed beside this request, never inside it (batches.py): the processor is
        # handed the clock's reading first, and sends nothing while a direct call is being answered.
        caller = files.CALLER.set(threads.credential(request_headers))  # whose files a file_id names
        try:
            with self.answering(path):
                return self._handle(method, path, query, body, request_headers, betas, request_id, headers, batch)
        finally:
            files.CALLER.reset(caller)

    def answering(self, path: str):
        """Around a request to ``path`` being answered: unless it is one of the Message Batches
        endpoints, the batch processor waits for it (``batches.Batches.direct``); the HTTP server
        holds it from the request read whole to its answer sent."""
        if path == batches.PATH or path.startswith(batches.PATH + "/"):
            return contextlib.nullcontext()
        return self.batches.direct()

    def _handle(self, method, path, query, body, request_headers, betas, request_id, headers, batch):
        try:
            self.batches.catch_up()
            if method in ("GET", "HEAD") and catalog.is_models_path(path):
                return 200, headers, catalog.answer(path, query)
            if path == files.PATH or path.startswith(files.PATH + "/"):
                versions.authenticate(request_headers)
                status, extra, payload = self.files.handle(method, path, query, body, request_headers, betas)
                return status, {**headers, **extra}, payload
            if not batch and (method != "POST" or path not in ("/v1/messages", "/v1/messages/count_tokens")):
                raise ApiError(404, not_emulated(method, path))
            kind = request_headers.get("content-type", "application/json").split(";")[0].strip().lower()
            if kind != "application/json" and method == "POST":
                raise bad_request(f"Invalid content-type {kind!r}: the body must be application/json")
            limit = body_limit(path)
            if len(body) > limit:
                raise ApiError(413, f"Request exceeds the maximum allowed number of bytes ({limit:,}).")
            versions.authenticate(request_headers)
            version = versions.api_version(request_headers)
            self._maybe_fault(path)
            if batch:
                status, extra, payload = self.batches.handle(method, path, query, body, request_headers, betas, version)
                return status, {**headers, **extra}, payload
            if path.endswith("count_tokens"):
                return 200, headers, json.dumps(self._count_tokens(body, betas, version)).encode()
            result, streaming = self._messages(body, betas, version, owner=threads.credential(request_headers))
            if (result.get("usage") or {}).get("speed") == "fast":  # its own rate limit's headers [FM] (limits.py)
                headers = {**headers, **fast_ratelimit_headers()}
            if streaming:
                return 200, {**headers, "content-type": "text/event-stream"}, sse(result)
            return 200, headers, json.dumps(result).encode()
        except ApiError as e:
            return e.status, {**headers, **e.headers}, e.body(request_id)
        except RecursionError:  # JSON nested deeper than we walk: the request's problem, not ours
            return 400, headers, bad_request("request body is nested too deeply").body(request_id)
        except Exception as e:  # a bug of ours must still answer, and say it is ours
            message = f"emulator error (a bug in the offline emulator, not in your request): {type(e).__name__}: {e}"
            return 500, {**headers, "x-should-retry": "false"}, ApiError(500, message).body(request_id)

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _maybe_fault(self, path: str) -> None:
        with self._lock:
            injected = self._faults.popleft() if self._faults else None
        if injected is not None:
            raise fault(*injected)
        drawn = self.faults.draw(path) if self.faults is not None else None
        if drawn is not None:
            raise drawn

    def _spec(self, request: Any):
        if not isinstance(request, dict):
            raise bad_request("request body must be a JSON object")
        name = request.get("model")
        spec = lookup(name) if isinstance(name, str) else None
        if spec is None and name == self.model:  # the emulator's own model, unknown to the table
            spec = model_spec(name)
        if spec is None:  # the API's answer to a model it does not serve
            raise ApiError(404, f"model: {name}")
        return spec

    def count_tokens(self, request: dict) -> int:
        """The ``input_tokens`` that ``POST /v1/messages/count_tokens`` answers for ``request``, asked
        in-process: for code that sizes what it will send this emulator (a replay sizes what a log
        does not show with it), not for a client, which asks through the SDK like any other."""
        return self._count_tokens(json.dumps(request).encode(), set())["input_tokens"]

    def _count_tokens(self, body: bytes, betas: set[str], version: str = versions.V2026) -> dict:
        request = _json(body)
        spec = self._spec(request)
        drop_null_markers(request)
        threads.refuse_in_count_tokens(request)
        prepared = pipeline.prepare(self, request, betas, spec, counting=True, version=version)
        result: dict[str, Any] = {"input_tokens": prepared.prompt.total}
        if request.get("context_management") is not None:
            result["context_management"] = {"original_input_tokens": flatten(request, render=prepared.render).total}
        return result

    def _messages(self, body: bytes, betas: set[str], version: str = versions.V2026,
                  wave: batches.Wave | None = None, owner: str = "") -> tuple[dict, bool]:
        """One ``POST /v1/messages`` sent with the credential ``owner`` (``threads.credential``: a
        thread answers only its creator); or one request of a batch, sent in ``wave`` (see batches.py)."""
        thread = self.threads.visit(owner)
        try:
            return self._answer(body, betas, version, wave, thread)
        finally:
            thread.release()  # a request that failed leaves the thread it continued as it was

    def _answer(self, body: bytes, betas: set[str], version: str, wave: batches.Wave | None,
                thread: threads.Visit) -> tuple[dict, bool]:
        try:  # off the lock: reading one client's body never holds up another's request
            parsed, earlier, shared = self._bodies.parse(body)
        except ValueError as e:  # json.loads's own errors (UnicodeDecodeError is one)
            raise bad_request(f"request body is not valid JSON: {e}") from None
        with self._lock:
            spec = self._spec(parsed.request)
            drop_null_markers(parsed.request, shared)
            # A thread continue is answered as the full request it stands for (see threads.py).
            parsed, earlier, shared, spec = thread.open(parsed, earlier, shared, betas, spec)
            request = parsed.request
            prepared = pipeline.prepare(self, request, betas, spec, earlier=earlier, shared=shared, version=version,
                                        batch=wave is not None)
            parsed.prompt = prepared.prompt if not prepared.applied else None
            parsed.memo = pipeline.memo_of(prepared)
            plan = self._bill(prepared, betas, wave.now if wave is not None else None, thread.owner)
            self._ids += 1
            message_id = f"msg_emu_{self._ids:020d}"
            diagnostics = self._diagnose(request, prepared, message_id, betas, thread.owner)

        # Behaviour runs after accounting is complete, so a policy cannot change what was billed.
        # Policies treat the request as read-only: its messages are shared with later parses.
        try:
            turn = Turn() if plan["no_reply"] else Turn.of(self.policy(plan["seen"]))
        except Exception as e:  # a broken policy is a server-side bug: say so, don't retry
            raise ApiError(500, f"policy failed: {type(e).__name__}: {e}", {"x-should-retry": "false"}) from None
        finally:
            if wave is not None:  # concurrent with the rest of its wave: readable once the wave has been sent
                wave.writes.extend(plan["outcomes"])
            else:  # the answer has begun: what this request wrote is readable now
                self._commit(plan["outcomes"])

        schema = None if plan["no_reply"] else structured.schema_of(request)
        if schema is not None and (broken := structured.answer_violation(turn.content, schema)):
            # The API constrains the answer to the schema [SO]: an answer that breaks it is the simulation's bug.
            raise ApiError(500, f"the simulated policy broke the schema: {broken}", {"x-should-retry": "false"})
        last = prepared.prompt.digests[-1] if prepared.prompt.digests else b""
        with self._lock:
            answer = pipeline.Answer(stop_reason="compaction") if plan["no_reply"] else pipeline.content_of(
                self, prepared, turn, last, request["max_tokens"])
        content = plan["before"] + answer.content
        usage = {**pipeline.usage(plan["outcome"], answer.output_tokens),
                 **pipeline.usage_details(spec, request, answer)}
        if plan["no_reply"]:
            usage = {**usage, "input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                     "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}
        if wave is not None:
            usage["service_tier"] = "batch"  # half price, read by CallRecord [BP]
        if plan["iterations"] is not None:
            usage["iterations"] = plan["iterations"] + ([] if plan["no_reply"] else [
                {"type": "message", **pipeline.usage(plan["outcome"], answer.output_tokens)}])
            usage["iterations"][-1].pop("service_tier", None)
        with self._lock:
            self.calls.append(CallRecord.from_usage(usage, spec.id))
        message = {
            "id": message_id, "type": "message", "role": "assistant", "model": request["model"],
            "content": content, "stop_reason": answer.stop_reason, "stop_sequence": answer.stop_sequence,
            "stop_details": None, "usage": usage,
        }
        if "diagnostics" in request:  # absent when not requested [CD]: the four states start with "absent"
            message["diagnostics"] = diagnostics
        if request.get("context_management") is not None:
            message["context_management"] = {"applied_edits": prepared.applied}
        if pipeline.BINDING_BETA in betas:  # present on every response with the beta, [] when empty [PT]
            message["input_transformations"] = prepared.transformations
        thread.close(parsed, message)
        return message, bool(request.get("stream"))

    def _commit(self, outcomes: list) -> None:
        with self._lock:
            for outcome in outcomes:
                self.cache.commit(outcome)

    def _bill(self, prepared: pipeline.Prepared, betas: set[str], now: float | None = None, owner: str = "") -> dict:
        """Bill the request against the cache of ``owner`` (the credential it was sent with: caches are
        kept apart per key, cache.py) at ``now``, a batch's wave time, else the clock's, compacting first
        when asked or when over the trigger."""
        request, prompt = prepared.request, prepared.prompt
        now = self.clock() if now is None else now
        minimum = prepared.spec.min_cacheable_tokens or 0
        iterations = [] if ({compaction.THRESHOLD_BETA, compaction.ON_DEMAND_BETA} & betas) else None
        plan = {"seen": prepared.seen, "before": [], "no_reply": False, "iterations": iterations, "outcomes": []}
        threshold = compaction.threshold_edit(request)
        on_demand = request.get("compaction")
        if on_demand is None and (threshold is None or prompt.total < threshold["trigger"]):
            plan["outcome"] = self.cache.apply(prompt, minimum, now, owner)
            plan["outcomes"].append(plan["outcome"])
            return plan
        # The summarization reads the whole prompt, at the request's cache prices [CT].
        start = prepared.render.start[0]
        summarized = [m for m in request["messages"][start:] if m.get("role") in ("user", "assistant")]
        if on_demand is not None and not any(not _only_compaction_block(m) for m in summarized):
            raise bad_request("compaction: there is nothing to summarize", "compaction_nothing_to_summarize")
        outcome = self.cache.apply(prompt, minimum, now, owner)
        plan["outcomes"].append(outcome)
        # The summary step has finished before the message step begins, so what it wrote is readable
        # there: one write, not two [INFERRED from CT's separate iterations; no page says it].
        self.cache.commit(outcome)
        instructions = (on_demand or threshold or {}).get("instructions")
        summarize = getattr(self.policy, "summarize", None)
        summary = summarize(prepared.seen, instructions) if summarize else compaction.default_summary(summarized, instructions)
        seed = binding.seed(request)
        if on_demand is not None:
            bound = prepared.bound or binding.check(request, prepared.spec, self.account, start,
                                                    compaction.start_digest(None, seed))
            digest = binding.response_prefix(bound, len(request["messages"]))
            if prepared.spec.prefix_check == "none":
                # Kept turns keep valid thinking only if "every compaction since the block was produced
                # ran on a preserved-thinking model" [CTB]: here none can match the block.
                digest = binding.digest_of(digest, b"compacted without preserved thinking")
            changes = compaction.tool_changes([t for t in request.get("tools") or [] if not t.get("defer_loading")],
                                              prepared.seen["tools"])
            block = compaction.block("cod", summary, digest, seed, changes)
        else:
            block = compaction.block("ct", summary, binding.digest_of(seed, b"compaction", summary.encode()), seed)
        summary_tokens = estimate_tokens(summary, prepared.spec.tokenizer)
        cost = {"type": "compaction", **{k: v for k, v in pipeline.usage(outcome, summary_tokens).items()
                                         if k != "service_tier"}}
        plan["iterations"] = [*(iterations or []), cost]
        plan["before"] = [block]
        if on_demand is not None or threshold["pause"]:
            plan["no_reply"], plan["outcome"] = True, outcome
            return plan
        # The response goes on from the summary: tools, system, the block [CT].
        after = {**request, "messages": [{"role": "assistant", "content": [block]}]}
        after_prompt = flatten(after, render=Render(system_messages=prepared.spec.system_messages))
        plan["outcome"] = self.cache.apply(after_prompt, minimum, now, owner)
        plan["outcomes"].append(plan["outcome"])
        prepared.prompt = after_prompt
        prepared.bound = binding.check(after, prepared.spec, self.account, 0, compaction.start_digest(
            binding.read(block["signature"]), seed))
        prepared.render = Render(start=(0, 0))
        plan["seen"] = {**prepared.seen, "messages": after["messages"]}
        return plan

    def _diagnose(self, request: dict, prepared: pipeline.Prepared, message_id: str, betas: set[str],
                  owner: str = "") -> dict | None:
        """``diagnostics``: fingerprints are kept only for requests that ask for them [CD], and each is
        its key's (``owner``): another's message is ``previous_message_not_found``, as one "from another
        workspace" is [CD], where the cache the fingerprint speaks of is not shared either (cache.py)."""
        if "diagnostics" not in request:
            return None
        # [CD] model_changed: "model or speed differs"
        model = prepared.spec.id + ("|fast" if pipeline.speed(prepared.spec, request) == "fast" else "")
        current = Fingerprint.of(model, request, prepared.prompt, betas)
        self._fingerprints[owner, message_id] = current
        while len(self._fingerprints) > 4096:  # short-lived, as the API's are
            self._fingerprints.popitem(last=False)
        previous_id = (request["diagnostics"] or {}).get("previous_message_id")
        if previous_id is None:
            return None
        reason = cache_miss_reason(self._fingerprints.get((owner, previous_id)), current)
        return {"cache_miss_reason": reason} if reason else None

    # -- what preserved thinking needs to remember -----------------------------------------------

    def remember_block(self, block: dict, bound: binding.Binding | None) -> None:
        record = binding.read(binding.signature_of(block))
        if record and bound is not None:
            self._created[record["i"]] = bound
            while len(self._created) > 256:
                self._created.popitem(last=False)

    def changed_since(self, ident: str, bound: binding.Binding) -> str | None:
        """Where the request first departs from the conversation a block was made in, if we know."""
        original = self._created.get(ident)
        if original is None or original.base != bound.base:
            return None
        for k, (then, now) in enumerate(zip(original.chain, bound.chain)):
            if then != now:
                return f"messages.{k}.content.0"
        return None


def _only_compaction_block(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "compaction" for b in content)


EMULATED = ("POST /v1/messages, POST /v1/messages/count_tokens, the Message Batches under /v1/messages/batches, "
            "the Files API under /v1/files, GET /v1/models")
# The API's OpenAI SDK compatibility layer (POST /v1/chat/completions, https://platform.claude.com/docs/en/
# cli-sdks-libraries/libraries/openai-sdk) is not emulated: a client that posts there, or to another OpenAI
# path, is told so and what is, rather than "no such endpoint" as if it had mistyped.
OPENAI_PATHS = ("/chat/completions", "/completions", "/responses", "/embeddings")


def not_emulated(method: str, path: str) -> str:
    """The 404's message for an endpoint the emulator does not answer: it names what it does."""
    bare = path.rstrip("/").removeprefix("/v1")
    if bare.endswith(OPENAI_PATHS):
        return (f"{method} {path}: no such endpoint: the OpenAI-compatible endpoint is not emulated; this emulates the "
                f"Messages API ({EMULATED}): use an Anthropic client, or your client's Anthropic provider")
    if not path.startswith("/v1/") and bare.endswith(("/messages", "/count_tokens")):
        # a client that appends /messages to a base URL given without /v1 (the Vercel AI SDK's way)
        return f"{method} {path}: no such endpoint; the Messages API is POST /v1/messages (a base URL ending in /v1)"
    return f"{method} {path}: no such endpoint; emulated: {EMULATED}"


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"request body is not valid JSON: {e}") from None


__all__ += ["render_block"]
