"""What today's clients send, accepted where the real API accepts it and refused where it refuses it
(issue 23). Each test names its source; each fails on the emulator before the fix.

[EPM]  https://platform.claude.com/docs/en/build-with-claude/effort-per-message
[PTC]  github.com/router-for-me/CLIProxyAPI pull 5563 and issue 5738: live probes of
       ``per-turn-control-2026-07-01`` against api.anthropic.com
[VER]  the API versioning page (platform.claude.com/docs/en/api/versioning) and the write-ups that
       agree with it (API-2026.md section 10)
"""

from __future__ import annotations

import json

import anthropic
import httpx2
import pytest

from minimal_runtime.emulator import Emulator, Turn

CURRENT = ["claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5", "claude-fable-5-1"]
NEW, OLD = "2026-10-21", "2023-06-01"


def post(emu: Emulator, body: dict, *, version: str | None = NEW, betas: str = "", path: str = "/v1/messages",
         auth: dict | None = None) -> tuple[int, dict]:
    """One raw request, as a client that is not this SDK sends it."""
    headers = {"content-type": "application/json", **({"x-api-key": "k"} if auth is None else auth)}
    if version is not None:
        headers["anthropic-version"] = version
    if betas:
        headers["anthropic-beta"] = betas
    status, _, payload = emu.handle("POST", path, json.dumps(body).encode(), headers)
    return status, json.loads(payload)


def first_request(model: str) -> dict:
    """The shape of Claude Code's first request: a user turn, then an effort-only system entry."""
    return {"model": model, "max_tokens": 256, "thinking": {"type": "adaptive"},
            "output_config": {"effort": "medium"},
            "messages": [{"role": "user", "content": "list the files"},
                         {"role": "system", "content": [], "output_config": {"effort": "medium"}}]}


# -- item 1: per-turn-control-2026-07-01 ------------------------------------------------------------

@pytest.mark.parametrize("model", CURRENT)
def test_claude_codes_per_turn_control_beta_admits_per_message_output_config(model):
    """[PTC]: with the beta, 200; the same body without it, 400 `messages.1.output_config: Extra inputs`."""
    emu = Emulator(model=model)
    status, body = post(emu, first_request(model), betas="claude-code-20250219,per-turn-control-2026-07-01")
    assert status == 200, body
    status, body = post(emu, first_request(model), betas="claude-code-20250219")
    assert status == 400 and body["error"]["message"] == "messages.1.output_config: Extra inputs are not permitted"


def test_per_message_output_config_takes_effort_only():
    """[EPM] and the SDK's BetaSystemMessageOutputConfigParam: effort only, format stays top-level."""
    emu = Emulator(model="claude-sonnet-5-5")
    request = first_request("claude-sonnet-5-5")
    for config, field in (({"effort": "huge"}, "effort"), ({"effort": "low", "task_budget": {}}, "task_budget")):
        request["messages"][1]["output_config"] = config
        status, body = post(emu, request, betas="per-turn-control-2026-07-01")
        assert status == 400 and body["error"]["message"].startswith(f"messages.1.output_config.{field}"), body


# -- item 2: the two API versions, keyed on the header ----------------------------------------------

def hello(model: str = "claude-sonnet-5-5", **fields) -> dict:
    return {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}], **fields}


@pytest.mark.parametrize("field, value", [("temperature", 0.5), ("temperature", 1.0), ("top_p", 0.99), ("top_k", 5)])
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/count_tokens"])
def test_sampling_parameters_are_a_400_under_2026_10_21_even_at_their_defaults(field, value, path):
    """[VER]: "temperature: 1.0 fails with 'temperature: Extra inputs are not permitted'" (also for
    token counting); under 2023-06-01 the same request is accepted as before, on a model that takes
    them (Sonnet 4.6: API-2026 §13; 5.x models refuse them, see test_docs_rules.py)."""
    emu = Emulator(model="claude-sonnet-5-5")
    status, body = post(emu, hello(**{field: value}), version=NEW, path=path)
    assert status == 400 and body["error"]["message"] == f"{field}: Extra inputs are not permitted"
    older = {**hello(**{field: value}), "model": "claude-sonnet-4-6"}
    if path.endswith("count_tokens"):  # count_tokens takes no max_tokens (test_docs_rules.py)
        del older["max_tokens"]
    assert post(emu, older, version=OLD, path=path)[0] == 200


