"""Conformance: the accounting and validation rules of issue 37 and issue 35 item 2, one test (or
a few) per rule, each naming its source. Page keys:

[TH]  https://platform.claude.com/docs/en/build-with-claude/thinking (2026-09-02 copy)
[TT]  .../build-with-claude/thinking-troubleshooting (2026-09-02 copy)
[TSC] .../build-with-claude/thinking-steering-and-cost#pricing
[EFF] .../build-with-claude/effort (2026-09-02 copy)
[DR]  .../build-with-claude/data-residency
[FM]  .../build-with-claude/fast-mode
[CACHING] .../build-with-claude/prompt-caching ("What invalidates the cache")
[MCSM] .../build-with-claude/mid-conversation-system-messages
[SO]  .../build-with-claude/structured-outputs
§N    ../shared/API-2026.md section N, which quotes the live errors with their public sources.
Live error texts quoted in public GitHub threads are named by repository and number.
"""

from __future__ import annotations

import base64
import json

import anthropic
import pytest

from minimal_runtime.emulator import Emulator, Turn
from minimal_runtime.provider.cost import CallRecord

from .helpers import SYSTEM_TEXT, TOOLS, FakeClock, breakpoint_on, conversation, system, with_breakpoint_on_last

SONNET55, SONNET46, HAIKU45, OPUS55, OPUS5 = ("claude-sonnet-5-5", "claude-sonnet-4-6", "claude-haiku-4-5",
                                             "claude-opus-5-5", "claude-opus-5")
REASONING = ("Weighing the pricing pages against each other. " * 213)[:10_008]  # 2,502 tokens at 4 characters
REASONING_TOKENS = 2502
SUMMARIZED = {"type": "adaptive", "display": "summarized"}
OLD, NEW = "2023-06-01", "2026-10-21"


def thinker(text: str = REASONING, **kw):
    return lambda request: Turn(content=[{"type": "text", "text": "ok"}], thinking=text, **kw)


def client_for(model=SONNET55, policy=None, **kw):
    return Emulator(model=model, policy=policy or thinker(), clock=FakeClock(), **kw).client(max_retries=0)


def ask(client, messages=None, model=SONNET55, betas=(), **kw):
    kw.setdefault("max_tokens", 4096)
    return client.beta.messages.create(model=model, messages=messages or [{"role": "user", "content": "hi"}],
                                       betas=list(betas), **kw)


def refused(client, **kw) -> str:
    with pytest.raises(anthropic.BadRequestError) as e:
        ask(client, **kw)
    return e.value.body["error"]["message"]


def post(emu, body: dict, version=NEW, path="/v1/messages", betas=()) -> tuple[int, dict]:
    headers = {"content-type": "application/json", "anthropic-version": version, "x-api-key": "k"}
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    status, _, payload = emu.handle("POST", path, json.dumps(body).encode(), headers)
    return status, json.loads(payload)


def hello(model=SONNET55, **fields) -> dict:
    return {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}], **fields}


def counted(client, messages, model=SONNET55, **kw) -> int:
    return client.beta.messages.count_tokens(model=model, messages=messages, **kw).input_tokens


def replay(answer, next_text="Next question.") -> list[dict]:
    return [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [b.to_dict() for b in answer.content]},
            {"role": "user", "content": next_text}]


# -- 37.1 and 35.2: thinking billed by its reasoning; the display default ---------------------------

def test_a_thinking_block_sent_back_is_billed_as_its_reasoning_whatever_it_showed():
    """37.1 [TH "Controlling thinking display"]: with display "omitted" "the signature field still
    carries the encrypted full thinking"; "the server decrypts the signature to reconstruct the
    original thinking"; prior-turn thinking kept in context is "billed as input tokens" and "what
    you're billed for is the same regardless of the display setting" [TSC]. 2,502 tokens of
    reasoning cost 2,502 input tokens sent back, omitted or summarized (issue 37: 73 and 2,573)."""
    client = client_for()
    for thinking in (None, SUMMARIZED):
        extra = {"thinking": thinking} if thinking else {}
        answer = ask(client, **extra)
        messages = replay(answer)
        without = [messages[0], {"role": "assistant", "content": [b.to_dict() for b in answer.content[1:]]}, messages[2]]
        assert counted(client, messages, **extra) - counted(client, without, **extra) == REASONING_TOKENS


