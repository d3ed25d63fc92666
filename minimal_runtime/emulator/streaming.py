"""The same answer as server-sent events, for ``stream: true`` requests (``messages.stream()``,
and clients such as Claude Code that always stream).

Event sequence as documented at https://platform.claude.com/docs/en/build-with-claude/streaming:
``message_start`` (the message with empty content and the input usage), then per content block
``content_block_start``, one or more ``content_block_delta`` and ``content_block_stop``, then
``message_delta`` (stop reason and output tokens) and ``message_stop``; one ``ping`` after the first
``content_block_start``, as the docs' example has it. The accounting is the
non-streaming answer's: streaming changes how the bytes arrive, not what is billed.

A thinking block opens with empty ``thinking`` and ``signature``; its text streams as
``thinking_delta`` events only when it has any ("When streaming with display: "omitted", no
thinking_delta events are emitted"), then one ``signature_delta`` [TH "Streaming thinking"]. A text
block's citations stream as ``citations_delta`` events, one per citation, after its text (the SDK's
accumulator appends each to the block). ``usage.output_tokens_details`` "appears only on the final
message_delta event" [TSC #pricing].

``diagnostics`` and ``input_transformations`` are final in ``message_start`` [CD; PT];
``context_management`` (the applied edits) arrives in the final ``message_delta`` [CE]. A threshold
compaction block streams as its start, one ``compaction_delta`` with the whole summary, and its
stop [CT]; an on-demand one arrives whole in its start [COD].
"""

from __future__ import annotations

import json

from .binding import read

CHUNK = 40  # characters per text delta: several deltas per block, as a real stream has
# The fields of the final message_delta's usage, as the SDK types it (``types/message_delta_usage.py``,
# ``types/beta/beta_message_delta_usage.py``, anthropic 2.15): the rest (``cache_creation``,
# ``inference_geo``, ``speed``, ``service_tier``) is final in message_start.
DELTA_USAGE = {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
               "server_tool_use", "output_tokens_details", "iterations", "fallback_credit"}


def _event(kind: str, data: dict) -> str:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n"


def _pieces(text: str) -> list[str]:
    return [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)] or [""]


def _block_events(index: int, block: dict) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        deltas += [{"type": "citations_delta", "citation": c} for c in block.get("citations") or []]
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(block.get("input", {})))]
    elif kind == "compaction":
        on_demand = (read(block.get("signature")) or {}).get("k") == "cod"
        start = block if on_demand else {**block, "content": None}
        deltas = [] if on_demand else [{"type": "compaction_delta", "content": block.get("content")}]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        text = block.get("thinking", "")
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(text)] if text else []
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    else:  # anything else arrives whole
        start, deltas = block, []
    return ([_event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})]
            + [_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
            + [_event("content_block_stop", {"type": "content_block_stop", "index": index})])


def sse(message: dict) -> bytes:
    """The complete event stream for one answer."""
    usage = message["usage"]
    start = {k: v for k, v in message.items() if k != "context_management"}
    start.update(content=[], stop_reason=None, stop_sequence=None,
                 usage={**{k: v for k, v in usage.items() if k != "output_tokens_details"},
                        "output_tokens": 1 if usage["output_tokens"] else 0})
    events = [_event("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block)
    # "Event streams may also include any number of ping events"; the docs' example has one right
    # after the first content_block_start [STR "Ping events"].
    events.insert(2 if message["content"] else 1, _event("ping", {"type": "ping"}))
    delta = {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                "stop_sequence": message.get("stop_sequence"),
                                                "stop_details": message.get("stop_details")},
             "usage": {k: v for k, v in usage.items() if k in DELTA_USAGE}}
    if "context_management" in message:
        delta["context_management"] = message["context_management"]
    events.append(_event("message_delta", delta))
    events.append(_event("message_stop", {"type": "message_stop"}))
    return "".join(events).encode()
