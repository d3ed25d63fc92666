"""Conformance: server-side compaction, thinking clearing and task budgets (API-2026.md §4, §5, §6)."""

from __future__ import annotations

import anthropic
import pytest

from minimal_runtime.emulator import Emulator, Turn

from .helpers import FakeClock, conversation, system

CURRENT = "claude-sonnet-5-5"
THRESHOLD = "compact-2026-01-12"
ON_DEMAND = "compact-2026-09-04"
CONTEXT = "context-management-2025-06-27"
BUDGET = "task-budgets-2026-03-13"


def make(model=CURRENT):
    seen = []

    def record(request):
        seen.append(request)
        return Turn(content=[{"type": "text", "text": "ok"}], thinking="")
    return Emulator(model=model, policy=record, clock=FakeClock()).client(max_retries=0), seen


def send(client, messages, betas, model=CURRENT, **kw):
    return client.beta.messages.create(model=model, max_tokens=512, system=system(), messages=messages,
                                       betas=list(betas), **kw)


def big_history(turns=120):
    return conversation(turns, observation_chars=2000)  # ~520 tokens a turn: 120 turns ~ 63K tokens


def compact_edit(trigger=50_000, **kw):
    return {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}, **kw}]}


def test_threshold_compaction_summarizes_and_goes_on_and_bills_the_summary_apart():
    """§4.1: at the trigger the answer starts with a compaction block, then continues; usage.iterations
    has a compaction entry left out of the top-level usage; the model answers from the summary."""
    client, seen = make()
    answer = send(client, big_history(), [THRESHOLD], context_management=compact_edit())
    assert [b.type for b in answer.content] == ["compaction", "thinking", "text"]
    summary = answer.content[0].content
    assert summary.startswith("[SIMULATED summary") and "https://example.test/0" in summary
    kinds = [it.type for it in answer.usage.iterations]
    assert kinds == ["compaction", "message"]
    compacting = answer.usage.iterations[0]
    assert compacting.input_tokens + compacting.cache_read_input_tokens + compacting.cache_creation_input_tokens > 50_000
    top = answer.usage.input_tokens + answer.usage.cache_read_input_tokens + answer.usage.cache_creation_input_tokens
    assert top < compacting.input_tokens / 4  # the continued answer read the system prompt and the summary only
    assert [m["content"][0]["type"] for m in seen[-1]["messages"]] == ["compaction"]


def test_below_the_trigger_nothing_happens_and_the_minimum_trigger_is_50k():
    """§4.1: trigger default 150,000; minimum 50,000; the beta is required and named."""
    client, _ = make()
    answer = send(client, conversation(5), [THRESHOLD], context_management=compact_edit())
    assert [b.type for b in answer.content] == ["thinking", "text"]
    with pytest.raises(anthropic.BadRequestError, match="must be at least 50000"):
        send(client, conversation(5), [THRESHOLD], context_management=compact_edit(trigger=10_000))
    with pytest.raises(anthropic.BadRequestError, match="requires anthropic-beta: compact-2026-01-12"):
        send(client, conversation(5), [CONTEXT], context_management=compact_edit())


def test_pause_after_compaction_stops_there_and_the_block_round_trips():
    """§4.1: pause_after_compaction stops with stop_reason compaction; sent back, content before the
    block is ignored; it is not an edit for the prefix check (§4.3)."""
    client, _ = make()
    history = big_history()
    paused = send(client, history, [THRESHOLD], context_management=compact_edit(pause_after_compaction=True))
    assert paused.stop_reason == "compaction" and [b.type for b in paused.content] == ["compaction"]
    assert paused.usage.input_tokens == 0 and paused.usage.iterations[0].type == "compaction"
    history = [*history, {"role": "assistant", "content": [b.to_dict() for b in paused.content]},
               {"role": "user", "content": "go on"}]
    later = send(client, history, [THRESHOLD], context_management=compact_edit())
    full = client.beta.messages.count_tokens(model=CURRENT, system=system(), messages=big_history()).input_tokens
    assert later.usage.input_tokens + later.usage.cache_creation_input_tokens + later.usage.cache_read_input_tokens < full / 4
    assert [b.type for b in later.content] == ["thinking", "text"]
    history = [*history, {"role": "assistant", "content": [b.to_dict() for b in later.content]},
               {"role": "user", "content": "and then?"}]
    assert send(client, history, [THRESHOLD], context_management=compact_edit()).content[0].type == "thinking"