def test_the_display_default_is_omitted_on_5x_and_opus_47_and_summarized_on_46():
    """35.2 [TH "Controlling thinking display"]: "summarized" is the default "on Claude Opus 4.6,
    Claude Sonnet 4.6, and earlier models"; "omitted" ("an empty thinking field") on Opus 4.8 and
    4.7 and the 5.x models (§13, §7 for 5.5). The signature "is identical whichever display value
    you set"."""
    default = ask(client_for()).content[0]
    assert default.type == "thinking" and default.thinking == "" and default.signature
    shown = ask(client_for(), thinking=SUMMARIZED).content[0]
    assert shown.thinking == REASONING and shown.signature == default.signature
    opus47 = ask(client_for("claude-opus-4-7"), model="claude-opus-4-7", thinking={"type": "adaptive"}).content[0]
    assert opus47.thinking == ""
    sonnet46 = ask(client_for(SONNET46), model=SONNET46, thinking={"type": "adaptive"}).content[0]
    assert sonnet46.thinking == REASONING


def test_text_put_into_an_omitted_block_is_ignored_and_a_changed_summary_is_refused():
    """37.1 [TH]: "Any text you place in the thinking field of a round-tripped omitted block is
    ignored"; "Modified thinking blocks are rejected with a 400 error" [TH; TT: no reason clause]."""
    client = client_for()
    omitted = replay(ask(client))
    filled = [omitted[0], {"role": "assistant", "content": [{**omitted[1]["content"][0], "thinking": "my notes"},
                                                            *omitted[1]["content"][1:]]}, omitted[2]]
    assert counted(client, filled) == counted(client, omitted)
    assert ask(client, filled).content[0].type == "thinking"
    client = client_for()  # a fresh emulator: the same block was handed out empty above, and its text is ignored
    shown = replay(ask(client, thinking=SUMMARIZED))
    shown[1]["content"][0]["thinking"] = "edited"
    assert refused(client, messages=shown, thinking=SUMMARIZED) == \
        "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_a_chapter_style_run_grows_by_its_reasoning_on_5x():
    """37.1 with 35.2: on 5.x the blocks come back empty by default, and preserved thinking still
    grows the prompt by the reasoning: ten turns of 2,502 tokens of thinking add 25,020 tokens."""
    client = client_for()
    messages = [{"role": "user", "content": "Question 0"}]
    first = ask(client, messages)
    for k in range(10):
        answer = ask(client, messages)
        messages += [{"role": "assistant", "content": [b.to_dict() for b in answer.content]},
                     {"role": "user", "content": f"Question {k + 1}"}]
    assert all(m["content"][0]["thinking"] == "" for m in messages if m["role"] == "assistant")
    assert counted(client, messages) - counted(client, [messages[0]]) >= 10 * REASONING_TOKENS
    assert first.usage.output_tokens >= REASONING_TOKENS


# -- 37.2: stop sequences ------------------------------------------------------------------------

def test_a_stop_sequence_ends_the_answer_and_is_named():
    """37.2 [API reference, stop_sequences]: when the model generates one, "the response stop_reason
    value will be "stop_sequence" and the response stop_sequence value will contain the matched stop
    sequence"; the sequence and what follows are not returned, streamed or not."""
    policy = lambda request: Turn(content=[{"type": "text", "text": "Step one. STOP Step two."},  # noqa: E731
                                           {"type": "tool_use", "name": "fetch", "input": {"url": "x"}}])
    client = client_for(SONNET46, policy)
    answer = ask(client, model=SONNET46, stop_sequences=["END", "STOP"], tools=TOOLS)
    assert [b.type for b in answer.content] == ["text"] and answer.content[0].text == "Step one. "
    assert (answer.stop_reason, answer.stop_sequence) == ("stop_sequence", "STOP")
    with client.beta.messages.stream(model=SONNET46, max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                                      stop_sequences=["STOP"], tools=TOOLS) as stream:
        streamed = stream.get_final_message()
    assert streamed.content[0].text == "Step one. " and streamed.stop_sequence == "STOP"
    plain = ask(client, model=SONNET46, stop_sequences=["NOWHERE"], tools=TOOLS)
    assert plain.stop_reason == "tool_use" and plain.stop_sequence is None


# -- 37.3: a parameter set to its default is the same cache key -------------------------------------

def cached_pair(model, first: dict, second: dict, betas=()):
    emu = Emulator(model=model, policy=thinker(""), clock=FakeClock())
    client = emu.client(max_retries=0)
    messages = with_breakpoint_on_last(conversation(3))
    ask(client, messages, model=model, system=system(), betas=betas, **first)
    return ask(client, messages, model=model, system=system(), betas=betas, **second).usage


