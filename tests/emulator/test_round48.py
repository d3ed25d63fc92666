"""Issue 48's rules (images by the vision page's rule, the tool-use system prompt, validation edges,
the tokenizer factor) and issue 51 item 1 (``cache_control: null``), each driven through the real SDK."""

from __future__ import annotations


from minimal_runtime.emulator import Emulator

from .helpers import SYSTEM_TEXT, FakeClock

SONNET46, SONNET55, OPUS47, OPUS5, HAIKU45 = ("claude-sonnet-4-6", "claude-sonnet-5-5", "claude-opus-4-7",
                                              "claude-opus-5", "claude-haiku-4-5")
TOOL = {"name": "fetch", "description": "Fetch a URL.",
        "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}}


def client_for(model=SONNET46, **kw):
    return Emulator(model=model, clock=FakeClock(), **kw).client(max_retries=0)


# -- issue 51 item 1: "cache_control": null is no breakpoint -------------------------------------

def test_a_null_cache_control_on_a_text_block_a_system_block_and_a_tool_is_no_breakpoint():
    client = client_for()
    kwargs = dict(model=SONNET46, max_tokens=64,
                  system=[{"type": "text", "text": SYSTEM_TEXT, "cache_control": None}],
                  tools=[{**TOOL, "cache_control": None}],
                  messages=[{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": None}]}])
    first = client.messages.create(**kwargs)
    second = client.messages.create(**kwargs)
    for answer in (first, second):  # accepted, and no breakpoint: nothing written, nothing read
        assert answer.usage.cache_creation_input_tokens == 0 and answer.usage.cache_read_input_tokens == 0
    assert client.messages.count_tokens(**{k: v for k, v in kwargs.items() if k != "max_tokens"}).input_tokens \
        == first.usage.input_tokens


def test_a_null_cache_control_beside_a_real_breakpoint_keeps_the_real_one():
    client = client_for()
    messages = [{"role": "user", "content": [{"type": "text", "text": "a task", "cache_control": None},
                                             {"type": "text", "text": "more", "cache_control": None}]}]
    system = [{"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}]
    first = client.messages.create(model=SONNET46, max_tokens=64, system=system, messages=messages)
    second = client.messages.create(model=SONNET46, max_tokens=64, system=system, messages=messages)
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
