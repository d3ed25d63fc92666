"""The accounting pinned exactly: how each block renders, what reuse may skip, how lifetimes combine.
Written against the mutation run of the cache and prompt modules (``make mutate``): each test here
fails when one comparison, key or branch of the accounting changes."""

from __future__ import annotations

import base64
import copy
import random
import struct
import zlib

from minimal_runtime.emulator.prompt import Render, flatten, render_block

from .helpers import MODEL, SYSTEM_TEXT, TOOLS, FakeClock, breakpoint_on, conversation, make, system

CURRENT = "claude-sonnet-5-5"


def png(width: int = 64, height: int = 64) -> dict:
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw += struct.pack(">I", zlib.crc32(raw[12:29]))
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(raw).decode()}}


def create(client, messages, **kw):
    kw.setdefault("system", system())
    return client.messages.create(model=kw.pop("model", MODEL), max_tokens=64, messages=messages, **kw)


# -- rendering, exactly -----------------------------------------------------------------------------

def test_each_block_renders_as_pinned():
    assert render_block({"type": "text", "text": "héllo", "cache_control": {"type": "ephemeral"}}, "user") == "user|text|héllo"
    assert render_block({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, "user") == "user|tool_result|t1|False|ok"
    assert render_block({"type": "tool_result", "tool_use_id": "t1", "content": "no", "is_error": True}, "user") == \
        "user|tool_result|t1|True|no"
    assert render_block({"type": "tool_use", "id": "t1", "name": "fetch", "input": {"b": "é", "a": 1}}, "assistant") == \
        'assistant|tool_use|t1|fetch|{"b": "é", "a": 1}'
    # Anything else: canonical JSON, sorted keys, cache_control dropped, but tool input kept in its own order.
    slow = {"type": "tool_use", "id": "t1", "name": "fetch", "input": {"b": 2, "a": 1}, "caller": {"z": 1, "y": 2}}
    assert render_block(slow, "assistant") == \
        'assistant|{"caller":{"y":2,"z":1},"id":"t1","input":{"b":2,"a":1},"name":"fetch","type":"tool_use"}'
    assert render_block({"type": "text", "text": "x", "citations": None}, "user") == 'user|{"citations":null,"text":"x","type":"text"}'
    every_plain_key = {"type": "tool_result", "tool_use_id": "t", "content": "c", "is_error": True,
                       "cache_control": {"type": "ephemeral"}}
    assert render_block(every_plain_key, "user") == "user|tool_result|t|True|c"
    use = {"type": "tool_use", "id": "t", "name": "n", "input": {}, "cache_control": {"type": "ephemeral"}}
    assert render_block(use, "assistant") == "assistant|tool_use|t|n|{}"
    assert render_block({"type": "text", "text": "é", "citations": []}, "user") == 'user|{"citations":[],"text":"é","type":"text"}'
    # A string content is shorthand for one text block (provider/content.py): the two render the same (issue 60).
    result_list = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a"}]}
    assert render_block(result_list, "user") == "user|tool_result|t|False|a"
    two = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert render_block(two, "user") == \
        'user|{"content":[{"text":"a","type":"text"},{"text":"b","type":"text"}],"tool_use_id":"t","type":"tool_result"}'


def request(messages, **kw):
    return {"model": CURRENT, "messages": messages, **kw}


def test_tool_changes_render_the_definition_they_offer():
    """A tool_addition by reference renders as the referenced definition; by value as its own; a
    removal as the name it withdraws. Deferred tools are not in the head."""
    big = {**TOOLS[1], "description": "writes a file " * 50, "defer_loading": True}
    head_only = flatten(request([{"role": "user", "content": "x"}], tools=[TOOLS[0]]))
    with_deferred = flatten(request([{"role": "user", "content": "x"}], tools=[TOOLS[0], big]))
    assert with_deferred.total == head_only.total and with_deferred.digests == head_only.digests
    add = {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "write_file"}}]}
    added = flatten(request([{"role": "user", "content": "x"}, add], tools=[TOOLS[0], big]),
                    render=Render(tools={"write_file": big}))
    assert added.tokens[-1] >= len(big["description"]) // 4
    accented = {**big, "description": "é" * 400}
    by_reference = flatten(request([{"role": "user", "content": "x"}, add], tools=[TOOLS[0], accented]),
                           render=Render(tools={"write_file": accented}))
    inline = flatten(request([{"role": "user", "content": "x"}, {"role": "system", "content": [
        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": accented}}]}], tools=[TOOLS[0]]))
    assert by_reference.tokens[-1] == inline.tokens[-1] < 200  # "é" rendered as itself, not as \u00e9
    by_value = {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_definition", "definition": big}}]}
    assert flatten(request([{"role": "user", "content": "x"}, by_value], tools=[TOOLS[0]])).tokens[-1] == added.tokens[-1]
    remove = {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "write_file"}}]}
    removed = flatten(request([{"role": "user", "content": "x"}, remove], tools=[TOOLS[0], big]), render=Render(tools={"write_file": big}))
    assert removed.tokens[-1] < 10
    unknown = {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "nope"}}]}
    assert flatten(request([{"role": "user", "content": "x"}, unknown], tools=[TOOLS[0]])).tokens[-1] < 10