def test_setting_thinking_or_effort_to_its_default_keeps_the_cache():
    """37.3 [TH "Thinking and prompt caching"]: "setting a parameter explicitly to its default value
    is equivalent to omitting it"; [TSC] "Setting effort explicitly to the model's default is
    equivalent to omitting it and does not break the cache" (Sonnet 4.6 defaults to high, Opus 5.5
    to medium, §7); a different effort still misses."""
    same = cached_pair(SONNET46, {}, {"output_config": {"effort": "high"}, "thinking": {"type": "disabled"}})
    assert same.cache_creation_input_tokens == 0 and same.cache_read_input_tokens > 1500
    same = cached_pair(OPUS55, {}, {"output_config": {"effort": "medium"}, "thinking": {"type": "adaptive"}})
    assert same.cache_creation_input_tokens == 0
    other = cached_pair(SONNET46, {}, {"output_config": {"effort": "low"}})
    assert other.cache_creation_input_tokens > 0


def test_display_and_block_binding_are_not_part_of_the_cache_key():
    """37.3: the signature "is identical whichever display value you set" and "switching display
    values between turns is supported" [TH]; block_binding restarts the cache only where drop_block
    drops a block ("The prompt cache restarts at the edit", §1.4)."""
    binding = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    usage = cached_pair(SONNET55, {}, {"thinking": binding}, betas=["thinking-binding-controls-2026-08-01"])
    assert usage.cache_creation_input_tokens == 0
    usage = cached_pair(SONNET55, {}, {"thinking": SUMMARIZED})
    assert usage.cache_creation_input_tokens == 0


# -- 37.4: thinking_tokens -----------------------------------------------------------------------

def test_usage_reports_the_reasoning_share_of_output():
    """37.4 [TSC]: "read usage.output_tokens_details.thinking_tokens"; it "reflects the raw reasoning
    the model generated (not the summarized text)" and "is always less than or equal to
    output_tokens"; "when streaming, this breakdown appears only on the final message_delta event"."""
    client = client_for()
    usage = ask(client).usage
    assert usage.output_tokens_details.thinking_tokens == REASONING_TOKENS <= usage.output_tokens
    events = []
    with client.beta.messages.stream(model=SONNET55, max_tokens=4096, messages=[{"role": "user", "content": "hi"}]) as s:
        events = list(s)
    start = next(e for e in events if e.type == "message_start")
    delta = next(e for e in events if e.type == "message_delta")
    assert start.message.usage.output_tokens_details is None
    assert delta.usage.output_tokens_details.thinking_tokens == REASONING_TOKENS
    plain = ask(client_for(SONNET46), model=SONNET46).usage
    assert plain.output_tokens_details is None


# -- 37.5: inference_geo ---------------------------------------------------------------------------

def test_us_inference_is_priced_at_1_1x_and_reported():
    """37.5 [DR]: inference_geo "us" is "priced at 1.1x the standard rate across all token pricing
    categories" on Opus 4.6 and newer; the response usage "includes an inference_geo field"."""
    client = client_for(SONNET46, thinker(""))
    us = ask(client, model=SONNET46, system=system(), inference_geo="us").usage
    global_ = ask(client, model=SONNET46, system=[{"type": "text", "text": SYSTEM_TEXT + " "}]).usage
    assert us.inference_geo == "us" and global_.inference_geo == "global"
    record = CallRecord.from_usage(us, SONNET46)
    plain = CallRecord.from_usage({**us.model_dump(), "inference_geo": "global"}, SONNET46)
    assert record.cost == pytest.approx(plain.cost * 1.1)


def test_an_unknown_geo_and_geo_on_an_older_model_are_refused():
    """37.5 [DR]: "us" and "global" are the values; "Requests with inference_geo on legacy models
    return a 400 error" (models before Opus 4.6)."""
    assert "inference_geo" in refused(client_for(SONNET46), model=SONNET46, inference_geo="mars")
    assert "inference_geo" in refused(client_for(HAIKU45), model=HAIKU45, inference_geo="us")


# -- 37.6: threshold compaction writes once ----------------------------------------------------------

def test_threshold_compaction_bills_one_cache_write_not_two():
    """37.6 [INFERRED from the compaction-threshold page's separate iterations]: the summary step has
    finished before the message step begins, so the system prompt both read is written once; the
    message step reads it (issue 37: both iterations showed a 1,006-token write)."""
    client = client_for(SONNET55, thinker(""))
    history = conversation(120, observation_chars=2000)
    edits = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}]}
    answer = ask(client, history, system=system(), betas=["compact-2026-01-12"], context_management=edits)
    summary, message = answer.usage.iterations
    assert summary.cache_creation_input_tokens > 0
    assert message.cache_creation_input_tokens == 0 and message.cache_read_input_tokens > 0


