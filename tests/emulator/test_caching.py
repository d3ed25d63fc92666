"""Conformance: the prompt-cache rules, one test per rule, each naming the rule it checks.

Rules from https://platform.claude.com/docs/en/build-with-claude/prompt-caching (read 2026-11-29).
"""

from __future__ import annotations

import pytest

from minimal_runtime.emulator.prompt import flatten
from .helpers import (MODEL, TOOLS, add_batch, breakpoint_on, conversation, make, system,
                      with_breakpoint_on_last)


def create(client, messages, **kw):
    kw.setdefault("system", system())
    return client.messages.create(model=kw.pop("model", MODEL), max_tokens=256, messages=messages, **kw)


def total(usage) -> int:
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens


def test_breakpoint_on_last_durable_block_reads_whole_history_every_call():
    """Rule: hits need a byte-identical prefix; the batch after the breakpoint never disturbs it.
    A growing conversation with a changing batch at the tail reads everything written before."""
    emu, _ = make()
    client = emu.client()
    previous_cached = None
    for turn in range(1, 30):
        durable = with_breakpoint_on_last(conversation(turn))
        usage = create(client, add_batch(durable, f"plan position {turn}")).usage
        if previous_cached is not None:
            assert usage.cache_read_input_tokens == previous_cached
        previous_cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        assert usage.input_tokens < 30  # only the batch is uncached


def test_breakpoint_on_the_batch_never_reads_the_history():
    """Rule: an entry is the prefix ending at its breakpoint block. Put the breakpoint on the
    per-call batch and every entry contains a batch no later request repeats."""
    emu, _ = make()
    client = emu.client()
    reads = []
    for turn in range(1, 25):
        messages = add_batch(conversation(turn), f"plan position {turn}")
        messages[-1]["content"][-1] = breakpoint_on(messages[-1]["content"][-1])
        reads.append(create(client, messages, system=system(cached=False)).usage.cache_read_input_tokens)
    assert reads == [0] * len(reads)


def test_automatic_caching_with_batch_last_never_reads_the_history():
    """Rule: top-level cache_control puts the breakpoint on the last cacheable block, which with
    a batch at the tail is the batch."""
    emu, _ = make()
    client = emu.client()
    reads = [create(client, add_batch(conversation(t), f"budget {t}"), system=system(cached=False),
                    cache_control={"type": "ephemeral"}).usage.cache_read_input_tokens for t in range(1, 20)]
    assert reads == [0] * len(reads)


def test_automatic_caching_without_a_batch_moves_forward_and_reads():
    """Rule: automatic caching moves the breakpoint forward as the conversation grows."""
    emu, _ = make()
    client = emu.client()
    usages = [create(client, conversation(t), system=system(cached=False),
                     cache_control={"type": "ephemeral"}).usage for t in range(1, 6)]
    for before, after in zip(usages, usages[1:]):
        assert after.cache_read_input_tokens == before.cache_read_input_tokens + before.cache_creation_input_tokens


def test_prefix_order_tools_then_system_then_messages():
    """Rule: the prefix is tools, then system, then messages; a system change keeps tools cached."""
    emu, _ = make()
    client = emu.client()
    big_tools = [breakpoint_on({**TOOLS[0], "description": "Fetch a URL. " * 400})]
    first = create(client, conversation(1), tools=big_tools)
    changed = create(client, conversation(1), tools=big_tools,
                     system=[breakpoint_on({"type": "text", "text": "A different system prompt. " * 80})])
    tools_tokens = flatten({"model": MODEL, "tools": big_tools, "messages": [{"role": "user", "content": "x"}]}).cum[0]
    assert first.usage.cache_read_input_tokens == 0
    assert changed.usage.cache_read_input_tokens == tools_tokens


def test_tool_change_misses_with_tools_changed():
    """Rule: a change to tools invalidates everything; diagnostics say tools_changed."""
    emu, _ = make()
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(5))
    first = create(client, messages, tools=TOOLS, diagnostics={"previous_message_id": None})
    second = create(client, messages, tools=TOOLS[:1], diagnostics={"previous_message_id": first.id})
    assert second.usage.cache_read_input_tokens == 0
    reason = second.diagnostics.cache_miss_reason
    assert reason.type == "tools_changed"
    assert reason.cache_missed_input_tokens == first.usage.cache_creation_input_tokens


def test_tool_choice_change_keeps_tools_and_system_cached():
    """Rule: a tool_choice change invalidates the messages cache only."""
    emu, _ = make()
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(5))
    first = create(client, messages, tools=TOOLS, tool_choice={"type": "auto"}, diagnostics={"previous_message_id": None})
    second = create(client, messages, tools=TOOLS, tool_choice={"type": "any"},
                    diagnostics={"previous_message_id": first.id})
    # the tools and system read back at the size of the tool-use system prompt under the new tool_choice
    system_prefix = flatten({"model": MODEL, "tools": TOOLS, "system": system(), "tool_choice": {"type": "any"},
                             "messages": [{"role": "user", "content": "x"}]}).cum[len(TOOLS)]
    assert second.usage.cache_read_input_tokens == system_prefix
    assert second.diagnostics.cache_miss_reason.type == "unavailable"


