"""Conformance: preserved thinking (the prefix check), each test naming its rule.

Rules from https://platform.claude.com/docs/en/build-with-claude/preserved-thinking, collected in
../shared/API-2026.md §1 (quoted sections in each docstring).
"""

from __future__ import annotations

from datetime import date

import anthropic
import pytest

from minimal_runtime.emulator import Emulator, Turn

from .helpers import TOOLS, system

CURRENT = "claude-sonnet-5-5"
BINDING = "thinking-binding-controls-2026-08-01"
OLD_ACCOUNT = date(2026, 5, 1)


def reply(request):
    n = sum(m["role"] == "assistant" for m in request["messages"])
    return Turn(content=[{"type": "text", "text": f"answer {n}"}], thinking=f"thinking about turn {n}")


def client_for(model=CURRENT, account_created=date(2026, 11, 30)):
    return Emulator(model=model, policy=reply, account_created=account_created).client(max_retries=0)


def send(client, messages, betas=(), model=CURRENT, **kw):
    return client.beta.messages.create(model=model, max_tokens=512, system=system(), messages=messages,
                                       betas=list(betas), **kw)


def converse(client, turns=3, **kw):
    """An append-only conversation: each answer is sent back exactly as returned."""
    messages = [{"role": "user", "content": "Question 0"}]
    for k in range(turns):
        answer = send(client, messages, **kw)
        messages += [{"role": "assistant", "content": [b.to_dict() for b in answer.content]},
                     {"role": "user", "content": f"Question {k + 1}"}]
    return messages


def test_every_answer_of_a_current_model_begins_with_a_signed_thinking_block():
    """§1.1 / §7: current models think (adaptive, on by default); the block carries a signature.
    Its text is the policy's when display is "summarized"; on 5.x "omitted" is the default (§13)."""
    answer = send(client_for(), [{"role": "user", "content": "hi"}])
    assert answer.content[0].type == "thinking" and answer.content[0].signature
    assert answer.content[0].thinking == ""
    shown = send(client_for(), [{"role": "user", "content": "hi"}], thinking={"type": "adaptive", "display": "summarized"})
    assert shown.content[0].thinking == "thinking about turn 0"
    silent = Emulator(model=CURRENT, policy=lambda r: "ok").client()
    assert send(silent, [{"role": "user", "content": "hi"}]).content[0].thinking == ""
    legacy = Emulator(model="claude-sonnet-4-6", policy=reply).client()
    assert [b.type for b in send(legacy, [{"role": "user", "content": "hi"}], model="claude-sonnet-4-6").content] == ["text"]


def test_appending_and_moving_cache_control_pass_the_check():
    """§1.3 valid: appending messages; adding, moving or removing cache_control markers."""
    client = client_for()
    messages = converse(client, turns=3)
    marked = [dict(m) for m in messages]
    marked[1] = {**marked[1], "content": [{**b, "cache_control": {"type": "ephemeral"}} if b["type"] == "text" else b
                                          for b in marked[1]["content"]]}
    assert send(client, marked).content[0].type == "thinking"


def test_editing_an_earlier_message_is_the_documented_400():
    """§1.4: the 400 text, verbatim, with the messages.i.content.j path of the failing block; without
    the beta header it continues with the header sentence; it names where the content changed."""
    client = client_for()
    messages = converse(client, turns=3)
    edited = [dict(m) for m in messages]
    edited[2] = {"role": "user", "content": "Question 1, reworded"}
    with pytest.raises(anthropic.BadRequestError) as e:
        send(client, edited)
    message = e.value.body["error"]["message"]
    assert message.startswith("messages.3.content.0: Invalid `signature` in `thinking` block. The block is bound to a "
                              "different conversation. Remove the block, or set "
                              "`thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\".")
    assert "requires the `thinking-binding-controls-2026-08-01` value" in message
    assert "starting at `messages.2.content.0`" in message
    with pytest.raises(anthropic.BadRequestError) as e:
        send(client, edited, betas=[BINDING])
    assert "requires the" not in e.value.body["error"]["message"]


def test_the_2025_batch_edit_fails_on_the_second_call():
    """§9: a reminder added to the last user turn and gone on the next call is an edit."""
    client = client_for()
    first = [{"role": "user", "content": [{"type": "text", "text": "task"}, {"type": "text", "text": "<!-- plan -->\nnote 1"}]}]
    answer = send(client, first)
    second = [{"role": "user", "content": [{"type": "text", "text": "task"}]},
              {"role": "assistant", "content": [b.to_dict() for b in answer.content]},
              {"role": "user", "content": [{"type": "text", "text": "go on"}, {"type": "text", "text": "<!-- plan -->\nnote 2"}]}]
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        send(client, second)


def test_drop_block_drops_the_failing_block_and_every_later_one_unbilled():
    """§1.4 drop_block: the failing block and every later one are dropped, listed in
    input_transformations, not billed; the beta is required for block_binding."""
    client = client_for()
    messages = converse(client, turns=4)
    edited = [dict(m) for m in messages]
    edited[2] = {"role": "user", "content": "Question 1, reworded"}
    thinking = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    with pytest.raises(anthropic.BadRequestError, match="block_binding: Extra inputs are not permitted"):
        send(client, edited, thinking=thinking)
    answer = send(client, edited, betas=[BINDING], thinking=thinking)
    dropped = [(t.type, t.path, t.reason) for t in answer.input_transformations]
    assert dropped == [("thinking_dropped", f"messages.{i}.content.0", "prefix_binding_mismatch") for i in (3, 5, 7)]
    count = client.beta.messages.count_tokens(model=CURRENT, system=system(), messages=edited, betas=[BINDING],
                                               thinking=thinking).input_tokens
    kept = [dict(m) for m in edited]
    for i in (3, 5, 7):
        kept[i] = {**kept[i], "content": [b for b in kept[i]["content"] if b["type"] != "thinking"]}
    assert count == client.beta.messages.count_tokens(model=CURRENT, system=system(), messages=kept).input_tokens


