"""Documents and search results: what each block must hold, what it costs, and how a reply cites it.

[PDF] https://platform.claude.com/docs/en/build-with-claude/pdf-support
[CIT] https://platform.claude.com/docs/en/build-with-claude/citations
[SR]  https://platform.claude.com/docs/en/build-with-claude/search-results
[VIS] https://platform.claude.com/docs/en/build-with-claude/vision

What a PDF costs follows from its pages, never from its bytes: "Each page typically uses 1,500-3,000
tokens per page", and "because each page is converted into an image, the same image-based cost
calculations are applied" besides "the extracted text" [PDF "Estimate your costs", "How PDF support
works"]. So a page counts its text by the tokenizer plus its image by the vision rule of the model
(``tokens.scaled_image_tokens``). The page count and text are read from the PDF itself (``pypdf``).

The page image's size is not published. ASSUMPTION: a page renders at ``PDF_SCALE`` = 2 pixels per PDF
point (144 dpi). A US Letter page (612 x 792 points, 1224 x 1584 px) then costs 1,496 visual tokens on
Sonnet 4.6 (scaled to fit its 1,568 px and 1,568 tokens) and a page full of plain text (3,033
characters, 759 text tokens) 2,255 in all: inside the documented 1,500-3,000 (tests/emulator/test_issue63.py
measures it). At 72 dpi the same page would cost 638 + 759 = 1,397, below the range. On Opus 4.7 and
later (2,576 px, 4,784 tokens, the 1.3x tokenizer) the page costs 2,508 visual tokens, 3,494 in all.

A PDF given by URL cannot be read offline, and neither its pages nor its size can be known: it counts
as one page at the most a page image costs on the model, the same rule as an image by URL (one image
at its maximum); a PDF of more pages is undercounted (docs/emulator.md says so). A ``file`` source is
resolved to its content before it is counted (``files.py``).

Citations: "cited_text does not count toward output tokens" and "when passed back in subsequent
conversation turns, cited_text is also not counted toward input tokens" [CIT "Token costs"], so a
text block's citations count without it (``uncited``). Citations must be enabled on all or none of
the documents of a request, and all search results must use the same setting [CIT; SR "Citations"]
(the words of the 400 are ours). A policy cites with ``cite``; the default policy never does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import threading
from collections import OrderedDict
from typing import Any

from .errors import bad_request
from .tokens import estimate_tokens, image_tokens, scaled_image_tokens

PDF_SCALE = 2  # ASSUMPTION (see above): pixels per PDF point of a page's image
SOURCE_TYPES = ("base64", "content", "file", "text", "url")
# [PDF "PDF support requirements"]: "Maximum pages per request: 600 (100 for models with a 200k-token
# context window)", as issue 63 quotes it: 100 when the request's context window is under 1M tokens.
MAX_PAGES, MAX_PAGES_SMALL_WINDOW = 600, 100


# -- what a PDF holds -------------------------------------------------------------------------------

_READ: OrderedDict[bytes, tuple | None] = OrderedDict()  # the last PDFs read, by digest: not their bytes
_LOCK = threading.Lock()


def pdf_pages(data: str) -> tuple[tuple[float, float, str], ...] | None:
    """(width, height, text) of each page of a base64 PDF, sizes in points; None if it is no PDF. A
    conversation resends its PDFs on every call, so the last 64 read are remembered by digest."""
    key = hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _LOCK:
        if key in _READ:
            _READ.move_to_end(key)
            return _READ[key]
    pages = _read_pdf(data)
    with _LOCK:
        _READ[key] = pages
        while len(_READ) > 64:
            _READ.popitem(last=False)
    return pages


def _read_pdf(data: str) -> tuple[tuple[float, float, str], ...] | None:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw.lstrip()[:5] == b"%PDF-":
        return None
    from pypdf import PdfReader  # imported where a PDF is read: a dependency of the emulator, not of core/
    from pypdf.errors import PyPdfError
    try:
        reader = PdfReader(io.BytesIO(raw))
        pages = []
        for page in reader.pages:
            box = page.mediabox
            width, height = float(box.width), float(box.height)
            if int(page.get("/Rotate") or 0) % 180:
                width, height = height, width
            pages.append((width, height, page.extract_text() or ""))
        return tuple(pages)
    except (PyPdfError, ValueError, TypeError, KeyError, AttributeError, OSError, RecursionError):
        return None


def page_tokens(width: float, height: float, text: str, limits: tuple[int, int], tokenizer: float) -> int:
    """One page: its text by the tokenizer, plus its image (``PDF_SCALE`` px a point) by the vision rule."""
    picture = scaled_image_tokens(max(1, math.ceil(width * PDF_SCALE)), max(1, math.ceil(height * PDF_SCALE)), *limits)
    return picture + (estimate_tokens(text, tokenizer) if text.strip() else 0)


def document_tokens(block: dict, limits: tuple[int, int], tokenizer: float) -> int:
    """Tokens of a document block: its title, context and citation setting as text, plus its source
    (a PDF by its pages, a text by the tokenizer, a content list block by block)."""
    rest = {k: v for k, v in block.items() if k not in ("source", "cache_control")}
    n = estimate_tokens(json.dumps(rest, ensure_ascii=False, sort_keys=True), tokenizer)
    source = block.get("source") or {}
    kind = source.get("type")
    if kind == "base64":
        pages = pdf_pages(source.get("data") or "") or ()
        return n + sum(page_tokens(w, h, t, limits, tokenizer) for w, h, t in pages)
    if kind == "text":
        return n + estimate_tokens(source.get("data") or "", tokenizer)
    if kind == "content":
        content = source.get("content")
        if isinstance(content, str):
            return n + estimate_tokens(content, tokenizer)
        return n + sum(image_tokens(b, limits) if b.get("type") == "image" else estimate_tokens(b.get("text") or "", tokenizer)
                       for b in content or [] if isinstance(b, dict))
    return n + limits[1]  # by URL (or an unresolved file): one page at the most its image costs, as an image by URL


def uncited(block: dict) -> dict:
    """A text block as it is billed: its citations without their ``cited_text`` [CIT "Token costs"]."""
    return {**block, "citations": [{k: v for k, v in c.items() if k != "cited_text"} if isinstance(c, dict) else c
                                   for c in block["citations"]]}


# -- what a block must hold -------------------------------------------------------------------------

def _required(block: dict, field: str, where: str, kind: type = str) -> Any:
    value = block.get(field)
    if value is None:
        raise bad_request(f"{where}.{field}: Field required")
    if not isinstance(value, kind):
        raise bad_request(f"{where}.{field}: Input should be a valid {'string' if kind is str else kind.__name__}")
    return value


def _check_citations(block: dict, where: str) -> None:
    if "citations" in block and block["citations"] is not None:
        setting = block["citations"]
        if not isinstance(setting, dict):
            raise bad_request(f"{where}.citations: Input should be a valid dictionary or object to extract fields from")
        if "enabled" in setting and not isinstance(setting["enabled"], bool):
            raise bad_request(f"{where}.citations.enabled: Input should be a valid boolean")


def _check_text_blocks(blocks: Any, where: str, allowed: tuple[str, ...]) -> None:
    if not isinstance(blocks, list) or not blocks:
        raise bad_request(f"{where}: Input should be a non-empty list of content blocks")
    for k, b in enumerate(blocks):
        kind = b.get("type") if isinstance(b, dict) else None
        if kind not in allowed:
            raise bad_request(f"{where}.{k}.type: Input should be {' or '.join(repr(a) for a in allowed)}")
        if kind == "text":
            if not isinstance(b.get("text"), str):
                raise bad_request(f"{where}.{k}.text: Field required")
            if not b["text"].strip():
                raise bad_request("messages: text content blocks must be non-empty")


def check_document(block: dict, where: str, context_window: int | None) -> None:
    """The 400 the API answers for a malformed document block [PDF; CIT "Document types"; the SDK's
    ``Base64PDFSource``, ``PlainTextSource``, ``ContentBlockSource``, ``URLPDFSource``, ``FileDocumentSource``]:
    each source type's required fields and media type, the citation setting's shape, a base64 body
    that is a PDF, and the page limit. Where the docs give no words, the words are pydantic's, as the
    API answers a malformed field."""
    source = block.get("source")
    if source is None:
        raise bad_request(f"{where}.source: Field required")
    if not isinstance(source, dict):
        raise bad_request(f"{where}.source: Input should be a valid dictionary or object to extract fields from")
    kind = source.get("type")
    if kind not in SOURCE_TYPES:
        raise bad_request(f"{where}.source: Input tag {kind!r} found using 'type' does not match any of the expected "
                          f"tags: {', '.join(repr(t) for t in SOURCE_TYPES)}")
    at = f"{where}.source.{kind}"
    if kind == "base64":
        data = _required(source, "data", at)
        if source.get("media_type") != "application/pdf":
            raise bad_request(f"{at}.media_type: Input should be 'application/pdf'")
        check_pdf(data, where, context_window)
    elif kind == "text":
        _required(source, "data", at)
        if source.get("media_type") != "text/plain":
            raise bad_request(f"{at}.media_type: Input should be 'text/plain'")
    elif kind == "content":
        content = source.get("content")
        if not isinstance(content, str):
            _check_text_blocks(content, f"{at}.content", ("text", "image"))
    elif kind == "url":
        _required(source, "url", at)
    else:
        _required(source, "file_id", at)
    for field in ("title", "context"):
        if block.get(field) is not None and not isinstance(block[field], str):
            raise bad_request(f"{where}.{field}: Input should be a valid string")
    _check_citations(block, where)


def check_pdf(data: str, where: str, context_window: int | None) -> None:
    """A base64 body that is no PDF is refused [PDF is silent on the words: ours]; so is one over the page limit."""
    pages = pdf_pages(data)
    if pages is None:
        raise bad_request(f"{where}.source.base64.data: The PDF specified was not valid.")
    limit = MAX_PAGES_SMALL_WINDOW if context_window is not None and context_window < 1_000_000 else MAX_PAGES
    if len(pages) > limit:
        raise bad_request(f"{where}: A maximum of {limit} PDF pages may be provided (this one has {len(pages)}).")


def check_search_result(block: dict, where: str) -> None:
    """[SR "Search result schema"]: ``source`` and ``title`` strings, ``content`` a list of text blocks
    (non-empty text), optional ``citations`` {enabled}."""
    _required(block, "source", where)
    _required(block, "title", where)
    if "content" not in block:
        raise bad_request(f"{where}.content: Field required")
    _check_text_blocks(block["content"], f"{where}.content", ("text",))
    _check_citations(block, where)


# -- all or none ------------------------------------------------------------------------------------

def enabled(block: dict) -> bool:
    setting = block.get("citations")
    return isinstance(setting, dict) and setting.get("enabled") is True


def check_all_or_none(found: list[tuple[int, str, bool]]) -> None:
    """``found``: (message, block type, citations enabled) of every document and search result."""
    for kind, noun in (("document", "documents"), ("search_result", "search results")):
        items = [(m, on) for m, k, on in found if k == kind]
        if any(on != items[0][1] for _, on in items):
            first = next(m for m, on in items if on != items[0][1])
            raise bad_request(f"messages.{first}: citations must be enabled on all or none of the {noun} in a "
                              "request; some have them enabled and some do not")


def scan(messages: list, start: int) -> list[tuple[int, int, int, dict]]:
    """(message, block, inner block or -1, block) of each document, search result and file-sourced
    image from message ``start`` on, a tool result's content included."""
    found = []
    for m in range(start, len(messages)):
        content = messages[m].get("content") if isinstance(messages[m], dict) else None
        if not isinstance(content, list):
            continue
        for i, b in enumerate(content):
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind in ("document", "search_result") or kind == "image" and is_file(b):
                found.append((m, i, -1, b))
            elif kind == "tool_result" and isinstance(b.get("content"), list):
                found += [(m, i, k, x) for k, x in enumerate(b["content"]) if isinstance(x, dict) and (
                    x.get("type") in ("document", "search_result") or x.get("type") == "image" and is_file(x))]
    return found


