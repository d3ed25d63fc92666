"""A deterministic offline token estimate.

The provider's tokenizer is not public, so offline we estimate: one token per four characters
of a block's rendered form, rounded up, at least one token per block. English prose and JSON
both come out near the ratio published for Claude models (about 3.5-4 characters a token), which is
close enough for the shapes the course measures: growth, ratios, cache-read shares. Absolute
counts differ from the real API; online, the provider's own ``usage`` replaces this estimate.

Images follow the vision page instead ([VIS] https://platform.claude.com/docs/en/build-with-claude/vision,
"Resolution and token cost"): "ceil(width / 28) x ceil(height / 28)" visual tokens, after the image
is scaled down (aspect ratio kept) to fit the model's limits, its long edge and its visual tokens:
"Claude 4.7 and later models: 2576 px, 4784 tokens", "all other models: 1568 px, 1568 tokens" (the
model table's ``image_limits``). Dimensions are read from the image header (PNG, GIF, JPEG, WebP);
an image given by URL or file id, whose size we cannot see, counts as the most an image can cost on
that model.

A thinking block sent back counts as the reasoning it stands for, not as the text it shows: "the
server decrypts the signature to reconstruct the original thinking" and prior-turn thinking kept in
context is "billed as input tokens" ([TH] https://platform.claude.com/docs/en/build-with-claude/thinking;
[TSC] .../thinking-steering-and-cost#pricing, which bills the same "regardless of the display
setting"). The emulator made the signature, so it reads the reasoning's output-token count from it
(``binding.reasoning_tokens``): 2,500 tokens of thinking sent back cost 2,500 input tokens whether
the block came back with its text or empty.

The same function is used for accounting and for ``count_tokens``, so the count of a request always
equals ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` of that request.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import math
import struct
from functools import lru_cache

from .binding import THINKING_TYPES, reasoning_tokens

CHARS_PER_TOKEN = 4
PATCH = 28  # [VIS] one visual token per 28 x 28 pixel patch
STANDARD_IMAGES = (1568, 1568)  # [VIS] "all other models": long edge in px, visual tokens


def estimate_tokens(rendered: str, tokenizer: float = 1.0) -> int:
    """Tokens for one rendered block (see ``prompt.render_block``), on a model whose tokenizer gives
    ``tokenizer`` times the tokens of the same text on Sonnet 4.6 and earlier (the model table's
    ``tokenizer``: 1.3 where a page says "roughly 30% more tokens for the same text" [TOK])."""
    if tokenizer == 1.0:
        return max(1, -(-len(rendered) // CHARS_PER_TOKEN))
    return max(1, math.ceil(len(rendered) * tokenizer / CHARS_PER_TOKEN))


def image_format(data: bytes) -> str | None:
    """The media type the bytes are, by their signature (the four types the API takes), or None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None if unrecognised."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        if chunk == b"VP8 ":
            w, h = struct.unpack("<HH", data[26:30])
            return w & 0x3FFF, h & 0x3FFF
    if data[:2] == b"\xff\xd8":  # JPEG: walk the segments to a start-of-frame
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", data[i + 5:i + 9])
                return w, h
            i += 2 + length
    return None


def image_tokens(block: dict, limits: tuple[int, int] = STANDARD_IMAGES) -> int:
    """Visual tokens of an image block on a model whose ``image_limits`` are ``limits`` [VIS]."""
    source = block.get("source") or {}
    size = None
    if source.get("type") == "base64":
        try:
            size = image_size(base64.b64decode(source.get("data", "")[:65536], validate=False))
        except (binascii.Error, ValueError):
            size = None
    if size is None or min(size) <= 0:
        return limits[1]
    return scaled_image_tokens(*size, *limits)


