"""``Emulator.copy``: a twin that goes on from here as the emulator itself would (its cache, ids and
the thinking blocks it handed out), and separately (what either does later is its own)."""

from __future__ import annotations

from minimal_runtime.core.messages import user
from minimal_runtime.emulator import Emulator, Turn, text

MODEL = "claude-sonnet-5-5"  # binds each thinking block to what was sent before it
SYSTEM = [{"type": "text", "text": "You are terse. " * 400, "cache_control": {"type": "ephemeral"}}]


def _policy(request: dict) -> Turn:
    return Turn(content=[text(f"answer {len(request['messages'])}")], thinking="weighing the question " * 20)


def _ask(emulator: Emulator, messages: list[dict]):
    *blocks, last = messages[-1]["content"]
    marked = [*messages[:-1], {**messages[-1], "content": [*blocks, {**last, "cache_control": {"type": "ephemeral"}}]}]
    return emulator.client().messages.create(model=MODEL, max_tokens=1_000, system=SYSTEM, messages=marked)


def _turn(response) -> dict:
    return {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]}


def test_a_conversation_goes_on_on_the_copy_as_on_the_emulator_and_apart_from_it():
    clock = [1_000.0]
    emulator = Emulator(model=MODEL, policy=_policy, clock=lambda: clock[0])
    messages = [user("first question " * 300)]
    messages += [_turn(_ask(emulator, messages)), user("second question " * 300)]
    messages += [_turn(_ask(emulator, messages)), user("third question")]
    twin = emulator.copy()
    on_twin, here = _ask(twin, messages), _ask(emulator, messages)
    assert on_twin.usage.model_dump() == here.usage.model_dump()
    assert on_twin.usage.cache_read_input_tokens > 0  # the twin read the prefix the emulator had cached
    assert on_twin.content[0].signature == here.content[0].signature  # the same thinking, bound the same
    assert on_twin.id == here.id
    # apart: a new prefix written on the twin is not in the emulator's cache
    other = [*messages[:-1], user("a question only the twin hears " * 200)]
    _ask(twin, other)
    assert _ask(twin, other).usage.cache_read_input_tokens > _ask(emulator, other).usage.cache_read_input_tokens
