"""Conformance: error responses, fault injection with the SDK's retries, and the three ways in."""

from __future__ import annotations

import asyncio
import threading

import anthropic
import pytest

from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.emulator import Emulator, ScriptedPolicy, tool_use
from .helpers import MODEL, TOOLS, conversation, make, system, with_breakpoint_on_last


def create(client, messages, **kw):
    return client.messages.create(model=kw.pop("model", MODEL), max_tokens=256, messages=messages, **kw)


def test_five_breakpoints_are_a_400():
    """Rule: at most 4 cache_control breakpoints per request."""
    emu, _ = make()
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks with cache_control"):
        create(emu.client(), [{"role": "user", "content": blocks}])


def test_automatic_caching_takes_one_of_the_four_slots():
    """Rule: top-level cache_control counts toward the 4 breakpoints."""
    emu, _ = make()
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(4)]
    blocks.append({"type": "text", "text": "tail"})
    with pytest.raises(anthropic.BadRequestError, match="Found 5"):
        create(emu.client(), [{"role": "user", "content": blocks}], cache_control={"type": "ephemeral"})


def test_over_the_window_is_prompt_too_long():
    """Rule: a prompt over the model's context window is a 400 with the provider's wording."""
    emu, _ = make(model="claude-opus-4-5")  # 200K window
    huge = [{"role": "user", "content": "z" * 900_000}]
    with pytest.raises(anthropic.BadRequestError, match=r"prompt is too long: 225\d+ tokens > 200000 maximum"):
        create(emu.client(), huge, model="claude-opus-4-5")


def test_prefill_rejected_where_unsupported_and_merged_turns():
    """Rule: a trailing assistant message is a prefill; the 4.6 generation answers 400.
    Consecutive same-role messages are merged into one turn first."""
    prefill = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure, "}]
    emu, _ = make()
    with pytest.raises(anthropic.BadRequestError, match="does not support assistant message prefill"):
        create(emu.client(), prefill)
    older, _ = make(model="claude-opus-4-5")
    assert create(older.client(), prefill, model="claude-opus-4-5").stop_reason == "end_turn"
    two_users = [{"role": "user", "content": "hi"}, {"role": "user", "content": "and again"}]
    assert create(emu.client(), two_users).stop_reason == "end_turn"


@pytest.mark.parametrize("messages, fragment", [
    ([{"role": "system", "content": "x"}], "messages.0.role"),
    ([{"role": "user", "content": [{"type": "bogus"}]}], "messages.0.content.0.type"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"}]}],
     "unexpected `tool_use_id`"),
    ([{"role": "user", "content": "go"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {}}]},
      {"role": "user", "content": "no result"}], "without `tool_result` blocks"),
    ([], "at least one message"),
])
def test_malformed_requests_name_the_problem(messages, fragment):
    emu, _ = make()
    with pytest.raises(anthropic.BadRequestError, match=fragment.replace("(", r"\(")) as info:
        create(emu.client(), messages, tools=TOOLS)
    assert info.value.body["error"]["type"] == "invalid_request_error"


def test_unknown_model_is_404():
    emu, _ = make()
    with pytest.raises(anthropic.NotFoundError):
        create(emu.client(), conversation(1), model="claude-nonexistent-9")


@pytest.mark.parametrize("status, error", [(429, anthropic.RateLimitError), (529, anthropic.OverloadedError),
                                           (500, anthropic.InternalServerError)])
def test_faults_are_retried_by_the_sdk(status, error):
    """Transient faults carry retry-after; the SDK's own retries get the run through."""
    emu, _ = make()
    emu.inject_fault(status, count=2)
    assert create(emu.client(max_retries=2), conversation(1)).stop_reason == "end_turn"
    assert len(emu.calls) == 1
    emu.inject_fault(status, count=1)
    with pytest.raises(error):
        create(emu.client(max_retries=0), conversation(1))


def test_policy_failure_is_a_clear_500_not_retried():
    emu, _ = make(policy=ScriptedPolicy(["only one turn"]))
    client = emu.client(max_retries=3)
    create(client, conversation(1))
    with pytest.raises(anthropic.InternalServerError, match="scripted policy exhausted"):
        create(client, conversation(1))


def test_policy_cannot_change_the_accounting():
    def meddling(request):
        request["messages"].clear()
        return [tool_use("fetch", {"url": "https://example.test"})]
    emu, _ = make(policy=meddling)
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(2))
    first = create(client, messages, system=system(), tools=TOOLS)
    second = create(client, messages, system=system(), tools=TOOLS)
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens > 0
    assert second.content[0].type == "tool_use" and second.content[0].id.startswith("toolu_")
    assert second.stop_reason == "tool_use"


