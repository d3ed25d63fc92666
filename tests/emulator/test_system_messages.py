"""Conformance: mid-conversation system messages, turn-scoped ones, tool changes (API-2026.md §2, §3).

Rules from https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages.
"""

from __future__ import annotations

import anthropic
import pytest

from minimal_runtime.emulator import Emulator, Turn

from .helpers import TOOLS, FakeClock, breakpoint_on, conversation, system

CURRENT = "claude-sonnet-5-5"
CLEAR_AT = "mid-conversation-system-clear-at-2026-08-21"
INLINE = "inline-tools-2026-09-15"


def make(model=CURRENT, policy=None):
    seen = []

    def record(request):
        seen.append(request)
        return (policy or (lambda r: Turn(content=[{"type": "text", "text": "ok"}])))(request)
    return Emulator(model=model, policy=record, clock=FakeClock()).client(max_retries=0), seen


def send(client, messages, betas=(CLEAR_AT,), model=CURRENT, **kw):
    kw.setdefault("system", system())
    return client.beta.messages.create(model=model, max_tokens=256, messages=messages, betas=list(betas), **kw)


def note(text, scoped=True):
    message = {"role": "system", "content": [{"type": "text", "text": text}]}
    return {**message, "clear_at": "next_user_message"} if scoped else message


def test_a_turn_scoped_message_renders_on_its_own_call_only_and_costs_nothing_once_cleared():
    """§2: it renders while no later user message exists; then stays in the array, renders nothing,
    costs 0 input tokens. The policy sees the system messages that render, in order. (Opus 5: a
    model without the prefix check, so the history without the note can be sent for comparison.)"""
    client, seen = make(model="claude-opus-5")
    history = [{"role": "user", "content": "task"}]
    first = send(client, [*history, note("budget: 80% left " * 20)], model="claude-opus-5")
    assert [m["role"] for m in seen[-1]["messages"]] == ["user", "system"]
    answer = [{"role": "assistant", "content": [b.to_dict() for b in first.content]}]
    later = [*history, note("budget: 80% left " * 20), *answer, {"role": "user", "content": "next"}]
    plain = [*history, *answer, {"role": "user", "content": "next"}]
    with_cleared = send(client, later, model="claude-opus-5").usage
    without = client.beta.messages.count_tokens(model="claude-opus-5", system=system(), messages=plain).input_tokens
    assert with_cleared.input_tokens + with_cleared.cache_read_input_tokens + with_cleared.cache_creation_input_tokens == without
    assert "system" not in [m["role"] for m in seen[-1]["messages"]]


def test_a_tool_result_only_user_message_clears_it_and_assistant_turns_do_not():
    """§2: a tool_result-only user message counts; assistant turns don't clear it; one that ends
    the array always renders."""
    client, seen = make(policy=lambda r: Turn(content=[{"type": "tool_use", "name": "fetch", "input": {"url": "u"}}]))
    first = send(client, [{"role": "user", "content": "task"}, note("step note")], tools=TOOLS)
    use = first.content[-1]
    messages = [{"role": "user", "content": "task"}, note("step note"),
                {"role": "assistant", "content": [b.to_dict() for b in first.content]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "page"}]},
                note("next note")]
    send(client, messages, tools=TOOLS)
    rendered = [m["content"][0]["text"] for m in seen[-1]["messages"] if m["role"] == "system"]
    assert rendered == ["next note"]