def test_a_document_in_an_assistant_message_and_citations_on_user_text_are_a_400_under_2026_10_21():
    """[VER]: both refused under 2026-10-21, accepted under 2023-06-01."""
    emu = Emulator(model="claude-sonnet-4-6")
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}}
    cited = {"type": "text", "text": "as the page says", "citations": [
        {"type": "char_location", "cited_text": "notes", "document_index": 0, "start_char_index": 0, "end_char_index": 5}]}
    for messages, where in (
            ([{"role": "user", "content": "read"}, {"role": "assistant", "content": [document]},
              {"role": "user", "content": "and?"}], "messages.1.content.0.type"),
            ([{"role": "user", "content": [cited]}], "messages.0.content.0.citations")):
        request = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": messages}
        status, body = post(emu, request, version=NEW)
        assert status == 400 and body["error"]["message"].startswith(where), body
        assert post(emu, request, version=OLD)[0] == 200


def test_the_version_header_is_required_and_must_be_a_known_version():
    """[VER]: anthropic-version is a required header; the emulator knows two values. The messages are
    the real API's, from its answers quoted in public issues (PipedreamHQ/pipedream 9697,
    Pasta-Devs/Marinara-Engine 120: "anthropic-version: header is required"; decolua/9router 2357:
    'anthropic-version: "2023-06-01, 2023-06-01" is not a valid version')."""
    emu = Emulator(model="claude-sonnet-5-5")
    status, body = post(emu, hello(), version=None)
    assert status == 400 and body["error"]["message"] == "anthropic-version: header is required"
    status, body = post(emu, hello(), version="2023-06-01, 2023-06-01")
    assert status == 400 and body["error"] == {
        "type": "invalid_request_error", "message": 'anthropic-version: "2023-06-01, 2023-06-01" is not a valid version'}


def test_the_key_is_accepted_as_a_bearer_token_and_one_is_required():
    """[VER]: the 2.x/1.x SDKs send "Authorization: Bearer"; the installed SDK does (its _client.py)."""
    emu = Emulator(model="claude-sonnet-5-5")
    assert post(emu, hello(), auth={"authorization": "Bearer sk-offline"})[0] == 200
    status, body = post(emu, hello(), auth={})
    assert status == 401 and body["error"]["type"] == "authentication_error"
    seen = []
    handler = emu.transport().handler
    client = anthropic.Anthropic(api_key="sk-offline", base_url="http://emulator.invalid", http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda request: seen.append(request.headers) or handler(request))))
    client.messages.create(model=emu.model, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert seen[0]["anthropic-version"] == NEW and seen[0]["authorization"] == "Bearer sk-offline"
    assert "x-api-key" not in seen[0]


# -- item 6 (high): a conversation moved onto its successor keeps its reasoning -----------------------

@pytest.mark.parametrize("before, after", [("claude-opus-5", "claude-opus-5-5"), ("claude-fable-5", "claude-fable-5-1"),
                                           ("claude-sonnet-5", "claude-sonnet-5-5")])
def test_an_unchanged_conversation_moved_onto_the_successor_keeps_its_reasoning(before, after):
    """[PT]: "a conversation that moves from Claude Opus 5 onto Claude Opus 5.5 keeps its reasoning";
    the successor reads the older model's blocks (the model check), and the history is unchanged, so
    the prefix check passes: no 400, nothing dropped, and count_tokens agrees."""
    emu = Emulator(model=before)  # a new account: the successor enforces the check
    client = emu.client()
    betas = ["thinking-binding-controls-2026-08-01"]
    messages = [{"role": "user", "content": "plan the migration"}]
    for _ in range(2):  # two turns on the older model: the first block and one chained to it
        reply = client.beta.messages.create(model=before, max_tokens=256, messages=messages, betas=betas)
        assert reply.content[0].type == "thinking"
        messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                     {"role": "user", "content": "go on"}]
    behaviour = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    moved = client.beta.messages.create(model=after, max_tokens=256, messages=messages, betas=betas, thinking=behaviour)
    assert moved.input_transformations == []
    assert client.beta.messages.count_tokens(model=after, messages=messages, betas=betas, thinking=behaviour).input_tokens > 0


# -- item 3: structured output is enforced -----------------------------------------------------------

