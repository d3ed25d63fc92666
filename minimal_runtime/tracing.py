"""OpenTelemetry spans of a run, named by the GenAI semantic conventions: watch it in your own tracing tool.

Only when the standard variables say where to send them (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``; ``OTEL_EXPORTER_OTLP_PROTOCOL`` ``http/protobuf``, the default;
``OTEL_SERVICE_NAME``; ``OTEL_EXPORTER_OTLP_HEADERS`` ...). Unset, ``from_environment()`` is None and
nothing of the OpenTelemetry SDK is imported: the optional extra ``otel`` (the SDK and its OTLP/HTTP
exporter) need not be installed. The spans go through a tracer provider of their own, not the global
one: the ``anthropic`` SDK traces its own calls through the global provider when an application sets one.

    agent = Agent(client, model=..., hooks=tracing.hooks())      # a run, its steps, calls and tools
    serve: one span per Messages call                              # ``Front`` asks ``for_serve()``

The spans (GenAI conventions, moved to the semantic-conventions-genai repository in 2026; experimental):

    invoke_agent {name}      the run            gen_ai.operation.name, gen_ai.agent.name, the run's totals
      step {k}               one step           minimal_runtime.step
        chat {model}         one model call     gen_ai.request.model, gen_ai.response.id / .model /
                                                .finish_reasons, gen_ai.usage.*
        execute_tool {name}  one tool call      gen_ai.tool.name, gen_ai.tool.call.id

``gen_ai.usage.input_tokens`` is the whole prompt: the conventions count cache reads and writes in it
("SHOULD be included in gen_ai.usage.input_tokens"), where Anthropic's ``input_tokens`` is only what
came after the last breakpoint (that one is ``minimal_runtime.usage.uncached_input_tokens``). What this
project adds is under ``minimal_runtime.*``: why the cache missed, the call compared with, the prefix
check, the cost, the layout, the thread. Prompts and answers go on a span only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true`` (the conventions' opt-in).
"""

from __future__ import annotations

import functools
import json
import math
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Mapping

from .core.hooks import CallEvent, EndEvent, ErrorEvent, HookEvent, HookRegistry, Point, ToolCallEvent, ToolResultEvent

if TYPE_CHECKING:
    from .serve.timeline import Call

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
PROVIDER = "anthropic"  # gen_ai.provider.name's value for Anthropic (gen_ai.system, its old name, is deprecated)
OWN = "minimal_runtime."  # this project's attributes: a namespace of its own, as the conventions ask


def configured(environ: Mapping[str, str] = os.environ) -> bool:
    """Do the standard variables say where to send spans?"""
    return any(environ.get(name, "").strip() for name in ENDPOINTS)


def from_environment(service: str = "minimal_runtime", environ: Mapping[str, str] = os.environ) -> "Tracing | None":
    """The exporter the variables ask for, or None (and nothing imported) when they ask for none."""
    if not configured(environ):
        return None
    protocol = next((environ[n].strip() for n in PROTOCOLS if environ.get(n, "").strip()), "http/protobuf")
    if protocol != "http/protobuf":
        raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: spans are sent as http/protobuf only "
                         "(unset it, or set it to http/protobuf, and point the endpoint at the collector's HTTP port)")
    return Tracing(service, capture=environ.get(CONTENT, "").strip().lower() == "true")