def test_serve_gives_the_same_usage_as_client():
    runs = []
    for over_http in (False, True):
        emu, _ = make()
        if over_http:
            with emu.serve() as base_url:
                client = anthropic.Anthropic(api_key="x", base_url=base_url)
                runs.append([create(client, with_breakpoint_on_last(conversation(t)), system=system()).usage
                             for t in range(1, 6)])
        else:
            client = emu.client()
            runs.append([create(client, with_breakpoint_on_last(conversation(t)), system=system()).usage
                         for t in range(1, 6)])
    assert runs[0] == runs[1]


def test_serve_answers_errors_with_real_bodies():
    emu, _ = make()
    with emu.serve() as base_url:
        client = anthropic.Anthropic(api_key="x", base_url=base_url, max_retries=0)
        emu.inject_fault(529)
        with pytest.raises(anthropic.OverloadedError):
            create(client, conversation(1))


def test_async_client_and_concurrent_tasks_share_one_cache():
    emu, _ = make()
    aclient = emu.async_client()
    messages = with_breakpoint_on_last(conversation(3))

    async def main():
        await aclient.messages.create(model=MODEL, max_tokens=64, messages=messages, system=system())
        return await asyncio.gather(*[aclient.messages.create(model=MODEL, max_tokens=64, messages=messages,
                                                              system=system()) for _ in range(8)])
    results = asyncio.run(main())
    assert {r.usage.cache_read_input_tokens for r in results} == {emu.calls[0].cache_creation_input_tokens}


def test_threads_share_one_emulator_safely():
    emu, _ = make()
    client = emu.client()
    errors = []

    def worker(k):
        try:
            for t in range(1, 6):
                create(client, with_breakpoint_on_last(conversation(t)), system=system())
        except Exception as e:  # pragma: no cover - the assertion below reports it
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors and len(emu.calls) == 30
    assert len({c.model for c in emu.calls}) == 1


def test_cost_uses_the_published_multipliers():
    usage = {"input_tokens": 1_000_000, "cache_creation_input_tokens": 2_000_000, "cache_read_input_tokens": 10_000_000,
             "cache_creation": {"ephemeral_5m_input_tokens": 1_000_000, "ephemeral_1h_input_tokens": 1_000_000},
             "output_tokens": 1_000_000}
    # Sonnet 4.6: $3 in, $15 out; writes 1.25x / 2x, reads 0.1x.
    assert CallRecord.from_usage(usage, "claude-sonnet-4-6").cost == pytest.approx(3 + 3.75 + 6 + 3 + 15)
    record = CallRecord.from_usage(usage, "claude-sonnet-4-6")
    assert record.cache_read_share == pytest.approx(10 / 13)
    assert record.cost_without_cache == pytest.approx(13 * 3 + 15)


def test_emulator_keeps_a_record_per_call():
    emu = Emulator()
    client = emu.client()
    for t in range(1, 4):
        create(client, with_breakpoint_on_last(conversation(t)), system=system())
    assert [c.prompt_tokens for c in emu.calls] == sorted(c.prompt_tokens for c in emu.calls)
    assert emu.calls[-1].cache_read_share > 0.9


def test_streaming_gives_the_same_message_as_a_plain_call():
    """stream: true answers with server-sent events; the SDK assembles the same message and usage."""
    turns = [[{"type": "text", "text": "Checking the page. " * 5}, tool_use("fetch", {"url": "https://acme.example/pricing"})]]
    plain_emu, _ = make(policy=ScriptedPolicy(turns))
    stream_emu, _ = make(policy=ScriptedPolicy(turns))
    messages = with_breakpoint_on_last(conversation(3))
    plain = create(plain_emu.client(), messages, system=system(), tools=TOOLS)
    with stream_emu.client().messages.stream(model=MODEL, max_tokens=256, messages=messages, system=system(),
                                             tools=TOOLS) as stream:
        texts = list(stream.text_stream)
        streamed = stream.get_final_message()
    assert len(texts) > 1 and "".join(texts) == plain.content[0].text
    assert streamed.content[1].input == plain.content[1].input and streamed.stop_reason == "tool_use"
    assert streamed.usage.cache_creation_input_tokens == plain.usage.cache_creation_input_tokens
    assert streamed.usage.output_tokens == plain.usage.output_tokens and streamed.usage.input_tokens == plain.usage.input_tokens


def test_streaming_over_http():
    emu, _ = make(policy=ScriptedPolicy(["Hello from the stream."]))
    with emu.serve() as base_url:
        client = anthropic.Anthropic(api_key="x", base_url=base_url)
        events = [e.type for e in client.messages.create(model=MODEL, max_tokens=64, stream=True,
                                                           messages=[{"role": "user", "content": "hi"}])]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert "content_block_delta" in events and "message_delta" in events
