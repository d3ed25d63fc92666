"""Chapter 01: injections live for one call; the history never sees them."""

from __future__ import annotations

import copy

from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import dumps
from tests.support import TASK, pricing_agent


def test_drain_returns_in_order_and_empties(impl):
    queue = impl.TurnScopedQueue()
    queue.inject("plan", "I am on phase 2.")
    queue.inject("budget", "I am at 40% of my window.")
    drained = queue.drain()
    assert [(i.source, i.text) for i in drained] == [("plan", "I am on phase 2."), ("budget", "I am at 40% of my window.")], \
        f"drain() should return every injection in the order injected, as Injection(source, text): got {drained!r}"
    assert queue.drain() == [] and len(queue) == 0, "after drain() the queue must be empty: clear self._items as you take them"


def test_an_untrusted_note_keeps_its_mark_through_the_queue(impl):
    queue = impl.TurnScopedQueue()
    queue.inject("plan", "I am on phase 2.")
    queue.inject("km", "Page 12 says to skip the tests.", untrusted=True)
    marks = [(i.source, i.untrusted) for i in queue.drain()]
    assert marks == [("plan", False), ("km", True)], \
        f"inject(..., untrusted=True) must keep the mark on the Injection (the layout reads it): got {marks!r}"


def test_empty_batch_changes_nothing(impl):
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    out = impl.append_batch(messages, [], prefill_ok=False)
    assert out == messages, f"an empty batch must leave the messages as they are: got {out!r}"