PLAN = {"type": "object", "additionalProperties": False, "required": ["title", "steps", "risk", "owner"],
        "properties": {"title": {"type": "string"}, "draft": {"type": "boolean"},
                       "steps": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/step"}},
                       "risk": {"enum": ["low", "high"]}, "owner": {"anyOf": [{"type": "null"}, {"type": "string"}]}},
        "$defs": {"step": {"type": "object", "required": ["n", "due"], "additionalProperties": False,
                           "properties": {"n": {"type": "integer"}, "due": {"type": "string", "format": "date"}}}}}


def structured_request(schema: dict) -> dict:
    return {"model": "claude-sonnet-5-5", "max_tokens": 512, "messages": [{"role": "user", "content": "plan it"}],
            "output_config": {"format": {"type": "json_schema", "schema": schema}}}


def test_the_default_policy_answers_with_json_that_conforms_to_the_schema():
    """[SO] structured-outputs: the answer's text is JSON valid against the schema (nested objects,
    $ref into $defs, enums, anyOf, minItems, formats)."""
    from minimal_runtime.emulator.structured import violation
    emu = Emulator(model="claude-sonnet-5-5")
    status, body = post(emu, structured_request(PLAN))
    assert status == 200
    answer = json.loads(next(b["text"] for b in body["content"] if b["type"] == "text"))
    assert violation(answer, PLAN, PLAN) is None
    assert answer["risk"] == "low" and len(answer["steps"]) == 1 and answer["steps"][0]["due"] == "2026-01-01"


@pytest.mark.parametrize("answer", ['{"title": "x"}', "not json", '{"title": 1, "steps": [], "risk": "low", "owner": null}'])
def test_a_policy_answer_that_breaks_the_schema_is_a_500_that_names_the_simulation(answer):
    """[SO]: the API constrains decoding, so a nonconforming answer can only be the simulated policy's bug."""
    emu = Emulator(model="claude-sonnet-5-5", policy=lambda request: answer)
    status, body = post(emu, structured_request(PLAN))
    assert status == 500 and body["error"]["message"].startswith("the simulated policy broke the schema: ")


def test_a_malformed_format_is_a_400():
    emu = Emulator(model="claude-sonnet-5-5")
    request = structured_request(PLAN)
    request["output_config"]["format"] = {"type": "json_object"}
    assert post(emu, request)[0] == 400


# -- item 4: thinking.display ---------------------------------------------------------------------

def test_display_omitted_returns_a_signed_block_without_its_text_and_bills_it_the_same():
    """SDK BetaThinkingConfigAdaptiveParam.display: "omitted": "thinking content is redacted but a
    signature is returned for multi-turn continuity"; the block sent back as received stays valid."""
    emu = Emulator(model="claude-sonnet-5-5", policy=lambda r: Turn(content=[{"type": "text", "text": "ok"}],
                                                                       thinking="reasoning " * 20))
    shown = post(emu, {**hello(), "thinking": {"type": "adaptive", "display": "summarized"}})[1]
    status, omitted = post(emu, {**hello(), "thinking": {"type": "adaptive", "display": "omitted"}})
    assert status == 200 and omitted["content"][0]["thinking"] == "" and omitted["content"][0]["signature"]
    assert shown["content"][0]["thinking"].startswith("reasoning")
    assert omitted["usage"]["output_tokens"] == shown["usage"]["output_tokens"]
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": omitted["content"]},
               {"role": "user", "content": "and?"}]
    again = {**hello(), "messages": history, "thinking": {"type": "adaptive", "display": "omitted",
                                                          "block_binding": {"prefix_mismatch_behavior": "error"}}}
    assert post(emu, again, betas="thinking-binding-controls-2026-08-01")[0] == 200


def test_an_unknown_display_value_is_a_400():
    emu = Emulator(model="claude-sonnet-5-5")
    status, body = post(emu, {**hello(), "thinking": {"type": "adaptive", "display": "full"}})
    assert status == 400 and body["error"]["message"].startswith("thinking.display")


# -- item 5 (the request body) ----------------------------------------------------------------------