@lru_cache(maxsize=4096)
def scaled_image_tokens(width: int, height: int, max_edge: int, max_tokens: int) -> int:
    """``ceil(w / 28) x ceil(h / 28)`` once the image fits ``max_edge`` and ``max_tokens`` [VIS].

    How the API picks the scaled size is not stated; we take the longest long edge that is a whole
    number of patches (at most the image's own, at most ``max_edge``) whose scaled image fits the
    token limit, the short edge rounded to the pixel [INFERRED]. This reproduces every worked example
    quoted from the page: 1920x1080 -> 1456x819, 1,560 tokens (standard) and unscaled, 2,691 (4.7 and
    later); 3840x2160 -> 2576x1449, 4,784; and third-party measurements 3024x1964 -> 2380x1546, 4,760
    and 4032x3024 -> 2212x1659, 4,740."""
    def cost(w: int, h: int) -> int:
        return -(-w // PATCH) * -(-h // PATCH)

    long_edge = max(width, height)
    if long_edge <= max_edge and cost(width, height) <= max_tokens:
        return cost(width, height)
    for patches in range(min(long_edge, max_edge) // PATCH, 0, -1):
        scale = patches * PATCH / long_edge
        n = cost(max(1, round(width * scale)), max(1, round(height * scale)))
        if n <= max_tokens:
            return n
    return 1


# Anthropic-defined client tools are sent by type and name only; what one adds to the prompt is the
# figure its page gives [BASH https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool
# "Pricing"; TE .../agents-and-tools/tool-use/text-editor-tool "Pricing"; issue 63 item 8]: the bash tool
# 244 input tokens on Opus 4.6, Sonnet 4.6 and earlier, 325 on Opus 4.7 and later (Opus 4.7, 4.8, 5 are
# named; the 5.x models no page names are read as "later" [INFERRED]); ``text_editor_20250429`` 700 on
# Claude 4.x. Every other Anthropic-defined or server tool (computer use, memory, other text-editor
# versions, web search, web fetch, code execution, tool search) is NOT modelled: it counts as its
# definition's JSON, as any tool does. For the memory tool that is a stated assumption (no page
# publishes its overhead; ``memory_tool.py``).
BASH_244 = frozenset({"claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-5", "claude-haiku-4-5",
                      "claude-sonnet-4-5", "claude-opus-4-1", "claude-opus-4", "claude-sonnet-4"})
BASH_LATER, TEXT_EDITOR_20250429 = 325, 700


def defined_tool_tokens(tool: dict, model: str | None) -> int | None:
    """The documented tokens of an Anthropic-defined tool on ``model`` (a table id), or None where no
    figure is modelled (the tool then counts as its JSON)."""
    kind = tool.get("type")
    if not isinstance(kind, str) or model is None:
        return None
    if kind.startswith("bash_"):
        return 244 if model in BASH_244 or model.startswith("claude-3") else BASH_LATER
    if kind == "text_editor_20250429" and model.split("-")[2:3] == ["4"]:  # claude-<family>-4[-minor]
        return TEXT_EDITOR_20250429
    return None


# Not an API rule: a hook for replaying logs (``replay/driver.py``). A log shows a prompt's size but
# not its bytes (Claude Code's hidden system prompt, ~20K tokens); the replay stands a marker in for
# them, which counts as N tokens wherever it sits in a text, so tens of kilobytes of filler need not
# be built, sent, parsed and hashed on every replayed call.
STAND_IN = re.compile(r"<!-- stand-in: (\d+) tokens -->")


def stand_in(tokens: int) -> str:
    """The marker a text counts ``tokens`` for (see ``STAND_IN``)."""
    return f"<!-- stand-in: {tokens} tokens -->"


def block_tokens(block: dict, rendered: str, image_limits: tuple[int, int] = STANDARD_IMAGES,
                 tokenizer: float = 1.0) -> int:
    """Tokens of one block: images by their pixels, thinking by the reasoning its signature names,
    everything else by its rendered text (a replay's stand-in counted as it says)."""
    kind = block.get("type")
    if "<!-- stand-in: " in rendered:
        marked = [int(n) for n in STAND_IN.findall(rendered)]
        return estimate_tokens(STAND_IN.sub("", rendered), tokenizer) + sum(marked)  # a stand-in is as logged
    if kind == "image":
        return image_tokens(block, image_limits)
    if kind == "document":  # a PDF by its pages, never its bytes (documents.py) [PDF]
        from .documents import document_tokens
        return document_tokens(block, image_limits, tokenizer)
    if kind == "text" and block.get("citations"):  # cited_text is never billed (documents.py) [CIT]
        from .documents import uncited
        return estimate_tokens(json.dumps(uncited(block), ensure_ascii=False), tokenizer)
    if kind in THINKING_TYPES:
        n = reasoning_tokens(block)
        return estimate_tokens(rendered, tokenizer) if n is None else n
    content = block.get("content")
    if block.get("type") == "tool_result" and isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("image", "document") for b in content):
        inner = [b for b in content if isinstance(b, dict) and b.get("type") in ("image", "document")]
        rest = {**block, "content": [b for b in content if b not in inner]}
        return estimate_tokens(json.dumps(rest, ensure_ascii=False), tokenizer) + \
            sum(block_tokens(b, "", image_limits, tokenizer) for b in inner)
    return estimate_tokens(rendered, tokenizer)
