"""``serve``: the real SDK as the client, the per-call lines, the log, the default policy."""

from __future__ import annotations

import copy
import io
import json
import math

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.serve import ToolThenAnswer, started
from minimal_runtime.serve.policy import example, load, script

TOOLS = [
    {"name": "write_note", "description": "write a note",
     "input_schema": {"type": "object", "properties": {"text": {"type": "string", "minLength": 12}}, "required": ["text"]}},
    {"name": "read_file", "description": "read a file",
     "input_schema": {"type": "object", "required": ["path", "lines", "mode"],
                      "properties": {"path": {"type": "string"}, "lines": {"type": "integer", "minimum": 3, "maximum": 9},
                                     "mode": {"enum": ["head", "tail"]},
                                     "opts": {"$ref": "#/$defs/opts"}},
                      "$defs": {"opts": {"type": "object"}}}},
]
SYSTEM = [{"type": "text", "text": "You are a careful agent that reads files before it answers. " * 60}]
BREAKPOINT = {"cache_control": {"type": "ephemeral"}}


def validate(instance, schema, formats: bool = False) -> None:
    # imported here: jsonschema builds a grammar when imported (about 2.5 CPU-s), which every
    # pytest worker would pay at collection for the four tests that use it
    import jsonschema
    jsonschema.validate(instance, schema, format_checker=jsonschema.FormatChecker() if formats else None)


def tool_loop(client, model="claude-sonnet-5-5", turns=2, **extra):
    """A minimal agent: call, run the tool, send the result, until the model answers; twice."""
    messages, calls = [{"role": "user", "content": "Read the file and sum it up."}], 0
    for turn in range(turns):
        while True:
            answer = client.messages.create(model=model, max_tokens=400, system=SYSTEM, tools=TOOLS, messages=messages,
                                            **BREAKPOINT, **extra)
            calls += 1
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
            if answer.stop_reason != "tool_use":
                break
            use = next(b for b in answer.content if b.type == "tool_use")
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                          "content": f"contents of {use.input['path']}" * 30}]})
        messages.append({"role": "user", "content": "And the next file?"})
    return messages[:-1], calls


def test_a_tool_loop_through_the_sdk_gets_one_line_per_call_and_a_summary_that_adds_up(tmp_path):
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    out = io.StringIO()
    with started(emulator, out=out) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages, calls = tool_loop(client)
    lines = out.getvalue().splitlines()
    assert calls == 6 == len(lines) == len(emulator.calls)  # 2 tool rounds then an answer, twice
    assert all(line.startswith(f"#{k + 1} claude-sonnet-5-5 200 | in ") for k, line in enumerate(lines))
    for line, record in zip(lines, emulator.calls):  # the figures are the emulator's own usage
        assert (f"write {record.cache_creation_input_tokens:,} read {record.cache_read_input_tokens:,} "
                f"out {record.output_tokens:,}") in line
        assert f"read {record.cache_read_share:.0%} ${record.cost:.5f}" in line
    assert "prefix ok (no thinking sent back)" in lines[0] and "prefix ok (5 thinking sent back)" in lines[-1]
    assert not any("miss:" in line for line in lines)  # append-only with a breakpoint at the end: no miss
    prompt = sum(c.prompt_tokens for c in emulator.calls)
    share = sum(c.cache_read_input_tokens for c in emulator.calls) / prompt
    cost, plain = sum(c.cost for c in emulator.calls), sum(c.cost_without_cache for c in emulator.calls)
    assert front.report.summary() == (
        f"summary: 6 calls, 0 refused, cache-read share {share:.1%} of {prompt:,} prompt tokens, cost ${cost:.5f}, "
        f"without caching ${plain:.5f} ({plain / cost:.1f}x)")


