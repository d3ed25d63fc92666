"""The API's shorthand for content: where a field takes a string or a list of content blocks, the
string is one text block. "Using a string for content is shorthand for an array of one content
block of type "text"" (the Messages API reference on a message's ``content``; anthropic-python 2.17
``types/message_create_params.py``). The same union types ``system``, a system message's
``content``, a ``tool_result``'s ``content`` (``types/tool_result_block_param.py``) and a
``content`` document source's ``content`` (``types/content_block_source_param.py``); we read the
shorthand as holding there too [INFERRED: the reference words it for a message's content; issue 60
saw litellm send one tool result as a list on one call and as a string on the next].

Whatever compares or caches prompts (the emulator's rendering and prefix binding, the runtime's
``first_edit``) compares content in one form. Messages and ``system`` are read as lists of blocks
where they are read (``emulator.prompt.as_blocks``); the blocks that hold content are put in one
form here.
"""

from __future__ import annotations

from typing import Any

PLAIN_TEXT_KEYS = frozenset({"type", "text", "cache_control"})  # a text block that is its text and nothing else
HOLDS_CONTENT = frozenset({"tool_result", "content"})  # the types whose ``content`` takes the shorthand


def as_text(content: Any) -> Any:
    """``content`` in one form: a list of one plain text block is its text (a marker is no content);
    anything else is returned as it is."""
    if type(content) is list and len(content) == 1:
        block = content[0]
        if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str \
                and block.keys() <= PLAIN_TEXT_KEYS:
            return block["text"]
    return content


def in_one_form(block: dict) -> dict:
    """``block`` with its ``content`` in one form, if its type takes the shorthand (a new dict; the
    block itself, unchanged, otherwise)."""
    if block.get("type") in HOLDS_CONTENT and "content" in block:
        content = as_text(block["content"])
        if content is not block["content"]:
            return {**block, "content": content}
    return block