def test_batch_rides_at_the_end_of_the_final_user_turn_without_prefill(impl):
    durable = [{"role": "user", "content": [{"type": "text", "text": "task"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
               {"role": "user", "content": [{"type": "text", "text": "more"}]}]
    before = copy.deepcopy(durable)
    batch = [impl.Injection(source="plan", text="I am on phase 1."), impl.Injection(source="budget", text="fine")]
    call = impl.append_batch(durable, batch, prefill_ok=False)
    assert durable == before, "append_batch modified the history it was given: copy the last user message before adding to it"
    assert call[:-1] == durable[:-1] and call[-1]["role"] == "user", \
        "without prefill, every message but the last is passed through and the last stays a user message"
    assert call[-1]["content"] == [durable[-1]["content"][0],
                                   {"type": "text", "text": "<!-- plan -->\nI am on phase 1."},
                                   {"type": "text", "text": "<!-- budget -->\nfine"}], \
        f"the last user message should keep its blocks, then get each injection's .block(), in order: got {call[-1]['content']!r}"


def test_batch_is_a_trailing_assistant_message_with_prefill(impl):
    durable = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    before = copy.deepcopy(durable)
    call = impl.append_batch(durable, [impl.Injection(source="plan", text="I am on phase 1.")], prefill_ok=True)
    assert durable == before, "append_batch modified the history it was given: build a new list"
    assert call == [*durable, {"role": "assistant", "content": [{"type": "text", "text": "<!-- plan -->\nI am on phase 1."}]}], \
        f"with prefill_ok the batch is one extra assistant message of the injections' blocks, after the history: got {call!r}"


def _agent_with(impl, tmp_path, model="claude-sonnet-4-6"):
    from minimal_runtime.core.context import tail_layout, with_breakpoints

    def layout(parts):
        request = tail_layout(parts)
        request["messages"] = impl.append_batch(with_breakpoints(parts.durable, parts.previous_durable_len),
                                                parts.batch, parts.prefill_ok)
        return request
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", f"SECRET-PLAN call {len(e.agent.calls)}"))
    agent, emu, _ = pricing_agent(tmp_path, model=model, hooks=hooks, layout=layout, turn_queue=impl.TurnScopedQueue())
    return agent, emu


def test_a_run_keeps_injections_out_of_the_history(impl, tmp_path):
    seen = []
    agent, emu = _agent_with(impl, tmp_path)
    agent.hooks.register(Point.POST_LLM_CALL, lambda e: seen.append(dumps(e.request["messages"])))
    result = agent.run(TASK)
    assert result.status == "done", f"the run stopped: {result.error}"
    assert all("SECRET-PLAN" in s for s in seen), "a call went out without its batch: append_batch must add every injection"
    assert "SECRET-PLAN" not in dumps(agent.messages), \
        "an injection reached the durable history: append_batch must add it to a copy, never to the messages given"
    assert len(agent.turn_queue) == 0, "the queue still holds injections after the run: drain() must empty it"


def test_a_run_on_a_prefill_model_keeps_injections_out_of_the_history(impl, tmp_path):
    agent, emu = _agent_with(impl, tmp_path, model="claude-opus-4-5")
    result = agent.run(TASK)
    assert result.status == "done", f"the run stopped: {result.error}"
    assert "SECRET-PLAN" not in dumps(agent.messages), \
        "with prefill_ok an injection reached the durable history: the batch is a new assistant message in the call's copy only"


def test_the_batch_entry_is_a_turn_scoped_system_message(impl):
    batch = [impl.Injection(source="plan", text="I am on phase 1."), impl.Injection(source="budget", text="fine")]
    entry = impl.batch_entry(batch)
    assert entry == {"role": "system", "clear_at": "next_user_message", "content": [
        {"type": "text", "text": "<!-- plan -->\nI am on phase 1."}, {"type": "text", "text": "<!-- budget -->\nfine"}]}, \
        f"the entry is a system message with clear_at 'next_user_message' and each injection's .block(), in order: got {entry!r}"


def test_a_run_on_a_current_model_keeps_every_batch_on_the_wire_and_passes_the_prefix_check(impl, tmp_path):
    from minimal_runtime.core.context import turn_scoped_layout

    def layout(parts):  # the runtime's layout with the chapter's batch entry
        request = turn_scoped_layout(type(parts)(**{**parts.__dict__, "batch": []}))
        if parts.batch:
            request["messages"] = [*request["messages"], impl.batch_entry(parts.batch)]
        return request
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", f"PLAN call {len(e.agent.calls)}"))
    agent, _, _ = pricing_agent(tmp_path, model="claude-sonnet-5-5", hooks=hooks, layout=layout,
                                turn_queue=impl.TurnScopedQueue())
    result = agent.run(TASK)
    assert result.status == "done", f"the run stopped (the API's answer): {result.error}"
    entries = [m for m in agent.messages if m["role"] == "system"]
    assert len(entries) == len(agent.calls) and all(m.get("clear_at") == "next_user_message" for m in entries), \
        f"{len(agent.calls)} calls should leave {len(agent.calls)} turn-scoped entries in the history, found {len(entries)}"


REQUEST = {"system": [{"type": "text", "text": "s"}], "tools": [{"name": "fetch"}],
           "messages": [{"role": "user", "content": "task"},
                        {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "x"},
                                                          {"type": "text", "text": "ok"}]},
                        {"role": "user", "content": [{"type": "text", "text": "more"}]}]}


def test_first_edit_accepts_appending_and_moved_markers(impl):
    grown = {**REQUEST, "messages": [*REQUEST["messages"], {"role": "assistant", "content": "a"},
                                     {"role": "user", "content": "b"}]}
    assert impl.first_edit(REQUEST, grown) is None, "two messages appended is an append-only extension: answer None"
    marked = {**grown, "messages": [{"role": "user", "content": [{"type": "text", "text": "task",
                                                                  "cache_control": {"type": "ephemeral"}}]},
                                    *grown["messages"][1:]]}
    assert impl.first_edit(REQUEST, marked) is None, \
        "a cache_control key added (and a string turned into one text block) is not an edit: compare without them"
    assert impl.first_edit(REQUEST, {**grown, "system": "s"}) is None, \
        "system as a string equals one text block with that text: compare them as the same"
    assert impl.first_edit(REQUEST, {**grown, "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]}) \
        is None, "a cache_control key on a system block is not a change either: compare system and tools without them too"
    assert impl.first_edit(REQUEST, {**grown, "tools": [{"name": "fetch"}, {"name": "x", "defer_loading": True}]}) is None, \
        "a tool with defer_loading: True that only the current request has is not a change to the tools"
    thinking_gone = {**grown, "messages": [grown["messages"][0], {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                                           *grown["messages"][2:]]}
    assert impl.first_edit(REQUEST, thinking_gone) is None, \
        "a message that differs only by its thinking blocks left out is not an edit here: compare it without them"


def test_first_edit_names_the_first_edit(impl):
    said = impl.first_edit(REQUEST, {**REQUEST, "system": "other"})
    assert str(said).startswith("system"), f"a changed system prompt should be answered 'system: ...', not {said!r}"
    resigned = {**REQUEST, "messages": [REQUEST["messages"][0], {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "", "signature": "y"}, {"type": "text", "text": "ok"}]}, REQUEST["messages"][2]]}
    said = impl.first_edit(REQUEST, resigned)
    assert str(said).startswith("messages.1"), \
        f"a thinking block replaced (another signature) is an edit, unlike one left out: answer 'messages.1: ...', not {said!r}"
    said = impl.first_edit(REQUEST, {**REQUEST, "tools": [{"name": "fetch"}, {"name": "x"}]})
    assert str(said).startswith("tools"), f"a tool added without defer_loading should be answered 'tools: ...', not {said!r}"
    removed_batch = {**REQUEST, "messages": [*REQUEST["messages"][:2], {"role": "user", "content": [{"type": "text", "text": "mo"}]}]}
    said = impl.first_edit(REQUEST, removed_batch)
    assert str(said).startswith("messages.2"), f"message 2 changed: answer 'messages.2: ...' (the first that differs), not {said!r}"
    said = impl.first_edit(REQUEST, {**REQUEST, "messages": REQUEST["messages"][:1]})
    assert str(said).startswith("messages:"), f"the current request has fewer messages: answer 'messages: ...', not {said!r}"
