"""Rules an outside check of the emulator against the provider's words found missing: each probe
goes through the real SDK, and each expectation is the documented one (API-2026.md section, or the
SDK 2.15 type that fixes the wire shape)."""

from __future__ import annotations

import base64
import struct
import zlib

import anthropic
import pytest
from anthropic.types import ImageDimensionsTooLargeError, MessageDeltaUsage
from anthropic.types.beta import BetaMessageDeltaUsage

from minimal_runtime.emulator import Emulator
from .helpers import FakeClock
from .pdf_maker import pdf_b64

SONNET46 = "claude-sonnet-4-6"
OPUS55 = "claude-opus-5-5"


def png(width: int, height: int) -> str:
    """A PNG header of the given size, base64 (the emulator reads a size from the header, as a
    decoder would before the pixels)."""
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return base64.b64encode(raw + struct.pack(">I", zlib.crc32(raw[12:29]))).decode()


def image(width: int, height: int) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png(width, height)}}


def client(model: str = SONNET46) -> anthropic.Anthropic:
    return Emulator(model=model, clock=FakeClock()).client()


def ask(*blocks: dict) -> list[dict]:
    return [{"role": "user", "content": [*blocks, {"type": "text", "text": "What is in these?"}]}]


def test_an_image_over_8000_pixels_a_side_is_refused_with_the_sdks_error_and_its_path():
    """§13 (live words, CAP ids 70365336000, 67141985279): "messages.{i}.content.{j}.image.source.base64.data:
    At least one of the image dimensions exceed max allowed size: 8000 pixels"; the SDK 2.15 raises
    ``ImageDimensionsTooLargeError`` on ``error_code`` ``image_dimensions_too_large``, whose details
    name the limit and the path of every image over it, a tool_result's images included
    (``types/image_dimensions_too_large_error_details.py``). 8000 itself is allowed."""
    cl = client()
    assert cl.messages.create(model=SONNET46, max_tokens=50, messages=ask(image(8000, 10))).stop_reason
    messages = [
        {"role": "user", "content": [image(10, 8001), {"type": "text", "text": "Fetch the chart too."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [image(9000, 10)]}]},
    ]
    tools = [{"name": "fetch", "description": "Fetch a chart.", "input_schema": {"type": "object"}}]
    with pytest.raises(ImageDimensionsTooLargeError) as caught:
        cl.messages.create(model=SONNET46, max_tokens=50, messages=messages, tools=tools)
    error = caught.value.body["error"]
    assert caught.value.status_code == 400 and error["type"] == "invalid_request_error"
    assert error["message"] == ("messages.0.content.0.image.source.base64.data: At least one of the image dimensions "
                                "exceed max allowed size: 8000 pixels")
    assert error["details"] == {"error_code": "image_dimensions_too_large", "max_side_length_pixels": 8000,
                                "paths": ["messages.0.content.0", "messages.2.content.0.content.0"]}


def test_with_more_than_20_images_each_side_is_capped_at_2000_pixels():
    """§13: "... exceed max allowed size for many-image requests: 2000 pixels" when a request holds
    more than 20 images; 20 images of 2001 pixels are fine."""
    cl = client()
    assert cl.messages.create(model=SONNET46, max_tokens=50, messages=ask(*[image(2001, 10)] * 20)).stop_reason
    with pytest.raises(ImageDimensionsTooLargeError) as caught:
        cl.messages.create(model=SONNET46, max_tokens=50, messages=ask(*[image(100, 100)] * 20, image(10, 2001)))
    error = caught.value.body["error"]
    assert error["message"] == ("messages.0.content.20.image.source.base64.data: At least one of the image dimensions "
                                "exceed max allowed size for many-image requests: 2000 pixels")
    assert error["details"]["max_side_length_pixels"] == 2000 and error["details"]["paths"] == ["messages.0.content.20"]


