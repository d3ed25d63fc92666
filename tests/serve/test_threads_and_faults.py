"""``serve`` for the SDKs' default paths (issue 35): message threads over HTTP and in the per-call
report, the SDK's recovery from lost threads, faults on demand, and the shapes clients read
(``/v1/models`` capabilities, ``request-id``, rate-limit headers, the ``ping`` event)."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys

import anthropic
import httpx
from anthropic import beta_tool

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started
from minimal_runtime.serve.faults import Faults
from minimal_runtime.serve.policy import script

MODEL = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
SYSTEM = "You answer questions about the weather, briefly, after looking it up. " * 60  # cacheable


@beta_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


def run_tool_runner(base_url: str, **kw) -> list:
    """The Python SDK's tool runner exactly as its docstring shows it (threads on by default)."""
    client = anthropic.Anthropic(base_url=base_url, api_key="dummy")
    runner = client.beta.messages.tool_runner(model=MODEL, max_tokens=1024, tools=[get_weather], messages=ASK, **kw)
    return list(runner)


def test_the_report_says_when_a_call_continued_a_thread_and_when_a_create_replayed_one():
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=3))
    out = io.StringIO()
    with started(emulator, out=out) as (url, front):
        replies = run_tool_runner(url, system=SYSTEM, cache_control={"type": "ephemeral"})
        emulator.threads.ttl = 0  # every held response is now gone: the next runner's continues are lost
        again = run_tool_runner(url, system=SYSTEM, cache_control={"type": "ephemeral"})
    lines = out.getvalue().splitlines()
    assert replies[-1].stop_reason == again[-1].stop_reason == "end_turn"
    assert "| thread create" in lines[0] and "miss" not in lines[1]
    assert f"| thread continue of {replies[0].id} (+1 message, 2 held)" in lines[1]
    assert "| thread continue of" in lines[3] and "(+1 message, 6 held)" in lines[3]
    assert "404 | refused: not_found_error: No thread state was found" in lines[5]
    assert "| thread create (replays 2 messages of an earlier call)" in lines[6]


def test_the_python_sdk_recovers_from_lost_threads_through_the_serve_command(tmp_path):
    """``serve --thread-ttl 0``: every continue finds its thread gone; the runner replays the full
    history under a new thread, finds that one gone too, and goes on without a thread (§11.8)."""
    log = tmp_path / "calls.jsonl"
    server = subprocess.Popen([sys.executable, "-m", "minimal_runtime", "serve", "--port", "0", "--model", MODEL,
                               "--thread-ttl", "0", "--log", str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        head = server.stdout.readline()
        assert "threads expire after 0 s" in head, head + server.stderr.read()
        url = server.stdout.readline().strip().removeprefix("export ANTHROPIC_BASE_URL=")
        replies = run_tool_runner(url)
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    assert [m.stop_reason for m in replies] == ["tool_use", "tool_use", "end_turn"]
    sent = [(json.loads(x)["request"].get("thread") or {}).get("type", "none") + f" {json.loads(x)['status']}"
            for x in log.read_text().splitlines()]
    assert sent == ["create 200", "continue 404", "create 200", "continue 404", "none 200"]


def test_a_create_that_replays_a_thread_lost_mid_run_says_so_for_the_sdk_runner_and_the_runtime(tmp_path):
    """``--thread-ttl 1`` and a tool slower than that (the emulator's clock moved, not slept): the SDK
    runner's continue is a 404 and it replays the history as a create. The line names the replay and
    what it resends of the call before the loss: that call's messages and its reply (the continue that
    would have sent the reply was refused), compared without the markers a replay drops. The same for
    the runtime's own ``threaded_layout`` replay after its thread expired."""
    from minimal_runtime.core.context import threaded_layout
    from minimal_runtime.core.hooks import Point
    from tests.emulator.helpers import FakeClock
    from tests.support import long_agent, progress_hooks

    clock = FakeClock()

    @beta_tool
    def slow_weather(city: str) -> str:
        """The weather in a city, slowly.

        Args:
            city: the city's name
        """
        clock.advance(2)
        return f"sunny in {city}"

    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2), clock=clock)
    emulator.threads.ttl = 1
    with started(emulator, out=io.StringIO()) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        runner = client.beta.messages.tool_runner(model=MODEL, max_tokens=1024, tools=[slow_weather], messages=ASK,
                                                  system=SYSTEM, cache_control={"type": "ephemeral"})
        assert list(runner)[-1].stop_reason == "end_turn"
    assert "404 | refused: not_found_error" in front.lines[1]
    assert front.lines[2].endswith("| thread create (replays 2 messages of an earlier call)")  # the task, #1's reply

    agent, emulator = long_agent(tmp_path, 12, model=MODEL, hooks=progress_hooks(), layout=threaded_layout,
                                 clock=FakeClock())
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: emulator.clock.advance(400) if len(e.agent.calls) == 6 else None)
    with started(emulator, log=str(tmp_path / "calls.jsonl"), out=io.StringIO()) as (url, front):
        agent.client = anthropic.Anthropic(base_url=url, api_key="dummy")
        assert agent.run("Read the reference manual, page by page, and keep notes.").status == "done"
    sent = [json.loads(line)["request"] for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [(r["thread"]["type"], len(r["messages"])) for r in sent[5:8]] == [("continue", 2), ("continue", 2), ("create", 20)]
    # #6 stood for 17 messages: with its reply, 18 of the 20 the replay sends (then a tool result and an entry)
    assert front.lines[6].startswith("#7 ") and "404 | refused: not_found_error" in front.lines[6]
    assert "| thread create (replays 18 messages of an earlier call)" in front.lines[7]


def test_faults_on_demand_are_seeded_and_the_sdk_retries_through_them():
    def run(seed: int) -> list[str]:
        emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=3))
        emulator.faults = Faults.parse("429:0.2,529:0.2", seed=seed)
        out = io.StringIO()
        with started(emulator, out=out) as (url, _):
            assert run_tool_runner(url)[-1].stop_reason == "end_turn"
        return [line.split(" | ")[0].split()[-1] for line in out.getvalue().splitlines()]
    first = run(3)  # seed 3 gives 529, 200, 529, 200, 200, 429, 429, 200: never three faults in a row
    assert first == run(3) == ["529", "200", "529", "200", "200", "429", "429", "200"]
    assert run(5) == ["200"] * 4


