"""Conformance at the edges: each test pins one boundary of the documented rules, so that a change of
one comparison or constant in the accounting fails a test (the fidelity fixes and the mutation run
of the 2026-API issue). [caching] = https://platform.claude.com/docs/en/build-with-claude/prompt-caching
"""

from __future__ import annotations

import base64
import json
import struct
import threading
import zlib

import anthropic
import pytest

from minimal_runtime.emulator import Emulator, Turn
from minimal_runtime.emulator.prompt import flatten
from minimal_runtime.provider.models import LOOKBACK_BLOCKS, MODELS

from .helpers import MODEL, SYSTEM_TEXT, TOOLS, FakeClock, breakpoint_on, conversation, make, system, with_breakpoint_on_last


def create(client, messages, **kw):
    kw.setdefault("system", system())
    return client.messages.create(model=kw.pop("model", MODEL), max_tokens=kw.pop("max_tokens", 256),
                                  messages=messages, **kw)


def total(usage) -> int:
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens


def png(width: int, height: int) -> dict:
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw += struct.pack(">I", zlib.crc32(raw[12:29]))
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(raw).decode()}}


# -- breakpoints: each request keeps its own ------------------------------------------------------

def test_a_system_marker_added_after_the_same_request_without_one_writes():
    """Fidelity: a request whose messages repeat an earlier body keeps its own system breakpoints."""
    emu, _ = make()
    client = emu.client()
    messages = conversation(3)
    assert create(client, messages, system=system(cached=False)).usage.cache_creation_input_tokens == 0
    assert create(client, messages, system=system(cached=True)).usage.cache_creation_input_tokens > 0


def test_a_1h_marker_followed_by_none_does_not_read():
    """Fidelity: the later request has no breakpoint, so it reads nothing (reads walk back from breakpoints)."""
    emu, _ = make()
    client = emu.client()
    messages = conversation(3)
    sys_1h = [breakpoint_on({"type": "text", "text": SYSTEM_TEXT}, ttl="1h")]
    assert create(client, messages, system=sys_1h).usage.cache_creation_input_tokens > 0
    assert create(client, messages, system=system(cached=False)).usage.cache_read_input_tokens == 0


# -- the cache's boundaries -----------------------------------------------------------------------

def test_the_lookback_constant_is_twenty():
    assert LOOKBACK_BLOCKS == 20


def test_a_prefix_of_exactly_the_minimum_is_cached():
    """[caching] "shorter than the minimum" is not cached: exactly the minimum is."""
    emu, _ = make()
    minimum = MODELS[MODEL].min_cacheable_tokens
    head = flatten({"model": MODEL, "system": "s", "messages": [{"role": "user", "content": "x"}]}).cum[0]
    text = "y" * (4 * (minimum - head) - len("user|text|"))
    messages = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": text})]}]
    assert flatten({"model": MODEL, "system": "s", "messages": messages}).total == minimum
    assert create(emu.client(), messages, system="s").usage.cache_creation_input_tokens == minimum
    shorter = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": text[:-4]})]}]
    assert create(emu.client(), shorter, system="s").usage.cache_creation_input_tokens == 0


def test_a_too_short_first_breakpoint_does_not_stop_later_ones():
    """[caching]: a breakpoint below the minimum is skipped; a later, long enough one still writes."""
    emu, _ = make()
    messages = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": "tiny"}),
                                             breakpoint_on({"type": "text", "text": "z" * 6000})]}]
    usage = create(emu.client(), messages, system="s").usage
    assert usage.cache_creation_input_tokens == total(usage) > MODELS[MODEL].min_cacheable_tokens


def test_an_entry_is_dead_at_exactly_its_expiry():
    """[caching] 5-minute lifetime: alive just before 300 s, gone at 300 s."""
    for elapsed, hit in ((299.9, True), (300.0, False)):
        emu, clock = make()
        client = emu.client()
        messages = with_breakpoint_on_last(conversation(3))
        create(client, messages)
        clock.advance(elapsed)
        assert (create(client, messages).usage.cache_read_input_tokens > 0) is hit


