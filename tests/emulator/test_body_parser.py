"""The incremental body parser always returns exactly what json.loads returns, or refuses what it
refuses (issue 60: a repeated "messages" key made it loop for ever, and a body one client sent
changed how another's was read)."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st
import pytest

from minimal_runtime.emulator.body import BodyParser

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": json_values})


# the other top-level values: a few, so that consecutive bodies often repeat one and sometimes
# change it, into a prefix of its old bytes among others ([1] -> [1, 2], 1 -> 10, "a" -> "ab")
heads = st.sampled_from([None, 1, 10, "a", "ab", [1], [1, 2], [{"name": "t"}], [{"name": "t2"}], {"x": [1]}, {"x": [1, 2]}])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(message, max_size=6), heads, heads), min_size=1, max_size=6),
       st.sampled_from([(", ", ": "), (",", ":")]), st.integers(min_value=0, max_value=3))
def test_equals_json_loads_over_a_sequence_of_related_bodies(histories, separators, keep_prefix):
    parser = BodyParser(keep=3)
    base: list = []
    for extra, tools, system in histories:
        base = base[: len(base) - min(keep_prefix, len(base))] + extra  # edit the tail, keep the rest
        body = json.dumps({"max_tokens": 5, "tools": tools, "messages": base, "system": system, "model": "m"},
                          separators=separators).encode()
        parsed, _, _ = parser.parse(body)
        assert parsed.request == json.loads(body)


def test_an_unchanged_tools_or_system_is_the_earlier_parsed_object_and_a_changed_one_is_not():
    """What lets the emulator skip rendering a request's head: identity means the bytes were the same."""
    parser = BodyParser()
    tools, system = [{"name": "read", "input_schema": {"type": "object"}}], [{"type": "text", "text": "Be brief."}]
    messages = [{"role": "user", "content": "hi"}]
    # the SDK sends the messages first; a body whose bytes before its messages changed shares nothing
    first, _, _ = parser.parse(json.dumps({"messages": messages, "tools": tools, "system": system}).encode())
    again, _, _ = parser.parse(json.dumps({"messages": messages * 2, "tools": tools, "system": system}).encode())
    assert again.request["tools"] is first.request["tools"] and again.request["system"] is first.request["system"]
    changed, _, _ = parser.parse(json.dumps({"messages": messages * 3, "tools": tools, "system": system * 2}).encode())
    assert changed.request["system"] is not first.request["system"] and changed.request["system"] == system * 2
    assert changed.request["tools"] is first.request["tools"]


def test_reuses_the_messages_an_earlier_body_shares():
    parser = BodyParser()
    messages = [{"role": "user", "content": f"m{i}"} for i in range(50)]
    parser.parse(json.dumps({"messages": messages[:40], "model": "m"}).encode())
    parsed, earlier, shared = parser.parse(json.dumps({"messages": messages, "model": "m"}).encode())
    assert shared == 40 and earlier is not None
    assert parsed.request["messages"] == messages


def test_unusual_shapes_fall_back_to_a_plain_parse():
    parser = BodyParser()
    for body in (b'[1, 2]', b'{"messages": "not a list"}', b'  {"a": 1}  '):
        assert parser.parse(body)[0].request == json.loads(body)


def test_reuse_never_changes_the_accounting():
    """The same sequence of requests billed with and without reuse gives identical usage."""
    from minimal_runtime.emulator import Emulator
    from .helpers import TOOLS, add_batch, conversation, system, with_breakpoint_on_last

    def run(keep: int):
        emu = Emulator(clock=lambda: 0.0)
        emu._bodies = BodyParser(keep=keep)
        client = emu.client()
        out = []
        for t in range(1, 25):
            messages = add_batch(with_breakpoint_on_last(conversation(t)), f"note {t}")
            if t % 7 == 0:
                result = {**messages[2]["content"][0], "content": "edited"}  # an edit early in the history
                messages[2] = {"role": "user", "content": [result]}
            tools = TOOLS if t % 5 else TOOLS[:1]
            out.append(client.messages.create(model=emu.model, max_tokens=64, messages=messages,
                                              system=system(), tools=tools).usage)
            out.append(client.messages.count_tokens(model=emu.model, messages=messages, system=system(), tools=tools))
        return out

    assert run(keep=8) == run(keep=0)


def loads(raw: bytes):
    """json.loads's answer: its value in full (order and types: json.dumps tells 1 from 1.0 and True), or a refusal."""
    try:
        return json.dumps(json.loads(raw))
    except ValueError:
        return "refused"


def parse(parser: BodyParser, raw: bytes):
    try:
        return json.dumps(parser.parse(raw)[0].request)
    except ValueError:
        return "refused"


def body(messages: list, tools=None, model: str = "m") -> bytes:
    """Shaped as the SDK sends: the messages first, then the other fields."""
    return json.dumps({"max_tokens": 5, "messages": messages, "tools": tools, "model": model}).encode()


