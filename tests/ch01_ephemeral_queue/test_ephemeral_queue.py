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
    assert [(i.source, i.text) for i in drained] == [("plan", "I am on phase 2."), ("budget", "I am at 40% of my window.")]
    assert queue.drain() == [] and len(queue) == 0


def test_empty_batch_changes_nothing(impl):
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert impl.append_batch(messages, [], prefill_ok=False) == messages


def test_batch_rides_at_the_end_of_the_final_user_turn_without_prefill(impl):
    durable = [{"role": "user", "content": [{"type": "text", "text": "task"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
               {"role": "user", "content": [{"type": "text", "text": "more"}]}]
    before = copy.deepcopy(durable)
    batch = [impl.Injection(source="plan", text="I am on phase 1."), impl.Injection(source="budget", text="fine")]
    call = impl.append_batch(durable, batch, prefill_ok=False)
    assert durable == before  # the history is untouched
    assert call[:-1] == durable[:-1] and call[-1]["role"] == "user"
    assert call[-1]["content"] == [durable[-1]["content"][0],
                                   {"type": "text", "text": "<!-- plan -->\nI am on phase 1."},
                                   {"type": "text", "text": "<!-- budget -->\nfine"}]


def test_batch_is_a_trailing_assistant_message_with_prefill(impl):
    durable = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    before = copy.deepcopy(durable)
    call = impl.append_batch(durable, [impl.Injection(source="plan", text="I am on phase 1.")], prefill_ok=True)
    assert durable == before
    assert call == [*durable, {"role": "assistant", "content": [{"type": "text", "text": "<!-- plan -->\nI am on phase 1."}]}]


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
    assert agent.run(TASK).status == "done"
    assert all("SECRET-PLAN" in s for s in seen)  # every call carried its batch
    assert "SECRET-PLAN" not in dumps(agent.messages)  # and the history never did
    assert len(agent.turn_queue) == 0


def test_a_run_on_a_prefill_model_keeps_injections_out_of_the_history(impl, tmp_path):
    agent, emu = _agent_with(impl, tmp_path, model="claude-opus-4-5")
    assert agent.run(TASK).status == "done"
    assert "SECRET-PLAN" not in dumps(agent.messages)


def test_the_batch_entry_is_a_turn_scoped_system_message(impl):
    batch = [impl.Injection(source="plan", text="I am on phase 1."), impl.Injection(source="budget", text="fine")]
    assert impl.batch_entry(batch) == {"role": "system", "clear_at": "next_user_message", "content": [
        {"type": "text", "text": "<!-- plan -->\nI am on phase 1."}, {"type": "text", "text": "<!-- budget -->\nfine"}]}


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
    assert agent.run(TASK).status == "done"
    entries = [m for m in agent.messages if m["role"] == "system"]
    assert len(entries) == len(agent.calls) and all(m["clear_at"] == "next_user_message" for m in entries)


REQUEST = {"system": [{"type": "text", "text": "s"}], "tools": [{"name": "fetch"}],
           "messages": [{"role": "user", "content": "task"},
                        {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "x"},
                                                          {"type": "text", "text": "ok"}]},
                        {"role": "user", "content": [{"type": "text", "text": "more"}]}]}


def test_first_edit_accepts_appending_and_moved_markers(impl):
    grown = {**REQUEST, "messages": [*REQUEST["messages"], {"role": "assistant", "content": "a"},
                                     {"role": "user", "content": "b"}]}
    assert impl.first_edit(REQUEST, grown) is None
    marked = {**grown, "messages": [{"role": "user", "content": [{"type": "text", "text": "task",
                                                                  "cache_control": {"type": "ephemeral"}}]},
                                    *grown["messages"][1:]]}
    assert impl.first_edit(REQUEST, marked) is None
    assert impl.first_edit(REQUEST, {**grown, "system": "s"}) is None
    assert impl.first_edit(REQUEST, {**grown, "tools": [{"name": "fetch"}, {"name": "x", "defer_loading": True}]}) is None
    thinking_gone = {**grown, "messages": [grown["messages"][0], {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                                           *grown["messages"][2:]]}
    assert impl.first_edit(REQUEST, thinking_gone) is None


def test_first_edit_names_the_first_edit(impl):
    assert impl.first_edit(REQUEST, {**REQUEST, "system": "other"}).startswith("system")
    assert impl.first_edit(REQUEST, {**REQUEST, "tools": [{"name": "fetch"}, {"name": "x"}]}).startswith("tools")
    removed_batch = {**REQUEST, "messages": [*REQUEST["messages"][:2], {"role": "user", "content": [{"type": "text", "text": "mo"}]}]}
    assert impl.first_edit(REQUEST, removed_batch).startswith("messages.2")
    assert impl.first_edit(REQUEST, {**REQUEST, "messages": REQUEST["messages"][:1]}).startswith("messages:")
