"""The runtime's own per-call work, next to the SDK call it wraps.

Own work = everything a step does except the client call: hooks, call assembly (layout, breakpoints,
batch), usage bookkeeping, the call view, tool dispatch, appending the turn. Measured at turn 300
and turn 1000 of a growing run (tool results of about 500 characters, so 1,000 turns fit a 200K
window) with a client stub that answers instantly, and printed next to the floor: the bare SDK call
(``messages.create`` through a mock transport returning a fixed response) for the same request.
Ratios come from this run; absolute times depend on the machine.
Targets: turn-1000 / turn-300 <= 1.5 (own work does not grow with history); own work < 10% of the
SDK floor at turn 1000. A whole step (ours + the SDK's) is then compared between the two turns, with
our share of it. Two runs: the 2025 layout (Sonnet 4.6) and the 2026 one (Sonnet 5.5: a
thinking block in every answer, a turn-scoped batch entry and its beta on every call).
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
from minimal_runtime.core.context import turn_scoped_layout  # noqa: E402
from minimal_runtime.core.hooks import HookRegistry, Point  # noqa: E402
from minimal_runtime.core.store import RunStore  # noqa: E402
from minimal_runtime.core.tools import FunctionTool  # noqa: E402
from pydantic import BaseModel  # noqa: E402

MODEL = "claude-sonnet-4-6"
CURRENT = "claude-sonnet-5-5"
PAGE = "lorem ipsum " * 41
THINKING = {"type": "thinking", "thinking": "", "signature": "s" * 200}


class Url(BaseModel):
    url: str


def response(step: int, thinking: bool = False) -> Message:
    return Message.model_validate({
        "id": f"msg_{step}", "type": "message", "role": "assistant", "model": MODEL, "stop_reason": "tool_use",
        "content": [*([THINKING] if thinking else []), {"type": "text", "text": "next page"},
                    {"type": "tool_use", "id": f"toolu_{step:06d}", "name": "fetch", "input": {"url": f"https://x.test/{step}"}}],
        "usage": {"input_tokens": 30, "cache_read_input_tokens": 100_000, "cache_creation_input_tokens": 150, "output_tokens": 20}})


class InstantClient:
    """Answers from a prepared list: the client call costs (almost) nothing."""

    def __init__(self, thinking: bool = False):
        self.step, self.responses = 0, [response(i, thinking) for i in range(1200)]
        self.messages = self.beta = self

    def create(self, **request):
        self.step += 1
        return self.responses[self.step]


def history(turns: int, current: bool = False) -> list[dict]:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Read the pages."}]}]
    for i in range(turns):
        if current:
            messages.append({"role": "system", "clear_at": "next_user_message",
                             "content": [{"type": "text", "text": f"<!-- progress -->\nI have made {i} calls."}]})
        messages.append({"role": "assistant", "content": [
            *([THINKING] if current else []), {"type": "text", "text": "next page"},
            {"type": "tool_use", "id": f"toolu_h{i:06d}", "name": "fetch", "input": {"url": f"https://x.test/{i}"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_h{i:06d}", "content": PAGE}]})
    return messages


def make_agent(turns: int, store: RunStore | None = None, model: str = MODEL) -> Agent:
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("progress", f"I have made {len(e.agent.calls)} calls."))
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", "I am on phase 2 of 4: collect pricing data."))
    hooks.register(Point.POST_LLM_CALL, lambda e: None)
    current = model == CURRENT
    # The 2026 layout as labelled: layout_for picks threaded_layout on Sonnet 5.5, and against this client (which
    # opens no thread) every call would be a create that re-strips the whole history's markers (loop_speed.py
    # measures the thread, continues included)
    agent = Agent(InstantClient(current), model=model, system="You are an agent.", hooks=hooks, max_steps=10_000,
                  store=store, tools=[FunctionTool("fetch", "Fetch a page.", Url, lambda a: PAGE)],
                  layout=turn_scoped_layout if current else None)
    agent.messages = history(turns, current)
    return agent


def own_work(turns: int, steps: int = 30, with_store: bool = False, model: str = MODEL) -> float:
    agent = make_agent(turns, RunStore(tempfile.mkdtemp()) if with_store else None, model)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        agent._step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def sdk_floor(turns: int, calls: int = 15, model: str = MODEL) -> float:
    fixed = json.dumps(response(0).model_dump(exclude_none=True)).encode()
    client = anthropic.Anthropic(api_key="x", base_url="http://bare.invalid", http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda r: httpx2.Response(200, content=fixed, headers={"content-type": "application/json"}))))
    messages = history(turns, model == CURRENT)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        client.beta.messages.create(model=model, max_tokens=4096, messages=messages, system="You are an agent.")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    for model, label in ((MODEL, "2025 layout"), (CURRENT, "2026 layout, turn-scoped batch, thinking every turn")):
        print(f"{model} ({label})")
        measure(model)


def measure(model: str) -> None:
    own, floor = {}, {}
    for turns in (300, 1000):
        own_samples, floor_samples = [], []
        for _ in range(3):  # interleave to share the machine's noise
            own_samples.append(own_work(turns, model=model))
            floor_samples.append(sdk_floor(turns, model=model))
        own[turns], floor[turns] = statistics.median(own_samples), statistics.median(floor_samples)
    print(f"{'turn':>6} {'own work / SDK floor':>21}")
    for turns in own:
        print(f"{turns:>6} {own[turns] / floor[turns]:>20.1%}")
    growth = own[1000] / own[300]
    print(f"own work, turn 1000 / turn 300: {growth:.2f}x ({'meets' if growth <= 1.5 else 'MISSES'} the 1.5x target)")
    share = own[1000] / floor[1000]
    print(f"own work at turn 1000: {share:.1%} of the SDK floor ({'meets' if share < 0.10 else 'MISSES'} the 10% target)")
    call = {turns: own[turns] + floor[turns] for turns in own}  # one step: ours, then the SDK's request and parse
    print(f"a whole step (ours + the SDK's), turn 1000 / turn 300: {call[1000] / call[300]:.2f}x; "
          f"ours is {own[1000] / call[1000]:.1%} of it at turn 1000, {own[300] / call[300]:.1%} at turn 300")
    stored = statistics.median(own_work(1000, with_store=True, model=model) for _ in range(3))
    print(f"with the durable store (one fsync per event) at turn 1000: {stored / floor[1000]:.1%} of the SDK floor "
          "(disk-bound: depends on the file system)\n")


if __name__ == "__main__":
    main()
