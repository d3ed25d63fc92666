"""The context module's small checks, one behaviour each: where breakpoints land, where the batch
is found, and what the append-only check calls an edit. Mutation testing found each of these
unpinned (``make mutate-runtime``)."""

from __future__ import annotations

import pytest

from minimal_runtime.core.context import (CallParts, CallPlan, Injection, first_edit, injected_source,
                                          layout_for, system_with_breakpoint, tail_layout, threaded_layout,
                                          turn_scoped_layout, with_breakpoints)
from minimal_runtime.provider.models import LOOKBACK_BLOCKS, model_spec
from minimal_runtime.view.request import batch_of


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def marks(messages: list[dict]) -> list[tuple[int, int]]:
    return [(i, k) for i, m in enumerate(messages) for k, b in enumerate(m["content"]) if "cache_control" in b]


def thinking(signature: str) -> dict:
    return {"type": "thinking", "thinking": "", "signature": signature}


def redacted(data: str) -> dict:
    return {"type": "redacted_thinking", "data": data}


# breakpoints ---------------------------------------------------------------------------------------

def test_the_breakpoint_skips_empty_blocks_back_to_the_last_with_content():
    history = [{"role": "user", "content": [text("task")]},
               {"role": "assistant", "content": [text("a"), {"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
               {"role": "user", "content": [text("x"), text("y"), {"type": "tool_result", "tool_use_id": "t"},
                                            {"type": "tool_result", "tool_use_id": "t", "content": []}, text("")]}]
    assert marks(with_breakpoints(history)) == [(2, 1)]  # no content key, [] and "" are all empty
    assert marks(history) == []  # the history itself is untouched


def test_a_history_with_nothing_markable_gets_no_breakpoint():
    history = [{"role": "user", "content": [text("")]}, {"role": "assistant", "content": [text("")]}]
    assert marks(with_breakpoints(history)) == []


def test_the_previous_end_is_marked_exactly_from_the_lookback_on():
    head = [{"role": "user", "content": [text("task")]}, {"role": "assistant", "content": [text("a")]}]

    def grown(blocks: int) -> list[dict]:
        return [*head, {"role": "user", "content": [text(f"r{k}") for k in range(blocks)]}]
    assert marks(with_breakpoints(grown(LOOKBACK_BLOCKS - 1), previous_len=2)) == [(2, LOOKBACK_BLOCKS - 2)]
    assert sorted(marks(with_breakpoints(grown(LOOKBACK_BLOCKS), previous_len=2))) == [(1, 0), (2, LOOKBACK_BLOCKS - 1)]
    assert marks(with_breakpoints(grown(LOOKBACK_BLOCKS), previous_len=9)) == [(2, LOOKBACK_BLOCKS - 1)]  # shrunk history


def test_both_layouts_pass_the_previous_length_on_and_the_2025_one_honours_prefill():
    durable = [{"role": "user", "content": [text("task")]}, {"role": "assistant", "content": [text("a")]},
               {"role": "user", "content": [text(f"r{k}") for k in range(LOOKBACK_BLOCKS)]}]
    batch = [Injection(source="plan", text="p")]
    for layout in (tail_layout, turn_scoped_layout):
        request = layout(CallParts(system=[text("s")], tools=[], durable=durable, batch=batch, previous_durable_len=2))
        assert (1, 0) in marks(request["messages"]), layout.__name__
    prefilled = tail_layout(CallParts(system=[], tools=[], durable=durable, batch=batch, prefill_ok=True))
    assert prefilled["messages"][-1]["role"] == "assistant" and injected_source(prefilled["messages"][-1]["content"][0]) == "plan"
    assert len(prefilled["messages"][-2]["content"]) == LOOKBACK_BLOCKS  # the user turn carries no batch


def test_the_system_breakpoint_keeps_every_block():
    system = [text("a"), text("b"), text("c")]
    marked = system_with_breakpoint(system)
    assert [b["text"] for b in marked] == ["a", "b", "c"] and ["cache_control" in b for b in marked] == [False, False, True]


# the batch -----------------------------------------------------------------------------------------

def test_the_batch_is_found_in_both_layouts_in_order():
    durable = [{"role": "user", "content": [text("task")]}]
    batch = [Injection(source="plan", text="p"), Injection(source="budget", text="b")]
    tools = [{"type": "tool_addition", "name": "f"}]
    old = tail_layout(CallParts(system=[], tools=[], durable=durable, batch=batch))
    new = turn_scoped_layout(CallParts(system=[], tools=[], durable=durable, batch=batch, tool_changes=tools))
    for request in (old, new):
        assert [injected_source(b) for b in batch_of(request)] == ["plan", "budget"]
    assert [injected_source(b) for b in batch_of(old, size=1)] == ["budget"]
    assert batch_of(old, size=0) == [] and batch_of({"messages": []}) == []
    assert [m.get("clear_at") for m in new.entries] == [None, "next_user_message"]  # tool changes, then batch
    assert old.entries == []  # the 2025 batch rides in the call's copy of the user turn: never durable


def test_a_plan_is_typed_and_reads_and_writes_as_the_keywords_it_sends():
    durable = [{"role": "user", "content": [text("task")]}]
    parts = CallParts(system=[text("s")], tools=[], durable=durable, batch=[Injection(source="plan", text="p")])
    old, new = tail_layout(parts), turn_scoped_layout(parts)
    assert old.betas == [] and "betas" not in old and old.get("betas", []) == []
    assert set(new.betas) == set(new["betas"]) and len(new.betas) == 2 and new.sent()["betas"] == new.betas
    new["output_config"] = {"effort": "low"}  # a wrapping layout adds a keyword as to a dict
    new["betas"] = [*new["betas"], "x-beta"]
    assert new.request["output_config"] == {"effort": "low"} and new.betas[-1] == "x-beta" and "betas" not in new.request
    # A wrapper that appends an entry after the history's copy: it is kept with the turn.
    plain = turn_scoped_layout(CallParts(system=[], tools=[], durable=durable))
    plain["messages"] = [*plain["messages"], {"role": "system", "content": [text("late")]}]
    assert [m["content"][0]["text"] for m in plain.entries] == ["late"]
    # A layout written as a dict of keywords: betas from its key, entries its trailing system messages.
    as_dict = CallPlan.of({**new})
    assert as_dict.betas == new.betas and as_dict.entries == new.entries and "betas" not in as_dict.request
    assert CallPlan.of(new) is new


def test_a_turn_without_a_batch_has_none():
    assert batch_of({"messages": [{"role": "user", "content": "plain text"}]}) == []
    assert batch_of({"messages": [{"role": "user", "content": [text("task"), text("<!-- x -->\ny"), text("z")]}]}) == []
    cleared = {"messages": [{"role": "user", "content": "t"}, {"role": "system", "content": [text("<!-- tools -->\nk")]}]}
    assert batch_of(cleared) == []  # a plain (lasting) system message is not a batch


def test_the_source_is_read_from_text_blocks_up_to_the_first_marker_end():
    assert injected_source(text("<!-- plan -->\nsee <!-- note --> here")) == "plan"
    assert injected_source({"type": "text"}) is None
    assert injected_source({"type": "tool_result", "text": "<!-- plan -->\nx"}) is None


# the append-only check -----------------------------------------------------------------------------

def request(*assistant_contents: list[dict]) -> dict:
    messages: list[dict] = [{"role": "user", "content": "task"}]
    for content in assistant_contents:
        messages += [{"role": "assistant", "content": content}, {"role": "user", "content": [text("r")]}]
    return {"system": "s", "messages": messages}


def test_a_request_without_messages_or_system_compares_as_empty():
    assert first_edit({"system": "s"}, request()) is None
    assert first_edit(request(), {"system": "s"}) == "messages: 1 message(s) of the previous request are missing"
    assert first_edit({"messages": []}, {"system": [], "messages": []}) is None


def test_the_edit_message_names_the_role():
    edited = request()
    edited["messages"] = [{"role": "user", "content": "other task"}]
    assert first_edit(request(), edited) == "messages.0: edited (an earlier user message is not sent as it was)"


def test_an_edit_after_a_message_that_only_lost_its_thinking_is_found():
    before = request([thinking("a"), text("x")], [text("y")])
    after = request([text("x")], [text("changed")])
    assert first_edit(before, after) == "messages.3: edited (an earlier assistant message is not sent as it was)"


@pytest.mark.parametrize("block", [thinking, redacted], ids=["thinking", "redacted_thinking"])
def test_thinking_may_be_left_out_at_either_end_or_entirely_never_in_the_middle(block):
    a, b, c = block("a"), block("b"), block("c")
    before = request([a, text("1")], [b, text("2")], [c, text("3")])
    assert first_edit(before, before) is None
    assert first_edit(before, request([text("1")], [b, text("2")], [c, text("3")])) is None  # at the start
    assert first_edit(before, request([a, text("1")], [b, text("2")], [text("3")])) is None  # at the end
    assert first_edit(before, request([text("1")], [text("2")], [text("3")])) is None  # all of them
    assert first_edit(before, request([a, text("1")], [text("2")], [c, text("3")])) == \
        "messages.3.content.0: a thinking block left out between two that were kept"


@pytest.mark.parametrize("block", [thinking, redacted], ids=["thinking", "redacted_thinking"])
def test_a_thinking_block_replaced_by_another_is_an_edit(block):
    before = request([block("a"), text("1")], [block("b"), text("2")], [block("c"), text("3")])
    swapped = request([block("a"), text("1")], [block("z"), text("2")], [block("c"), text("3")])
    assert first_edit(before, swapped).startswith("messages.3: edited")
    added = request([block("a"), text("1")], [block("b"), block("y"), text("2")], [block("c"), text("3")])
    assert first_edit(before, added).startswith("messages.3: edited")


# which layout -------------------------------------------------------------------------------------

def test_the_layout_and_its_reason_follow_the_model():
    layout, why = layout_for(model_spec("claude-sonnet-5-5"))
    assert layout is threaded_layout and why.endswith("every request only appends to the last one")
    layout, why = layout_for(model_spec("claude-mythos-5-2"))  # not on the message-threads page
    assert layout is turn_scoped_layout and why.endswith("every request only appends to the last one")
    layout, why = layout_for(model_spec("claude-sonnet-4-6"))
    assert layout is tail_layout and "does not accept mid-conversation system messages" in why
    bound = model_spec("claude-sonnet-5-5").model_copy(update={"system_messages": "no"})
    with pytest.raises(ValueError, match="binds thinking to its prefix but takes no system messages"):
        layout_for(bound)
