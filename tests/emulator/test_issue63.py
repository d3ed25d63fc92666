"""Issue 63: documents, citations, search results, Anthropic-defined tools and structured outputs,
through the real SDK on the in-process emulator. Pages:

[BASH] https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool ("Pricing")
[TE]   https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool ("Pricing")
[SO]   https://platform.claude.com/docs/en/build-with-claude/structured-outputs
[CIT]  https://platform.claude.com/docs/en/build-with-claude/citations
[SR]   https://platform.claude.com/docs/en/build-with-claude/search-results
[PDF]  https://platform.claude.com/docs/en/build-with-claude/pdf-support
[FILES] https://platform.claude.com/docs/en/build-with-claude/files
"""

from __future__ import annotations

import re

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.provider.models import MODELS

from .pdf_maker import make_pdf, page_of_text, pdf_b64

HI = [{"role": "user", "content": "List the files."}]


def client(model="claude-sonnet-4-6", **kw):
    return Emulator(model=model, **kw).client(max_retries=0)


def counted(c, model, **kw):
    return c.beta.messages.count_tokens(model=model, messages=kw.pop("messages", HI), **kw).input_tokens


@pytest.mark.parametrize("model, bash", [("claude-opus-4-7", 325), ("claude-opus-4-8", 325), ("claude-opus-5", 325),
                                         ("claude-opus-4-6", 244), ("claude-sonnet-4-6", 244), ("claude-haiku-4-5", 244)])
def test_the_bash_tool_adds_the_tokens_its_page_gives_on_each_model(model, bash):
    c = client(model)
    tool_prompt = MODELS[model].tool_prompt[0]
    bare = counted(c, model)
    assert counted(c, model, tools=[{"type": "bash_20250124", "name": "bash"}]) - bare == tool_prompt + bash  # [BASH]
    if model.split("-")[2] == "4":  # text_editor_20250429 is Claude 4's [TE]
        both = counted(c, model, tools=[{"type": "bash_20250124", "name": "bash"},
                                        {"type": "text_editor_20250429", "name": "str_replace_based_edit_tool"}])
        assert both - bare == tool_prompt + bash + 700


def _props(n: int, union: bool = False) -> dict:
    kind = {"type": ["string", "null"]} if union else {"type": "string"}
    return {f"p{k}": dict(kind) for k in range(n)}


def _object(optional: int = 0, unions: int = 0) -> dict:
    """An object schema with ``optional`` optional string properties and ``unions`` required union-typed ones."""
    union = {f"u{k}": {"anyOf": [{"type": "string"}, {"type": "integer"}]} for k in range(unions)}
    return {"type": "object", "properties": {**_props(optional), **union}, "required": list(union),
            "additionalProperties": False}


def _ask(c, tool_schema=None, format_schema=None):
    kw = {}
    if tool_schema is not None:
        kw["tools"] = [{"name": "lookup", "description": "look up", "strict": True, "input_schema": tool_schema}]
    if format_schema is not None:
        kw["output_config"] = {"format": {"type": "json_schema", "schema": format_schema}}
    return c.messages.create(model="claude-sonnet-4-6", max_tokens=200, messages=HI, **kw)


@pytest.mark.parametrize("tool, fmt, says", [
    (None, _object(optional=25), "too many optional parameters (25)"),
    (_object(optional=5), _object(optional=20), "too many optional parameters (25)"),
    (_object(unions=17), None, "too many parameters with union types (17"),
    (_object(unions=9), _object(unions=8), "too many parameters with union types (17"),
    ({"type": "object", "properties": {"rows": {"type": "array", "items": _object(optional=25)}}, "required": ["rows"],
      "additionalProperties": False}, None, "too many optional parameters (25)"),  # in array items too
])
def test_strict_schemas_over_the_complexity_limits_together_are_refused(tool, fmt, says):
    """[SO "Schema complexity limits"]: 24 optional and 16 union-typed parameters across every strict
    schema of the request, the tools and the output format together."""
    c = client()
    with pytest.raises(anthropic.BadRequestError, match=re.escape(says)):
        _ask(c, tool, fmt)


def test_strict_schemas_at_the_complexity_limits_are_answered():
    c = client()
    _ask(c, _object(optional=4, unions=8), _object(optional=20, unions=8))
    c.messages.create(model="claude-sonnet-4-6", max_tokens=200, messages=HI, tools=[  # a tool not strict: not counted
        {"name": "loose", "description": "not strict", "input_schema": {"type": "object", "properties": _props(30)}}])


# -- documents: PDFs priced by their pages [PDF] ----------------------------------------------------

def pdf_document(data: str, **kw) -> dict:
    return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}, **kw}