def test_a_hit_on_the_very_first_block_refreshes_it():
    """[caching] a hit refreshes the lifetime, also for an entry at block position 0."""
    emu, clock = make()
    client = emu.client()
    big_tool = [{**TOOLS[0], "description": "d" * 6000, "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": "x"}]
    create(client, messages, system=None, tools=big_tool)
    clock.advance(250)
    assert create(client, messages, system=None, tools=big_tool).usage.cache_read_input_tokens > 0
    clock.advance(250)  # 500 s after the write, 250 after the refresh
    assert create(client, messages, system=None, tools=big_tool).usage.cache_read_input_tokens > 0


def test_exactly_four_breakpoints_are_accepted():
    emu, _ = make()
    blocks = [breakpoint_on({"type": "text", "text": f"part {i}"}) for i in range(4)]
    assert create(emu.client(), [{"role": "user", "content": blocks}], system="s").stop_reason == "end_turn"


@pytest.mark.parametrize("cc", [{"type": "foo"}, {"type": "ephemeral", "ttl": "2h"}, {"type": "ephemeral", "scope": "x"}])
def test_a_malformed_cache_control_is_a_400(cc):
    emu, _ = make()
    with pytest.raises(anthropic.BadRequestError, match="cache_control"):
        create(emu.client(), [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": cc}]}])


def test_automatic_caching_covers_the_tools_too():
    """[caching] automatic caching: the breakpoint on the last cacheable block caches tools, system, messages."""
    emu, _ = make()
    usage = create(emu.client(), conversation(3), tools=TOOLS, system=system(cached=False),
                   cache_control={"type": "ephemeral"}).usage
    assert usage.cache_creation_input_tokens == total(usage)


def test_automatic_caching_with_a_shorter_ttl_after_a_1h_marker_is_in_order():
    """[caching] TTL order holds with the automatic breakpoint sorted among the explicit ones."""
    emu, _ = make()
    sys_1h = [breakpoint_on({"type": "text", "text": SYSTEM_TEXT}, ttl="1h")]
    assert create(emu.client(), conversation(3), system=sys_1h, cache_control={"type": "ephemeral"}).stop_reason
    with pytest.raises(anthropic.BadRequestError, match="must not come after a ttl=.5m. cache_control block"):
        create(emu.client(), conversation(3), system=system(), cache_control={"type": "ephemeral", "ttl": "1h"})


def test_cache_control_is_not_content_on_images_and_tool_results():
    """[caching] moving a marker does not change the prefix: not on text, not on an image, not on a tool_result."""
    base = conversation(3)
    plain = [*base[:-1], {**base[-1], "content": [*base[-1]["content"], png(800, 600)]}]
    marked = [*base[:-1], {**base[-1], "content": [*base[-1]["content"], breakpoint_on(png(800, 600))]}]
    a = flatten({"model": MODEL, "messages": plain})
    b = flatten({"model": MODEL, "messages": marked})
    assert a.digests == b.digests
    result = base[2]["content"][0]
    moved = [*base[:2], {**base[2], "content": [breakpoint_on(result)]}, *base[3:]]
    assert flatten({"model": MODEL, "messages": base}).digests == flatten({"model": MODEL, "messages": moved}).digests


def test_string_content_is_the_same_as_one_text_block():
    a = flatten({"model": MODEL, "messages": [{"role": "user", "content": "hello"}]})
    b = flatten({"model": MODEL, "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})
    assert a.digests == b.digests and a.total == b.total


def test_usage_numbers_are_exact():
    """Usage: the three parts add up to count_tokens; a second identical call reads what the first wrote."""
    emu, _ = make()
    client = emu.client()
    messages = with_breakpoint_on_last(conversation(4))
    counted = client.messages.count_tokens(model=MODEL, system=system(), messages=messages).input_tokens
    first = create(client, messages).usage
    assert (first.input_tokens, first.cache_read_input_tokens, first.cache_creation_input_tokens) == (0, 0, counted)
    second = create(client, messages).usage
    assert (second.input_tokens, second.cache_read_input_tokens, second.cache_creation_input_tokens) == (0, counted, 0)


def test_adding_an_image_invalidates_the_messages_cache():
    """[caching] "What invalidates the cache": adding or removing images misses the messages cache,
    keeps tools and system."""
    emu, _ = make()
    client = emu.client()
    base = with_breakpoint_on_last(conversation(4))
    create(client, base)
    with_image = [*base, {"role": "assistant", "content": "seen"}, {"role": "user", "content": [png(400, 300)]}]
    with_image[-1] = {"role": "user", "content": [breakpoint_on(png(400, 300))]}
    usage = create(client, with_image).usage
    system_tokens = flatten({"model": MODEL, "system": system(), "messages": [{"role": "user", "content": "x"}]}).cum[0]
    assert usage.cache_read_input_tokens == system_tokens


# -- concurrency ----------------------------------------------------------------------------------

def test_five_identical_concurrent_requests_write_five_times():
    """[caching] an entry becomes available once the first response begins: five identical
    requests in flight together all write."""
    barrier, calls = threading.Barrier(5), []

    def waits(request):
        calls.append(1)
        if len(calls) <= 5:
            barrier.wait(timeout=10)
        return "ok"
    emu = Emulator(model=MODEL, policy=waits, clock=FakeClock())
    messages = with_breakpoint_on_last(conversation(3))
    usages = []

    def go():
        usages.append(create(emu.client(), messages).usage)
    threads = [threading.Thread(target=go) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [u.cache_read_input_tokens for u in usages] == [0] * 5
    assert create(emu.client(), messages).usage.cache_read_input_tokens > 0


# -- diagnostics, thinking, output, errors --------------------------------------------------------

def test_divergence_is_reported_even_when_nothing_was_cached():
    """[CD] divergence comes from the request's structure."""
    emu, _ = make()
    client = emu.client()
    messages = conversation(3)
    first = create(client, messages, system=system(cached=False), diagnostics={"previous_message_id": None})
    edited = [dict(m) for m in messages]
    edited[0] = {"role": "user", "content": "a different task"}
    later = create(client, edited, system=system(cached=False), diagnostics={"previous_message_id": first.id})
    assert later.diagnostics.cache_miss_reason.type == "messages_changed"
    assert later.diagnostics.cache_miss_reason.cache_missed_input_tokens > 0


def test_cache_control_on_a_thinking_block_is_a_400():
    emu, _ = make(model="claude-opus-5")
    block = {"type": "thinking", "thinking": "", "signature": "x", "cache_control": {"type": "ephemeral"}}
    with pytest.raises(anthropic.BadRequestError, match="cannot be set on a thinking block"):
        create(emu.client(), [{"role": "user", "content": "q"}, {"role": "assistant", "content": [block, {"type": "text", "text": "a"}]},
                              {"role": "user", "content": "q2"}], model="claude-opus-5")


def test_earlier_turns_thinking_is_not_counted_before_opus_4_5():
    """[context-windows] models before Opus 4.5 drop earlier turns' thinking from the context;
    later models (Sonnet 4.6) keep it."""
    def thinking_policy(request):
        return Turn(content=[{"type": "text", "text": "a"}], thinking="t" * 4000)
    sizes = {}
    for model in ("claude-haiku-4-5", "claude-sonnet-4-6"):
        emu = Emulator(model=model, policy=thinking_policy, clock=FakeClock())
        client = emu.client()
        kw = dict(model=model, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048} if model.endswith("4-5")
                  else {"type": "adaptive"})
        answer = client.messages.create(messages=[{"role": "user", "content": "q"}], **kw)
        history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [b.to_dict() for b in answer.content]},
                   {"role": "user", "content": "q2"}]
        sizes[model] = client.messages.count_tokens(model=model, messages=history, thinking=kw["thinking"]).input_tokens
    assert sizes["claude-haiku-4-5"] < 100 < 1000 < sizes["claude-sonnet-4-6"]


def test_output_is_cut_at_max_tokens_and_zero_is_empty():
    emu = Emulator(model=MODEL, policy=lambda r: "word " * 400, clock=FakeClock())
    client = emu.client()
    cut = create(client, [{"role": "user", "content": "x"}], max_tokens=50)
    assert cut.stop_reason == "max_tokens" and cut.usage.output_tokens == 50 and len(cut.content[0].text) <= 200
    empty = create(client, [{"role": "user", "content": "x"}], max_tokens=0)
    assert empty.content == [] and empty.stop_reason == "max_tokens"
    with pytest.raises(anthropic.BadRequestError, match="at least 1 when streaming"):
        with client.messages.stream(model=MODEL, max_tokens=0, messages=[{"role": "user", "content": "x"}]) as s:
            s.get_final_message()


@pytest.mark.parametrize("text, message", [("", "text content blocks must be non-empty"),
                                           ("  \n", "text content blocks must contain non-whitespace text")])
def test_empty_text_blocks_are_rejected(text, message):
    emu, _ = make()
    with pytest.raises(anthropic.BadRequestError, match=message):
        create(emu.client(), [{"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": text}]}])