def mutated(draw, raw: bytes) -> bytes:
    """``raw`` broken or made unusual the ways a client or an attacker might: cut short, a comma
    dropped or doubled, a byte changed, a top-level key repeated (first or last, as json.loads keeps the last)."""
    text = raw.decode()
    kind = draw(st.sampled_from(["truncate", "drop comma", "double comma", "insert", "repeat key first",
                                 "repeat key last", "trailing comma", "whitespace"]))
    if kind == "truncate":
        return raw[: draw(st.integers(0, len(raw) - 1))]
    commas = [i for i, c in enumerate(text) if c == ","]
    if kind in ("drop comma", "double comma") and commas:
        at = draw(st.sampled_from(commas))
        return (text[:at] + ("" if kind == "drop comma" else ",,") + text[at + 1:]).encode()
    if kind == "insert":
        at, char = draw(st.integers(0, len(text))), draw(st.sampled_from(list(',:[]{}" 1\fn') + ["\x0c"]))
        return (text[:at] + char + text[at:]).encode()
    value = json.dumps(draw(st.lists(message, max_size=2)))
    key = draw(st.sampled_from(["messages", "model", "tools", "max_tokens"]))
    if kind == "repeat key first":
        return ('{"%s": %s, ' % (key, value) + text[1:]).encode()
    if kind == "repeat key last":
        return (text[:-1] + ', "%s": %s}' % (key, value)).encode()
    if kind == "trailing comma":
        return (text[:-1] + ",}").encode()
    return (text + draw(st.sampled_from([" ", "\n", "\x0c", "\u00a0", " x"]))).encode()


@settings(max_examples=200, deadline=None)
@given(st.lists(message, min_size=1, max_size=5), st.lists(message, max_size=3), st.lists(message, max_size=3),
       st.lists(st.tuples(st.sampled_from("AB"), st.integers(0, 5), st.booleans()), min_size=1, max_size=8), st.data())
def test_two_clients_with_byte_identical_prefixes_and_broken_bodies_each_read_as_json_loads_reads_them(
        shared, tail_a, tail_b, calls, data):
    """Two clients whose bodies share their first messages byte for byte, interleaved on one parser,
    some of their bodies broken: every body, broken or not, reads as json.loads reads it, whatever
    was parsed before it."""
    parser = BodyParser(keep=3)
    histories = {"A": shared + tail_a, "B": shared + tail_b}
    for client, upto, broken in calls:
        raw = body(histories[client][: len(shared) + upto], tools=[{"name": client}])
        if broken:
            raw = mutated(data.draw, raw)
        assert parse(parser, raw) == loads(raw)


@pytest.mark.parametrize("second", ["[]", '[{"role": "user", "content": "attacker"}]'])
def test_a_repeated_messages_key_reads_as_the_last_and_leaves_the_next_body_unchanged(second):
    """The issue's reproduction, in-process: a valid body, then the same body with a second
    "messages" key (which looped for ever), then another body sharing the first's bytes."""
    parser = BodyParser()
    messages = [{"role": "user", "content": f"m{i}"} for i in range(3)]
    first = body(messages)
    assert parse(parser, first) == loads(first)
    attack = first[:-1] + b', "messages": ' + second.encode() + b"}"
    assert parse(parser, attack) == loads(attack)
    victim = body(messages + [{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}])
    assert parse(parser, victim) == loads(victim)


@pytest.mark.parametrize("raw", [
    b'{"model": "m" "messages": []}',  # no comma between keys
    b'{"model": "m", "messages": [{"role": "user", "content": "a"} {"role": "user", "content": "b"}]}',
    b'{"model": "m", "messages": [, {"role": "user", "content": "a"}]}',
    b'{"model": "m", "messages": [{"role": "user", "content": "a"},]}',
    b'{"model": "m",, "messages": []}',
    b'{"model": "m", "messages": []} \x0c',
    b'{1: 2, "messages": []}',
])
def test_what_json_loads_refuses_is_refused(raw):
    parser = BodyParser()
    parser.parse(body([{"role": "user", "content": "a"}]))  # an earlier body whose bytes these may share
    with pytest.raises(ValueError):
        json.loads(raw)
    with pytest.raises(ValueError):
        parser.parse(raw)


def test_other_encodings_json_loads_takes_are_taken():
    raw = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    for encoded in (raw.encode("utf-8-sig"), raw.encode("utf-16"), b'{"m": "\xed\xa0\x80"}'):
        assert parse(BodyParser(), encoded) == loads(encoded)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["claude-sonnet-4-6", "claude-sonnet-5-5"]), st.integers(1, 6), st.booleans(),
                          st.booleans(), st.booleans()), min_size=2, max_size=6))
def test_what_one_client_leaves_never_changes_how_anothers_request_is_billed(calls):
    """Clients whose bodies share their messages byte for byte, but not their model, tools, system or
    a repeated key: each call is answered exactly as by an emulator that reuses nothing (issue 60)."""
    from minimal_runtime.emulator import Emulator
    from .helpers import TOOLS, conversation, system, with_breakpoint_on_last

    def run(keep: int) -> list:
        emu = Emulator(clock=lambda: 0.0)
        emu._bodies = BodyParser(keep=keep)
        out = []
        for model, turns, all_tools, cached_system, repeated in calls:
            raw = json.dumps({"max_tokens": 64, "messages": with_breakpoint_on_last(conversation(turns)), "model": model,
                              "system": system(cached_system), "tools": TOOLS if all_tools else TOOLS[:1]})
            if repeated:  # as the attacker of the issue: the same bytes, then a second messages array
                raw = raw[:-1] + ', "messages": ' + json.dumps(conversation(1)) + "}"
            status, _, answer = emu.handle("POST", "/v1/messages", raw.encode(),
                                           {"x-api-key": "k", "anthropic-version": "2023-06-01"})
            answer = json.loads(answer)
            out.append((status, answer.get("usage") or answer["error"]["message"]))
        return out

    assert run(keep=8) == run(keep=0)