def test_an_older_account_is_let_through_and_told_with_the_beta():
    """§1.2: on an account created before 2026-08-31 the check is not enforced unless the request
    sets the field; failing blocks reach the model, reported as thinking_mismatch_allowed."""
    client = client_for(account_created=OLD_ACCOUNT)
    messages = converse(client, turns=2)
    edited = [dict(m) for m in messages]
    edited[0] = {"role": "user", "content": "Question 0, reworded"}
    answer = send(client, edited, betas=[BINDING])
    assert [(t.type, t.reason) for t in answer.input_transformations] == [
        ("thinking_mismatch_allowed", "prefix_binding_mismatch")] * 2
    with pytest.raises(anthropic.BadRequestError):  # setting the field opts the request in
        send(client, edited, betas=[BINDING], thinking={"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}})


def test_fable_5_2_enforces_for_every_account():
    """§1.2 [F52]: Fable/Mythos 5.2 return the 400 with the field unset on every account."""
    client = client_for(model="claude-fable-5-2", account_created=OLD_ACCOUNT)
    messages = converse(client, turns=2, model="claude-fable-5-2")
    edited = [dict(m) for m in messages]
    edited[0] = {"role": "user", "content": "changed"}
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        send(client, edited, model="claude-fable-5-2")


def test_removing_thinking_from_the_start_end_or_all_is_fine_but_not_the_middle():
    """§1.1: removing blocks from the start, the end, or all of them is fine; a gap in the middle
    invalidates the later blocks; a block put back invalidates those made while it was gone."""
    client = client_for()
    messages = converse(client, turns=4)

    def without(indices):
        out = [dict(m) for m in messages]
        for i in indices:
            out[i] = {**out[i], "content": [b for b in out[i]["content"] if b["type"] != "thinking"]}
        return out

    for ok in ([1], [7], [1, 3], [1, 3, 5, 7]):
        assert send(client, without(ok)).content[0].type == "thinking", ok
    with pytest.raises(anthropic.BadRequestError, match="messages.5.content.0"):
        send(client, without([3]))


def test_tools_and_system_are_part_of_the_prefix_and_a_tampered_signature_is_another_400():
    """§1.3 invalid: any change to system; adding or editing a tool. A changed thinking text (of a
    block returned with its text) or signature is the tampered 400, which drop_block does not cover."""
    client = client_for()
    messages = converse(client, turns=2, thinking={"type": "adaptive", "display": "summarized"})
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        send(client, messages, tools=TOOLS)
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        client.beta.messages.create(model=CURRENT, max_tokens=64, system="another system prompt", messages=messages)
    tampered = [dict(m) for m in messages]
    tampered[1] = {**tampered[1], "content": [{**tampered[1]["content"][0], "thinking": "edited"}, *tampered[1]["content"][1:]]}
    thinking = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    with pytest.raises(anthropic.BadRequestError) as e:
        send(client, tampered, betas=[BINDING], thinking=thinking)
    assert e.value.body["error"]["message"] == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_a_deferred_tool_added_later_is_not_an_edit():
    """§1.3 valid: adding a tool with defer_loading that nothing referenced yet."""
    client = client_for()
    messages = converse(client, turns=2)
    deferred = [{**TOOLS[1], "defer_loading": True}]
    assert send(client, messages, tools=deferred).content[0].type == "thinking"


def test_count_tokens_runs_the_same_check():
    """§1.2: count_tokens runs the same prefix check and returns the same 400."""
    client = client_for()
    messages = converse(client, turns=2)
    edited = [dict(m) for m in messages]
    edited[0] = {"role": "user", "content": "changed"}
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        client.beta.messages.count_tokens(model=CURRENT, system=system(), messages=edited)


def test_a_block_another_model_may_not_read_is_dropped_silently():
    """§1.1 model check: Opus 5.5 reads no Fable blocks; an unreadable block is always dropped,
    whatever prefix_mismatch_behavior says, and is not billed."""
    fable = Emulator(model="claude-fable-5-1", policy=reply)
    answer = fable.client().beta.messages.create(model="claude-fable-5-1", max_tokens=64,
                                                 messages=[{"role": "user", "content": "hi"}])
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [b.to_dict() for b in answer.content]},
               {"role": "user", "content": "and?"}]
    opus = Emulator(model="claude-opus-5-5", policy=reply).client()
    later = opus.beta.messages.create(model="claude-opus-5-5", max_tokens=64, messages=history, betas=[BINDING])
    assert [(t.type, t.reason) for t in later.input_transformations] == [("thinking_dropped", "model_binding_mismatch")]


def test_the_check_stays_incremental():
    """Speed (issue): the check is hashed as the prefix grows. A 200-turn conversation makes as many
    signature reads on its last call as on its tenth: only new messages are checked."""
    from minimal_runtime.emulator import binding
    calls = {"n": 0}
    original = binding.read

    def counting(signature):
        calls["n"] += 1
        return original(signature)

    binding.read = counting
    try:
        client = client_for()
        messages = [{"role": "user", "content": "Question 0"}]
        per_call = []
        for k in range(200):
            calls["n"] = 0
            answer = send(client, messages)
            per_call.append(calls["n"])
            messages += [{"role": "assistant", "content": [b.to_dict() for b in answer.content]},
                         {"role": "user", "content": f"Question {k + 1}"}]
    finally:
        binding.read = original
    assert max(per_call[10:]) == per_call[10] <= 4