def test_the_image_limit_counts_images_a_later_request_repeats():
    """The emulator re-checks only what is new in a growing conversation: the 21st image, sent later,
    still caps the 20 sent before it."""
    cl = client()
    history = ask(*[image(2001, 10)] * 20)
    reply = cl.messages.create(model=SONNET46, max_tokens=50, messages=history)
    history = [*history, {"role": "assistant", "content": [b.model_dump() for b in reply.content]}]
    with pytest.raises(ImageDimensionsTooLargeError) as caught:
        cl.messages.create(model=SONNET46, max_tokens=50, messages=[*history, *ask(image(10, 10))])
    assert len(caught.value.body["error"]["details"]["paths"]) == 20


def test_on_demand_compaction_after_an_unanswered_tool_use_is_compaction_incomplete_turn():
    """§4.2 [COD]: on-demand compaction refuses "a trailing assistant tool_use without its result"; the
    SDK 2.15 names that 400 ``compaction_incomplete_turn`` ("The compaction request ends on an
    `assistant` turn that is not finished", ``types/compaction_incomplete_turn_error_details.py``)."""
    cl = client(OPUS55)
    messages = [{"role": "user", "content": "Look it up."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {}}]}]
    with pytest.raises(anthropic.BadRequestError) as caught:
        cl.beta.messages.create(model=OPUS55, max_tokens=100, messages=messages, compaction={"type": "summarize"},
                                tools=[{"name": "fetch", "description": "d", "input_schema": {"type": "object"}}],
                                betas=["compact-2026-09-04"])
    assert caught.value.body["error"]["details"] == {"error_code": "compaction_incomplete_turn"}


@pytest.mark.parametrize("beta", [False, True])
def test_a_streamed_message_delta_carries_only_the_fields_of_its_usage_type(beta):
    """The SDK types the final ``message_delta``'s usage as ``MessageDeltaUsage`` /
    ``BetaMessageDeltaUsage``: no ``cache_creation``, ``inference_geo``, ``speed`` or ``service_tier``
    (those come in ``message_start``, which the SDK's accumulator keeps). The final message is
    unchanged."""
    cl = client(OPUS55)
    api = cl.beta.messages if beta else cl.messages
    kwargs = {"betas": ["context-management-2025-06-27"]} if beta else {}
    with api.stream(model=OPUS55, max_tokens=100, messages=[{"role": "user", "content": "hi"}], **kwargs) as stream:
        deltas = [e for e in stream if e.type == "message_delta"]
        final = stream.get_final_message()
    usage_type = BetaMessageDeltaUsage if beta else MessageDeltaUsage
    (delta,) = deltas
    assert delta.usage.model_extra == {} and set(delta.usage.model_fields_set) <= set(usage_type.model_fields)
    assert final.usage.cache_creation is not None and final.usage.inference_geo == "global"


PDF = pdf_b64(["The sky is blue."])  # a real one-page PDF: the emulator reads its pages
FORMAT = {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"a": {"type": "string"}},
                                                       "required": ["a"], "additionalProperties": False}}}


def missing_required(obj, path: str = "capabilities") -> list[str]:
    """The required fields of an SDK model (and of the models inside it) that the answer left out."""
    out = []
    for name, field in type(obj).model_fields.items():
        value = getattr(obj, name, None)
        if field.is_required() and (name not in obj.model_fields_set or value is None):
            out.append(f"{path}.{name}")
        elif isinstance(value, anthropic.BaseModel):
            out += missing_required(value, f"{path}.{name}")
    return out


def test_every_models_capabilities_has_every_key_and_what_it_lists_is_accepted():
    """§13 (PY ``types/model_capabilities.py``): "every key is always present", each leaf
    ``{supported: bool}``; the SDK types them as required. What a model lists as supported
    (images, PDFs, citations, structured outputs) this server accepts on it."""
    cl = Emulator(model=SONNET46, clock=FakeClock()).client(max_retries=0)
    cited = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "The sky is blue."},
             "citations": {"enabled": True}}
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
    asks = {"image_input": dict(messages=ask(image(10, 10))), "pdf_input": dict(messages=ask(pdf)),
            "citations": dict(messages=ask(cited)), "structured_outputs": dict(messages=ask(), output_config=FORMAT)}
    for info in cl.models.list(limit=1000).data:
        assert missing_required(info.capabilities) == [], info.id
        for key, request in asks.items():
            if getattr(info.capabilities, key).supported:
                cl.messages.create(model=info.id, max_tokens=300, **request)