def test_an_edit_is_diagnosed_and_the_prefix_check_verdict_is_shown(tmp_path):
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        messages, _ = tool_loop(client, turns=1)
        messages.append({"role": "user", "content": "Next?"})
        edited = copy.deepcopy(messages)
        edited[2]["content"][0]["content"] = "a reminder injected into an earlier tool result"
        with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
            client.messages.create(model="claude-sonnet-5-5", max_tokens=100, system=SYSTEM, tools=TOOLS,
                                   messages=edited, **BREAKPOINT)
        client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=100, system=SYSTEM, tools=TOOLS,
                                    messages=edited, **BREAKPOINT, betas=["thinking-binding-controls-2026-08-01"],
                                    thinking={"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}})
        older = [{"role": "user", "content": "on a model without the check"}]
        for stamp in ("Monday", "Tuesday"):  # a timestamp in the system prompt
            client.messages.create(model="claude-sonnet-4-6", max_tokens=100, system=f"{SYSTEM[0]['text']} Today is {stamp}.",
                                   tools=TOOLS, messages=older, **BREAKPOINT)
        no_breakpoint = {"role": "user", "content": "a new conversation"}
        client.messages.create(model="claude-sonnet-5-5", max_tokens=100, messages=[no_breakpoint])
    refused, dropped, _, system, bare = front.lines[-5:]
    assert "400 | refused: invalid_request_error: messages.3.content.0: Invalid `signature`" in refused
    assert "prefix REFUSED at messages.3.content.0" in refused
    assert "edit: messages.2: edited (an earlier user message is not sent as it was)" in refused
    assert "prefix ok, dropped 2: messages.3.content.0 (prefix_binding_mismatch), messages.5.content.0" in dropped
    assert dropped.endswith("miss: messages.2: edited (an earlier user message is not sent as it was); compared with #3")
    assert system.endswith("miss: system: changed since the previous request; compared with #6")
    assert bare.endswith("miss: no cache_control breakpoint in the request: nothing is written or read "
                         "(add a top-level cache_control)")
    assert "prefix" not in system  # claude-sonnet-4-6 does not bind thinking to its prefix
    assert front.report.refused == 1 and "8 calls, 1 refused" in front.report.summary()  # 7 answered, 1 refused


def test_the_log_keeps_every_exchange_with_secrets_redacted_and_streams_assembled(tmp_path):
    log = tmp_path / "calls.jsonl"
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=1))
    with started(emulator, log=str(log)) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="sk-secret-key", default_headers={"X-Api-Key": "sk-other-key"})
        request = dict(model="claude-sonnet-5-5", max_tokens=200, system=SYSTEM, tools=TOOLS,
                       messages=[{"role": "user", "content": "go"}])
        plain = client.messages.create(**request)
        with client.messages.stream(**request) as stream:
            streamed = stream.get_final_message()
        client.models.list()
    text = log.read_text()
    assert "sk-secret-key" not in text and "sk-other-key" not in text
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["n"] for r in records] == [1, 2, 3] and [r["path"] for r in records] == ["/v1/messages"] * 2 + ["/v1/models"]
    first, second = records[0], records[1]
    assert first["request_headers"]["x-api-key"] == "[redacted]" == first["request_headers"]["authorization"]
    assert first["request"]["messages"] == request["messages"]
    assert first["response"] == plain.model_dump(mode="json", exclude_unset=True)  # the answer as sent
    assert first["usage"] == first["response"]["usage"]
    assert second["stream"] is True and second["response"]["content"] == [
        b.model_dump(mode="json", exclude_unset=True) for b in streamed.content]  # the events assembled
    assert second["usage"]["output_tokens"] == streamed.usage.output_tokens
    assert second["usage"]["cache_read_input_tokens"] == streamed.usage.cache_read_input_tokens
    assert records[2]["response"]["data"][0]["type"] == "model"
    assert [r["line"] for r in records] == front.lines and first["prefix"] == "ok (no thinking sent back)"