def test_expired_ttl_rewrites_and_a_hit_refreshes_it():
    """Rule: entries live 5 minutes by default; each hit refreshes the lifetime."""
    emu, clock = make()
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(3))
    written = create(client, messages).usage.cache_creation_input_tokens
    clock.advance(240)
    assert create(client, messages).usage.cache_read_input_tokens == written  # hit at 4 min
    clock.advance(240)
    assert create(client, messages).usage.cache_read_input_tokens == written  # refreshed: 8 min after write
    clock.advance(301)
    again = create(client, messages).usage
    assert again.cache_read_input_tokens == 0 and again.cache_creation_input_tokens == written


def test_one_hour_ttl_survives_five_minutes_and_is_billed_as_1h():
    """Rule: ttl "1h" keeps an entry an hour; its writes show in cache_creation.ephemeral_1h."""
    emu, clock = make()
    client = emu.client()
    sys_1h = [breakpoint_on({"type": "text", "text": system()[0]["text"]}, ttl="1h")]
    first = create(client, conversation(1), system=sys_1h)
    assert first.usage.cache_creation.ephemeral_1h_input_tokens == first.usage.cache_creation_input_tokens > 0
    clock.advance(1800)
    assert create(client, conversation(1), system=sys_1h).usage.cache_read_input_tokens > 0
    clock.advance(3601)
    assert create(client, conversation(1), system=sys_1h).usage.cache_read_input_tokens == 0


def test_mixed_ttls_split_the_creation_breakdown():
    """Rule: cache_creation breaks written tokens down by the TTL of the breakpoint that wrote them."""
    emu, _ = make()
    client = emu.client()
    sys_1h = [breakpoint_on({"type": "text", "text": system()[0]["text"]}, ttl="1h")]
    usage = create(client, with_breakpoint_on_last(conversation(4)), system=sys_1h).usage
    system_tokens = flatten({"model": MODEL, "system": sys_1h, "messages": [{"role": "user", "content": "x"}]}).cum[0]
    assert usage.cache_creation.ephemeral_1h_input_tokens == system_tokens
    assert usage.cache_creation.ephemeral_5m_input_tokens == usage.cache_creation_input_tokens - system_tokens


def test_longer_ttl_must_come_first():
    """Rule: a 1h breakpoint may not follow a 5m breakpoint."""
    import anthropic
    emu, _ = make()
    messages = conversation(1)
    messages[-1]["content"][-1] = breakpoint_on(messages[-1]["content"][-1], ttl="1h")
    with pytest.raises(anthropic.BadRequestError, match="must not come after a ttl=.5m. cache_control block"):
        create(emu.client(), messages)


@pytest.mark.parametrize("jump, hits", [(19, True), (20, False), (21, False)])
def test_lookback_is_twenty_block_positions(jump: int, hits: bool):
    """Rule: a read walks back at most 20 positions from the breakpoint (the breakpoint counts as
    the first). Moving the breakpoint 19 blocks later still finds the old entry; 20 does not."""
    emu, _ = make()
    client = emu.client()
    history = [{"role": "user", "content": [{"type": "text", "text": f"block {i} " + "y" * 40} for i in range(60)]}]
    base = [{"role": "user", "content": history[0]["content"][:20]}]
    create(client, with_breakpoint_on_last(base), system=system(cached=False))
    later = [{"role": "user", "content": history[0]["content"][:20 + jump]}]
    read = create(client, with_breakpoint_on_last(later), system=system(cached=False)).usage.cache_read_input_tokens
    assert (read > 0) is hits


def test_prefix_below_minimum_is_processed_uncached_without_error():
    """Rule: a prefix shorter than the model's minimum cacheable length is not cached, no error."""
    emu, _ = make()
    client = emu.client()
    short = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": "short " * 100})]}]
    for _ in range(2):
        usage = create(client, short, system="Be brief.").usage
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0


@pytest.mark.parametrize("model, cacheable", [("claude-sonnet-4-5", True), ("claude-haiku-4-5", False)])
def test_minimum_is_per_model(model: str, cacheable: bool):
    """Rule: the minimum is 1,024 tokens for Sonnet 4.x and 4,096 for Haiku 4.5."""
    emu, _ = make(model=model)
    usage = create(emu.client(), conversation(1), model=model).usage  # ~1,400-token cached system
    assert (usage.cache_creation_input_tokens > 0) is cacheable


def test_non_deterministic_json_breaks_the_prefix():
    """Rule: hits need byte-identical prefixes; tool input serialized with another key order differs."""
    emu, _ = make()
    client = emu.client()
    a = with_breakpoint_on_last(conversation(3))
    b = with_breakpoint_on_last(conversation(3))
    b[1] = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0000", "name": "fetch",
                                               "input": {"url": "https://example.test/0", "timeout": 5}}]}
    a[1] = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0000", "name": "fetch",
                                               "input": {"timeout": 5, "url": "https://example.test/0"}}]}
    create(client, a, system=system(cached=False))
    assert create(client, b, system=system(cached=False)).usage.cache_read_input_tokens == 0
    assert create(client, a, system=system(cached=False)).usage.cache_read_input_tokens > 0


