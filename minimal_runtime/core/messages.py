"""Helpers for Messages API dicts. Deterministic: no timestamps, stable key order."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` as valid UTF-8 for a prompt: characters that came from undecodable bytes (lone
    surrogates, from ``bytes.decode("utf-8", "surrogateescape")``) become U+FFFD. The exact bytes
    live elsewhere (the store, an offloaded file); the model gets a faithful text form."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_result_block(tool_use_id: str, content: str, is_error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def blocks_of(message: dict) -> list[dict]:
    """A message's content as blocks: the API takes a plain string for one text block."""
    content = message["content"]
    return [text_block(content)] if isinstance(content, str) else content


def user(content: str | list[dict]) -> dict:
    return {"role": "user", "content": [text_block(printable(content))] if isinstance(content, str) else content}


def assistant_message(content: Iterable[Any]) -> dict:
    """The response's content as a durable assistant message (SDK blocks or dicts)."""
    blocks = [b.to_dict() if hasattr(b, "to_dict") else dict(b) for b in content]
    return {"role": "assistant", "content": blocks}


def tool_uses(message: dict) -> list[dict]:
    return [b for b in message["content"] if b.get("type") == "tool_use"]


def text_of(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def dumps(value: Any) -> str:
    """The one serialization for anything the runtime writes: the same value, the same bytes.

    Key order is kept as it is, never sorted: a tool call's ``input`` is rendered into the prompt
    in its own key order, so a history stored with sorted keys and loaded back would no longer be
    byte-identical to what the provider cached (a resumed run would miss the cache, and the model
    would see its own past calls rewritten)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
