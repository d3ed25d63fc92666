"""The runtime's own per-call work, next to the SDK call it wraps.

Own work = everything a step does except the client call: hooks, call assembly (layout, breakpoints,
batch), usage bookkeeping, the call view, tool dispatch, appending the turn. Measured at turn 300
and turn 1000 of a growing run (tool results of about 500 characters, so 1,000 turns fit a 200K
window) with a client stub that answers instantly, and printed next to the floor: the bare SDK call
(``messages.create`` through a mock transport returning a fixed response) for the same request.
Ratios come from this run; absolute times depend on the machine.
Targets: turn-1000 / turn-300 <= 1.5 (own work does not grow with history); own work < 10% of the
SDK floor at turn 1000.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import httpx2
from anthropic.types import Message

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.core.agent import Agent  # noqa: E402
from minimal_runtime.core.hooks import HookRegistry, Point  # noqa: E402
from minimal_runtime.core.store import RunStore  # noqa: E402
from minimal_runtime.core.tools import FunctionTool  # noqa: E402
from pydantic import BaseModel  # noqa: E402

MODEL = "claude-sonnet-4-6"
PAGE = "lorem ipsum " * 41


class Url(BaseModel):
    url: str


def response(step: int) -> Message:
    return Message.model_validate({
        "id": f"msg_{step}", "type": "message", "role": "assistant", "model": MODEL, "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "next page"},
                    {"type": "tool_use", "id": f"toolu_{step:06d}", "name": "fetch", "input": {"url": f"https://x.test/{step}"}}],
        "usage": {"input_tokens": 30, "cache_read_input_tokens": 100_000, "cache_creation_input_tokens": 150, "output_tokens": 20}})


class InstantClient:
    """Answers from a prepared list: the client call costs (almost) nothing."""

    def __init__(self):
        self.step, self.responses = 0, [response(i) for i in range(1200)]
        self.messages = self

    def create(self, **request):
        self.step += 1
        return self.responses[self.step]


def history(turns: int) -> list[dict]:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Read the pages."}]}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": "next page"},
            {"type": "tool_use", "id": f"toolu_h{i:06d}", "name": "fetch", "input": {"url": f"https://x.test/{i}"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_h{i:06d}", "content": PAGE}]})
    return messages


def make_agent(turns: int, store: RunStore | None = None) -> Agent:
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_ephemeral("progress", f"I have made {len(e.agent.calls)} calls."))
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_ephemeral("plan", "I am on phase 2 of 4: collect pricing data."))
    hooks.register(Point.POST_LLM_CALL, lambda e: None)
    agent = Agent(InstantClient(), model=MODEL, system="You are an agent.", hooks=hooks, max_steps=10_000, store=store,
                  tools=[FunctionTool("fetch", "Fetch a page.", Url, lambda a: PAGE)])
    agent.messages = history(turns)
    return agent


def own_work(turns: int, steps: int = 30, with_store: bool = False) -> float:
    agent = make_agent(turns, RunStore(tempfile.mkdtemp()) if with_store else None)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        agent._step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def sdk_floor(turns: int, calls: int = 15) -> float:
    fixed = json.dumps(response(0).model_dump(exclude_none=True)).encode()
    client = anthropic.Anthropic(api_key="x", base_url="http://bare.invalid", http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda r: httpx2.Response(200, content=fixed, headers={"content-type": "application/json"}))))
    messages = history(turns)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        client.messages.create(model=MODEL, max_tokens=4096, messages=messages, system="You are an agent.")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    own, floor = {}, {}
    for turns in (300, 1000):
        own_samples, floor_samples = [], []
        for _ in range(3):  # interleave to share the machine's noise
            own_samples.append(own_work(turns))
            floor_samples.append(sdk_floor(turns))
        own[turns], floor[turns] = statistics.median(own_samples), statistics.median(floor_samples)
    print(f"{'turn':>6} {'own work / SDK floor':>21}")
    for turns in own:
        print(f"{turns:>6} {own[turns] / floor[turns]:>20.1%}")
    growth = own[1000] / own[300]
    print(f"own work, turn 1000 / turn 300: {growth:.2f}x ({'meets' if growth <= 1.5 else 'MISSES'} the 1.5x target)")
    share = own[1000] / floor[1000]
    print(f"own work at turn 1000: {share:.1%} of the SDK floor ({'meets' if share < 0.10 else 'MISSES'} the 10% target)")
    stored = statistics.median(own_work(1000, with_store=True) for _ in range(3))
    print(f"with the durable store (one fsync per event) at turn 1000: {stored / floor[1000]:.1%} of the SDK floor "
          "(disk-bound: depends on the file system)")


if __name__ == "__main__":
    main()