def test_streaming_delivers_applied_edits_in_the_final_message_delta():
    """[CE] applied_edits arrives in the final message_delta when streaming."""
    emu, _ = make()
    client = emu.client()
    edits = {"edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 2},
                        "keep": {"type": "tool_uses", "value": 1}}]}
    with client.beta.messages.stream(model=MODEL, max_tokens=64, messages=conversation(5), system=system(),
                                     betas=["context-management-2025-06-27"], context_management=edits) as stream:
        events = list(stream)
        final = stream.get_final_message()
    deltas = [e for e in events if e.type == "message_delta"]
    assert deltas[-1].context_management.applied_edits[0].cleared_tool_uses == 4
    assert final.context_management.applied_edits[0].cleared_tool_uses == 4


@pytest.mark.parametrize("status, kind, error", [(402, "billing_error", anthropic.APIStatusError),
                                                 (403, "permission_error", anthropic.PermissionDeniedError),
                                                 (504, "timeout_error", anthropic.APIStatusError)])
def test_error_bodies_carry_the_right_type_and_a_request_id(status, kind, error):
    emu, _ = make()
    emu.inject_fault(status, count=5)
    with pytest.raises(error) as e:
        create(emu.client(max_retries=0), [{"role": "user", "content": "x"}])
    assert e.value.body["error"]["type"] == kind and e.value.body["request_id"].startswith("req_")


