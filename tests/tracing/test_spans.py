"""Spans by the GenAI conventions (issue 67), read back by an OTLP/HTTP receiver on loopback as a
tracing tool would: every attribute against the usage the client got, for ``serve`` under the SDK's
tool runner and for a runtime run; nothing of OpenTelemetry's SDK imported when the variables are unset."""

from __future__ import annotations

import io
import json
import sys

import anthropic
import pytest
from anthropic import beta_tool

from minimal_runtime import tracing
from minimal_runtime.core.agent import Agent
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.store import MemoryStore
from minimal_runtime.emulator import Emulator
from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.serve import ToolThenAnswer, started
from tests.support import TASK, pricing_agent

from .receiver import receiver

MODEL = "claude-sonnet-5-5"
SYSTEM = "You answer questions about the weather, briefly, after looking it up. " * 60  # cacheable
OWN = "minimal_runtime."


@beta_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


@pytest.fixture
def collector(monkeypatch):
    with receiver() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "course-test")
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL", raising=False)
        monkeypatch.delenv(tracing.CONTENT, raising=False)
        yield received


def usage_attributes(usage: dict) -> dict:
    """What the conventions say a call's usage is: the prompt whole in input_tokens, the cache's parts."""
    read, written = usage.get("cache_read_input_tokens") or 0, usage.get("cache_creation_input_tokens") or 0
    return {"gen_ai.usage.input_tokens": usage["input_tokens"] + read + written,
            "gen_ai.usage.output_tokens": usage["output_tokens"],
            "gen_ai.usage.cache_read.input_tokens": read, "gen_ai.usage.cache_creation.input_tokens": written,
            OWN + "usage.uncached_input_tokens": usage["input_tokens"]}