# -- 37.7: citations when streaming ------------------------------------------------------------------

def test_streaming_keeps_citations():
    """37.7 [streaming; SDK BetaCitationsDelta]: a text block's citations arrive as citations_delta
    events, which the SDK's accumulator appends; the final message equals the non-streamed one."""
    cite = {"type": "char_location", "cited_text": "four tiers", "document_index": 0, "document_title": "Acme",
            "start_char_index": 0, "end_char_index": 10}
    policy = lambda request: Turn(content=[{"type": "text", "text": "Acme has four tiers.", "citations": [cite]}])  # noqa: E731
    client = client_for(SONNET46, policy)
    with client.beta.messages.stream(model=SONNET46, max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as s:
        streamed = s.get_final_message()
    assert [c.cited_text for c in streamed.content[0].citations] == ["four tiers"]


# -- 37.8 and 37.9: tool definitions in messages and the cache ------------------------------------

INLINE = "inline-tools-2026-09-15"


def define(tool: dict, marker: bool = False) -> dict:
    definition = breakpoint_on(tool) if marker else tool
    return {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}]}


def test_a_marker_inside_an_inline_definition_is_a_breakpoint():
    """37.8 [MCSM, as API-2026 §3 and issue 37 quote it]: cache_control "goes on the block or in the
    definition, not both, and counts toward the breakpoint limit". Alone, it writes the prefix up to
    the block; with four block markers it is a fifth."""
    client = client_for(SONNET55, thinker(""))
    messages = [{"role": "user", "content": "Compare the pages. " * 400}, define(TOOLS[1], marker=True)]
    usage = ask(client, messages, tools=[TOOLS[0]], betas=[INLINE]).usage
    assert usage.cache_creation_input_tokens > 1000
    four = [{"role": "user", "content": [breakpoint_on({"type": "text", "text": f"part {k} " * 50}) for k in range(4)]},
            define(TOOLS[1], marker=True)]
    assert "A maximum of 4 blocks with cache_control" in refused(client, messages=four, tools=[TOOLS[0]], betas=[INLINE])


def test_every_tool_deferred_the_first_inline_definition_misses_everything():
    """37.9 [MCSM]: "Keep at least one non-deferred tool in tools. Otherwise the first by-value
    definition changes the start of the rendered prompt and costs one full cache miss" (issue 37:
    the emulator read 2,006 tokens). With one tool not deferred the system prompt is still read."""
    def run(tools):
        client = client_for(SONNET55, thinker(""))
        first = [{"role": "user", "content": "Compare the pages."}]
        ask(client, first, tools=tools, system=system(), betas=[INLINE])
        return ask(client, [*first, define(TOOLS[1])], tools=tools, system=system(), betas=[INLINE]).usage
    deferred = [{**TOOLS[0], "defer_loading": True}]
    assert run(deferred).cache_read_input_tokens == 0
    assert run([TOOLS[0]]).cache_read_input_tokens > 1000


# -- 37.10: clear_thinking counts assistant turns, not messages ---------------------------------------

def test_clear_thinking_counts_a_tool_loop_as_one_turn():
    """37.10 [TH "Thinking with tool use"]: "A tool-use loop is one assistant turn"; clear_thinking
    keeps the last ``keep`` thinking turns: one user turn with three loop messages and keep 1 clears
    nothing (issue 37: 2 cleared)."""
    calls = iter(range(10))
    policy = lambda request: Turn(content=[{"type": "tool_use", "name": "fetch", "input": {"url": f"u{next(calls)}"}}],  # noqa: E731
                                  thinking="Which page next?")
    client = client_for(SONNET46, policy)
    messages = [{"role": "user", "content": "Compare the pages."}]
    for _ in range(3):
        answer = ask(client, messages, model=SONNET46, tools=TOOLS, thinking=SUMMARIZED)
        use = answer.content[-1]
        messages += [{"role": "assistant", "content": [b.to_dict() for b in answer.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "page"}]}]
    edit = {"edits": [{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}]}
    answer = ask(client, messages, model=SONNET46, tools=TOOLS, thinking=SUMMARIZED,
                 betas=["context-management-2025-06-27"], context_management=edit)
    assert answer.context_management.applied_edits == []


