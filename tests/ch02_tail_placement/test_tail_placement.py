"""Chapter 02: the breakpoint on the last durable block, the batch after it, and what that buys, in
the 2025 layout (Sonnet 4.6) and the 2026 one (Sonnet 5.5: turn-scoped entries, append-only)."""

from __future__ import annotations

import copy

from minimal_runtime.core.context import Injection, first_edit
from minimal_runtime.core.hooks import HookRegistry, Point
from tests.support import LEGACY_MODEL, long_agent, on_both_generations


def history(exchanges: int, results_per_exchange: int = 1) -> list[dict]:
    messages = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    for i in range(exchanges):
        ids = [f"toolu_{i}_{k}" for k in range(results_per_exchange)]
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": t, "name": "fetch", "input": {"url": f"https://x.test/{t}"}} for t in ids]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": t, "content": "result"} for t in ids]})
    return messages


def marked(messages: list[dict]) -> list[tuple[int, int]]:
    return [(m, i) for m, msg in enumerate(messages) for i, b in enumerate(msg["content"]) if "cache_control" in b]


def test_breakpoint_on_the_last_durable_block_only(impl):
    durable = history(5)
    before = copy.deepcopy(durable)
    out = impl.with_breakpoints(durable)
    assert durable == before, "with_breakpoints modified the history: copy the message and the block you mark, then mark the copy"
    assert marked(out) == [(len(durable) - 1, 0)], \
        f"one breakpoint, on the last block of the last message (message {len(durable) - 1}, block 0); marked: {marked(out)}"
    assert out[-1]["content"][0]["cache_control"] == {"type": "ephemeral"}, \
        f"the breakpoint is cache_control: {{'type': 'ephemeral'}}, not {out[-1]['content'][0]['cache_control']!r}"


def test_previous_end_is_marked_when_beyond_the_lookback(impl):
    durable = history(3) + history(2, results_per_exchange=6)[1:]  # 24 new blocks since message 7
    out = impl.with_breakpoints(durable, previous_len=7)
    assert marked(out) == [(6, 0), (len(durable) - 1, 5)], \
        f"24 blocks were added since the previous call (>= LOOKBACK_BLOCKS): mark message previous_len - 1 = 6 too; marked: {marked(out)}"
    exactly = history(3) + history(2, results_per_exchange=5)[1:]  # 20 new blocks: a read from the end reaches 1 past 6
    assert marked(impl.with_breakpoints(exactly, previous_len=7)) == [(6, 0), (len(exactly) - 1, 4)], \
        ("exactly LOOKBACK_BLOCKS (20) blocks were added: a read walks back 20 positions, itself included, and stops one "
         f"short of message 6; mark it too (20 or more, not more than 20); marked: {marked(impl.with_breakpoints(exactly, previous_len=7))}")
    near = impl.with_breakpoints(history(6), previous_len=11)  # 2 blocks since: no second marker needed
    assert marked(near) == [(12, 0)], \
        f"only 2 blocks were added since the previous call: the last block alone is marked; marked: {marked(near)}"


def test_a_breakpoint_skips_the_blocks_the_api_refuses_one_on(impl):
    durable = [*history(2), {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_q", "name": "quiet", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_q", "content": ""}]}]
    out = impl.with_breakpoints(durable)
    assert marked(out) == [(5, 0)], \
        ("the last block is a tool result with empty content, which the API refuses cache_control on: mark the last block "
         f"that can take one (here the tool_use of message 5); marked: {marked(out)}")


def test_system_breakpoint(impl):
    system = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    out = impl.system_with_breakpoint(system)
    assert "cache_control" not in system[-1], "system_with_breakpoint marked the caller's block: mark a copy"
    assert out[-1] == {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}} and out[0] == system[0], \
        f"the last system block gets cache_control: {{'type': 'ephemeral'}}, the others stay as they are: got {out!r}"
    assert impl.system_with_breakpoint([]) == [], "no system blocks: return an empty list"


def test_tail_layout_puts_the_batch_after_every_breakpoint(impl):
    parts = impl.CallParts(system=[{"type": "text", "text": "sys"}], tools=[{"name": "fetch", "input_schema": {}}],
                           durable=history(4), batch=[Injection(source="plan", text="I am on phase 2.")],
                           tool_choice={"type": "auto"})
    request = impl.tail_layout(parts)
    assert request.get("tools") == parts.tools and request.get("tool_choice") == {"type": "auto"}, \
        "the request carries parts.tools as 'tools' and parts.tool_choice as 'tool_choice'"
    assert "cache_control" in request["system"][-1], "the system blocks need their breakpoint (system_with_breakpoint)"
    blocks = [b for m in request["messages"] for b in m["content"]]
    last_breakpoint = max(i for i, b in enumerate(blocks) if "cache_control" in b)
    batch_at = next(i for i, b in enumerate(blocks) if b.get("text", "").startswith("<!-- plan -->"))
    assert batch_at > last_breakpoint, \
        "the batch sits before a breakpoint, so the cached prefix holds it: mark the history first, then append the batch"
    assert "cache_control" not in blocks[batch_at], "the batch block carries a breakpoint: it changes every call, never mark it"


