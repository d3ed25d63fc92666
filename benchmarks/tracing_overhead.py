"""What the spans cost the loop (issue 67): CPU time per call at turn 1000, without the OTEL_* variables
and with them set against an OTLP/HTTP receiver on loopback (another process: its decoding is not the
loop's cost), on the loop benchmark's setup (``loop_speed.py``: a server that answers at once, one tool
call after another, a progress note every call).

Unset, ``tracing.hooks()`` returns the registry it was given, unchanged: the loop runs the same code
as without it (checked below), so the overhead is zero by construction. Set, every call opens and
closes three spans (step, chat, and the tool's), says why its cache missed (``report.diagnose``, which
compares the request with the previous one) and queues the spans for the batch processor's thread,
which encodes and sends them: all of it counted, as the process's CPU time (the mean over the calls,
their spans flushed at the end). The loop benchmark's server reports the same usage on every call
(100,000 read, 150 written), which the diagnosis reads as a call that read less than its conversation
had cached: the miss is diagnosed on every call, the worst case; the ``hits`` row answers each call with
a read of what the call before it read and wrote, where the diagnosis stops at comparing the counts. Ratios from one run; absolute times depend on the machine.

    python benchmarks/tracing_overhead.py [TURNS]     # default 1000
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "interop"))
from loop_speed import SYSTEM, Url, PAGE, WINDOW, instant_client  # noqa: E402  (the loop benchmark's own setup)
from loop_speed_pydantic_ai import respond  # noqa: E402
from minimal_runtime import tracing  # noqa: E402
from minimal_runtime.core.agent import Agent  # noqa: E402
from minimal_runtime.core.context import threaded_layout, turn_scoped_layout  # noqa: E402
from minimal_runtime.core.hooks import HookRegistry, Point  # noqa: E402
from minimal_runtime.core.tools import FunctionTool  # noqa: E402

MODEL = "claude-sonnet-5-5"
RECEIVER = """
import sys, threading
sys.path.insert(0, sys.argv[1])
from tests.tracing.receiver import receiver
with receiver() as (endpoint, received):
    print(endpoint, flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
    print(len(received.spans), flush=True)
"""


def hitting_client(turns: int) -> anthropic.Anthropic:
    """The same server, but each call reads what the one before it read and wrote (a run whose cache hits)."""
    answered = [0]

    def handler(request: httpx2.Request) -> httpx2.Response:
        answered[0] += 1
        body = json.loads(respond(request.read(), answered[0] - 1, turns, MODEL).content)
        body["usage"]["cache_read_input_tokens"] = 100_000 + 150 * answered[0]
        return httpx2.Response(200, json=body)
    return anthropic.Anthropic(api_key="x", base_url="http://instant.invalid",
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def agent(layout, turn: int, turns: int, spans: tracing.Tracing | None, hits: bool = False) -> Agent:
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("progress", f"I have made {len(e.agent.calls)} calls."))
    if spans is not None:
        hooks = tracing.hooks(hooks, tracing=spans)
    else:
        assert tracing.hooks(hooks) is hooks and hooks.names(Point.POST_LLM_CALL) == []  # unset: nothing installed
    client = hitting_client(turns) if hits else instant_client(MODEL, turns)
    made = Agent(client, model=MODEL, system=SYSTEM, hooks=hooks, layout=layout,
                 max_steps=turn - 1 - WINDOW, tools=[FunctionTool("fetch", "Fetch a page.", Url, lambda a: PAGE)])
    assert made.run("Read the pages.").status == "max_steps"
    return made


def main(turns: int = 1000) -> None:
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(ROOT)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    endpoint = receiver.stdout.readline().strip()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    spans = tracing.Tracing("tracing-overhead", exporter=OTLPSpanExporter(endpoint=endpoint))
    length = turns + WINDOW + 1
    print(f"CPU time per call at turn {turns}, ms (the mean of the {2 * WINDOW + 1} calls around it, with their "
          f"spans' export), {MODEL}")
    for layout, hits in ((turn_scoped_layout, False), (threaded_layout, False), (threaded_layout, True)):
        row = {}
        for name, given in (("unset", None), ("set", spans)):
            one = agent(layout, turns, length, given, hits)
            spans.flush()  # what running it up to the turn queued: not the window's
            start = time.process_time()
            for _ in range(2 * WINDOW + 1):
                assert one._step() is None
            spans.flush()  # the window's spans encoded and sent: counted
            row[name] = (time.process_time() - start) / (2 * WINDOW + 1)
        print(f"{layout.__name__:<20} {'hits' if hits else 'misses':<7} unset {row['unset'] * 1000:7.2f}   set {row['set'] * 1000:7.2f}   "
              f"{row['set'] / row['unset']:.2f}x")
    spans.close()
    receiver.stdin.close()
    print(f"the receiver decoded {receiver.stdout.readline().strip()} spans")
    receiver.wait()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