# -- 37.11: redacted thinking round-trips --------------------------------------------------------------

def test_a_redacted_thinking_block_can_be_sent_back():
    """37.11 [TH "Redacted thinking blocks"]: the API "may return redacted_thinking blocks" whose data
    field is "opaque and encrypted"; "pass redacted_thinking blocks back to the API unchanged"."""
    client = client_for(policy=thinker(redacted=True))
    answer = ask(client)
    assert answer.content[0].type == "redacted_thinking" and answer.content[0].data
    again = ask(client, replay(answer))
    assert again.content[0].type == "redacted_thinking"
    tampered = replay(answer)
    tampered[1]["content"][0]["data"] = tampered[1]["content"][0]["data"][:-2] + "xx"
    assert "Invalid `signature`" in refused(client, messages=tampered)


# -- 37.12: budget_tokens below max_tokens ---------------------------------------------------------

def test_budget_tokens_must_be_below_max_tokens_unless_interleaved():
    """37.12 [TH; extended-thinking "max tokens and context window size"]: budget_tokens must be less
    than max_tokens, except with interleaved thinking; the live words are quoted in
    github.com/router-for-me/CLIProxyAPI/issues/413."""
    client = client_for(SONNET46)
    thinking = {"type": "enabled", "budget_tokens": 4096}
    assert refused(client, model=SONNET46, max_tokens=4096, thinking=thinking).startswith(
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation")
    assert ask(client, model=SONNET46, max_tokens=4096, thinking=thinking,
               betas=["interleaved-thinking-2025-05-14"]).stop_reason


# -- 37.13: fast mode ------------------------------------------------------------------------------

def test_fast_mode_models_beta_price_and_separate_cache():
    """37.13 [FM]: speed "fast" on the models the page lists (Opus 5.5, Opus 5, Opus 4.8; a 400
    elsewhere); Opus 5 and 4.8 need the fast-mode-2026-02-01 beta; usage.speed says which speed was
    used; priced at the model's multiplier ($10/$50 on Opus 5); "requests at different speeds do
    not share cached prefixes"."""
    assert "fast" in refused(client_for(SONNET46), model=SONNET46, speed="fast")
    client = client_for(OPUS5, thinker(""))
    assert "fast-mode-2026-02-01" in refused(client, model=OPUS5, speed="fast")
    fast = ask(client, model=OPUS5, system=system(), speed="fast", betas=["fast-mode-2026-02-01"]).usage
    assert fast.speed == "fast" and fast.cache_creation_input_tokens > 0
    standard = ask(client, model=OPUS5, system=system()).usage
    assert standard.cache_read_input_tokens == 0
    # [CD] the cache-miss reason for a changed speed is model_changed ("model or speed differs")
    first = ask(client, model=OPUS5, system=system(), diagnostics={"previous_message_id": None})
    again = ask(client, model=OPUS5, system=system(), speed="fast", betas=["fast-mode-2026-02-01"],
                diagnostics={"previous_message_id": first.id})
    assert again.diagnostics.cache_miss_reason.type == "model_changed"
    record = CallRecord.from_usage(fast, OPUS5)
    assert record.cost == pytest.approx(CallRecord.from_usage({**fast.model_dump(), "speed": None}, OPUS5).cost * 2)


# -- 37.14: the max_tokens 0 pre-warm ------------------------------------------------------------------

def test_a_max_tokens_zero_prewarm_generates_nothing_and_takes_nothing_that_shapes_output():
    """37.14 (issue 37, after the prompt-caching page's pre-warm): max_tokens 0 returns empty content
    even on a model that always thinks, and is refused with a format or a forced tool_choice (the words
    are ours); adaptive thinking is accepted, as the follow-up's configuration (issue 48 item 4)."""
    warm = ask(client_for(OPUS55), model=OPUS55, max_tokens=0, system=system())
    assert warm.content == [] and warm.usage.output_tokens == 0 and warm.usage.cache_creation_input_tokens > 0
    client = client_for("claude-haiku-5-5")
    assert ask(client, model="claude-haiku-5-5", max_tokens=0, thinking={"type": "adaptive"}).content == []
    fmt = {"format": {"type": "json_schema", "schema": {"type": "object", "additionalProperties": False}}}
    assert "format" in refused(client, model="claude-haiku-5-5", max_tokens=0, output_config=fmt)
    assert "tool_choice" in refused(client, model="claude-haiku-5-5", max_tokens=0, tools=TOOLS,
                                    tool_choice={"type": "any"})


# -- 37.15: effort where the model lists refuse it -----------------------------------------------------

def test_effort_levels_follow_each_models_list():
    """37.15 [EFF]: xhigh on Fable/Mythos 5.1 and 5, Opus 5, 4.8, 4.7 and Sonnet 5 (not Sonnet 4.6);
    max not on Opus 4.5; Haiku 4.5 has no effort ("This model does not support the effort
    parameter.", live, github.com/oratis/LISA/pull/218); [TT] Opus 5 refuses thinking disabled at
    xhigh or max, in the TT words."""
    assert "xhigh" in refused(client_for(SONNET46), model=SONNET46, output_config={"effort": "xhigh"})
    assert refused(client_for(HAIKU45), model=HAIKU45, output_config={"effort": "low"}) == \
        "This model does not support the effort parameter."
    assert "max" in refused(client_for("claude-opus-4-5"), model="claude-opus-4-5", output_config={"effort": "max"})
    assert refused(client_for(OPUS5), model=OPUS5, thinking={"type": "disabled"}, output_config={"effort": "xhigh"}) \
        .startswith('"thinking.type.disabled" is not supported for this model.')
    assert ask(client_for(OPUS5), model=OPUS5, thinking={"type": "disabled"}, output_config={"effort": "high"})


# -- 37.16: structured outputs' unsupported features -----------------------------------------------

@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "additionalProperties": False},
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "array", "minItems": 2}}, "additionalProperties": False},
    {"type": "object", "properties": {}, "additionalProperties": True},
    {"type": "object", "properties": {"next": {"$ref": "#"}}, "additionalProperties": False},
])
def test_unsupported_schema_features_are_a_400(schema):
    """37.16 [SO]: the SDKs "remove unsupported constraints (for example, minimum, maximum,
    minLength, maxLength)" and "add additionalProperties: false to all objects"; "minItems (0 or 1
    only)"; recursive schemas (issue 37). The API refuses them unsent-through-an-SDK."""
    client = client_for(SONNET46, thinker(""))
    assert "output_config.format.schema" in refused(client, model=SONNET46, output_config={
        "format": {"type": "json_schema", "schema": schema}})


