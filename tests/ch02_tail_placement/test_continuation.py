"""Chapter 02, the third generation: what call N of a message thread sends (``continuation``), and a
long run on a thread with it, billed as the same run without one."""

from __future__ import annotations

import copy
import json
from functools import partial

from minimal_runtime.core.context import CallParts, Injection, threaded_layout, turn_scoped_layout, with_breakpoints
from tests.support import CURRENT_MODEL, long_agent, progress_hooks

from .test_tail_placement import history, marked


def whole_request(durable: list[dict], previous_len: int | None = None) -> dict:
    """A call's whole request as the runtime lays it out on a current model (betas included)."""
    parts = CallParts(system=[{"type": "text", "text": "sys"}], tools=[{"name": "fetch", "input_schema": {}}],
                      durable=durable, batch=[Injection(source="plan", text="Current phase: 2.")],
                      tool_choice={"type": "auto"}, previous_durable_len=previous_len)
    return turn_scoped_layout(parts).sent()


def test_a_continue_sends_only_what_the_thread_does_not_hold_and_no_system_or_tools(impl):
    request = whole_request(history(4))  # 9 messages, then the call's batch entry
    before = copy.deepcopy(request)
    out = impl.continuation(request, "msg_7", 7)  # held: the task and three exchanges
    assert request == before, "continuation modified the request it was given: build a new dict"
    assert out["messages"] == request["messages"][7:], "send only the messages from index held on (what the thread does not hold yet)"
    assert "system" not in out and "tools" not in out, "a continue sends no system and no tools: the thread keeps its create's"
    assert out["thread"] == {"type": "continue", "previous_message_id": "msg_7"}, f"thread should continue from msg_7: {out.get('thread')!r}"
    assert out.get("tool_choice") == {"type": "auto"} and out.get("betas") == request["betas"], "keep tool_choice and betas as the request has them"
    assert "cache_control" not in out, "a breakpoint is sent in the messages (on the last durable block): no top-level cache_control here"


def test_the_previous_calls_end_moves_to_the_first_block_sent_when_the_thread_holds_it(impl):
    """Six tool calls a turn: the previous call's end is marked (more than the lookback was added
    since) and lies in what the thread holds; a read from the first block sent still reaches it."""
    durable = history(3) + history(2, results_per_exchange=6)[1:]  # 24 blocks since message 7
    request = {"messages": with_breakpoints(durable, previous_len=7), "system": []}
    assert marked(request["messages"]) == [(6, 0), (10, 5)], "the test's setting: two breakpoints before the call"
    out = impl.continuation(request, "msg_9", 10)  # the thread holds up to the reply at 9
    assert marked(out["messages"]) == [(0, 0), (0, 5)], \
        f"the previous end, held by the thread, moves to the first block sent, beside the last durable one: {marked(out['messages'])}"
    assert "cache_control" not in request["messages"][10]["content"][0], "mark a copy of the block, not the request's own"
    far = impl.continuation({"messages": with_breakpoints(history(12), previous_len=1)}, "msg_23", 24)
    assert marked(far["messages"]) == [(0, 0)], f"one marker only, nothing to move: {marked(far['messages'])}"


def test_when_nothing_sent_can_take_a_breakpoint_the_server_places_it(impl):
    durable = [*history(3), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_q", "name": "quiet", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_q", "content": ""}]}]
    request = {"messages": with_breakpoints(durable)}  # the empty result cannot take it: the tool_use does
    assert marked(request["messages"]) == [(7, 0)], "the test's setting: the breakpoint on the tool_use"
    out = impl.continuation(request, "msg_7", 8)
    assert out["messages"] == durable[8:] and out.get("cache_control") == {"type": "ephemeral"}, \
        "nothing sent can take the breakpoint: send the messages as they are and a top-level cache_control for the server to place"


def test_a_long_run_on_a_thread_sends_call_n_as_your_continuation_and_costs_the_same(impl, tmp_path):
    """Through the emulator, 40 calls on Sonnet 5.5: the first creates the thread, every later one
    is your continuation, answered; the requests stay the same size while the history grows, and
    every call's usage is that of the same run without a thread."""
    runs = {}
    for name, layout in (("thread", partial(threaded_layout, continuation=impl.continuation)),
                         ("whole", turn_scoped_layout)):
        agent, emulator = long_agent(tmp_path / name, 39, model=CURRENT_MODEL, hooks=progress_hooks(), layout=layout)
        sent, handle = [], emulator.handle
        emulator.handle = lambda method, path, body, headers=None, sent=sent, handle=handle: (
            sent.append(json.loads(body)), handle(method, path, body, headers))[1]
        result = agent.run("Read the pages.")
        assert result.status == "done", f"the {name} run stopped: {result.error}"
        runs[name] = (agent, sent)
    (agent, sent), (whole, _) = runs["thread"], runs["whole"]
    kinds = [r.get("thread", {}).get("type") for r in sent]
    assert kinds == ["create"] + ["continue"] * 39, f"the first call creates the thread, every later one continues it: {kinds[:5]}..."
    sizes = [len(json.dumps(r)) for r in sent[1:]]
    assert max(sizes) < 2 * min(sizes), f"a continue sends only what is new: its size should stay flat ({min(sizes):,} to {max(sizes):,} bytes)"
    assert [c.model_dump() for c in agent.calls] == [c.model_dump() for c in whole.calls], "on a thread every call's usage should be the whole run's"
    assert agent.messages == whole.messages, "the history on a thread should be the same as without one"