def test_a_cleared_message_costs_nothing_and_is_keyed_by_its_values():
    note = {"role": "system", "clear_at": "next_user_message", "content": [{"type": "text", "text": "n " * 200}]}
    reordered = {"content": [{"text": "n " * 200, "type": "text"}], "clear_at": "next_user_message", "role": "system"}
    tail = [{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]
    first = [{"role": "user", "content": "x"}, note, *tail]
    again = [{"role": "user", "content": "x"}, reordered, *tail]
    render = Render(last_user=3)
    a, b = flatten(request(first), render=render), flatten(request(again), render=render)
    assert a.tokens[1] == 0 and a.digests == b.digests
    shown = flatten(request(first[:2]), render=Render(last_user=0))
    assert shown.tokens[1] > 100 and shown.auto_target == 0  # a turn-scoped message is never automatic caching's target
    ignored = flatten(request(first), render=Render(system_messages="ignored", last_user=3))
    assert ignored.tokens[1] == 0


def test_compaction_renders_from_the_newest_block_on():
    block = {"type": "compaction", "content": "the summary " * 20, "signature": "s"}
    messages = [*conversation(6), {"role": "assistant", "content": [block, {"type": "text", "text": "after"}]},
                {"role": "user", "content": "go"}]
    whole = flatten(request(messages, system="sys"))
    start = len(messages) - 2
    compacted = flatten(request(messages, system="sys"), render=Render(start=(start, 0)))
    head = flatten(request([{"role": "user", "content": "go"}], system="sys")).head
    assert compacted.total < whole.total / 3
    assert len(compacted.tokens) == head + 3  # the block, the text after it, the user turn
    assert compacted.tokens[head] == len("assistant|compaction|" + block["content"]) // 4 + 1
    skipped = flatten(request([*messages[:-1], {"role": "user", "content": [{"type": "text", "text": "a"},
                                                                            {"type": "text", "text": "b"}]}], system="sys"),
                      render=Render(start=(start, 1)))
    assert len(skipped.tokens) == head + 3  # the text after the block and both blocks of the user turn
    failed = flatten(request([{"role": "user", "content": "x"}, {"role": "assistant", "content": [
        {"type": "compaction", "content": None}, {"type": "text", "text": "y"}]}, {"role": "user", "content": "z"}]))
    assert failed.tokens[1] == 6  # "assistant|compaction|": a failed summary is a no-op, nearly free


def test_prior_thinking_is_hidden_from_exactly_the_cut():
    thinking = {"type": "thinking", "thinking": "t" * 400, "signature": "s"}
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [thinking, {"type": "text", "text": "a"}]},
                {"role": "user", "content": "q2"}, {"role": "assistant", "content": [thinking, {"type": "text", "text": "b"}]},
                {"role": "user", "content": "q3"}]
    full = flatten(request(messages)).total
    cut_at_3 = flatten(request(messages), render=Render(prior_thinking_before=3)).total
    cut_at_4 = flatten(request(messages), render=Render(prior_thinking_before=4)).total
    assert full > cut_at_3 > cut_at_4
    dropped = flatten(request(messages), render=Render(drop=frozenset({(3, 0)})))
    assert dropped.total == cut_at_3 - (full - cut_at_3) + (full - cut_at_3)  # one block less, either way
    assert dropped.total < full