def is_file(block: dict) -> bool:
    source = block.get("source")
    return isinstance(source, dict) and source.get("type") == "file"


# -- a reply that cites -----------------------------------------------------------------------------

def cite(request: dict, index: int, start: int = 0, end: int | None = None, kind: str = "document") -> dict:
    """A citation of the request's ``index``-th citable item, shaped as [CIT] and [SR] show it: a
    plain-text document by characters (``char_location``), a PDF by pages (``page_location``, 1-based,
    end exclusive), a custom-content document by blocks (``content_block_location``), a search result
    by blocks (``search_result_location``). ``kind`` is "document" or "search_result": each is numbered
    apart, in the order the request holds them. For a policy that cites; raises if that item has
    citations off."""
    block = [b for _, _, _, b in scan(request.get("messages") or [], 0) if b.get("type") == kind][index]
    if not enabled(block):
        raise ValueError(f"cannot cite {kind} {index}: its citations are not enabled")
    if kind == "search_result":
        texts = [b["text"] for b in block["content"]]
        end = len(texts) if end is None else end
        return {"type": "search_result_location", "cited_text": " ".join(texts[start:end]), "source": block["source"],
                "title": block.get("title"), "search_result_index": index, "start_block_index": start,
                "end_block_index": end}
    source, title = block["source"], block.get("title")
    common = {"document_index": index, "document_title": title}
    if source["type"] == "text":
        end = len(source["data"]) if end is None else end
        return {"type": "char_location", "cited_text": source["data"][start:end], **common,
                "start_char_index": start, "end_char_index": end}
    if source["type"] == "content":
        parts = [source["content"]] if isinstance(source["content"], str) else [b.get("text", "") for b in source["content"]]
        end = len(parts) if end is None else end
        return {"type": "content_block_location", "cited_text": " ".join(parts[start:end]), **common,
                "start_block_index": start, "end_block_index": end}
    pages = pdf_pages(source.get("data") or "") or ()
    first = max(1, start)
    end = len(pages) + 1 if end is None else end
    return {"type": "page_location", "cited_text": " ".join(t for _, _, t in pages[first - 1:end - 1]), **common,
            "start_page_number": first, "end_page_number": end}