def test_usage_parts_add_up_to_count_tokens():
    """Rule: input_tokens + cache_creation_input_tokens + cache_read_input_tokens is the prompt."""
    emu, _ = make()
    client = emu.client()
    for turn in (1, 5, 9):
        messages = add_batch(with_breakpoint_on_last(conversation(turn)), "a note")
        usage = create(client, messages, tools=TOOLS).usage
        counted = client.messages.count_tokens(model=MODEL, messages=messages, system=system(), tools=TOOLS)
        assert total(usage) == counted.input_tokens

        assert emu.count_tokens({"model": MODEL, "messages": messages, "system": system(), "tools": TOOLS}) \
            == counted.input_tokens  # asked in-process (a replay's sizing): the endpoint's answer


def test_diagnostics_reasons():
    """Rule: diagnostics.previous_message_id -> cache_miss_reason (system, messages, model, not found)."""
    emu, _ = make()
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(4))
    first = create(client, messages, diagnostics={"previous_message_id": None})
    other_system = [breakpoint_on({"type": "text", "text": "Now: 2026-11-29T10:00:01. " + system()[0]["text"]})]
    assert create(client, messages, system=other_system, diagnostics={"previous_message_id": first.id}
                  ).diagnostics.cache_miss_reason.type == "system_changed"
    edited = with_breakpoint_on_last(conversation(4))
    edited[2]["content"][0] = {**edited[2]["content"][0], "content": "[cleared]"}
    create(client, messages)
    second = create(client, messages, diagnostics={"previous_message_id": None})
    assert create(client, edited, diagnostics={"previous_message_id": second.id}
                  ).diagnostics.cache_miss_reason.type == "messages_changed"
    third = create(client, messages, model="claude-sonnet-4-6", diagnostics={"previous_message_id": None})
    assert create(client, messages, model="claude-sonnet-4-5", diagnostics={"previous_message_id": third.id}
                  ).diagnostics.cache_miss_reason.type == "model_changed"
    assert create(client, messages, diagnostics={"previous_message_id": "msg_unknown"}
                  ).diagnostics.cache_miss_reason.type == "previous_message_not_found"
    fine = create(client, with_breakpoint_on_last(conversation(5)), diagnostics={"previous_message_id": second.id})
    assert fine.diagnostics is None  # appended turns only (cache_control moved): no divergence
    without = create(client, messages)  # did not ask for diagnostics: no fingerprint kept [CD]
    assert create(client, messages, diagnostics={"previous_message_id": without.id}
                  ).diagnostics.cache_miss_reason.type == "previous_message_not_found"


def test_a_lookback_hit_refreshes_the_entry_it_read():
    """Rule: a hit refreshes the entry's lifetime, also when the hit was found by walking back."""
    emu, clock = make()
    client = emu.client()
    short, longer = with_breakpoint_on_last(conversation(3)), with_breakpoint_on_last(conversation(5))
    written = create(client, short).usage.cache_creation_input_tokens
    clock.advance(240)
    assert create(client, longer).usage.cache_read_input_tokens == written  # read via lookback
    clock.advance(240)  # 8 minutes after the write, 4 after the hit
    assert create(client, short).usage.cache_read_input_tokens == written


def test_thinking_change_keeps_tools_and_system_cached():
    """Rule: a change to the thinking parameters invalidates the messages cache only."""
    emu, _ = make(model="claude-opus-4-5")  # 4,096-token minimum: make the system prompt long enough
    client = emu.client()
    long_system = [breakpoint_on({"type": "text", "text": system()[0]["text"] * 4})]
    messages = with_breakpoint_on_last(conversation(5))
    create(client, messages, model="claude-opus-4-5", system=long_system, tools=TOOLS)
    usage = client.messages.create(model="claude-opus-4-5", max_tokens=4096, messages=messages, system=long_system,
                                   tools=TOOLS, thinking={"type": "enabled", "budget_tokens": 2048}).usage
    head = flatten({"model": "claude-opus-4-5", "tools": TOOLS, "system": long_system,
                    "messages": [{"role": "user", "content": "x"}]}).cum[len(TOOLS)]
    assert usage.cache_read_input_tokens == head


def _png(width: int, height: int) -> str:
    import base64
    import struct
    import zlib
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return base64.b64encode(header + b"\x00" * 16 + zlib.compress(b"")).decode()


@pytest.mark.parametrize("size, tokens", [((200, 150), 8 * 6), ((1000, 1000), 36 * 36), ((3000, 2000), 1536)])
def test_images_count_by_pixels_after_scaling(size, tokens):
    """Rule (vision page): ceil(w / 28) x ceil(h / 28) tokens, after scaling to fit 1,568 px and 1,568
    tokens on a model before 4.7 (3000x2000 -> 1344x896: 48 x 32 patches)."""
    emu, _ = make()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png(*size)}}
    with_image = emu.client().messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": [image, {"type": "text", "text": "describe"}]}]).input_tokens
    without = emu.client().messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": [{"type": "text", "text": "describe"}]}]).input_tokens
    assert with_image - without == tokens