def test_serve_sends_a_span_per_messages_call_of_the_tool_runner_with_the_usage_the_client_got(collector):
    emulator, out = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=3)), io.StringIO()
    with started(emulator, out=out) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        replies = list(client.beta.messages.tool_runner(
            model=MODEL, max_tokens=1024, system=SYSTEM, cache_control={"type": "ephemeral"}, tools=[get_weather],
            messages=[{"role": "user", "content": "What is the weather in Paris?"}]))
        # the same first message with another system prompt: a miss, said on the line and on the span
        edited = client.messages.create(model=MODEL, max_tokens=100, system="Answer in French. " + SYSTEM,
                                        cache_control={"type": "ephemeral"},
                                        messages=[{"role": "user", "content": "What is the weather in Paris?"}])
        client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}])  # not a span
    answers = [*replies, edited]
    spans = collector.spans
    assert [s["name"] for s in spans] == [f"chat {MODEL}"] * len(answers)  # flushed when serve closed
    assert {s["resource"]["service.name"] for s in spans} == {"course-test"}
    for n, (span, answer, line) in enumerate(zip(spans, answers, front.lines), start=1):
        usage = answer.usage.model_dump()
        record = CallRecord.from_usage(usage, MODEL)
        expected = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": MODEL,
                    "gen_ai.response.model": answer.model, "gen_ai.response.id": answer.id,
                    "gen_ai.response.finish_reasons": [answer.stop_reason], **usage_attributes(usage),
                    OWN + "call": n, OWN + "cost_usd": record.cost, OWN + "cost_without_cache_usd": record.cost_without_cache,
                    OWN + "cache.read_share": record.cache_read_share, "http.response.status_code": 200}
        got = span["attributes"]
        assert {k: got.get(k) for k in expected} == expected, n
        assert span["kind"] == 2 and span["parent"] is None and span["end"] >= span["start"]  # SERVER
        assert got.get(OWN + "prefix_check") and f"prefix {got[OWN + 'prefix_check']}" in line
        assert ("miss: " in line) == (OWN + "cache.miss_reason" in got)
        assert not any(k.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system_instructions")) for k in got)
    assert [s["attributes"].get(OWN + "thread") for s in spans] == ["create"] + ["continue"] * 3 + [None]
    assert [s["attributes"].get(OWN + "compared_with") for s in spans] == [None, 1, 2, 3, 1]
    assert spans[1]["attributes"]["gen_ai.usage.cache_read.input_tokens"] > 0  # the runner read its cache
    miss = spans[-1]["attributes"][OWN + "cache.miss_reason"]
    assert front.lines[4].endswith(f"miss: {miss}") and "system" in miss


def test_a_runtime_run_is_a_span_with_a_child_per_step_and_the_calls_and_tools_under_them(collector, tmp_path,
                                                                                          monkeypatch):
    monkeypatch.setenv(tracing.CONTENT, "true")
    seen = []  # what the client got, call by call
    hooks = HookRegistry()
    hooks.register(Point.POST_LLM_CALL, lambda e: seen.append(e.response))
    agent, _, _ = pricing_agent(tmp_path, hooks=tracing.hooks(hooks), check_append_only=True)
    result = agent.run(TASK)
    assert result.status == "done"  # the spans flushed as the run ended: nothing more to wait for
    spans = collector.spans
    (run,) = collector.named("invoke_agent")
    steps, calls, tools = collector.named("step "), collector.named("chat "), collector.named("execute_tool ")
    assert len(steps) == len(calls) == result.steps == len(seen) == 14
    assert len(spans) == 1 + 2 * 14 + len(tools)
    assert {s["trace"] for s in spans} == {run["trace"]} and run["parent"] is None
    assert {s["parent"] for s in steps} == {run["id"]}
    assert [c["parent"] for c in calls] == [s["id"] for s in steps]
    uses = [b for m in agent.messages if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use"]
    assert [t["attributes"]["gen_ai.tool.call.id"] for t in tools] == [u["id"] for u in uses]
    assert [t["attributes"]["gen_ai.tool.name"] for t in tools] == [u["name"] for u in uses]
    assert sum(t["status"] == 2 for t in tools) == 1  # the failed fetch (404): an error span
    for n, (span, answer, record) in enumerate(zip(calls, seen, agent.calls), start=1):
        usage = answer.usage.model_dump()
        expected = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
                    "gen_ai.request.model": agent.model, "gen_ai.response.id": answer.id,
                    "gen_ai.response.finish_reasons": [answer.stop_reason], **usage_attributes(usage),
                    OWN + "call": n, OWN + "cost_usd": record.cost, OWN + "prefix_check": "ok"}
        assert {k: span["attributes"].get(k) for k in expected} == expected, n
        assert span["attributes"].get(OWN + "compared_with") == (n - 1 or None)
        assert json.loads(span["attributes"]["gen_ai.input.messages"])[0]["content"][0]["text"] == TASK
    assert run["attributes"][OWN + "layout"] == agent.layout.__name__
    assert run["attributes"][OWN + "run.steps"] == 14 and run["attributes"][OWN + "run.status"] == "done"
    assert run["attributes"]["gen_ai.usage.input_tokens"] == sum(c.prompt_tokens for c in agent.calls)
    assert run["attributes"][OWN + "cost_usd"] == pytest.approx(sum(c.cost for c in agent.calls))


class Killed(BaseException):
    """The process died here (nothing in the loop catches it)."""


class DiesBeforeTheReply(MemoryStore):
    """A record whose process dies in place of storing a reply: the call was answered (and billed by
    the server) and no one read it. Dead, it writes nothing more; a new one on its events resumes."""

    def __init__(self, events: list[str] | None = None, dies: bool = False):
        super().__init__()
        self._log, self.dies = list(events or []), dies

    def write(self, event: dict, sync: bool = True) -> None:
        if self.dies and event["type"] == "reply":
            raise Killed
        super().write(event, sync)


def test_a_resumed_runs_span_carries_its_one_bill_with_the_estimate_for_a_call_in_flight_at_the_kill(collector):
    """The run span's cost is ``agent.bill()``: after a kill with a call in flight that is more than its
    stored calls (the unanswered call's estimate, also apart), as the server billed that call too."""
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))

    def agent(store: MemoryStore, hooks: HookRegistry | None = None) -> Agent:
        return Agent(emulator.client(max_retries=0), model=MODEL, system=SYSTEM, tools=[get_weather], store=store,
                     hooks=hooks)
    killed = DiesBeforeTheReply(dies=True)
    with pytest.raises(Killed):
        agent(killed).run(TASK)
    resumed = agent(DiesBeforeTheReply(killed._log), tracing.hooks())
    assert resumed.run(TASK).status == "done"
    bill = resumed.bill()
    assert bill.unanswered == 1 and bill.estimated > 0
    (run,) = collector.named("invoke_agent")
    assert run["attributes"][OWN + "cost_usd"] == pytest.approx(bill.total)
    assert run["attributes"][OWN + "cost_usd"] > sum(c.cost for c in resumed.calls)
    assert run["attributes"][OWN + "cost_estimated_usd"] == pytest.approx(bill.estimated)
    assert len(emulator.calls) == len(resumed.calls) + 1  # the server billed the call in flight as well


