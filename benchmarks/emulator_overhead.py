"""What the emulator adds to a call, next to the SDK's own cost of making one.

Per-call time of ``client.beta.messages.create`` through the emulator, against the same SDK call
through a bare mock transport that returns a fixed response, at turn 300 and turn 1000 of a growing
tool conversation (about 500-character tool results, so 1,000 turns still fit a 200K window). Two
runs: the 2025 shape (Sonnet 4.6, the batch in the last user turn) and the 2026 shape (Sonnet 5.5,
a signed thinking block in every assistant turn, the batch as a turn-scoped system message, so
every call runs the prefix check). Printed as ratios measured in this run; absolute times depend on
the machine. Target: at most 1.3x at turn 1000.
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
CURRENT = "claude-sonnet-5-5"
CLEAR_AT = "mid-conversation-system-clear-at-2026-08-21"
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


def note(turn: int) -> dict:
    return {"role": "system", "clear_at": "next_user_message",
            "content": [{"type": "text", "text": f"<!-- budget -->\nI am at turn {turn}."}]}


def thinking_run(emu: Emulator, turns: int) -> list[dict]:
    """A real run on a current model: each answer (a thinking block and a tool call) sent back as
    returned, the batch a turn-scoped system message after each user turn; breakpoints as the
    runtime places them are added per request by ``at_turn_2026``."""
    client = emu.client()
    durable = [{"role": "user", "content": [{"type": "text", "text": "Compare four pricing pages."}]}]
    for turn in range(turns):
        reply = client.beta.messages.create(model=CURRENT, max_tokens=64, messages=at_turn_2026(durable, turn),
                                            system="You are an agent.", betas=[CLEAR_AT])
        use = next(b for b in reply.content if b.type == "tool_use")
        durable += [note(turn), {"role": "assistant", "content": [b.to_dict() for b in reply.content]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                  "content": f"page {turn} " + "lorem ipsum " * 41}]}]
    return durable


def at_turn_2026(durable: list[dict], turn: int) -> list[dict]:
    messages = durable[: 1 + 3 * turn]
    last = messages[-1]["content"][-1]
    messages[-1] = {**messages[-1], "content": [*messages[-1]["content"][:-1], {**last, "cache_control": {"type": "ephemeral"}}]}
    return [*messages, note(turn)]


def per_call(client: anthropic.Anthropic, requests, first_turn: int, calls: int, model: str, betas: list[str]) -> float:
    """Median time of ``calls`` consecutive calls of a growing run, from ``first_turn`` on."""
    times = []
    for turn in range(first_turn, first_turn + calls):
        messages = requests(turn)
        start = time.perf_counter()
        client.beta.messages.create(model=model, max_tokens=64, messages=messages, system="You are an agent.", betas=betas)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(label: str, emu: Emulator, requests, model: str, betas: list[str]) -> float:
    bare = anthropic.Anthropic(api_key="x", base_url="http://bare.invalid", http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda r: httpx2.Response(200, content=FIXED, headers={"content-type": "application/json"}))))
    client = emu.client()
    print(label)
    print(f"{'turn':>6} {'prompt tokens':>14} {'cache read':>11} {'emulator/bare':>14}")
    ratios = {}
    for turn in (300, 1000):
        per_call(client, requests, turn - 2, 2, model, betas)  # the run so far: its prefix is in the cache
        samples = []
        for k in range(5):  # interleave the two sides so they share the machine's noise
            start = turn + 6 * k
            samples.append(per_call(client, requests, start, 6, model, betas) / per_call(bare, requests, start, 6, model, betas))
        ratios[turn] = statistics.median(samples)
        last = emu.calls[-1]
        print(f"{turn:>6} {last.prompt_tokens:>14,} {last.cache_read_share:>10.1%} {ratios[turn]:>13.2f}x")
    verdict = "meets" if ratios[1000] <= 1.3 else "MISSES"
    print(f"turn-1000 ratio {ratios[1000]:.2f}x {verdict} the 1.3x target\n")
    return ratios[1000]


def main() -> None:
    history = conversation(1100)
    measure("2025 shape: claude-sonnet-4-6, batch in the last user turn", Emulator(model=MODEL),
            lambda turn: at_turn(history, turn), MODEL, [])
    emu = Emulator(model=CURRENT, policy=lambda r: {"type": "tool_use", "name": "fetch", "input": {"url": "u"}})
    durable = thinking_run(emu, 1040)
    measure("2026 shape: claude-sonnet-5-5, a thinking block every turn, turn-scoped batch (prefix check on every call)",
            emu, lambda turn: at_turn_2026(durable, turn), CURRENT, [CLEAR_AT])


if __name__ == "__main__":
    main()