def test_clear_at_needs_its_beta_text_only_and_no_cache_control():
    """§2 validation errors, verbatim."""
    client, _ = make()
    base = [{"role": "user", "content": "task"}]
    cases = [
        ([*base, note("x")], (), "messages.1.clear_at: Extra inputs are not permitted"),
        ([{"role": "user", "content": "x", "clear_at": "never"}], (CLEAR_AT,),
         "messages.0.clear_at: clear_at is only permitted on role 'system' messages"),
        ([*base, {**note("x"), "clear_at": "tomorrow"}], (CLEAR_AT,),
         "messages.1.clear_at: Input should be 'next_user_message' or 'never'"),
        ([*base, {**note("x"), "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "fetch"}}]}],
         (CLEAR_AT, INLINE), "messages.1: a turn-scoped system message supports text blocks only (clear_at: 'next_user_message')"),
        ([*base, {**note("x"), "content": [breakpoint_on({"type": "text", "text": "x"})]}], (CLEAR_AT,),
         "messages.1.content.0: cache_control is not permitted on a turn-scoped system message (clear_at: 'next_user_message')"),
        ([*base, {**note("x"), "output_config": {"effort": "low"}}], (CLEAR_AT,),
         "messages.1: output_config is not permitted on a turn-scoped system message (clear_at: 'next_user_message')"),
    ]
    for messages, betas, expected in cases:
        with pytest.raises(anthropic.BadRequestError) as e:
            send(client, messages, betas=betas, tools=TOOLS)
        assert e.value.body["error"]["message"] == expected


def test_placement_rules():
    """§2 placement: not first; right after a user turn; followed by an assistant turn or the end;
    never between tool_use and tool_result. A turn-scoped one followed by a user message is a 400."""
    client, _ = make()
    bad = [
        [note("first", scoped=False), {"role": "user", "content": "x"}],
        [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}, note("after assistant", scoped=False)],
        [{"role": "user", "content": "x"}, note("then user"), {"role": "user", "content": "z"}],
        [{"role": "user", "content": "x"},
         {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {}}]},
         note("between", scoped=False),
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}],
    ]
    for messages in bad:
        with pytest.raises(anthropic.BadRequestError):
            send(client, messages, tools=TOOLS)
    effort_only = {"role": "system", "content": [], "output_config": {"effort": "low"}}
    assert send(client, [effort_only, {"role": "user", "content": "x"}],
                betas=(CLEAR_AT, "mid-conversation-output-config-2026-07-01")).stop_reason == "end_turn"


def test_which_models_take_system_messages():
    """§2 models: Sonnet 5 accepts the entry and ignores it; older models answer 400."""
    messages = [{"role": "user", "content": "x"}, note("a note", scoped=False)]
    sonnet5, seen = make(model="claude-sonnet-5")
    send(sonnet5, messages, model="claude-sonnet-5")
    assert [m["role"] for m in seen[-1]["messages"]] == ["user"]
    old, _ = make(model="claude-sonnet-4-6")
    with pytest.raises(anthropic.BadRequestError, match="role 'system' is not supported on this model"):
        send(old, messages, model="claude-sonnet-4-6")


def test_automatic_caching_skips_turn_scoped_messages_and_plain_ones_are_cacheable():
    """§2 caching: automatic caching skips turn-scoped entries, so the history before one is read
    next call; a plain system message is cacheable."""
    client, _ = make()
    history = conversation(6)
    reads = []
    messages = list(history)
    for k in range(4):
        usage = send(client, [*messages, note(f"batch {k} " * 30)], cache_control={"type": "ephemeral"}).usage
        reads.append(usage.cache_read_input_tokens)
        messages = [*messages, note(f"batch {k} " * 30), {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"x{k}", "name": "fetch", "input": {"url": str(k)}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"x{k}", "content": "r" * 400}]}]
    assert all(r > 0 for r in reads[1:]) and reads == sorted(reads)
    plain = send(client, [*history, note("kept " * 400, scoped=False)], cache_control={"type": "ephemeral"}).usage
    assert plain.input_tokens == 0  # the plain system message itself is automatic caching's target
    again = send(client, [*history, note("kept " * 400, scoped=False)], cache_control={"type": "ephemeral"}).usage
    assert again.cache_read_input_tokens == plain.cache_read_input_tokens + plain.cache_creation_input_tokens