def test_a_script_line_answers_its_call_with_an_error(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text('{"error": {"status": 529}}\n"first"\n{"error": {"status": 429, "retry_after": 0.01}}\n"second"\n')
    policy = script(path)
    emulator = Emulator(model=MODEL, policy=policy)
    emulator.faults = Faults(script=policy)
    out = io.StringIO()
    with started(emulator, out=out) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        texts = [client.messages.create(model=MODEL, max_tokens=50, messages=ASK).content[-1].text for _ in range(2)]
    assert texts == ["first", "second"]
    statuses = [line.split(" | ")[0].split()[-1] for line in out.getvalue().splitlines()]
    assert statuses == ["529", "200", "429", "200"]
    assert len(emulator.calls) == 2  # an error is answered before anything is billed


def test_models_carry_capabilities_and_every_answer_a_request_id_and_rate_limit_headers():
    emulator = Emulator(model=MODEL)
    with emulator.serve() as url:
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        raw = client.models.with_raw_response.retrieve(MODEL)
        info = raw.parse()
        assert raw.headers["request-id"].startswith("req_") and info.lifecycle == "active"
        caps = info.capabilities
        assert caps.batch.supported and caps.thinking.types.adaptive.supported
        assert not caps.thinking.types.enabled.supported and caps.thinking.types.between_tools.supported
        assert caps.effort.supported and caps.context_management.compact_20260112.supported
        old = client.models.retrieve("claude-opus-4-5")
        assert old.lifecycle == "deprecated" and old.deprecated_at is not None
        assert not old.capabilities.thinking.types.adaptive.supported
        page = client.models.list(limit=3)
        assert len(page.data) == 3 and page.has_more and page.last_id == page.data[-1].id
        missing = httpx.get(f"{url}/v1/models/claude-none")
        assert missing.status_code == 404 and missing.json()["request_id"] == missing.headers["request-id"] != ""
        answer = client.messages.with_raw_response.create(model=MODEL, max_tokens=20, messages=ASK)
        for name in ("requests", "tokens", "input-tokens", "output-tokens"):
            assert int(answer.headers[f"anthropic-ratelimit-{name}-remaining"]) > 0
            assert answer.headers[f"anthropic-ratelimit-{name}-reset"].endswith("Z")
        stream = httpx.post(f"{url}/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                            json={"model": MODEL, "max_tokens": 20, "messages": ASK, "stream": True})
        events = [line.removeprefix("event: ") for line in stream.text.splitlines() if line.startswith("event: ")]
        assert events[:3] == ["message_start", "content_block_start", "ping"]
        with client.messages.stream(model=MODEL, max_tokens=20, messages=ASK) as s:  # the SDK takes the ping
            assert s.get_final_message().stop_reason == "end_turn"


def test_what_models_lists_as_supported_is_what_the_emulator_accepts():
    """A client that reads ``capabilities`` and follows it is never refused, and what is listed as
    unsupported is refused: every model, every thinking type and effort level, through the SDK."""
    emulator = Emulator(model=MODEL)
    client = emulator.client(max_retries=0)
    thinking = {"adaptive": {"type": "adaptive"}, "enabled": {"type": "enabled", "budget_tokens": 2048},
                "disabled": {"type": "disabled"}, "between_tools": {"type": "between_tools"}}
    disagree = []
    for info in client.models.list(limit=1000).data:
        caps = info.capabilities
        asks = [(f"thinking {k}", {"thinking": v}, getattr(caps.thinking.types, k).supported) for k, v in thinking.items()]
        asks += [(f"effort {k}", {"output_config": {"effort": k}}, getattr(caps.effort, k).supported)
                 for k in ("low", "medium", "high", "max", "xhigh")]
        for name, extra, listed in asks:
            try:
                client.messages.create(model=info.id, max_tokens=4096, messages=ASK, **extra)
                answered = True
            except anthropic.BadRequestError:
                answered = False
            if answered != listed:
                disagree.append(f"{info.id} {name}: listed {listed}, answered {answered}")
    assert disagree == [], "the model listing and the emulator's checks disagree:\n" + "\n".join(disagree)