def test_citations_with_a_format_and_too_many_strict_tools_are_a_400():
    """37.16 [SO]: citations are not compatible with structured outputs; at most 20 strict tools."""
    client = client_for(SONNET46, thinker(""))
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Acme: 4 tiers."},
                "citations": {"enabled": True}}
    fmt = {"format": {"type": "json_schema", "schema": {"type": "object", "additionalProperties": False}}}
    assert "citations" in refused(client, model=SONNET46, output_config=fmt, messages=[
        {"role": "user", "content": [document, {"type": "text", "text": "How many tiers?"}]}])
    strict = [{**TOOLS[0], "name": f"fetch{k}", "strict": True} for k in range(21)]
    assert "strict" in refused(client, model=SONNET46, tools=strict)


# -- 37.17: thinking combinations ----------------------------------------------------------------------

def test_sampling_with_thinking_on_46_under_2023_06_01():
    """37.17 [TH "Sampling parameters"]: on older models "temperature and top_k are incompatible with
    thinking, and top_p is allowed at values between 0.95 and 1"; the live words for adaptive mode
    are quoted in github.com/dotCipher/opencode-claude-bridge/pull/1."""
    emu = Emulator(model=SONNET46, policy=thinker(""))
    status, body = post(emu, hello(SONNET46, temperature=0.5, thinking={"type": "adaptive"}), OLD)
    assert status == 400 and body["error"]["message"] == \
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode"
    assert post(emu, hello(SONNET46, top_p=0.9, thinking={"type": "adaptive"}), OLD)[0] == 400
    assert post(emu, hello(SONNET46, top_p=0.97, thinking={"type": "adaptive"}), OLD)[0] == 200
    assert post(emu, hello(SONNET46, temperature=0.5), OLD)[0] == 200


def test_display_with_thinking_disabled_and_prefill_with_thinking_are_refused():
    """37.17 [TH]: "display is invalid with thinking.type: disabled"; "You can't prefill the assistant
    response while thinking is on" (Haiku 4.5 takes prefill otherwise); the live words are quoted in
    github.com/Aider-AI/aider/issues/3820."""
    assert "display" in refused(client_for(SONNET46), model=SONNET46, thinking={"type": "disabled", "display": "omitted"})
    client = client_for(HAIKU45, thinker(""))
    prefill = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}]
    assert ask(client, prefill, model=HAIKU45).stop_reason
    message = refused(client, messages=prefill, model=HAIKU45, thinking={"type": "enabled", "budget_tokens": 1024})
    assert message.startswith("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`.")


