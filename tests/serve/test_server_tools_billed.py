"""Issue 63 on ``serve``, through the real SDK: web search billed "$10 per 1,000 searches" on top of
its tokens, counted in ``usage.server_tool_use.web_search_requests`` [pricing] (the runtime's bill,
``serve``'s summary of a real upstream's answers and ``replay``'s price of the log ``serve`` wrote all
include it); the legacy ``output_format`` answered in the schema's shape; the Files API over HTTP."""

from __future__ import annotations

import io
import json

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import usage_bill
from minimal_runtime.serve import ToolThenAnswer, started

MODEL = "claude-sonnet-4-6"  # $3 in, $15 out per million
USAGE = {"input_tokens": 1_000, "output_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
         "server_tool_use": {"web_search_requests": 100}}
TOKENS = (1_000 * 3 + 100 * 15) / 1e6


class SearchingUpstream:
    """A Messages API that ran 100 web searches for each call, as a real answer reports them."""

    def handle(self, method, path, body, headers):
        answer = {"id": "msg_searched", "type": "message", "role": "assistant", "model": MODEL,
                  "content": [{"type": "text", "text": "Found it."}], "stop_reason": "end_turn",
                  "stop_sequence": None, "usage": USAGE}
        return 200, {"content-type": "application/json", "request-id": "req_up"}, json.dumps(answer).encode()


def test_a_call_that_searched_100_times_costs_one_dollar_more_in_the_runtime_serve_and_replay(tmp_path):
    from minimal_runtime.emulator.server import serve

    log = tmp_path / "serve.jsonl"
    with serve(SearchingUpstream()) as upstream:
        with started(Emulator(model=MODEL), upstream=upstream, log=str(log), out=io.StringIO()) as (url, front):
            client = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
            answer = client.messages.create(model=MODEL, max_tokens=100,
                                            messages=[{"role": "user", "content": "Search the web for it."}])
    assert answer.usage.server_tool_use.web_search_requests == 100
    own = CallRecord.from_usage(answer.usage, MODEL)  # the runtime's bill, from the SDK's Usage
    assert own.cost == pytest.approx(TOKENS + 1.00) and own.cost_without_cache == pytest.approx(TOKENS + 1.00)
    assert [c.cost for c in front.report.calls] == [pytest.approx(TOKENS + 1.00)]  # serve's summary
    assert "cost $1.0" in front.report.summary()
    (run,) = load(log)
    assert usage_bill(run) == pytest.approx(TOKENS + 1.00)  # replay's price of the log serve wrote
    assert replay(run, "recorded").cost == pytest.approx(TOKENS + 1.00)


def test_a_batched_search_is_billed_in_full_and_only_the_tokens_get_the_discount():
    batched = CallRecord.from_usage({**USAGE, "service_tier": "batch"}, MODEL)
    assert batched.cost == pytest.approx(TOKENS / 2 + 1.00)


def test_the_legacy_output_format_and_its_beta_header_get_a_conforming_answer_from_serve():
    """Issue 63 item 2: "The API continues to accept the old beta header (structured-outputs-2025-11-13)
    and the output_format request field for a transition period" [SO]; serve's default policy read only
    output_config.format, and its answer broke the schema (a 500)."""
    schema = {"type": "object", "properties": {"total": {"type": "integer"}, "vendor": {"type": "string"}},
              "required": ["total", "vendor"], "additionalProperties": False}
    with started(Emulator(model=MODEL, policy=ToolThenAnswer()), out=io.StringIO()) as (url, _):  # serve's default
        client = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
        answer = client.beta.messages.create(model=MODEL, max_tokens=200, betas=["structured-outputs-2025-11-13"],
                                             extra_body={"output_format": {"type": "json_schema", "schema": schema}},
                                             messages=[{"role": "user", "content": "What is the total?"}])
    assert json.loads(answer.content[0].text).keys() == {"total", "vendor"}


def test_a_file_uploaded_through_serve_is_read_by_the_messages_that_name_it():
    """Issue 63 item 10 on serve: the Files API answers over HTTP, and a document naming the file costs its content."""
    with started(Emulator(model=MODEL), out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
        betas = ["files-api-2025-04-14"]
        note = client.beta.files.upload(file=("note.txt", b"Plan A costs $10 a seat. " * 40, "text/plain"), betas=betas)
        assert note.created_at.year >= 2026 and [f.id for f in client.beta.files.list(betas=betas)] == [note.id]
        ask = lambda source: client.beta.messages.count_tokens(model=MODEL, betas=betas, messages=[  # noqa: E731
            {"role": "user", "content": [{"type": "document", "source": source}, {"type": "text", "text": "Sum up."}]}])
        assert ask({"type": "file", "file_id": note.id}).input_tokens == ask(
            {"type": "text", "media_type": "text/plain", "data": "Plan A costs $10 a seat. " * 40}).input_tokens > 200