def test_another_protocol_is_a_clear_error_not_silence():
    with pytest.raises(ValueError, match="http/protobuf"):
        tracing.from_environment(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317",
                                          "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})


def test_without_the_variables_nothing_of_opentelemetrys_sdk_is_imported_and_nothing_is_sent(monkeypatch, tmp_path):
    """The anthropic SDK imports the OpenTelemetry API itself (its own tracing); the SDK, the exporter
    and the protocol's messages are ours alone: with the variables unset, an import of any of them
    fails here (as where the extra is not installed), and serve and a traced agent run all the same."""
    for name in [n for n in __import__("os").environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    for name in [m for m in sys.modules if m.startswith(OURS)] + list(OURS):
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: ``import`` raises ImportError
    assert tracing.hooks()._hooks == {}
    with started(Emulator(model=MODEL, policy=ToolThenAnswer(rounds=1)), out=io.StringIO()) as (url, front):
        assert front.spans is None
        anthropic.Anthropic(base_url=url, api_key="k").messages.create(
            model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}])
    assert len(front.lines) == 1
    agent, _, _ = pricing_agent(tmp_path, hooks=tracing.hooks())
    assert agent.run(TASK).status == "done"
    with pytest.raises(ImportError, match="extra otel"):  # what the same run says once the variables are set
        tracing.Tracing("x")


OURS = ("opentelemetry.sdk", "opentelemetry.exporter", "opentelemetry.proto")


def test_a_replay_exports_each_strategys_calls_the_same_way(collector, tmp_path):
    from minimal_runtime.replay import calibrate, load, replay
    from minimal_runtime.replay.current import write_current
    (run, *_) = load(write_current(tmp_path, "claude-sonnet-4-6", rounds=3)["stream"])
    calibration = calibrate(run)
    collector.spans.clear()  # the calibration's own replay
    replays = {name: replay(run, name, calibration=calibration) for name in ("tail", "early")}
    runs = collector.named("invoke_agent")
    assert [r["attributes"][OWN + "replay.strategy"] for r in runs] == ["tail", "early"]
    assert {r["attributes"][OWN + "replay.log"] for r in runs} == {run.path}
    for span, (name, done) in zip(runs, replays.items()):
        calls = [s for s in collector.named("chat ") if s["trace"] == span["trace"]]
        assert len(calls) == len(done.raw) == len(run.calls)
        assert [c["attributes"]["gen_ai.usage.cache_read.input_tokens"] for c in calls] == [
            r.cache_read_input_tokens for r in done.raw]  # the emulator's own tokens: what the replay's client got
        assert [c["attributes"]["gen_ai.usage.input_tokens"] for c in calls] == [r.prompt_tokens for r in done.raw]
