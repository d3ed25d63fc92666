"""The report's miss reasons, through the real SDK: the call a request is compared with, and the
prefix the minimum-length rule judges."""

from __future__ import annotations

import copy

import anthropic

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started

from .test_serve import SYSTEM, TOOLS


def loop(client, system, model="claude-sonnet-5-5", turns=2, **extra) -> list:
    """Two turns of a tool loop, each run to the model's answer; the messages of its last call."""
    messages = [{"role": "user", "content": "Read the file and sum it up."}]
    for turn in range(turns):
        while True:
            answer = client.messages.create(model=model, max_tokens=400, system=system, tools=TOOLS,
                                            messages=messages, **extra)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
            if answer.stop_reason != "tool_use":
                break
            use = next(b for b in answer.content if b.type == "tool_use")
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                          "content": f"contents of {use.input['path']}" * 30}]})
        messages.append({"role": "user", "content": "And the next file?"})
    return messages[:-1]


def test_a_second_run_of_one_loop_is_compared_with_its_own_calls_not_the_first_runs_longer_ones():
    """The emulator answers deterministically, so a second run's calls are byte for byte the first
    run's: each also matches a longer call of the first run. It is compared with the call it extends
    (its own previous call): no miss while it reads what that call cached, and an edit names it."""
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        loop(client, SYSTEM, cache_control={"type": "ephemeral"})  # #1 to #6
        marked = [{**SYSTEM[0], "cache_control": {"type": "ephemeral"}}]
        messages = loop(client, marked, cache_control={"type": "ephemeral"})  # and a system breakpoint: #7 to #12
        edited = copy.deepcopy(messages) + [{"role": "user", "content": "Next?"}]
        edited[2]["content"][0]["content"] = "rewritten"
        client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=400, system=marked, tools=TOOLS,
                                    messages=edited, cache_control={"type": "ephemeral"}, betas=["thinking-binding-controls-2026-08-01"], thinking={
                                        "type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}})
    second = front.lines[6:12]
    assert not any("miss:" in line for line in second), "\n".join(second)
    assert front.lines[12].endswith("miss: messages.2: edited (an earlier user message is not sent as it was); "
                                    "compared with #12")


def test_the_minimum_length_reason_judges_the_prefix_up_to_the_breakpoint_not_the_whole_prompt():
    """A breakpoint on a system prompt shorter than the model's minimum writes nothing however long
    the prompt grows; the reason says so of that prefix, on the first call and once the whole prompt
    is past the minimum."""
    # 60 repeats: with the tools and their tool-use system prompt (497 tokens on Sonnet 4.6, issue 48) under 1,024
    system = [{"type": "text", "text": "You are a careful agent. " * 60, "cache_control": {"type": "ephemeral"}}]
    emulator = Emulator(model="claude-sonnet-4-6", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        loop(client, system, model="claude-sonnet-4-6")
        ask = [{"role": "user", "content": "x"}]
        head = client.messages.count_tokens(model="claude-sonnet-4-6", system=system, tools=TOOLS, messages=ask) \
            .input_tokens - client.messages.count_tokens(model="claude-sonnet-4-6", messages=ask).input_tokens
    calls = [line for line in front.lines if "count_tokens" not in line]
    assert 500 < head < 1024  # tools and the marked system: under the minimum
    assert all("write 0 read 0" in line for line in calls)
    assert any(int(line.split("| in ")[1].split()[0].replace(",", "")) > 1024 for line in calls)  # past the minimum
    for line in calls:
        assert line.endswith(f"miss: the longest prefix a breakpoint marks (through system.0) is {head:,} tokens "
                             f"< 1,024, the model's minimum cacheable prefix: nothing is written (mark a block "
                             f"further on)"), line


def test_a_null_marker_is_no_breakpoint_in_the_reason_nor_on_the_page():
    """mirascope clears its previous breakpoint with "cache_control": null (the API takes it):
    the reason judges the one marker left, and the page flags only it."""
    import httpx
    marked, cleared = {"cache_control": {"type": "ephemeral"}}, {"cache_control": None}
    messages = [{"role": "user", "content": [{"type": "text", "text": "first", **cleared}]},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [{"type": "text", "text": "second", **marked}]}]
    with started(Emulator(model="claude-sonnet-4-6", policy=ToolThenAnswer()), ui=True) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=messages)
        blocks = httpx.get(f"{url}/ui/api/call/1").json()["blocks"]
    assert "the longest prefix a breakpoint marks (through messages.2.content.0) is" in front.lines[0], front.lines[0]
    assert [b["breakpoint"] for b in blocks] == [False, False, True]
