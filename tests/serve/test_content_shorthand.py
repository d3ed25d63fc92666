"""A string ``content`` is shorthand for one text block, inside a ``tool_result`` too (issue 60):
litellm sends the last tool result as a list carrying ``cache_control`` and the same result as a
string on the next call (what mini-swe-agent's default path sends through it). The next call reads
what the last one wrote, and serve names no edit."""

from __future__ import annotations

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.prompt import flatten
from minimal_runtime.serve import started

SYSTEM = "You are a helpful assistant that can interact with a computer shell. " * 100
BASH = {"name": "bash", "description": "Execute a bash command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}


def bash_every_turn(request: dict) -> dict:
    return {"type": "tool_use", "name": "bash", "input": {"command": "ls -la"}}


def litellm_tool_result(tool_use_id: str, output: str, last: bool) -> dict:
    """As litellm's ``convert_to_anthropic_tool_result`` builds it: a string content; the message the
    client marked (the last) has list content, and its ``cache_control`` on the tool_result."""
    if not last:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": output}
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": [{"type": "text", "text": output}],
            "cache_control": {"type": "ephemeral"}}


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "claude-sonnet-5-5"])
def test_a_tool_result_sent_as_a_list_then_as_a_string_is_read_back_whole_and_no_edit_is_named(model):
    emulator = Emulator(model=model, policy=bash_every_turn)
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="offline", max_retries=0)
        history = [{"role": "user", "content": "Please solve this issue: the tests fail on main."}]
        last, usages = None, []  # (tool_use_id, output) of the newest tool result
        for turn in range(4):
            marked = [{"role": "user", "content": [litellm_tool_result(*last, last=True)]}] if last else []
            reply = client.messages.create(model=model, max_tokens=256, system=SYSTEM, tools=[BASH],
                                           messages=history + marked)
            usages.append(reply.usage)
            if last:  # in the history from now on as litellm sends an unmarked result: a string
                history.append({"role": "user", "content": [litellm_tool_result(*last, last=False)]})
            history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
            use = next(b for b in reply.content if b.type == "tool_use")
            last = (use.id, f"total 48\ndrwxr-xr-x  turn {turn} " + "file.py " * 80)
        lines = list(front.lines)
    for before, after in zip(usages[1:], usages[2:]):  # from the second call on, each writes through its marked result
        assert after.cache_read_input_tokens == before.cache_read_input_tokens + before.cache_creation_input_tokens
    assert not any("edited" in line for line in lines), "\n".join(lines)


def test_a_content_document_sources_string_is_its_one_text_block():
    """The same union types a ``content`` document source (the SDK's content_block_source_param.py):
    the two forms are one prompt, digest for digest, and cost the same."""
    def request(content):
        return {"model": "claude-sonnet-4-6", "messages": [{"role": "user", "content": [
            {"type": "document", "source": {"type": "content", "content": content}}, {"type": "text", "text": "Sum up."}]}]}
    text = "The quick brown fox jumps over the lazy dog. " * 40
    emulator = Emulator(model="claude-sonnet-4-6")
    as_string, as_block = request(text), request([{"type": "text", "text": text}])
    assert flatten(as_string).digests == flatten(as_block).digests
    assert emulator.count_tokens(as_string) == emulator.count_tokens(as_block)