def with_document(block: dict, text: str = "Summarize it.") -> list[dict]:
    return [{"role": "user", "content": [block, {"type": "text", "text": text}]}]


def test_a_us_letter_page_of_plain_text_counts_within_the_documented_range_on_sonnet_4_6():
    """"Each page typically uses 1,500-3,000 tokens per page" [PDF]: the page-image size assumed in
    documents.py puts a page of plain text inside it; a bare page of the same size counts its image."""
    c = client()
    bare = counted(c, "claude-sonnet-4-6")
    page = counted(c, "claude-sonnet-4-6", messages=with_document(pdf_document(pdf_b64([page_of_text()])))) - bare
    assert 1_500 <= page <= 3_000, page
    two = counted(c, "claude-sonnet-4-6", messages=with_document(pdf_document(pdf_b64([page_of_text()] * 2)))) - bare
    assert two - page == pytest.approx(page, abs=8)  # each page costs as much again
    # per model: Opus 4.7 renders the page at its own vision limits and counts text by its tokenizer
    opus = client("claude-opus-4-7")
    assert counted(opus, "claude-opus-4-7", messages=with_document(pdf_document(pdf_b64([page_of_text()])))) \
        - counted(opus, "claude-opus-4-7") > page


def test_a_one_page_scan_of_3_mb_costs_a_page_not_its_bytes():
    """Issue 63 item 1: a one-page PDF carrying a 3 MB image stream counted 1,000,164 tokens (a 400 on a
    200K window, and count_tokens refused it even on Sonnet 4.6)."""
    scan = pdf_b64([""], image_bytes=3_000_000)
    for model in ("claude-sonnet-4-6", "claude-haiku-4-5"):  # a 1M and a 200K window
        c = client(model)
        added = counted(c, model, messages=with_document(pdf_document(scan))) - counted(c, model)
        assert 1_000 < added < 3_000, (model, added)
        c.messages.create(model=model, max_tokens=100, messages=with_document(pdf_document(scan)))


def test_the_page_limit_is_100_under_a_1m_window_and_600_on_one():
    """[PDF]: 600 pages per request, 100 where the context window is under 1M tokens."""
    pages = pdf_b64(["p"] * 101)
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 100 PDF pages"):
        client("claude-haiku-4-5").messages.create(model="claude-haiku-4-5", max_tokens=50,
                                                  messages=with_document(pdf_document(pages)))
    client().messages.count_tokens(model="claude-sonnet-4-6", messages=with_document(pdf_document(pages)))  # 1M window


def test_a_pdf_and_an_image_by_url_count_the_same_way_at_their_most():
    c = client()
    bare = counted(c, "claude-sonnet-4-6")
    image = counted(c, "claude-sonnet-4-6", messages=with_document(
        {"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}})) - bare
    pdf = counted(c, "claude-sonnet-4-6", messages=with_document(
        {"type": "document", "source": {"type": "url", "url": "https://example.test/a.pdf"}})) - bare
    assert abs(image - 1_568) <= 8 and abs(pdf - image) <= 8  # the most an image, and a page image, costs


# -- documents and search results: every required field checked [PDF; CIT; SR] --------------------

TEXT_DOC = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Plan A costs $10."}}
RESULT = {"type": "search_result", "source": "https://example.test/prices", "title": "Prices",
          "content": [{"type": "text", "text": "Plan A costs $10."}]}


@pytest.mark.parametrize("block, says", [
    ({"type": "document"}, "messages.0.content.0.source: Field required"),
    ({"type": "document", "source": {"type": "banana"}}, "Input tag 'banana' found using 'type'"),
    ({"type": "document", "source": {"type": "base64", "media_type": "application/pdf"}},
     "source.base64.data: Field required"),
    ({"type": "document", "source": {"type": "base64", "media_type": "image/png", "data": pdf_b64(["x"])}},
     "source.base64.media_type: Input should be 'application/pdf'"),
    ({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "aGVsbG8="}},
     "The PDF specified was not valid"),  # a body that is no PDF
    ({"type": "document", "source": {"type": "text", "media_type": "application/pdf", "data": "hi"}},
     "source.text.media_type: Input should be 'text/plain'"),
    ({"type": "document", "source": {"type": "url"}}, "source.url.url: Field required"),
    ({**TEXT_DOC, "citations": "yes"}, "citations: Input should be a valid dictionary"),
    ({k: v for k, v in RESULT.items() if k != "title"}, "messages.0.content.0.title: Field required"),
    ({k: v for k, v in RESULT.items() if k != "source"}, "messages.0.content.0.source: Field required"),
    ({**RESULT, "content": [{"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}}]},
     "content.0.type: Input should be 'text'"),
    ({**RESULT, "content": [{"type": "text", "text": ""}]}, "text content blocks must be non-empty"),
    ({**RESULT, "citations": "yes"}, "citations: Input should be a valid dictionary"),
])
def test_a_malformed_document_or_search_result_is_the_apis_400(block, says):
    with pytest.raises(anthropic.BadRequestError, match=re.escape(says)):
        client().messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=with_document(block))


def test_a_malformed_search_result_inside_a_tool_result_is_refused_too():
    messages = [{"role": "user", "content": "Search."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                              "content": [{k: v for k, v in RESULT.items() if k != "title"}]}]}]
    tools = [{"name": "search", "description": "search", "input_schema": {"type": "object"}}]
    with pytest.raises(anthropic.BadRequestError, match=re.escape("messages.2.content.0.content.0.title: Field required")):
        client().messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=messages, tools=tools)


ON, OFF = {"citations": {"enabled": True}}, {"citations": {"enabled": False}}


@pytest.mark.parametrize("first, second", [({**TEXT_DOC, **ON}, TEXT_DOC), ({**TEXT_DOC, **ON}, {**TEXT_DOC, **OFF}),
                                           ({**RESULT, **ON}, RESULT)])
def test_citations_are_enabled_on_all_or_none_of_the_documents_and_of_the_search_results(first, second):
    """[CIT]: all or none of the documents; [SR]: all search results the same setting."""
    c = client()
    noun = "documents" if first["type"] == "document" else "search results"
    with pytest.raises(anthropic.BadRequestError, match=f"all or none of the {noun}"):
        c.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=[
            {"role": "user", "content": [first, {"type": "text", "text": "a"}]},
            {"role": "assistant", "content": "ok"}, {"role": "user", "content": [second, {"type": "text", "text": "b"}]}])
    c.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=[  # both on: answered
        {"role": "user", "content": [first, {**second, **ON}, {"type": "text", "text": "a"}]}])
    # a document with citations and search results without: two kinds, each consistent
    c.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=[
        {"role": "user", "content": [{**TEXT_DOC, **ON}, RESULT, {"type": "text", "text": "a"}]}])


