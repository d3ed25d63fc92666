"""The incremental body parser always returns exactly what json.loads returns."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

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
