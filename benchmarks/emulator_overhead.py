"""What the emulator adds to a call, next to the SDK's own cost of making one.

Per-call time of ``client.messages.create`` through the emulator, against the same SDK call through
a bare mock transport that returns a fixed response, at turn 300 and turn 1000 of a growing tool
conversation (about 500-character tool results, so 1,000 turns still fit a 200K window).
Printed as ratios measured in this run; absolute times depend on the machine.
Target: at most 1.3x at turn 1000.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import anthropic
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.emulator import Emulator  # noqa: E402

MODEL = "claude-sonnet-4-6"
FIXED = json.dumps({"id": "msg_fixed", "type": "message", "role": "assistant", "model": MODEL,
                    "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()


def conversation(turns: int) -> list[dict]:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Compare four pricing pages."}]}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i:05d}", "name": "fetch", "input": {"url": f"https://example.test/{i}"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i:05d}", "content": f"page {i} " + "lorem ipsum " * 41}]})
    return messages


def at_turn(history: list[dict], turn: int) -> list[dict]:
    """The request at ``turn``: history so far, breakpoint on the last durable block, a batch after it."""
    messages = history[: 1 + 2 * turn]
    last = messages[-1]["content"][-1]
    batch = {"type": "text", "text": f"<!-- budget -->\nI am at turn {turn}."}
    messages[-1] = {"role": "user", "content": [{**last, "cache_control": {"type": "ephemeral"}}, batch]}
    return messages


def per_call(client: anthropic.Anthropic, history: list[dict], first_turn: int, calls: int) -> float:
    """Median time of ``calls`` consecutive calls of a growing run, from ``first_turn`` on."""
    times = []
    for turn in range(first_turn, first_turn + calls):
        messages = at_turn(history, turn)
        start = time.perf_counter()
        client.messages.create(model=MODEL, max_tokens=64, messages=messages, system="You are an agent.")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    bare = anthropic.Anthropic(api_key="x", base_url="http://bare.invalid", http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda r: httpx2.Response(200, content=FIXED, headers={"content-type": "application/json"}))))
    emu = Emulator(model=MODEL)
    client = emu.client()
    history = conversation(1100)
    print(f"{'turn':>6} {'prompt tokens':>14} {'cache read':>11} {'emulator/bare':>14}")
    ratios = {}
    for turn in (300, 1000):
        per_call(client, history, turn - 2, 2)  # the run so far: its prefix is in the cache
        samples = []
        for k in range(5):  # interleave the two sides so they share the machine's noise
            start = turn + 6 * k
            samples.append(per_call(client, history, start, 6) / per_call(bare, history, start, 6))
        ratios[turn] = statistics.median(samples)
        last = emu.calls[-1]
        print(f"{turn:>6} {last.prompt_tokens:>14,} {last.cache_read_share:>10.1%} {ratios[turn]:>13.2f}x")
    verdict = "meets" if ratios[1000] <= 1.3 else "MISSES"
    print(f"turn-1000 ratio {ratios[1000]:.2f}x {verdict} the 1.3x target")


if __name__ == "__main__":
    main()