def test_images_inside_tool_results_also_count_for_the_messages_cache():
    base = conversation(3)
    with_image = copy.deepcopy(base)
    with_image[-1]["content"][0]["content"] = [{"type": "text", "text": "shot"}, png()]
    assert flatten(request(base)).params_fp != flatten(request(with_image)).params_fp
    assert flatten(request(base)).images[-1] == 0 and flatten(request(with_image)).images[-1] == 1
    two = copy.deepcopy(with_image)
    two[-1]["content"][0]["content"].append(png())
    two[0]["content"] = [{"type": "text", "text": "task"}, png(), png()]
    two[-1]["content"] = [png(), *two[-1]["content"]]
    assert flatten(request(two)).images == [2, 2, 2, 2, 2, 2, 5]
    p = flatten(request(two))
    assert p.total == sum(p.tokens) and p.cum[0] == p.tokens[0]


def test_automatic_caching_on_the_very_first_block():
    p = flatten({"model": MODEL, "messages": [{"role": "user", "content": "x " * 3000}], "cache_control": {"type": "ephemeral"}})
    assert p.breakpoints == [(0, 300)]
    same = flatten({"model": MODEL, "messages": [{"role": "user", "content": [breakpoint_on({"type": "text", "text": "x"})]}],
                    "cache_control": {"type": "ephemeral"}})
    assert same.breakpoints == [(0, 300)]  # the explicit and the automatic breakpoint are one


def test_automatic_caching_errors_name_themselves():
    import anthropic
    import pytest
    emu, _ = make()

    def message(messages, **kw):
        with pytest.raises(anthropic.BadRequestError) as e:
            create(emu.client(), messages, **kw)
        return e.value.body["error"]["message"]
    assert message([{"role": "user", "content": "x"}], cache_control={"type": "foo"}).startswith("cache_control: expected")
    marked = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": "x"}, ttl="1h")]}]
    assert message(marked, system="s", cache_control={"type": "ephemeral"}).startswith("cache_control: conflicts with the TTL")
    late_hour = conversation(2)
    late_hour[-1] = {**late_hour[-1], "content": [breakpoint_on(late_hour[-1]["content"][0], ttl="1h")]}
    # The live words (github.com/cnighswonger/claude-code-cache-fix/issues/44), naming the 1h block
    assert message(late_hour) == ("messages.4.content.0.cache_control.ttl: a ttl='1h' cache_control block must not "
                                  "come after a ttl='5m' cache_control block. Note that blocks are processed in the "
                                  "following order: `tools`, `system`, `messages`.")


def test_a_malformed_marker_names_its_place():
    import anthropic
    import pytest
    emu, _ = make()
    bad = [{"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y", "cache_control": {"type": "x"}}]}]
    with pytest.raises(anthropic.BadRequestError, match=r"messages\.0\.content\.1\.cache_control"):
        create(emu.client(), bad)
    with pytest.raises(anthropic.BadRequestError, match=r"system\.0\.cache_control"):
        create(emu.client(), [{"role": "user", "content": "x"}], system=[{"type": "text", "text": "s", "cache_control": {"type": "x"}}])


# -- reuse changes nothing ---------------------------------------------------------------------------