def test_dropping_or_rewording_a_cleared_message_misses_the_cache_from_there():
    """§2: re-send cleared messages verbatim; dropping or rewording one is an edit: the cache misses
    from that point."""
    client, _ = make()
    history = conversation(8)
    marked = [*history[:-1], {**history[-1], "content": [breakpoint_on(history[-1]["content"][0])]}]
    messages = [*history[:3], note("old note"), *history[3:]]
    marked_with_note = [*marked[:3], note("old note"), *marked[3:]]
    first = send(client, marked_with_note).usage
    same = send(client, marked_with_note).usage
    dropped = send(client, marked).usage
    assert same.cache_read_input_tokens == first.cache_creation_input_tokens + first.cache_read_input_tokens
    assert dropped.cache_read_input_tokens < same.cache_read_input_tokens and dropped.cache_creation_input_tokens > 0
    reworded = send(client, [*marked[:3], note("old note, reworded"), *marked[3:]]).usage
    assert reworded.cache_read_input_tokens == dropped.cache_read_input_tokens  # only the system prompt's entry
    assert messages  # the note sits between turns 1 and 2


def test_tool_changes_keep_tools_byte_identical_and_the_cache_valid():
    """§3: tool_addition / tool_removal change what is offered from their position on; `tools` stays
    the same so the cache hits; a deferred tool is offered only once added; the policy sees the tools
    in effect at the end; an unresolved reference is tool_reference_unresolved."""
    client, seen = make()
    tools = [TOOLS[0], {**TOOLS[1], "defer_loading": True}]
    history = conversation(6)
    history[-1] = {**history[-1], "content": [breakpoint_on(history[-1]["content"][0])]}
    first = send(client, history, tools=tools, betas=(CLEAR_AT, INLINE)).usage
    assert [t["name"] for t in seen[-1]["tools"]] == ["fetch"]
    change = {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "fetch"}},
                                            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "write_file"}}]}
    second = send(client, [*history, change], tools=tools, betas=(CLEAR_AT, INLINE)).usage
    assert [t["name"] for t in seen[-1]["tools"]] == ["write_file"]
    assert second.cache_read_input_tokens == first.cache_read_input_tokens + first.cache_creation_input_tokens
    unknown = {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "nope"}}]}
    with pytest.raises(anthropic.BadRequestError) as e:
        send(client, [*history, unknown], tools=tools, betas=(INLINE,))
    assert e.value.body["error"]["details"]["error_code"] == "tool_reference_unresolved"
    with pytest.raises(anthropic.BadRequestError, match="requires the anthropic-beta header inline-tools"):
        send(client, [*history, change], tools=tools, betas=())
    sonnet5, _ = make(model="claude-sonnet-5")
    with pytest.raises(anthropic.BadRequestError, match="tool_addition/tool_removal is not supported on this model"):
        send(sonnet5, [*history, change], tools=tools, betas=(INLINE,), model="claude-sonnet-5")


def test_a_breakpoint_on_a_change_block_counts_toward_the_four():
    """§3: cache_control on a change block counts toward the limit of 4 breakpoints."""
    client, _ = make()
    history = conversation(2)
    change = {"role": "system", "content": [
        breakpoint_on({"type": "tool_removal", "tool": {"type": "tool_reference", "name": "fetch"}})]}
    four = [breakpoint_on({"type": "text", "text": f"part {i}"}) for i in range(4)]
    with pytest.raises(anthropic.BadRequestError, match="Found 5"):
        send(client, [{"role": "user", "content": four}, *history[1:], change], tools=TOOLS, betas=(INLINE,),
             system="no breakpoint here")


def test_forced_tool_choice_is_rejected_on_the_models_that_reject_it():
    """§7: forced tool_choice (any/tool) is a 400 on Fable/Mythos 5.1/5.2, Opus 5.5 and Sonnet 5.5."""
    client, _ = make()
    with pytest.raises(anthropic.BadRequestError, match="forced tool use"):
        send(client, [{"role": "user", "content": "x"}], tools=TOOLS, tool_choice={"type": "any"})
    haiku, _ = make(model="claude-haiku-5-5")
    assert send(haiku, [{"role": "user", "content": "x"}], tools=TOOLS, tool_choice={"type": "any"},
                model="claude-haiku-5-5").stop_reason == "end_turn"
