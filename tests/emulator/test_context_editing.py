"""Conformance: server-side context editing, clear_tool_uses_20250919.

Rules from https://platform.claude.com/docs/en/build-with-claude/context-editing (beta header
context-management-2025-06-27).
"""

from __future__ import annotations

import anthropic
import pytest

from minimal_runtime.emulator.context_editing import BETA, PLACEHOLDER
from .helpers import MODEL, TOOLS, conversation, make, system, with_breakpoint_on_last


def edit(**kw) -> dict:
    return {"edits": [{"type": "clear_tool_uses_20250919", **kw}]}


def create(client, messages, context_management, **kw):
    return client.beta.messages.create(model=MODEL, max_tokens=64, messages=messages, system=system(), tools=TOOLS,
                                       betas=[BETA], context_management=context_management, **kw)


def seen_by_model(emu):
    """The request the policy received: the prompt after server-side edits."""
    box = {}

    def policy(request):
        box["request"] = request
        return "ok"
    emu.policy = policy
    return box


def test_below_the_trigger_nothing_is_cleared():
    """Rule: the default trigger is 100,000 input tokens."""
    emu, _ = make()
    response = create(emu.client(), conversation(6), edit())
    assert response.context_management.applied_edits == []


def test_above_the_trigger_the_oldest_results_are_cleared_keeping_the_newest():
    """Rule: oldest tool results first, in chronological order; the most recent `keep` stay."""
    emu, _ = make()
    box = seen_by_model(emu)
    plain = emu.client().messages.create(model=MODEL, max_tokens=64, messages=conversation(6), system=system(), tools=TOOLS)
    response = create(emu.client(), conversation(6), edit(trigger={"type": "tool_uses", "value": 3},
                                                         keep={"type": "tool_uses", "value": 2}))
    (applied,) = response.context_management.applied_edits
    assert applied.cleared_tool_uses == 4
    results = [b["content"] for m in box["request"]["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert results[:4] == [PLACEHOLDER] * 4 and all(r != PLACEHOLDER for r in results[4:])
    billed = lambda u: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens  # noqa: E731
    assert billed(plain.usage) - billed(response.usage) == applied.cleared_input_tokens > 0


def test_excluded_tools_and_tool_inputs():
    """Rule: exclude_tools are preserved; clear_tool_inputs clears the tool_use inputs too."""
    emu, _ = make()
    box = seen_by_model(emu)
    messages = conversation(5)
    messages[1]["content"][0] = {**messages[1]["content"][0], "name": "write_file", "input": {"path": "a", "content": "b"}}
    create(emu.client(), messages, edit(trigger={"type": "tool_uses", "value": 1}, keep={"type": "tool_uses", "value": 1},
                                        exclude_tools=["write_file"], clear_tool_inputs=True))
    sent = box["request"]["messages"]
    assert sent[2]["content"][0]["content"] != PLACEHOLDER and sent[1]["content"][0]["input"] == {"path": "a", "content": "b"}
    assert sent[4]["content"][0]["content"] == PLACEHOLDER and sent[3]["content"][0]["input"] == {}
    assert sent[-1]["content"][0]["content"] != PLACEHOLDER  # the newest is kept


def test_clear_at_least_skips_an_edit_not_worth_it():
    """Rule: with clear_at_least, context is only modified if at least that many tokens go."""
    emu, _ = make()
    response = create(emu.client(), conversation(6), edit(trigger={"type": "tool_uses", "value": 3},
                                                         clear_at_least={"type": "input_tokens", "value": 1_000_000}))
    assert response.context_management.applied_edits == []


def test_clearing_changes_the_cached_prefix():
    """Rule: clearing content invalidates the cached prefix from the first cleared block on."""
    emu, _ = make()
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(8))
    first = create(client, messages, None)
    cleared = create(client, messages, edit(trigger={"type": "tool_uses", "value": 3}))
    assert first.usage.cache_creation_input_tokens > 0
    assert cleared.usage.cache_read_input_tokens < first.usage.cache_creation_input_tokens + first.usage.cache_read_input_tokens


def test_count_tokens_reports_the_original_size():
    emu, _ = make()
    counted = emu.client().beta.messages.count_tokens(model=MODEL, messages=conversation(6), system=system(), tools=TOOLS,
                                                      betas=[BETA],
                                                      context_management=edit(trigger={"type": "tool_uses", "value": 3}))
    assert counted.context_management.original_input_tokens > counted.input_tokens


def test_the_beta_header_is_required_and_unknown_edits_say_so():
    emu, _ = make()
    with pytest.raises(anthropic.BadRequestError, match="requires the anthropic-beta header"):
        emu.client().beta.messages.create(model=MODEL, max_tokens=64, messages=conversation(2), context_management=edit())
    with pytest.raises(anthropic.BadRequestError, match="must be one of"):
        create(emu.client(), conversation(2), {"edits": [{"type": "clear_everything_20990101"}]})
    # compaction names its own beta, not context editing's (API-2026 §4.1)
    with pytest.raises(anthropic.BadRequestError, match="requires anthropic-beta: compact-2026-01-12"):
        create(emu.client(), conversation(2), {"edits": [{"type": "compact_20260112"}]})
