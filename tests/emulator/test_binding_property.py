"""Property: appending, or moving cache_control, always passes the prefix check; any edit of an
earlier message that a thinking block follows fails it on an enforcing model (API-2026.md §1.3)."""

from __future__ import annotations

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minimal_runtime.emulator import Emulator, Turn

from .helpers import FakeClock

MODEL = "claude-haiku-5-5"


def answer(request):
    n = len(request["messages"])
    if n % 4 == 1:
        return Turn(content=[{"type": "text", "text": f"step {n}"},
                             {"type": "tool_use", "name": "fetch", "input": {"url": f"https://x.test/{n}"}}], thinking=f"t{n}")
    return Turn(content=[{"type": "text", "text": f"answer {n}"}], thinking="")


TOOLS = [{"name": "fetch", "description": "fetch", "input_schema": {"type": "object"}}]


def conversation(client, turns: int) -> list[dict]:
    messages = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    for k in range(turns):
        reply = client.beta.messages.create(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS)
        messages.append({"role": "assistant", "content": [b.to_dict() for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if uses:
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id, "content": f"page {k}"}
                                                         for u in uses]})
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": f"next {k}"}]})
    return messages


@pytest.fixture(scope="module")
def history():
    emu = Emulator(model=MODEL, policy=answer, clock=FakeClock())
    return emu, conversation(emu.client(max_retries=0), 8)


def send(emu, messages):
    return emu.client(max_retries=0).beta.messages.create(model=MODEL, max_tokens=64, messages=messages, tools=TOOLS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_appending_or_moving_cache_control_always_passes(history, data):
    emu, messages = history
    cut = data.draw(st.integers(min_value=1, max_value=len(messages) // 2)) * 2 - 1  # a prefix ending on a user turn
    request = [dict(m) for m in messages[:cut]]
    for _ in range(data.draw(st.integers(0, 3))):
        i = data.draw(st.integers(0, len(request) - 1))
        blocks = request[i]["content"]
        j = data.draw(st.integers(0, len(blocks) - 1))
        if blocks[j]["type"] not in ("thinking", "redacted_thinking"):
            request[i] = {**request[i], "content": [*blocks[:j], {**blocks[j], "cache_control": {"type": "ephemeral"}},
                                                     *blocks[j + 1:]]}
    assert send(emu, request).content[0].type == "thinking"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_edit_of_an_earlier_message_fails(history, data):
    emu, messages = history
    i = data.draw(st.integers(0, len(messages) - 3))  # a thinking block follows every message before the last turn
    kind = data.draw(st.sampled_from(["reword", "add block", "drop block", "reorder"]))
    request = [dict(m) for m in messages[:-1]] + [messages[-1]]
    blocks = list(request[i]["content"])
    non_thinking = [j for j, b in enumerate(blocks) if b["type"] == "text"]
    if kind == "reword" and non_thinking:
        j = non_thinking[0]
        blocks[j] = {**blocks[j], "text": blocks[j]["text"] + " (edited)"}
    elif kind == "add block" and request[i]["role"] == "user" and blocks[0]["type"] == "text":
        blocks = [*blocks, {"type": "text", "text": "<!-- plan -->\nan extra note"}]
    elif kind == "drop block" and len(non_thinking) and len([b for b in blocks if b["type"] != "thinking"]) > 1:
        blocks = [b for j, b in enumerate(blocks) if j != non_thinking[0]]
    elif kind == "reorder" and i + 2 < len(request) - 1:
        request[i], request[i + 2] = request[i + 2], request[i]
        blocks = request[i]["content"]
    else:
        blocks = [*blocks[:-1], {**blocks[-1], **({"text": blocks[-1]["text"] + "!"} if blocks[-1]["type"] == "text" else
                                                  {"content": str(blocks[-1].get("content", "")) + "!"}
                                                  if blocks[-1]["type"] == "tool_result" else
                                                  {"input": {**blocks[-1].get("input", {}), "extra": 1}})}]
    request[i] = {**request[i], "content": blocks}
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation|tool_use|tool_result"):
        send(emu, request)