def test_reusing_an_earlier_rendering_gives_exactly_a_fresh_one():
    """The incremental path (reuse of an earlier request's positions) equals a fresh flatten, field by
    field, over random growing conversations with images, system and message breakpoints, cleared
    notes and automatic caching."""
    rng = random.Random(7)
    for trial in range(40):
        messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
        previous = None
        sys_marker = rng.random() < 0.5
        auto = rng.random() < 0.5
        for turn in range(12):
            n = len(messages)
            kind = rng.random()
            messages = [*messages,
                        {"role": "system", "clear_at": "next_user_message", "content": [{"type": "text", "text": f"note {turn}"}]}]
            if kind < 0.3:
                messages.append({"role": "assistant", "content": [{"type": "text", "text": f"a {turn}"}]})
            else:
                messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{turn}", "name": "fetch", "input": {"u": turn}}]})
            content = [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": "r" * rng.randrange(1, 400)}] if kind >= 0.3 \
                else [{"type": "text", "text": f"u {turn}"}]
            if rng.random() < 0.2:
                content.append(png())
            messages.append({"role": "user", "content": content})
            marked = [*messages[:-1], {**messages[-1], "content": [*messages[-1]["content"][:-1],
                                                                    breakpoint_on(messages[-1]["content"][-1])]}]
            if trial % 3 == 0:  # a breakpoint on the very first message block too
                marked[0] = {**marked[0], "content": [breakpoint_on(marked[0]["content"][0])]}
            req = {"model": MODEL, "messages": marked, "system": [breakpoint_on({"type": "text", "text": SYSTEM_TEXT})]
                   if sys_marker else SYSTEM_TEXT, **({"cache_control": {"type": "ephemeral"}} if auto else {})}
            render = Render(last_user=len(marked) - 1)
            fresh = flatten(req, render=render)
            if previous is not None:
                reused = flatten(req, (previous, rng.randrange(0, n)), render)
                for name in ("tokens", "cum", "digests", "breakpoints", "msg_ends", "images", "auto_target", "auto_upto",
                             "messages_seed", "params_fp", "explicit_breakpoints"):
                    assert getattr(reused, name) == getattr(fresh, name), name
            previous = fresh


# -- the cache's lifetimes ---------------------------------------------------------------------------

def test_a_lookback_hit_on_the_first_block_refreshes_it():
    """[caching] a hit refreshes the entry it read, also the one at position 0 found by walking back."""
    emu, clock = make()
    client = emu.client()
    big = {**TOOLS[0], "description": "d" * 6000}
    first_marked = [breakpoint_on(big), TOOLS[1]]
    second_marked = [big, breakpoint_on(TOOLS[1])]
    messages = [{"role": "user", "content": "x"}]
    create(client, messages, system=None, tools=first_marked)  # writes the entry at position 0
    clock.advance(250)
    assert create(client, messages, system=None, tools=second_marked).usage.cache_read_input_tokens > 0  # a lookback hit
    clock.advance(250)  # 500 s after the write: alive only because the hit refreshed it
    assert create(client, messages, system=None, tools=first_marked).usage.cache_read_input_tokens > 0


def test_a_5m_write_over_a_1h_entry_keeps_the_hour():
    """Writing a prefix again never shortens its lifetime: the entry keeps the longer TTL (also when
    the rewrite comes more than an hour into the clock's life)."""
    emu, clock = make()
    client = emu.client()
    messages = conversation(3)
    hour = [breakpoint_on({"type": "text", "text": SYSTEM_TEXT}, ttl="1h")]
    clock.advance(4000)
    create(client, messages, system=hour)
    clock.advance(3000)
    create(client, messages, system=system())  # the same prefix marked 5m
    clock.advance(400)
    assert create(client, messages, system=system(cached=False), tools=None,
                  cache_control=None).usage.cache_read_input_tokens == 0  # no breakpoint: nothing read
    assert create(client, messages, system=system()).usage.cache_read_input_tokens > 0


def test_an_expired_entry_written_again_takes_the_new_ttl():
    emu, clock = make()
    client = emu.client()
    messages = conversation(3)
    create(client, messages, system=[breakpoint_on({"type": "text", "text": SYSTEM_TEXT}, ttl="1h")])
    clock.advance(3600)  # exactly expired
    create(client, messages, system=system())  # re-written with 5 minutes
    clock.advance(400)
    assert create(client, messages, system=system()).usage.cache_read_input_tokens == 0


def test_many_entries_keep_the_live_ones():
    emu = make()[0]
    client = emu.client()
    for k in range(4200):
        emu.cache._expires[k.to_bytes(16, "big")] = (0.0, 300)  # long dead
    messages = with_marker = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": "y " * 3000})]}]
    create(client, with_marker)
    assert create(client, messages).usage.cache_read_input_tokens > 0
    assert len(emu.cache) < 4200
    assert FakeClock  # the emulator's clock is the fake one