def test_a_model_the_table_does_not_know_is_served_as_the_default_model():
    emulator = Emulator(model="claude-haiku-5-5")
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        answer = client.messages.create(model="my-local-model", max_tokens=50, messages=[{"role": "user", "content": "x"}])
        other = client.messages.create(model="claude-opus-5-5", max_tokens=50, messages=[{"role": "user", "content": "x"}])
    assert answer.model == "claude-haiku-5-5" and other.model == "claude-opus-5-5"  # a known model is the client's pick
    assert front.lines[0].startswith("#1 my-local-model (served as claude-haiku-5-5) 200")
    assert "| prefix ok (no thinking sent back) |" in front.lines[0]  # the served model runs the check
    assert [c.model for c in emulator.calls] == ["claude-haiku-5-5", "claude-opus-5-5"]
    assert not math.isnan(emulator.calls[0].cost)


# -- the default policy -----------------------------------------------------------------------------

def test_the_default_policy_calls_an_offered_tool_with_a_schema_valid_input_then_answers():
    policy = ToolThenAnswer(rounds=1)
    request = {"tools": TOOLS, "messages": [{"role": "user", "content": "go"}]}
    turn = policy(request)
    use = turn.content[0]
    assert use["type"] == "tool_use" and use["name"] == "read_file"  # a tool that looks read-only comes first
    validate(use["input"], TOOLS[1]["input_schema"])
    request["messages"] += [{"role": "assistant", "content": [{**use, "id": "t1"}]},
                            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}]
    assert policy(request).content[0]["type"] == "text"
    assert policy({"messages": [{"role": "user", "content": "hi"}]}).content[0]["type"] == "text"  # no tools: text
    assert policy({**request, "tool_choice": {"type": "none"}}).content[0]["type"] == "text"
    forced = policy({**request, "tool_choice": {"type": "tool", "name": "write_note"}}).content[0]
    assert forced["name"] == "write_note"
    validate(forced["input"], TOOLS[0]["input_schema"])


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": ["string", "null"], "format": "uri"},
                                      "b": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 2},
                                            "minItems": 2}},
     "required": ["a", "b"], "additionalProperties": False},
    {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"n": {"const": 4}}, "required": ["n"]}]},
    {"allOf": [{"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
               {"properties": {"y": {"type": "string", "maxLength": 3}}, "required": ["y"]}]},
    {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}, "required": ["when"]},
])
def test_example_inputs_validate_against_their_schema(schema):
    validate(example(schema), schema, formats=True)


def test_structured_output_gets_a_schema_valid_stand_in():
    schema = {"type": "object", "properties": {"total": {"type": "integer"}, "items": {"type": "array"}},
              "required": ["total", "items"]}
    turn = ToolThenAnswer()({"messages": [{"role": "user", "content": "x"}],
                             "output_config": {"format": {"type": "json_schema", "schema": schema}}})
    validate(json.loads(turn.content[0]["text"]), schema)


