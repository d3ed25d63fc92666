"""The suite's own parts catch what they claim to: a refused request, a prefix failure the API lets
through, the tool rounds of the policy. Runs with the suite (``make interop``), in seconds, with
the course's own SDK over HTTP against the ``serve`` command; nothing is installed."""

from __future__ import annotations

import anthropic
import pytest

from .harness import serve_emulator
from .policy import ToolRounds, instance

MODEL = "claude-sonnet-5-5"
TOOL = {"name": "get_weather", "description": "The weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def _edited_resend(client: anthropic.Anthropic):
    """Turn 1, then turn 2 with turn 1's question reworded: the thinking block no longer matches."""
    first = client.messages.create(model=MODEL, max_tokens=200, messages=[{"role": "user", "content": "hello"}])
    history = [{"role": "user", "content": "hello, reworded"},
               {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
               {"role": "user", "content": "and now?"}]
    return client.messages.create(model=MODEL, max_tokens=200, messages=history)


def test_a_prefix_failure_the_api_refuses_is_recorded_as_refused_and_failed():
    with serve_emulator(ToolRounds(), MODEL) as (base_url, exchanges):
        client = anthropic.Anthropic(base_url=base_url, api_key="offline", max_retries=0)
        with pytest.raises(anthropic.BadRequestError):
            _edited_resend(client)
    assert [x.status for x in exchanges] == [200, 400]
    assert exchanges[1].refused and exchanges[1].prefix_failures == ["messages.1.content.0"]
    assert exchanges[1].shape["messages"][1]["content"][0] == {"type": "thinking"}  # the shape, no prose


def test_a_prefix_failure_the_api_lets_through_is_still_recorded():
    with serve_emulator(ToolRounds(), MODEL, account_created="2026-01-01") as (base_url, exchanges):  # before enforcement [PT]
        _edited_resend(anthropic.Anthropic(base_url=base_url, api_key="offline", max_retries=0))
    assert [x.status for x in exchanges] == [200, 200]
    assert exchanges[1].prefix_failures == ["messages.1.content.0"]
    assert exchanges[1].signed_blocks == 1


def test_the_policy_runs_two_tool_rounds_per_turn_then_answers():
    with serve_emulator(ToolRounds(rounds=2), MODEL) as (base_url, exchanges):
        client = anthropic.Anthropic(base_url=base_url, api_key="offline", max_retries=0)
        messages, calls = [], []
        for prompt in ("weather?", "tomorrow?"):
            messages.append({"role": "user", "content": prompt})
            while True:
                answer = client.messages.create(model=MODEL, max_tokens=500, tools=[TOOL], messages=messages)
                messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                uses = [b for b in answer.content if b.type == "tool_use"]
                if not uses:
                    break
                calls += [u.input for u in uses]
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": u.id, "content": "sunny"} for u in uses]})
    assert calls == [{"city": "x"}] * 4
    assert len(exchanges) == 6 and not any(x.refused or x.prefix_failures for x in exchanges)
    assert [x.signed_blocks for x in exchanges] == [0, 1, 2, 3, 4, 5]


def test_schema_instances_conform():
    schema = {"type": "object", "required": ["kind", "tags", "n", "name"],
              "properties": {"kind": {"enum": ["a", "b"]}, "tags": {"type": "array", "minItems": 2, "items": {"type": "string"}},
                             "n": {"type": "integer", "minimum": 3}, "name": {"type": ["string", "null"], "minLength": 4},
                             "optional": {"type": "string"}}}
    assert instance(schema) == {"kind": "a", "tags": ["x", "x"], "n": 3, "name": "xxxx"}
