"""Issue 48's rules (images by the vision page's rule, the tool-use system prompt, validation edges,
the tokenizer factor) and issue 51 item 1 (``cache_control: null``), each driven through the real SDK."""

from __future__ import annotations

import base64
import struct

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.prompt import render_block
from minimal_runtime.emulator.tokens import estimate_tokens
from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.provider.models import lookup

from .helpers import SYSTEM_TEXT, FakeClock

SONNET46, SONNET55, OPUS47, OPUS5, HAIKU45 = ("claude-sonnet-4-6", "claude-sonnet-5-5", "claude-opus-4-7",
                                              "claude-opus-5", "claude-haiku-4-5")
TOOL = {"name": "fetch", "description": "Fetch a URL.",
        "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}}


def client_for(model=SONNET46, **kw):
    return Emulator(model=model, clock=FakeClock(), **kw).client(max_retries=0)


# -- issue 51 item 1: "cache_control": null is no breakpoint -------------------------------------

def test_a_null_cache_control_on_a_text_block_a_system_block_and_a_tool_is_no_breakpoint():
    client = client_for()
    kwargs = dict(model=SONNET46, max_tokens=64,
                  system=[{"type": "text", "text": SYSTEM_TEXT, "cache_control": None}],
                  tools=[{**TOOL, "cache_control": None}],
                  messages=[{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": None}]}])
    first = client.messages.create(**kwargs)
    second = client.messages.create(**kwargs)
    for answer in (first, second):  # accepted, and no breakpoint: nothing written, nothing read
        assert answer.usage.cache_creation_input_tokens == 0 and answer.usage.cache_read_input_tokens == 0
    assert client.messages.count_tokens(**{k: v for k, v in kwargs.items() if k != "max_tokens"}).input_tokens \
        == first.usage.input_tokens


def test_a_null_cache_control_beside_a_real_breakpoint_keeps_the_real_one():
    client = client_for()
    messages = [{"role": "user", "content": [{"type": "text", "text": "a task", "cache_control": None},
                                             {"type": "text", "text": "more", "cache_control": None}]}]
    system = [{"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}]
    first = client.messages.create(model=SONNET46, max_tokens=64, system=system, messages=messages)
    second = client.messages.create(model=SONNET46, max_tokens=64, system=system, messages=messages)
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens


# -- issue 48 item 1: images by the vision page's rule, per model generation ----------------------

def _png(width: int, height: int) -> dict:
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(raw).decode()}}


def image_cost(model: str, width: int, height: int) -> int:
    client = client_for(model)
    text = {"type": "text", "text": "describe"}
    with_image = client.messages.count_tokens(model=model, messages=[
        {"role": "user", "content": [_png(width, height), text]}]).input_tokens
    return with_image - client.messages.count_tokens(model=model, messages=[{"role": "user", "content": [text]}]).input_tokens


@pytest.mark.parametrize("model, size, tokens", [
    (SONNET55, (1920, 1080), 69 * 39),  # 4.7 and later: 2576 px, 4784 tokens; 1920x1080 is not scaled
    (OPUS47, (3840, 2160), 4784),       # scaled to 2576x1449: 92 x 52 patches
    (SONNET46, (200, 200), 64),         # 8 x 8 patches, not the 54 of width x height / 750
    (SONNET46, (1920, 1080), 1560),     # the page's example: scaled to 1456x819, 52 x 30 patches
])
def test_an_image_costs_its_28_pixel_patches_after_scaling_to_the_models_limits(model, size, tokens):
    assert image_cost(model, *size) == tokens


def test_an_image_whose_size_is_unknown_costs_the_models_most():
    client = client_for(OPUS47)
    remote = {"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}}
    text = {"type": "text", "text": "describe"}
    n = client.messages.count_tokens(model=OPUS47, messages=[{"role": "user", "content": [remote, text]}]).input_tokens
    assert n - client.messages.count_tokens(model=OPUS47, messages=[{"role": "user", "content": [text]}]).input_tokens == 4784


# -- issue 48 item 2: the tool-use system prompt, per model and tool_choice -------------------------

def counted(model: str, **kw) -> int:
    return client_for(model).messages.count_tokens(model=model, messages=[{"role": "user", "content": "hi"}],
                                                   **kw).input_tokens


@pytest.mark.parametrize("model, auto, forced", [(SONNET46, 497, 589), (OPUS47, 675, 804), (OPUS5, 286, 406),
                                                 (HAIKU45, 496, 588)])
def test_tools_add_the_models_tool_use_system_prompt_by_tool_choice(model, auto, forced):
    definition = estimate_tokens(render_block(TOOL), lookup(model).tokenizer)
    bare = counted(model)
    assert counted(model, tools=[TOOL]) - bare == definition + auto
    assert counted(model, tools=[TOOL], tool_choice={"type": "none"}) - bare == definition + auto
    assert counted(model, tools=[TOOL], tool_choice={"type": "any"}) - bare == definition + forced
    assert counted(model, tools=[TOOL], tool_choice={"type": "tool", "name": "fetch"}) - bare == definition + forced
    assert counted(model, tool_choice={"type": "none"}) == bare  # no tools: none adds nothing


@pytest.mark.parametrize("model, auto", [(SONNET55, 354), ("claude-opus-5-5", 286), ("claude-haiku-5-5", 354)])
def test_a_model_the_pricing_table_does_not_list_takes_its_nearest_listed_relative(model, auto):
    """Sonnet 5.5 and Haiku 5.5 as Sonnet 5 (354), Opus 5.5 as Opus 5 (286) [UNCERTAIN in the model table]."""
    assert counted(model, tools=[TOOL]) - counted(model) == estimate_tokens(render_block(TOOL)) + auto


def test_the_tool_use_prompt_is_billed_as_input_and_in_every_cached_prefix():
    """A breakpoint on the last tool caches the definitions and the tool-use prompt; usage adds up to
    count_tokens; a tool_choice change keeps the tools cache (and reads it at the new size)."""
    client = client_for(SONNET46)
    big = {**TOOL, "description": "Fetch a URL. " * 400, "cache_control": {"type": "ephemeral"}}
    kw = dict(tools=[big], messages=[{"role": "user", "content": "hi"}])
    first = client.messages.create(model=SONNET46, max_tokens=64, **kw).usage
    assert first.cache_creation_input_tokens == estimate_tokens(render_block({**big, "cache_control": None})) + 497
    assert first.input_tokens + first.cache_creation_input_tokens == \
        client.messages.count_tokens(model=SONNET46, **kw).input_tokens
    forced = client.messages.create(model=SONNET46, max_tokens=64, tool_choice={"type": "any"}, **kw).usage
    assert forced.cache_read_input_tokens == first.cache_creation_input_tokens + 589 - 497


# -- issue 48 items 3-8: what a client is told ------------------------------------------------------

BIG_SYSTEM = [{"type": "text", "text": SYSTEM_TEXT * 4, "cache_control": {"type": "ephemeral"}}]  # over 4,096 tokens


def test_fast_mode_on_opus_46_runs_at_standard_speed_and_rates():
    """Fast-mode page: Opus 4.6 left fast mode; speed "fast" there runs at standard speed, at standard
    rates, with usage.speed "standard" (it was a 400)."""
    client = client_for("claude-opus-4-6")
    kw = dict(model="claude-opus-4-6", max_tokens=64, system=BIG_SYSTEM, messages=[{"role": "user", "content": "hi"}])
    standard = client.beta.messages.create(**kw)
    fast = client.beta.messages.create(speed="fast", **kw)
    assert fast.usage.speed == "standard"
    assert fast.usage.cache_read_input_tokens == standard.usage.cache_creation_input_tokens > 0  # one speed, one cache
    assert CallRecord.from_usage(fast.usage.model_dump(), "claude-opus-4-6").cost == \
        CallRecord.from_usage({**fast.usage.model_dump(), "speed": None}, "claude-opus-4-6").cost


def test_fast_mode_stays_a_400_where_the_model_rejects_it():
    with pytest.raises(anthropic.BadRequestError, match="speed"):
        client_for(OPUS47).beta.messages.create(model=OPUS47, max_tokens=64, speed="fast",
                                                messages=[{"role": "user", "content": "hi"}])


def test_a_speed_change_shares_no_cached_prefix_on_a_fast_model():
    """Issue 48 item 8, a choice: the caching table keeps the tools cache across a speed change, the
    fast-mode page says requests at different speeds share no cached prefixes; we follow the fast-mode
    page (the page about speed). Not a change: this holds on the code before this round too."""
    client = client_for(OPUS5)
    tools = [{**TOOL, "description": "Fetch a URL. " * 300, "cache_control": {"type": "ephemeral"}}]
    kw = dict(model=OPUS5, max_tokens=64, tools=tools, messages=[{"role": "user", "content": "hi"}],
              betas=["fast-mode-2026-02-01"])
    client.beta.messages.create(**kw)
    fast = client.beta.messages.create(speed="fast", **kw)
    assert fast.usage.speed == "fast" and fast.usage.cache_read_input_tokens == 0


def test_a_cache_prewarm_takes_adaptive_thinking_but_not_manual_thinking():
    """Caching page: max_tokens 0 is refused with stream, manual thinking, output_config.format or a
    forced tool_choice; warm "with the same thinking configuration" as the follow-up."""
    client = client_for()
    kw = dict(model=SONNET46, max_tokens=0, system=BIG_SYSTEM, messages=[{"role": "user", "content": "hi"}])
    warmed = client.messages.create(thinking={"type": "adaptive"}, **kw)
    assert warmed.usage.cache_creation_input_tokens > 0
    with pytest.raises(anthropic.BadRequestError):  # (its budget over max_tokens 0 is refused first)
        client.messages.create(thinking={"type": "enabled", "budget_tokens": 2048}, **kw)


@pytest.mark.parametrize("model, lifted", [(SONNET46, True), (HAIKU45, False), ("claude-opus-4-6", False)])
def test_the_interleaved_beta_lifts_budget_under_max_tokens_only_where_manual_thinking_interleaves(model, lifted):
    client = client_for(model)
    kw = dict(model=model, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 4096},
              messages=[{"role": "user", "content": "hi"}], betas=["interleaved-thinking-2025-05-14"])
    if lifted:
        client.beta.messages.create(**kw)
    else:
        with pytest.raises(anthropic.BadRequestError, match="budget_tokens"):
            client.beta.messages.create(**kw)


def test_a_prefill_with_a_structured_output_format_is_refused():
    """Structured outputs: "incompatible with message prefilling" (Haiku 4.5 still takes a prefill)."""
    client = client_for(HAIKU45)
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "{"}]
    client.messages.create(model=HAIKU45, max_tokens=64, messages=messages)  # a prefill alone is fine here
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}
    with pytest.raises(anthropic.BadRequestError, match="prefill"):
        client.messages.create(model=HAIKU45, max_tokens=64, messages=messages,
                               output_config={"format": {"type": "json_schema", "schema": schema}})


@pytest.mark.parametrize("model, limit", [(HAIKU45, 100), (SONNET46, 600)])
def test_images_per_request_are_limited_by_the_models_window(model, limit):
    """Vision, "General limits": 100 per request with a 200K window, 600 on the other models."""
    client = client_for(model)
    def ask(n):
        return client.messages.count_tokens(model=model, messages=[
            {"role": "user", "content": [_png(28, 28)] * n + [{"type": "text", "text": "count"}]}])
    ask(limit)
    with pytest.raises(anthropic.BadRequestError, match="too many images"):
        ask(limit + 1)


# -- issue 48 item 9: the tokenizer of 4.7 and later ------------------------------------------------

@pytest.mark.parametrize("model, factor", [(OPUS47, 1.3), (OPUS5, 1.3), ("claude-sonnet-5", 1.3), ("claude-fable-5", 1.3),
                                           (SONNET46, 1.0), (HAIKU45, 1.0), (SONNET55, 1.0)])
def test_the_same_text_counts_about_30_percent_more_on_the_models_a_page_names(model, factor):
    """Pricing and token-counting pages: Opus 4.7 and later, Sonnet 5, Fable/Mythos 5 give roughly 30%
    more tokens for the same text; a model no page names (Sonnet 5.5 here) keeps 1.0 [UNCERTAIN]."""
    text = "Compare the four pricing pages and write the differences down. " * 200
    base = client_for(SONNET46).messages.count_tokens(
        model=SONNET46, messages=[{"role": "user", "content": text}]).input_tokens
    n = client_for(model).messages.count_tokens(model=model, messages=[{"role": "user", "content": text}]).input_tokens
    assert abs(n / base - factor) < 0.01


def test_the_answer_is_counted_in_the_same_tokenizer():
    """Output tokens of the same answer text are 1.3x on Opus 4.7 what they are on Sonnet 4.6."""
    from minimal_runtime.emulator import Turn
    answer = "The Pro plan costs $29 per user per month and includes SSO. " * 50
    out = {m: Emulator(model=m, clock=FakeClock(), policy=lambda r: Turn(content=[{"type": "text", "text": answer}]))
           .client(max_retries=0).messages.create(model=m, max_tokens=8000, messages=[{"role": "user", "content": "hi"}])
           .usage.output_tokens for m in (SONNET46, OPUS47)}
    assert abs(out[OPUS47] / out[SONNET46] - 1.3) < 0.01