def test_a_script_and_a_module_callable_are_policies(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text('"first answer"\n\n{"type": "tool_use", "name": "read_file", "input": {"path": "a"}}\n'
                    '{"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}\n')
    policy = script(path)
    turns = [policy({}) for _ in range(3)]
    assert turns[0].content == [{"type": "text", "text": "first answer"}]
    assert turns[1].content[0]["name"] == "read_file" and turns[2].stop_reason == "end_turn"
    with pytest.raises(RuntimeError, match="exhausted"):
        policy({})
    (tmp_path / "bad.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: not JSON"):
        script(tmp_path / "bad.jsonl")
    assert load("minimal_runtime.emulator.policies:echo_policy")({"messages": [1, 2]}).content[0]["text"].endswith(
        "2 messages)")
    assert isinstance(load("minimal_runtime.serve.policy:ToolThenAnswer"), ToolThenAnswer)  # a class is instantiated
    with pytest.raises(ValueError, match="module:callable"):
        load("no_colon_here")


@pytest.mark.parametrize("line, says", [
    ('{"n": 1, "time": "t", "method": "POST", "path": "/v1/messages", "request": {}, "status": 200}',  # serve --log
     'an object with keys n, time, method, path, request, ... is not a content block (no "type")'),
    ("5", "a JSON int is not a turn"),
    ('{"content": "not a list"}', "not a turn"),
    ("[1, 2]", "not a turn"),
    ("{}", '{} is not a content block (no "type")'),
])
def test_a_script_line_that_is_not_a_turn_is_refused_at_start_in_one_line(line, says, tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text(f'"fine"\n{line}\n')
    with pytest.raises(ValueError) as refused:  # was: accepted, then every call a 500 "a bug in the emulator";
        script(path)                            # or a TypeError, or pydantic's message over several lines
    assert str(refused.value).startswith(f"{path}:2: {says}: a line is a string, a content block") and \
        "\n" not in str(refused.value)
    path.write_bytes(b"\x89PNG\r\n")
    with pytest.raises(ValueError, match=r"turns.jsonl: not UTF-8 text: a line is a string"):
        script(path)


# -- the recording proxy ----------------------------------------------------------------------------

def test_the_proxy_forwards_unchanged_and_reports_real_usage_next_to_the_prediction(tmp_path):
    """The upstream is another emulator whose account predates the prefix check (2026-08-31); the
    prediction is made for an account created after it. Where the accounting is the same the two
    agree to the token; on an edit the upstream lets the thinking through and the prediction refuses."""
    from datetime import date

    from minimal_runtime.emulator.server import serve

    upstream = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(), account_created=date(2026, 3, 1))
    received = []

    class Recording:
        def handle(self, method, path, body, headers):
            received.append((path, body, headers))
            return upstream.handle(method, path, body, headers)

    log = tmp_path / "proxy.jsonl"
    with serve(Recording()) as upstream_url:
        with started(Emulator(model="claude-sonnet-5-5", account_created=date(2026, 11, 30)), upstream=upstream_url,
                     log=str(log)) as (url, front):
            client = anthropic.Anthropic(base_url=url, api_key="sk-client-own-key", max_retries=0)
            messages, calls = tool_loop(client, turns=1)
            messages.append({"role": "user", "content": "Next?"})
            edited = copy.deepcopy(messages)
            edited[2]["content"][0]["content"] = "a reminder injected into an earlier tool result"
            client.messages.create(model="claude-sonnet-5-5", max_tokens=100, system=SYSTEM, tools=TOOLS,
                                   messages=edited, **BREAKPOINT)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(received) == len(records) == calls + 1 == 4
    for (path, body, headers), record in zip(received, records):
        assert path == "/v1/messages" and json.loads(body) == record["request"]  # forwarded as sent
        assert "sk-client-own-key" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
        assert record["upstream"] == upstream_url and record["request_headers"].get("x-api-key", "[redacted]") == "[redacted]"
    assert upstream.calls == [CallRecord.from_usage(r["usage"], "claude-sonnet-5-5") for r in records]  # the real usage
    for line, record in zip(front.lines[:3], records):  # same rules, same requests: the prediction is exact
        u = record["usage"]
        real = f"in {u['input_tokens']:,} write {u['cache_creation_input_tokens']:,} read {u['cache_read_input_tokens']:,}"
        assert f"| {real} out " in line and f"| predicted {real} read " in line
        assert {k: record["predicted_usage"][k] for k in ("input_tokens", "cache_read_input_tokens")} == \
            {k: u[k] for k in ("input_tokens", "cache_read_input_tokens")}
    edit = front.lines[3]
    assert " 200 | in " in edit  # the older account's upstream answered
    assert "predicted: the emulator refuses it (400): messages.3.content.0: Invalid `signature`" in edit
    assert "miss: messages.2: edited" in edit
    assert "on the 3 calls the emulator accepted it predicted cache-read share" in front.report.summary()
    assert front.report.summary().endswith("; 1 answered that it refuses")
    print("\n".join(front.lines + [front.report.summary()]))


def test_two_interleaved_conversations_with_the_same_first_message_are_told_apart():
    """Two agents on one task, their calls interleaved: each call is compared with the call it
    continues, not with the other agent's latest call (which would read as an edit)."""
    paths = iter(f"file-{k}.txt" for k in range(100))  # each answer reads another file, as a model's would

    def reader(request):
        return [{"type": "tool_use", "name": "read_file", "input": {"path": next(paths), "lines": 3, "mode": "head"}}]
    emulator = Emulator(model="claude-sonnet-4-6", policy=reader)
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        runs = {name: [{"role": "user", "content": "Read the file and sum it up."}] for name in ("a", "b")}
        for step in range(3):
            for name, messages in runs.items():
                answer = client.messages.create(model="claude-sonnet-4-6", max_tokens=200, system=SYSTEM, tools=TOOLS,
                                                messages=messages, **BREAKPOINT)
                use = next(b for b in answer.content if b.type == "tool_use")
                messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                           "content": f"agent {name}, step {step}: " + "data " * 200}]}]
        edited = copy.deepcopy(runs["a"])
        edited[2]["content"][0]["content"] = "rewritten"
        client.messages.create(model="claude-sonnet-4-6", max_tokens=200, system=SYSTEM, tools=TOOLS, messages=edited,
                               **BREAKPOINT)
    assert len(front.lines) == 7 and not any("miss:" in line for line in front.lines[:6]), "\n".join(front.lines)
    assert front.lines[6].endswith("miss: messages.2: edited (an earlier user message is not sent as it was); "
                                   "compared with #5")  # agent a's own last call