# -- bad requests ---------------------------------------------------------------------------------

def test_a_non_object_body_is_a_400_and_an_oversize_one_a_413_and_a_wrong_content_type_a_400():
    emu, _ = make()
    for body in (b"[1, 2]", b"\"text\"", b"17", b"null"):
        status, _, payload = emu.handle("POST", "/v1/messages", body, {"content-type": "application/json",
                                                                       "anthropic-version": "2026-10-21", "x-api-key": "k"})
        assert status == 400 and json.loads(payload)["error"]["type"] == "invalid_request_error"
    status, _, payload = emu.handle("POST", "/v1/messages", b"{" + b" " * (33 * 1024 * 1024) + b"}", {})
    assert status == 413 and json.loads(payload)["error"]["type"] == "request_too_large"
    status, _, payload = emu.handle("POST", "/v1/messages", b"{}", {"content-type": "text/plain"})
    assert status == 400 and "content-type" in json.loads(payload)["error"]["message"]


def test_a_tool_schema_with_its_keys_in_another_order_is_another_prefix():
    """[caching; CD "non-deterministic schema JSON" is a tools_changed]: a schema's key order is content."""
    emu, _ = make()
    client = emu.client()
    schema_a = {"type": "object", "properties": {"url": {"type": "string"}, "depth": {"type": "integer"}}}
    schema_b = {"properties": {"depth": {"type": "integer"}, "url": {"type": "string"}}, "type": "object"}
    tool = {"name": "fetch", "description": "Fetch a URL.", "input_schema": schema_a}
    messages = with_breakpoint_on_last(conversation(3))
    create(client, messages, tools=[tool])
    assert create(client, messages, tools=[tool]).usage.cache_read_input_tokens > 0
    assert create(client, messages, tools=[{**tool, "input_schema": schema_b}]).usage.cache_read_input_tokens == 0


def test_the_server_refuses_an_oversize_body_before_reading_it():
    import socket
    emu, _ = make()
    with emu.serve() as url:
        host, port = url.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)), timeout=5)
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                     b"content-length: 419430400\r\n\r\n{")  # 400 MiB promised, one byte sent
        answer = b""
        while chunk := sock.recv(4096):  # the server closes the connection after its answer
            answer += chunk
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413") and b"request_too_large" in answer