def test_a_cache_control_scope_is_accepted_under_its_beta_only():
    """github.com/caozhiyuan/copilot-api/issues/145: without prompt-caching-scope-2026-01-05 the API
    answers "system.1.cache_control.ephemeral.scope: Extra inputs are not permitted"."""
    emu = Emulator(model="claude-sonnet-5-5")
    system = [{"type": "text", "text": "You are terse."},
              {"type": "text", "text": "Be careful. " * 300, "cache_control": {"type": "ephemeral", "scope": "global"}}]
    request = {**hello(), "system": system}
    status, body = post(emu, request)
    assert status == 400 and body["error"]["message"] == "system.1.cache_control.ephemeral.scope: Extra inputs are not permitted"
    status, body = post(emu, request, betas="prompt-caching-scope-2026-01-05")
    assert status == 200 and body["usage"]["cache_creation_input_tokens"] > 0


@pytest.mark.parametrize("field", ["response_format", "temprature", "betas"])
def test_an_unknown_top_level_field_is_a_400_that_names_it(field):
    """The API refuses extra inputs by name: "response_format: Extra inputs are not permitted"
    (github.com/amrit110/oli/issues/7). `betas` is the SDK's argument, sent as a header."""
    status, body = post(Emulator(model="claude-sonnet-5-5"), {**hello(), field: ["x"]})
    assert status == 400 and body["error"]["message"] == f"{field}: Extra inputs are not permitted"


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/count_tokens"])
def test_json_nested_3000_deep_is_a_400_not_a_500(path):
    """A malformed request is always a 400 that names the problem (docs/emulator.md, "The wire")."""
    emu = Emulator(model="claude-sonnet-5-5")
    deep = '{"model": "claude-sonnet-5-5", "max_tokens": 8, "metadata": ' + "[" * 3000 + "]" * 3000 + ', "messages": []}'
    status, _, payload = emu.handle("POST", path, deep.encode(), {"content-type": "application/json",
                                                                  "anthropic-version": NEW, "x-api-key": "k"})
    assert status == 400 and json.loads(payload)["error"]["type"] == "invalid_request_error"
    tool_input = {"model": "claude-sonnet-5-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": "PLACE"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}
    nested = json.dumps(tool_input).replace('"PLACE"', "[" * 900 + "]" * 900)  # parses, but deep
    status, _, payload = emu.handle("POST", path, nested.encode(), {"content-type": "application/json",
                                                                    "anthropic-version": NEW, "x-api-key": "k"})
    assert status < 500, payload


# -- item 6 (medium) ------------------------------------------------------------------------------

BINDING = ["thinking-binding-controls-2026-08-01"]


def converse(client, model: str, turns: int = 2, **kw) -> list[dict]:
    messages = [{"role": "user", "content": "start"}]
    for k in range(turns):
        reply = client.beta.messages.create(model=model, max_tokens=256, messages=messages, betas=BINDING, **kw)
        messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                     {"role": "user", "content": f"next {k}"}]
    return messages


@pytest.mark.parametrize("before, after", [("claude-fable-5-1", "claude-opus-5"), ("claude-opus-5-5", "claude-opus-5")])
def test_a_downgrade_drops_the_newer_models_blocks_and_does_not_bill_them(before, after):
    """[PT] model check: no model without the check reads a 5.1/5.5 block; an unreadable block is
    dropped silently, "isn't billed and doesn't count toward input_tokens"."""
    emu = Emulator(model=before)
    client = emu.client()
    messages = converse(client, before)
    down = client.beta.messages.count_tokens
    moved = client.beta.messages.create(model=after, max_tokens=256, messages=messages, betas=BINDING)
    assert [t.type for t in moved.input_transformations] == ["thinking_dropped", "thinking_dropped"]
    assert {t.reason for t in moved.input_transformations} == {"model_binding_mismatch"}
    stripped = [{**m, "content": [b for b in m["content"] if b["type"] != "thinking"]} if m["role"] == "assistant" else m
                for m in messages]
    assert down(model=after, messages=messages, betas=BINDING).input_tokens == \
        down(model=after, messages=stripped, betas=BINDING).input_tokens