def test_the_proxy_relays_a_stream_as_it_arrives_and_reports_it_when_it_ends():
    """The upstream sends message_start, then holds the rest until the client has seen it: a proxy
    that buffered the answer would never deliver it (the gate would time out)."""
    import threading

    from minimal_runtime.emulator.server import serve

    upstream, gate = Emulator(model="claude-sonnet-5-5"), threading.Event()

    class Held:
        def handle(self, method, path, body, headers):
            status, out, payload = upstream.handle(method, path, body, headers)
            first, rest = payload.split(b"\n\n", 1)

            def pieces():
                yield first + b"\n\n"
                released = gate.wait(10)
                yield rest if released else b""
            return status, out, pieces()

    with serve(Held()) as upstream_url, started(Emulator(model="claude-sonnet-5-5"), upstream=upstream_url) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="sk-client-own-key", max_retries=0)
        with client.messages.stream(model="claude-sonnet-5-5", max_tokens=100,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            events = iter(stream)
            assert next(events).type == "message_start"
            gate.set()  # only now does the upstream send the rest
            final = stream.get_final_message()
    assert final.stop_reason == "end_turn" and upstream.calls[0].output_tokens == final.usage.output_tokens
    assert len(front.lines) == 1 and f"out {final.usage.output_tokens:,}" in front.lines[0]
    assert "| predicted in " in front.lines[0]


def test_a_batch_through_serve_gets_a_line_per_call_and_its_results_in_the_totals_once():
    """Message Batches through ``serve`` (the Front): the list's query reaches the emulator, an unknown
    model in a batch request is served as the default one as a direct call is, and the results line
    prices what succeeded at the batch price, counted in the summary once however often it is read."""
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        ask = {"max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
        batch = client.messages.batches.create(requests=[
            {"custom_id": "known", "params": {**ask, "model": "claude-sonnet-5-5"}},
            {"custom_id": "unknown", "params": {**ask, "model": "my-local-model"}},
            {"custom_id": "streaming", "params": {**ask, "model": "claude-sonnet-5-5", "stream": True}}])
        other = client.messages.batches.create(requests=[{"custom_id": "x", "params": {**ask, "model": "claude-sonnet-5-5"}}])
        assert client.messages.batches.retrieve(batch.id).results_url.startswith(url)
        got = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
        assert [got[k].type for k in ("known", "unknown", "streaming")] == ["succeeded", "succeeded", "errored"]
        list(client.messages.batches.results(batch.id))
        assert [b.id for b in client.messages.batches.list(limit=1).data] == [other.id]
        assert [b.id for b in client.messages.batches.list(limit=1)] == [other.id, batch.id]  # paged by after_id
        client.messages.batches.delete(batch.id)
    lines = front.lines
    assert lines[0].startswith("#1 POST /v1/messages/batches 200 | msgbatch_") and lines[0].endswith(
        "in_progress (3 processing)")
    assert "ended (2 succeeded, 1 errored)" in lines[2]
    results = [line for line in lines if "/results 200" in line]
    assert len(results) == 2 and "3 results: 2 succeeded, 1 errored" in results[0] and "at the batch price (50%)" in results[0]
    assert any(line.endswith("message_batch_deleted") for line in lines)
    records = [CallRecord.from_usage(r.message.usage, "claude-sonnet-5-5") for r in got.values() if r.type == "succeeded"]
    assert front.report.calls == records and all(r.batch for r in records)
    assert front.report.summary().startswith("summary: 2 calls, 0 refused")


def test_serve_refuses_a_negative_batch_delay():
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit, match="--batch-delay must be a number of seconds, 0 or more, not -1.0"):
        main(["serve", "--batch-delay", "-1"])


def test_the_summary_counts_the_calls_the_page_counts_refused_ones_included(tmp_path):
    """Twenty requests of a tool runner, eight of them 404s on a lost thread, were "12 calls, 8
    refused" in the summary and "20 calls ..., 8 refused" on the page; a request the HTTP server
    refused before reading it is no call on either, and the summary names it apart."""
    import http.client
    from urllib.parse import urlsplit
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=0))
    with started(emulator, ui=True) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        ask = {"model": "claude-sonnet-5-5", "max_tokens": 100}
        for text in ("one", "two"):
            client.messages.create(**ask, messages=[{"role": "user", "content": text}])
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(**ask, messages=[])
        parts = urlsplit(url)
        foreign = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        foreign.request("GET", "/v1/models", headers={"Host": "elsewhere.example"})
        assert foreign.getresponse().status == 403
        foreign.close()
    page = front.timeline.since()  # the server stopped: its refusal is recorded
    assert len(page["calls"]) == 3 and sum(c["status"] >= 400 for c in page["calls"]) == 1
    assert len(page["refusals"]) == 1
    assert front.report.summary().startswith("summary: 3 calls, 1 refused (and 1 request the server refused "
                                             "before reading it), cache-read share ")