class Tracing:
    """A tracer provider of its own with a batch processor and the OTLP/HTTP exporter, which reads the
    standard variables itself (endpoint, headers, timeout, compression)."""

    def __init__(self, service: str, capture: bool = False, exporter: Any = None):
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as e:
            raise ImportError(f"{e.name} is missing: the spans need the extra otel (pip install -e '.[otel]')") from None
        from opentelemetry import trace
        self.trace, self.capture = trace, capture
        # OTEL_SERVICE_NAME wins over our default; OTEL_RESOURCE_ATTRIBUTES is read as well
        resource = Resource.create({} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(BatchSpanProcessor(exporter or OTLPSpanExporter()))
        self.tracer = self.provider.get_tracer("minimal_runtime")

    def span(self, name: str, attributes: dict, parent: Any = None, kind: str = "INTERNAL", start: int | None = None):
        context = self.trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(name, context=context, kind=getattr(self.trace.SpanKind, kind),
                                      attributes=_clean(attributes), start_time=start)

    def failed(self, span: Any, error_type: str, message: str = "") -> None:
        span.set_attribute("error.type", error_type)
        span.set_status(self.trace.Status(self.trace.StatusCode.ERROR, message[:500]))

    def flush(self) -> bool:
        return self.provider.force_flush()

    def close(self) -> None:
        self.provider.shutdown()


def call_attributes(request: Any, response: Any, record: Any, capture: bool) -> dict:
    """A model call's attributes by the conventions, from the request and the answer as JSON."""
    request = request if isinstance(request, dict) else {}
    response = response if isinstance(response, dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    read, written = usage.get("cache_read_input_tokens") or 0, usage.get("cache_creation_input_tokens") or 0
    out = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
           "gen_ai.request.model": request.get("model"), "gen_ai.request.max_tokens": request.get("max_tokens"),
           "gen_ai.request.stream": request.get("stream"),
           "gen_ai.response.id": response.get("id"), "gen_ai.response.model": response.get("model"),
           "gen_ai.response.finish_reasons": [response["stop_reason"]] if response.get("stop_reason") else None}
    if usage:
        out.update({"gen_ai.usage.input_tokens": (usage.get("input_tokens") or 0) + read + written,
                    "gen_ai.usage.output_tokens": usage.get("output_tokens") or 0,
                    "gen_ai.usage.cache_read.input_tokens": read, "gen_ai.usage.cache_creation.input_tokens": written,
                    OWN + "usage.uncached_input_tokens": usage.get("input_tokens") or 0})
    if record is not None:
        out[OWN + "cost_usd"] = record.cost
        out[OWN + "cost_without_cache_usd"] = record.cost_without_cache
        out[OWN + "cache.read_share"] = record.cache_read_share
    if capture:
        system = request.get("system")
        out["gen_ai.system_instructions"] = _json(system if not isinstance(system, str) else [{"type": "text", "text": system}])
        out["gen_ai.input.messages"] = _json(request.get("messages"))
        if response.get("content") is not None:
            out["gen_ai.output.messages"] = _json([{"role": "assistant", "content": response["content"],
                                                    "finish_reason": response.get("stop_reason")}])
    return out


def served_attributes(call: "Call", capture: bool) -> dict:
    """What ``serve`` knows of a call besides the conventions' attributes: as its line and page say it."""
    return {**call_attributes(call.request, call.response, call.record, capture),
            "gen_ai.request.model": call.request.get("model") or call.model,
            OWN + "call": call.n, OWN + "conversation": call.conversation, OWN + "compared_with": call.previous,
            OWN + "cache.miss_reason": call.miss, OWN + "edit": call.edit, OWN + "prefix_check": call.prefix,
            OWN + "thread": call.thread, "http.response.status_code": call.status}


class ServeSpans:
    """``serve``'s span per Messages call: the record ``--log`` writes, read as the page reads it (a
    ``Timeline`` of its own: the miss reason, the call compared with), one SERVER span each."""

    def __init__(self, tracing: Tracing):
        from .serve.timeline import Timeline
        self.tracing, self.timeline = tracing, Timeline("serve", live=False)
        self._started = threading.local()

    def begin(self) -> None:
        """A request arrived (on its server thread): its span starts now."""
        self._started.at = time.time_ns()

    def export(self, record: dict) -> None:
        call = self.timeline.add(record)
        if call is None:  # not a Messages call
            return
        start = getattr(self._started, "at", None)
        span = self.tracing.span(f"chat {call.model}", served_attributes(call, self.tracing.capture), kind="SERVER",
                                 start=start)
        if call.error is not None:  # the API's error type where the answer has one, else the status
            error = (call.response or {}).get("error")
            self.tracing.failed(span, error.get("type") if isinstance(error, dict) else str(call.status), call.error)
        span.end()

    def close(self) -> None:
        self.tracing.close()  # flushes what the batch processor still holds


def for_serve() -> ServeSpans | None:
    tracing = from_environment("minimal_runtime.serve")
    return ServeSpans(tracing) if tracing is not None else None


class AgentSpans:
    """The runtime's spans, as hooks (a feature): install it on an agent's registry, one per agent.

    A run's span opens at START (or at the first call of a resumed run) and closes at END; a step's at
    its PRE_LLM_CALL and at the next one (or END); the call's from its PRE_LLM_CALL (register this
    feature last, so the other hooks' work is not timed as the model's) to its POST_LLM_CALL or ERROR;
    a tool's from PRE_TOOL_CALL to POST_TOOL_CALL. A hook that fails is logged and skipped by the
    registry: tracing never stops a run."""

    def __init__(self, tracing: Tracing, attributes: dict | None = None):
        self.tracing, self.attributes = tracing, attributes or {}  # more of the run span's (a replay's strategy)
        self.run = self.step = self.call = None
        self.tools: dict[str, Any] = {}
        self.steps = 0
        self._edits = 0  # the agent's append-only findings seen so far
        self._previous: Any = None  # report.Previous: the last call, to say why the next one missed

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.START, self.started)
        hooks.register(Point.PRE_LLM_CALL, self.calling)
        hooks.register(Point.POST_LLM_CALL, self.answered)
        hooks.register(Point.ERROR, self.errored)
        hooks.register(Point.PRE_TOOL_CALL, self.tool_started)
        hooks.register(Point.POST_TOOL_CALL, self.tool_ended)
        hooks.register(Point.END, self.ended)

    def started(self, event: HookEvent) -> None:
        agent = event.agent
        self._end_run()
        layout = getattr(agent, "layout", None)
        self.run = self.tracing.span(f"invoke_agent {agent.name}", {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": PROVIDER, "gen_ai.agent.name": agent.name,
            "gen_ai.request.model": getattr(agent, "model", None),
            OWN + "layout": getattr(layout, "__name__", type(layout).__name__ if layout is not None else None),
            OWN + "layout_reason": getattr(agent, "layout_reason", None), OWN + "max_steps": agent.max_steps,
            **self.attributes})
        self.steps = 0

    def calling(self, event: HookEvent) -> None:
        if self.run is None:  # a resumed run has no START
            self.started(event)
        if self.step is not None:
            self.step.end()
        self.steps += 1
        self.step = self.tracing.span(f"step {self.steps}", {OWN + "step": self.steps}, parent=self.run)
        self.call = self.tracing.span(f"chat {event.agent.model}", {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
            "gen_ai.request.model": event.agent.model}, parent=self.step, kind="CLIENT")

    def answered(self, event: CallEvent) -> None:
        from .provider.cost import CallRecord
        from .serve.report import Previous, diagnose
        if self.call is None:  # a resumed step whose reply was stored: its call was not timed here
            self.call = self.tracing.span(f"chat {event.agent.model}", {}, parent=self.step, kind="CLIENT")
        response = event.response.model_dump(mode="json") if hasattr(event.response, "model_dump") else event.response
        request = {"model": event.agent.model, **event.request}
        record = event.agent.calls[-1] if event.agent.calls else CallRecord.from_usage(response["usage"], event.agent.model)
        now = time.monotonic()
        miss = diagnose(self._previous, request, record, response, now)
        edits = getattr(event.agent, "edits", [])
        checked = getattr(getattr(event.agent, "config", None), "check_append_only", True)
        attributes = {**call_attributes(request, response, record, self.tracing.capture),
                      OWN + "call": len(event.agent.calls), OWN + "compared_with": len(event.agent.calls) - 1 or None,
                      OWN + "cache.miss_reason": miss, OWN + "batch": len(event.batch),
                      OWN + "prefix_check": None if not checked else f"not append-only: {edits[-1]}"
                      if self._edits < len(edits) else "ok",
                      OWN + "thread": (request.get("thread") or {}).get("type") if isinstance(request.get("thread"), dict)
                      else None}
        self._edits = len(edits)
        self.call.set_attributes(_clean(attributes))
        self.call.end()
        self.call, self._previous = None, Previous(request, record, now)

    def errored(self, event: ErrorEvent) -> None:
        if self.call is not None:
            self.tracing.failed(self.call, type(event.error).__name__, str(event.error))
            self.call.end()
            self.call = None

    def tool_started(self, event: ToolCallEvent) -> None:
        call = event.tool_call
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.get("name"),
                      "gen_ai.tool.call.id": call.get("id"), "gen_ai.tool.type": "function"}
        if self.tracing.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(call.get("input"))
        self.tools[call.get("id")] = self.tracing.span(f"execute_tool {call.get('name')}", attributes, parent=self.step)

    def tool_ended(self, event: ToolResultEvent) -> None:
        span = self.tools.pop(event.tool_call.get("id"), None)
        if span is None:  # a resumed step's stored result: the tool did not run again
            return
        if self.tracing.capture:
            span.set_attribute("gen_ai.tool.call.result", _json(event.tool_result.get("content")))
        if event.tool_result.get("is_error"):
            self.tracing.failed(span, "tool_error", str(event.tool_result.get("content"))[:500])
        span.end()

    def ended(self, event: EndEvent) -> None:
        if self.run is None:
            return
        result, calls, bill = event.result, event.agent.calls, event.agent.bill()
        self.run.set_attributes(_clean({
            OWN + "run.status": result.status, OWN + "run.steps": result.steps,
            "gen_ai.usage.input_tokens": sum(c.prompt_tokens for c in calls),
            "gen_ai.usage.output_tokens": sum(c.output_tokens for c in calls),
            "gen_ai.usage.cache_read.input_tokens": sum(c.cache_read_input_tokens for c in calls),
            "gen_ai.usage.cache_creation.input_tokens": sum(c.cache_creation_input_tokens for c in calls),
            # The run's one bill (Agent.bill): its calls, the calls a kill paid for and lost, and an estimate
            # for each call in flight at a kill, that estimate also apart (absent when there is none).
            OWN + "cost_usd": bill.total, OWN + "cost_estimated_usd": bill.estimated if bill.unanswered else None}))
        if result.status != "done":
            self.tracing.failed(self.run, result.status, result.error or "")
        self._end_run()
        self.tracing.flush()  # the run's spans are out when run() returns (a worker process skips atexit)

    def _end_run(self) -> None:
        for span in (*self.tools.values(), self.call, self.step, self.run):
            if span is not None:
                span.end()
        self.tools, self.call, self.step, self.run = {}, None, None, None


def hooks(registry: HookRegistry | None = None, tracing: Tracing | None = None,
          attributes: dict | None = None) -> HookRegistry:
    """``registry`` (a new one by default) with the runtime's spans installed, when the variables ask
    for spans (or ``tracing`` is given); as it was otherwise. ``Agent(hooks=tracing.hooks())``. Install
    it after the other hooks: a call's span starts at the last PRE_LLM_CALL hook."""
    registry = registry if registry is not None else HookRegistry()
    if tracing is None and configured():
        tracing = _shared(tuple(os.environ.get(n) for n in (*ENDPOINTS, *PROTOCOLS, CONTENT, "OTEL_SERVICE_NAME")))
    if tracing is not None:
        registry.install(AgentSpans(tracing, attributes))
    return registry


@functools.cache
def _shared(variables: tuple) -> "Tracing | None":
    """One exporter a process for the agents it runs (a replay runs one per strategy), per setting of the variables."""
    return from_environment("minimal_runtime")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clean(attributes: dict) -> dict:
    """OpenTelemetry takes str, bool, int, float and lists of one of them: None and NaN (an unpriced model's cost) are left out."""
    return {k: v for k, v in attributes.items()
            if v is not None and not (isinstance(v, float) and math.isnan(v))}