def test_editing_a_deferred_tool_after_a_tool_addition_referenced_it_is_an_edit():
    """[PT] valid: "adding a tool with defer_loading: true that nothing has referenced yet"; once a
    tool_addition has referenced it, its definition precedes the later blocks."""
    emu = Emulator(model="claude-sonnet-5-5")
    client = emu.client()
    betas = [*BINDING, "mid-conversation-tool-changes-2026-07-01"]
    tools = [{"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}},
             {"name": "fetch", "description": "Fetch a URL.", "input_schema": {"type": "object"}, "defer_loading": True}]
    messages = [{"role": "user", "content": "start"},
                {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "fetch"}}]}]
    reply = client.beta.messages.create(model=emu.model, max_tokens=256, messages=messages, tools=tools, betas=betas)
    messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                 {"role": "user", "content": "go on"}]
    edited = [tools[0], {**tools[1], "description": "Fetch a URL, faster."}]
    strict = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    assert client.beta.messages.create(model=emu.model, max_tokens=256, messages=messages, tools=tools, betas=betas,
                                       thinking=strict).input_transformations == []
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        client.beta.messages.create(model=emu.model, max_tokens=256, messages=messages, tools=edited, betas=betas,
                                    thinking=strict)


def test_an_on_demand_compaction_on_a_model_without_preserved_thinking_invalidates_the_kept_thinking():
    """compaction-thinking-blocks [CTB]: kept turns keep valid thinking only while "every compaction
    since the block was produced ran on a preserved-thinking model"."""
    emu = Emulator(model="claude-sonnet-5-5")
    client = emu.client()
    betas = [*BINDING, "compact-2026-09-04"]
    messages = converse(client, "claude-sonnet-5-5", turns=3)
    summarized, kept = messages[:3], messages[3:]
    strict = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    for model, valid in (("claude-sonnet-5-5", True), ("claude-opus-5", False)):
        block = client.beta.messages.create(model=model, max_tokens=256, messages=summarized, betas=betas,
                                            compaction={"type": "summarize"}).content[0].model_dump(exclude_none=True)
        after = [{"role": "assistant", "content": [block]}, *kept]
        if valid:
            client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=256, messages=after, betas=betas, thinking=strict)
        else:
            with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
                client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=256, messages=after, betas=betas,
                                            thinking=strict)


# -- item 6 (low) ---------------------------------------------------------------------------------

def test_record_only_mode_lists_only_the_blocks_that_fail_on_their_own():
    """[PT]: thinking_mismatch_allowed entries "are a lower bound on what enforcement would remove":
    a later block that is valid on its own (it fails only because an earlier one did) is not listed."""
    from datetime import date
    emu = Emulator(model="claude-opus-5-5", account_created=date(2026, 5, 1))  # an older account: record only
    client = emu.client()
    messages = converse(client, "claude-opus-5-5", turns=4)
    # A gap in the middle: the block after it fails on its own (its predecessor is missing); the one
    # after that names a predecessor that is present, over an unchanged prefix.
    messages[3] = {**messages[3], "content": messages[3]["content"][1:]}
    reply = client.beta.messages.create(model=emu.model, max_tokens=256, messages=messages, betas=BINDING)
    assert [(t.type, t.path) for t in reply.input_transformations] == [("thinking_mismatch_allowed", "messages.5.content.0")]


def test_sonnet_5_5_refuses_thinking_disabled():
    """Sonnet 5.5's overview lists `thinking: disabled` among its breaking changes; between_tools turns it off."""
    emu = Emulator(model="claude-sonnet-5-5")
    status, body = post(emu, {**hello(), "thinking": {"type": "disabled"}})
    assert status == 400 and "between_tools" in body["error"]["message"]
    assert post(emu, {**hello(), "thinking": {"type": "between_tools"}})[0] == 200


def test_a_deferred_inline_definition_cannot_carry_cache_control():
    """[MCSM]: "A deferred definition can't carry" cache_control."""
    emu = Emulator(model="claude-sonnet-5-5")
    definition = {"name": "fetch", "description": "Fetch.", "input_schema": {"type": "object"}, "defer_loading": True,
                  "cache_control": {"type": "ephemeral"}}
    request = {**hello(), "messages": [{"role": "user", "content": "go"}, {"role": "system", "content": [
        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}]}]}
    status, body = post(emu, request, betas="inline-tools-2026-09-15")
    assert status == 400 and "cache_control" in body["error"]["message"]


def test_diagnostics_is_absent_unless_asked_and_unavailable_when_the_betas_change():
    """cache-diagnostics [CD]: four states, the first "absent: not requested"; `unavailable` when
    other prompt-affecting parameters differ, "the set of betas" and context_management among them."""
    emu = Emulator(model="claude-sonnet-5-5")
    assert "diagnostics" not in post(emu, hello())[1]
    first = post(emu, {**hello(), "diagnostics": {"previous_message_id": None}})[1]
    again = {**hello(), "diagnostics": {"previous_message_id": first["id"]}}
    assert post(emu, again)[1]["diagnostics"] is None
    changed = post(emu, again, betas="context-management-2025-06-27")[1]
    assert changed["diagnostics"] == {"cache_miss_reason": {"type": "unavailable"}}