def test_on_demand_compaction_returns_the_block_alone_and_its_swap_rules():
    """§4.2: compaction {type: summarize} returns only the block (stop_reason compaction, top-level
    usage 0, its cost in iterations); the block goes first in messages; anything in front of it is
    compaction_block_misplaced; an altered block is compaction_content_mismatch; kept turns after it
    keep valid thinking (§4.3)."""
    client, _ = make()
    history = conversation(6)
    answer = send(client, history, [ON_DEMAND], compaction={"type": "summarize"})
    assert answer.stop_reason == "compaction" and [b.type for b in answer.content] == ["compaction"]
    assert answer.usage.input_tokens == 0 and answer.usage.output_tokens == 0
    assert answer.usage.iterations[0].type == "compaction" and answer.usage.iterations[0].output_tokens > 0
    block = answer.content[0].to_dict()
    swapped = [{"role": "assistant", "content": [block]}, {"role": "user", "content": "continue"}]
    assert send(client, swapped, [ON_DEMAND]).content[0].type == "thinking"
    with pytest.raises(anthropic.BadRequestError) as e:
        send(client, [history[0], {"role": "assistant", "content": [block]}, {"role": "user", "content": "x"}], [ON_DEMAND])
    assert e.value.body["error"]["details"]["error_code"] == "compaction_block_misplaced"
    altered = {**block, "content": block["content"] + " (edited)"}
    with pytest.raises(anthropic.BadRequestError) as e:
        send(client, [{"role": "assistant", "content": [altered]}, {"role": "user", "content": "x"}], [ON_DEMAND])
    assert e.value.body["error"]["details"]["error_code"] == "compaction_content_mismatch"
    with pytest.raises(anthropic.BadRequestError, match="Extra inputs are not permitted"):
        send(client, [{"role": "assistant", "content": [{**block, "citations": None}]}, {"role": "user", "content": "x"}],
             [ON_DEMAND])
    with pytest.raises(anthropic.BadRequestError, match="cannot be combined with context_management"):
        send(client, history, [ON_DEMAND, CONTEXT], compaction={"type": "summarize"},
             context_management={"edits": [{"type": "clear_tool_uses_20250919"}]})
    with pytest.raises(anthropic.BadRequestError, match="requires anthropic-beta: compact-2026-09-04"):
        send(client, history, [], compaction={"type": "summarize"})


def test_kept_turns_after_an_on_demand_block_keep_their_thinking():
    """§4.3: kept turns that directly follow the summarized ones, sent unchanged, keep valid thinking."""
    client, _ = make()
    messages = [{"role": "user", "content": "q0"}]
    for k in range(3):
        answer = send(client, messages, [])
        messages += [{"role": "assistant", "content": [b.to_dict() for b in answer.content]}, {"role": "user", "content": f"q{k + 1}"}]
    summarized, kept = messages[:3], messages[3:]
    block = send(client, summarized + [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}][:0],
                 [ON_DEMAND], compaction={"type": "summarize"}).content[0].to_dict()
    assert send(client, [{"role": "assistant", "content": [block]}, *kept], [ON_DEMAND]).content[0].type == "thinking"


def test_clear_thinking_keeps_the_last_turns_and_must_come_first():
    """§5: clear_thinking_20251015 removes all but the last `keep` thinking turns; it must be first."""
    client, _ = make(model="claude-opus-5")  # no prefix check: thinking can be exercised freely
    messages = [{"role": "user", "content": "q0"}]
    for k in range(4):
        answer = send(client, messages, [], model="claude-opus-5")
        messages += [{"role": "assistant", "content": [b.to_dict() for b in answer.content]}, {"role": "user", "content": f"q{k + 1}"}]
    edit = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
    answer = send(client, messages, [CONTEXT], model="claude-opus-5", context_management={"edits": [edit]})
    applied = answer.context_management.applied_edits[0]
    assert applied.type == "clear_thinking_20251015" and applied.cleared_thinking_turns == 3
    with pytest.raises(anthropic.BadRequestError, match="must come first"):
        send(client, messages, [CONTEXT], model="claude-opus-5",
             context_management={"edits": [{"type": "clear_tool_uses_20250919"}, edit]})


def test_task_budget_needs_its_beta_a_20k_minimum_and_the_model_sees_what_is_left():
    """§6: output_config.task_budget (beta task-budgets-2026-03-13), total >= 20,000; the policy sees
    the remaining budget; there is no response field; remaining conflicts with compaction."""
    client, seen = make()
    budget = {"task_budget": {"type": "tokens", "total": 50_000}}
    with pytest.raises(anthropic.BadRequestError, match="task_budget: Extra inputs are not permitted"):
        send(client, conversation(3), [], output_config=budget)
    with pytest.raises(anthropic.BadRequestError, match="at least 20000"):
        send(client, conversation(3), [BUDGET], output_config={"task_budget": {"type": "tokens", "total": 1000}})
    answer = send(client, conversation(3), [BUDGET], output_config=budget)
    assert 0 < seen[-1]["task_budget_remaining"] < 50_000
    assert "task_budget" not in str(answer.to_dict())
    remaining = {"task_budget": {"type": "tokens", "total": 50_000, "remaining": 30_000}}
    with pytest.raises(anthropic.BadRequestError, match="cannot be combined"):
        send(client, conversation(3), [BUDGET, THRESHOLD], output_config=remaining, context_management=compact_edit())
    sonnet5, _ = make(model="claude-sonnet-5")
    with pytest.raises(anthropic.BadRequestError, match="not supported on claude-sonnet-5"):
        send(sonnet5, conversation(3), [BUDGET], output_config=budget, model="claude-sonnet-5")


def test_a_changed_budget_misses_the_messages_cache():
    """§6: a changed budget value misses the cache entries created under the old value."""
    client, _ = make()
    history = conversation(6)
    history[-1] = {**history[-1], "content": [{**history[-1]["content"][0], "cache_control": {"type": "ephemeral"}}]}
    one = {"task_budget": {"type": "tokens", "total": 50_000}}
    two = {"task_budget": {"type": "tokens", "total": 60_000}}
    send(client, history, [BUDGET], output_config=one)
    same = send(client, history, [BUDGET], output_config=one).usage
    other = send(client, history, [BUDGET], output_config=two).usage
    assert other.cache_read_input_tokens < same.cache_read_input_tokens