def turn_parts(impl, batch=True, tool_changes=()):
    return impl.CallParts(system=[{"type": "text", "text": "sys"}], tools=[{"name": "fetch", "input_schema": {}}],
                          durable=history(4), batch=[Injection(source="plan", text="Current phase: 2.")] if batch else [],
                          tool_choice={"type": "auto"}, tool_changes=list(tool_changes))


REMOVAL = {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "fetch"}}


def test_turn_scoped_layout_appends_the_tool_changes_then_the_batch_entry(impl):
    parts = turn_parts(impl, tool_changes=[REMOVAL])
    before = copy.deepcopy(parts.durable)
    request = impl.turn_scoped_layout(parts)
    assert parts.durable == before, "turn_scoped_layout modified the history: mark copies (with_breakpoints)"
    assert request.get("tools") == parts.tools and request.get("tool_choice") == {"type": "auto"}, \
        "the request carries parts.tools as 'tools' and parts.tool_choice as 'tool_choice'"
    assert "cache_control" in request["system"][-1], "the system blocks need their breakpoint (system_with_breakpoint)"
    messages = request["messages"]
    assert [m["role"] for m in messages[-2:]] == ["system", "system"] and len(messages) == len(before) + 2, \
        f"after the history come exactly two system messages, the tool changes then the batch; got roles {[m['role'] for m in messages]}"
    changes, entry = messages[-2:]
    assert changes["content"] == [REMOVAL] and "clear_at" not in changes, \
        f"the tool changes are one plain system message (no clear_at: a change lasts) of parts.tool_changes: got {changes!r}"
    assert entry.get("clear_at") == "next_user_message", f"the batch goes last, as batch_entry(parts.batch): got {entry!r}"
    assert [b["text"] for b in entry["content"]] == ["<!-- plan -->\nCurrent phase: 2."], \
        f"the batch entry holds each injection's block: got {entry['content']!r}"
    assert not any("cache_control" in b for b in entry["content"]), "a turn-scoped entry takes no breakpoint"
    assert marked(messages) == [(len(before) - 1, 0)], \
        f"one breakpoint, on the last durable block (message {len(before) - 1}); marked: {marked(messages)}"
    assert {impl.CLEAR_AT_BETA, impl.INLINE_TOOLS_BETA} <= set(request.get("betas", [])), \
        "'betas' must list CLEAR_AT_BETA and INLINE_TOOLS_BETA on every request"


def test_turn_scoped_layout_leaves_the_history_as_sent_and_adds_nothing_without_a_batch(impl):
    request = impl.turn_scoped_layout(turn_parts(impl, batch=False))
    strip = lambda ms: [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]} for m in ms]
    assert strip(request["messages"]) == history(4), \
        "with no batch and no tool change, the messages are the history as it was (breakpoints aside), with nothing after it"
    assert {impl.CLEAR_AT_BETA, impl.INLINE_TOOLS_BETA} <= set(request.get("betas", [])), \
        "'betas' must list CLEAR_AT_BETA and INLINE_TOOLS_BETA on every request, a batch or not"


@on_both_generations
def test_a_long_run_reads_the_whole_previous_prompt_every_call(impl, tmp_path, model):
    """Through the emulator: with each generation's layout, call n reads everything call n-1 cached;
    on the current model, every request is also an append-only extension of the one before."""
    layout = impl.tail_layout if model == LEGACY_MODEL else impl.turn_scoped_layout
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("progress", f"{len(e.agent.calls)} done"))
    sent = []
    hooks.register(Point.POST_LLM_CALL, lambda e: sent.append(e.request))
    agent, emu = long_agent(tmp_path, turns=60, hooks=hooks, layout=layout, model=model)
    result = agent.run("Read the pages.")
    assert result.status == "done", result.error
    calls = agent.calls
    for n, (before, after) in enumerate(zip(calls[1:], calls[2:]), start=3):
        cached = before.cache_read_input_tokens + before.cache_creation_input_tokens
        assert after.cache_read_input_tokens == cached, \
            (f"call {n} read {after.cache_read_input_tokens:,} tokens from cache, not all {cached:,} that call {n - 1} had "
             "cached: is the breakpoint on the last durable block (with a second one when the lookback needs it), "
             "and the batch after it?")
    share = sum(c.cache_read_input_tokens for c in calls) / sum(c.prompt_tokens for c in calls)
    assert share > 0.95, f"only {share:.0%} of the run's prompt tokens were read from cache (over 95% expected)"
    if model != LEGACY_MODEL:
        edits = [(n, first_edit(a, b)) for n, (a, b) in enumerate(zip(sent, sent[1:]), start=2) if first_edit(a, b)]
        assert edits == [], f"a request is not an append-only extension of the one before (call, first edit): {edits[:3]}"