# -- a reply that cites, and what its cited_text costs [CIT "Token costs"] --------------------------

LONG = ("Plan A costs ten dollars a seat per month, billed yearly; plan B costs twenty. " * 100)[:8_000]


def citing(request):
    from minimal_runtime.emulator.documents import cite
    return [{"type": "text", "text": "Plan A is cheaper.", "citations": [cite(request, 0)]}]


def test_a_policy_cites_in_the_documented_shapes_and_cited_text_is_billed_neither_out_nor_in():
    from minimal_runtime.emulator.documents import cite
    doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": LONG}, "title": "Prices", **ON}
    c = client(policy=citing)
    messages = [{"role": "user", "content": [doc, {"type": "text", "text": "Which plan is cheaper?"}]}]
    reply = c.messages.create(model="claude-sonnet-4-6", max_tokens=400, messages=messages)
    (citation,) = reply.content[0].citations
    assert isinstance(citation, anthropic.types.CitationCharLocation)  # the SDK reads the documented shape
    assert (citation.cited_text, citation.document_index, citation.document_title, citation.start_char_index,
            citation.end_char_index) == (LONG, 0, "Prices", 0, len(LONG))
    assert reply.usage.output_tokens < 100  # 7,900 characters cited: not output [CIT]
    sent_back = [*messages, {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                 {"role": "user", "content": "Thanks."}]
    short = [*sent_back[:1], {"role": "assistant", "content": [{**sent_back[1]["content"][0], "citations": [
        {**sent_back[1]["content"][0]["citations"][0], "cited_text": "P"}]}]}, sent_back[2]]
    assert counted(c, "claude-sonnet-4-6", messages=sent_back) == counted(c, "claude-sonnet-4-6", messages=short)  # not input
    # the other documented shapes: a PDF by pages, custom content by blocks, a search result by blocks
    pdf = pdf_document(pdf_b64(["Plan A: $10", "Plan B: $20"]), **ON)
    custom = {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "Plan A: $10"},
                                                                            {"type": "text", "text": "Plan B: $20"}]}, **ON}
    request = {"messages": [{"role": "user", "content": [pdf, custom, {**RESULT, **ON}]}]}
    assert cite(request, 0, 1, 2) == {"type": "page_location", "cited_text": "Plan A: $10", "document_index": 0,
                                      "document_title": None, "start_page_number": 1, "end_page_number": 2}
    assert cite(request, 1, 1, 2)["cited_text"] == "Plan B: $20" and cite(request, 1)["type"] == "content_block_location"
    assert cite(request, 0, kind="search_result") == {
        "type": "search_result_location", "cited_text": "Plan A costs $10.", "source": RESULT["source"], "title": "Prices",
        "search_result_index": 0, "start_block_index": 0, "end_block_index": 1}
    with pytest.raises(ValueError, match="not enabled"):
        cite({"messages": [{"role": "user", "content": [TEXT_DOC]}]}, 0)