def test_thinking_switched_on_mid_tool_turn_is_silently_off():
    """37.17 [TH "Thinking with tool use"]: "If you toggle thinking mid-turn (for example, between
    sending a tool call and returning its result), the API doesn't error. Instead, it silently
    disables thinking for that request"; the next turn may think."""
    client = client_for(SONNET46)
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {"url": "x"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "page"}]}]
    mid = ask(client, messages, model=SONNET46, tools=TOOLS, thinking=SUMMARIZED)
    assert [b.type for b in mid.content] == ["text"]
    after = messages + [{"role": "assistant", "content": "done"}, {"role": "user", "content": "And now?"}]
    assert ask(client, after, model=SONNET46, tools=TOOLS, thinking=SUMMARIZED).content[0].type == "thinking"


# -- 37.18: the context window ends generation -----------------------------------------------------------

def test_generation_that_reaches_the_window_stops_with_its_own_reason():
    """37.18 [TH "Thinking and the context window"]: "On Claude 4.5 models and newer, if input tokens
    plus max_tokens exceeds the context window size, the API accepts the request. If generation then
    reaches the context window limit, it stops with stop_reason: model_context_window_exceeded"."""
    policy = lambda request: Turn(content=[{"type": "text", "text": "word " * 2000}])  # noqa: E731
    client = client_for(HAIKU45, policy)
    messages = [{"role": "user", "content": "x" * (199_900 * 4 - 40)}]
    prompt = counted(client, messages, model=HAIKU45)
    answer = ask(client, messages, model=HAIKU45, max_tokens=2000)
    assert answer.stop_reason == "model_context_window_exceeded"
    assert answer.usage.output_tokens == 200_000 - prompt


# -- 37.19: citations on or off changes the system prompt ------------------------------------------------

def test_turning_citations_on_misses_the_system_cache_and_keeps_tools():
    """37.19 [CACHING "What invalidates the cache"]: "Citations toggle: ✓ tools, ✘ system, ✘ messages:
    Enabling/disabling citations modifies the system prompt"."""
    client = client_for(SONNET46, thinker(""))
    tools = [breakpoint_on({**TOOLS[0], "description": "Fetch a URL and return its text. " * 200})]

    def ask_with(enabled: bool):
        document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Acme: 4 tiers."},
                    "citations": {"enabled": enabled}}
        return ask(client, [{"role": "user", "content": [document, {"type": "text", "text": "How many tiers?"}]}],
                   model=SONNET46, tools=tools, system=system()).usage
    ask_with(False)
    usage = ask_with(True)
    tool_tokens = counted(client, [{"role": "user", "content": "x"}], model=SONNET46, tools=tools) - \
        counted(client, [{"role": "user", "content": "x"}], model=SONNET46)
    assert 0 < usage.cache_read_input_tokens <= tool_tokens + 10 and usage.cache_creation_input_tokens > 1000


# -- 37.20: shapes and words ---------------------------------------------------------------------------

def test_message_and_stream_shapes():
    """37.20 [API reference, Message]: stop_details is null when there is nothing to report; [TH
    "Streaming thinking"]: the thinking block opens with "signature": "" and, with display omitted,
    "no thinking_delta events are emitted"."""
    emu = Emulator(model=SONNET55, policy=thinker())
    status, body = post(emu, hello())
    assert status == 200 and "stop_details" in body and body["stop_details"] is None
    status, headers, payload = emu.handle("POST", "/v1/messages", json.dumps(hello(stream=True, max_tokens=4096)).encode(),
                                          {"content-type": "application/json", "anthropic-version": NEW, "x-api-key": "k"})
    events = [json.loads(line[6:]) for line in payload.decode().splitlines() if line.startswith("data: ")]
    first = next(e for e in events if e["type"] == "content_block_start")
    assert first["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert not [e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "thinking_delta"]


def test_the_words_of_prefill_count_tokens_and_service_tier_refusals():
    """37.20: the prefill 400 carries no model id (§7, quoted from GitHub issues); count_tokens takes
    no max_tokens ("Extra inputs are not permitted", github.com/Wei-Shaw/sub2api/pull/4913);
    service_tier is "auto" or "standard_only" [SDK message_create_params.py]."""
    emu = Emulator(model=SONNET55, policy=thinker(""))
    prefill = hello(messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}])
    assert post(emu, prefill)[1]["error"]["message"] == \
        "This model does not support assistant message prefill. The conversation must end with a user message."
    counting = post(emu, hello(), path="/v1/messages/count_tokens")
    assert counting[0] == 400 and counting[1]["error"]["message"] == "max_tokens: Extra inputs are not permitted"
    assert post(emu, hello(service_tier="gold"))[0] == 400
    assert post(emu, hello(service_tier="auto"))[0] == 200