def test_task_budget_remaining_is_refused_on_a_request_carrying_an_on_demand_block():
    """[COD]: `task_budget.remaining` is rejected with on-demand compaction "and on later requests that carry the block"."""
    emu = Emulator(model="claude-sonnet-5-5")
    betas = "compact-2026-09-04,task-budgets-2026-03-13"
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    block = post(emu, {**hello(), "messages": history, "compaction": {"type": "summarize"}}, betas=betas)[1]["content"][0]
    later = {**hello(), "messages": [{"role": "assistant", "content": [block]}, {"role": "user", "content": "d"}]}
    assert post(emu, later, betas=betas)[0] == 200
    budget = {"task_budget": {"type": "tokens", "total": 50_000, "remaining": 40_000}}
    status, body = post(emu, {**later, "output_config": budget}, betas=betas)
    assert status == 400 and "remaining" in body["error"]["message"]


def test_redefining_a_tool_under_another_type_is_a_tool_name_conflict():
    """[MCSM]: "Redefining a name under a different tool type gives tool_name_conflict. Sending an
    identical definition again is a no-op.\""""
    emu = Emulator(model="claude-sonnet-5-5")
    tools = [{"name": "search", "description": "Search.", "input_schema": {"type": "object"}}]

    def redefine(definition):
        return {**hello(), "tools": tools, "messages": [{"role": "user", "content": "go"}, {"role": "system", "content": [
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}]}]}
    assert post(emu, redefine(tools[0]), betas="inline-tools-2026-09-15")[0] == 200
    status, body = post(emu, redefine({"type": "web_search_20250305", "name": "search"}), betas="inline-tools-2026-09-15")
    assert status == 400 and body["error"]["details"]["error_code"] == "tool_name_conflict"


# [MCSM], the 2026-09-26 copy: "To change a tool's schema, or to move a server tool to a newer version,
# send a different definition under the same name. The new definition replaces the earlier one from
# that position onward. A definition that reuses the name of a different type of tool returns a 400
# error with `error.details.error_code` set to `tool_name_conflict`. A newer version of the same tool
# doesn't count as a different type."

def _inline(*definitions: dict) -> dict:
    """A request that defines each of ``definitions`` by value, one system entry per user turn."""
    messages: list[dict] = []
    for n, definition in enumerate(definitions):
        messages += [{"role": "user", "content": f"turn {n}"}, {"role": "system", "content": [
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}]}]
        if n < len(definitions) - 1:
            messages.append({"role": "assistant", "content": "ok"})
    tools = [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}]
    return {**hello(), "tools": tools, "messages": messages}


CUSTOM = {"name": "lookup", "description": "Look a thing up.", "input_schema": {"type": "object"}}


def test_a_second_inline_definition_of_another_tool_type_is_a_tool_name_conflict():
    emu = Emulator(model="claude-sonnet-5-5")
    status, body = post(emu, _inline(CUSTOM, {"type": "web_search_20250305", "name": "lookup"}),
                        betas="inline-tools-2026-09-15")
    assert status == 400 and body["error"]["details"]["error_code"] == "tool_name_conflict", body


def test_a_second_inline_definition_of_the_same_type_replaces_the_first():
    emu = Emulator(model="claude-sonnet-5-5")
    changed = {**CUSTOM, "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
    assert post(emu, _inline(CUSTOM, changed), betas="inline-tools-2026-09-15")[0] == 200


def test_a_newer_version_of_the_same_server_tool_is_not_a_conflict():
    emu = Emulator(model="claude-sonnet-5-5")
    request = _inline({"type": "web_search_20260209", "name": "web_search"})
    request["tools"] = [*request["tools"], {"type": "web_search_20250305", "name": "web_search"}]
    status, body = post(emu, request, betas="inline-tools-2026-09-15")
    assert status == 200, body
    both = _inline({"type": "web_search_20250305", "name": "web_search"}, {"type": "web_search_20260209", "name": "web_search"})
    status, body = post(emu, both, betas="inline-tools-2026-09-15")
    assert status == 200, body