def test_the_default_policy_never_cites():
    doc = {**TEXT_DOC, **ON}
    reply = client().messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=with_document(doc))
    assert all(not getattr(b, "citations", None) for b in reply.content)


# -- the Files API [FILES] ------------------------------------------------------------------------

FILES = ["files-api-2025-04-14"]


def test_files_are_uploaded_listed_retrieved_used_and_deleted_per_api_key_and_counted_as_their_content():
    emu = Emulator(model="claude-sonnet-4-6")
    c, other = emu.client(max_retries=0), emu.client(max_retries=0, api_key="someone-else")
    pdf = make_pdf([page_of_text()])
    with pytest.raises(anthropic.BadRequestError, match="files-api-2025-04-14"):  # the beta header is required
        c.beta.files.upload(file=("prices.pdf", pdf, "application/pdf"))
    uploaded = c.beta.files.upload(file=("prices.pdf", pdf, "application/pdf"), betas=FILES)
    note = c.beta.files.upload(file=("note.txt", b"Plan A costs $10.", "text/plain"), betas=FILES)
    assert (uploaded.filename, uploaded.mime_type, uploaded.size_bytes, uploaded.downloadable) == \
        ("prices.pdf", "application/pdf", len(pdf), False)
    assert [f.id for f in c.beta.files.list(betas=FILES)] == [note.id, uploaded.id]  # newest first
    assert [f.id for f in c.beta.files.list(betas=FILES, limit=1)] == [note.id, uploaded.id]  # the SDK follows pages
    assert c.beta.files.retrieve_metadata(uploaded.id, betas=FILES) == uploaded
    assert list(other.beta.files.list(betas=FILES)) == []  # another key's files are not listed
    with pytest.raises(anthropic.NotFoundError, match=f"File not found: {uploaded.id}"):
        other.beta.files.retrieve_metadata(uploaded.id, betas=FILES)
    with pytest.raises(anthropic.BadRequestError, match="cannot be downloaded"):  # uploads never are [FILES]
        c.beta.files.download(uploaded.id, betas=FILES)
    # a file source counts what the same content sent inline counts
    by_file = with_document({"type": "document", "source": {"type": "file", "file_id": uploaded.id}})
    inline = with_document(pdf_document(pdf_b64([page_of_text()])))
    assert counted(c, "claude-sonnet-4-6", messages=by_file, betas=FILES) == \
        counted(c, "claude-sonnet-4-6", messages=inline)
    text = with_document({"type": "document", "source": {"type": "file", "file_id": note.id}})
    assert counted(c, "claude-sonnet-4-6", messages=text, betas=FILES) == counted(c, "claude-sonnet-4-6", messages=with_document(
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Plan A costs $10."}}))
    c.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=by_file, betas=FILES)
    with pytest.raises(anthropic.BadRequestError, match="Invalid file type"):  # a PDF in an image block
        c.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, betas=FILES, messages=with_document(
            {"type": "image", "source": {"type": "file", "file_id": uploaded.id}}))
    with pytest.raises(anthropic.NotFoundError, match=f"File not found: {uploaded.id}"):  # not this key's
        other.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=by_file, betas=FILES)
    assert c.beta.files.delete(uploaded.id, betas=FILES).id == uploaded.id
    with pytest.raises(anthropic.NotFoundError, match=f"File not found: {uploaded.id}"):  # deleted: unknown
        c.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=by_file, betas=FILES)
    assert [f.id for f in c.beta.files.list(betas=FILES)] == [note.id]


# -- fast mode's own rate-limit headers [FM "Rate limits"] ----------------------------------------

FAST_HEADERS = {f"anthropic-fast-{kind}-tokens-{what}" for kind in ("input", "output") for what in ("limit", "remaining", "reset")}


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_ran_fast_carries_the_six_fast_rate_limit_headers(stream):
    c = client("claude-opus-5-5")
    raw = c.messages.with_raw_response.create(model="claude-opus-5-5", max_tokens=50, messages=HI, speed="fast",
                                              stream=stream)
    assert FAST_HEADERS <= set(raw.headers) and int(raw.headers["anthropic-fast-input-tokens-remaining"]) > 0
    standard = c.messages.with_raw_response.create(model="claude-opus-5-5", max_tokens=50, messages=HI)
    assert not FAST_HEADERS & set(standard.headers)  # a standard-speed answer carries only the usual ones