# -- 35.2: the validation clients hit ------------------------------------------------------------------

@pytest.mark.parametrize("model", [HAIKU45, "claude-sonnet-4-5", "claude-opus-4-5"])
def test_adaptive_thinking_is_refused_on_the_extended_only_models(model):
    """35.2 [TT]: Opus 4.5, Haiku 4.5 and Sonnet 4.5 reject "adaptive"; the words, verbatim (§13)."""
    assert refused(client_for(model), model=model, thinking={"type": "adaptive"}) == \
        "adaptive thinking is not supported on this model"


def test_manual_thinking_with_a_forced_tool_choice_is_refused_on_4x():
    """35.2 [TH "Thinking with tool use"; TD]: manual thinking "only supports tool_choice auto or
    none"; live words (§13, probed on Haiku 4.5 in github.com/workglow-dev/libs/pull/746). Adaptive
    thinking "supports forced tool use"."""
    client = client_for(SONNET46, thinker(""))
    thinking = {"type": "enabled", "budget_tokens": 1024}
    for choice in ({"type": "any"}, {"type": "tool", "name": "fetch"}):
        assert refused(client, model=SONNET46, tools=TOOLS, tool_choice=choice, thinking=thinking) == \
            "Thinking may not be enabled when tool_choice forces tool use."
    assert ask(client, model=SONNET46, tools=TOOLS, tool_choice={"type": "any"}, thinking={"type": "adaptive"})


def test_thinking_type_refusals_use_the_documented_words():
    """35.2 [TT]: "thinking.type.enabled" on 4.7+ and 5.x, "thinking.type.disabled" on the always-on
    models, verbatim (§13)."""
    assert refused(client_for("claude-opus-4-7"), model="claude-opus-4-7",
                   thinking={"type": "enabled", "budget_tokens": 2048}) == (
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
        '"output_config.effort" to control thinking behavior.')
    assert refused(client_for("claude-fable-5-1"), model="claude-fable-5-1", thinking={"type": "disabled"}).startswith(
        '"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode')


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-opus-4-8", SONNET55, OPUS55])
def test_sampling_parameters_are_deprecated_on_47_and_later_under_2023_06_01(model):
    """35.2 [MIG, TH "Sampling parameters"; §13 live probes]: temperature other than 1, top_p at any
    value and top_k are a 400 on Opus 4.7 and later; temperature 1.0 passes; the words verbatim
    ("`temperature` is deprecated for this model.")."""
    emu = Emulator(model=model, policy=thinker(""))
    for field, value in (("temperature", 0.5), ("top_p", 1.0), ("top_k", 5)):
        status, body = post(emu, hello(model, **{field: value}), OLD)
        assert status == 400 and body["error"]["message"] == f"`{field}` is deprecated for this model."
    assert post(emu, hello(model, temperature=1.0), OLD)[0] == 200
    assert post(emu, hello(SONNET46, temperature=0.5), OLD)[0] == 200


def png_bytes() -> bytes:
    import struct
    import zlib
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)
    return raw + struct.pack(">I", zlib.crc32(raw[12:29]))


@pytest.mark.parametrize("data, media_type, expected", [
    ("", "image/png", "messages.0.content.0.image.source.base64: image cannot be empty"),
    ("not base64!!", "image/png", "Could not process image"),
    (base64.b64encode(b"plain text, not an image").decode(), "image/png", "Could not process image"),
    (base64.b64encode(png_bytes()).decode(), "image/jpeg", "messages.0.content.0.image.source.base64: The image was "
     "specified using the image/jpeg media type, but the image appears to be a image/png image"),
])
def test_unreadable_images_are_refused_in_the_live_words(data, media_type, expected):
    """35.2 (§13, quoting claude-code issues #12750, #9007, #8647 and 2026 captures): empty data, a
    payload that is not an image, and bytes of another type than the declared one."""
    image = {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    messages = [{"role": "user", "content": [image, {"type": "text", "text": "What is this?"}]}]
    assert refused(client_for(SONNET46, thinker("")), model=SONNET46, messages=messages) == expected