def test_the_summary_says_when_caching_cost_more_than_it_saved():
    """One call that writes its prefix and is never read back costs 1.25x on its prefix: "(1.0x)" read as
    break-even (a new user's run through serve showed $0.01388 with caching, $0.01336 without)."""
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        client.messages.create(model="claude-sonnet-5-5", max_tokens=256, messages=[{"role": "user", "content": "Hi"}],
                               system=[{"type": "text", "text": "You are careful. " * 800,
                                        "cache_control": {"type": "ephemeral"}}])
    cost, plain = emulator.calls[0].cost, emulator.calls[0].cost_without_cache
    assert cost > plain
    assert front.report.summary().endswith(f"(caching cost {cost / plain - 1:.1%} more: what it wrote was not read "
                                           "back enough)")


def test_the_client_docs_serve_shows_runs_through_serve_and_reads_what_it_says(monkeypatch, capsys):
    """docs/serve.md's own ``my_agent.py``, run as written against serve: call 1 writes and reads nothing,
    calls 2 and 3 read what the call before them wrote, as the page says."""
    import re
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text()
    code = re.findall(r"```python\n(.*?)```", page, re.S)[0]  # my_agent.py: the first (the room's client comes later)
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())) as (url, front):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
        exec(compile(code, "docs/serve.md", "exec"), {})
    said = [tuple(map(int, re.findall(r"\d+", line)[1:])) for line in capsys.readouterr().out.splitlines()]
    assert len(said) == 3 and said[0][0] == 0 < said[0][1]
    assert said[1][0] >= said[0][1] and said[2][0] >= said[1][0] + said[1][1] > 0
