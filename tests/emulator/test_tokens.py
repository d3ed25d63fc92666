"""The offline token estimate: text by characters, images by their pixels."""

from __future__ import annotations

import struct

from minimal_runtime.emulator.tokens import STANDARD_IMAGES, block_tokens, estimate_tokens, image_size, image_tokens

MAX_IMAGE_TOKENS = STANDARD_IMAGES[1]  # the most an image costs on a model before 4.7


def test_text_is_four_characters_a_token_rounded_up():
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 400)] == [1, 1, 1, 2, 100]


def test_image_headers():
    png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 640, 480) + b"\x08\x02\x00\x00\x00"
    gif = b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 4
    jpeg = (b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
            + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 720, 1280) + b"\x00" * 12)
    webp = b"RIFF" + b"\x00" * 4 + b"WEBP" + b"VP8X" + b"\x00" * 8 + (799).to_bytes(3, "little") + (599).to_bytes(3, "little")
    assert image_size(png) == (640, 480)
    assert image_size(gif) == (320, 200)
    assert image_size(jpeg) == (1280, 720)
    assert image_size(webp) == (800, 600)
    assert image_size(b"not an image") is None


def test_unreadable_or_remote_images_count_as_the_largest():
    assert image_tokens({"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}}) == MAX_IMAGE_TOKENS
    assert image_tokens({"type": "image", "source": {"type": "base64", "data": "!!!"}}) == MAX_IMAGE_TOKENS


def test_images_inside_tool_results_count_by_pixels_too():
    remote = {"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}}
    block = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a screenshot"}, remote]}
    assert MAX_IMAGE_TOKENS < block_tokens(block, "rendered text is ignored for the image part") < MAX_IMAGE_TOKENS + 40


def _png(width: int, height: int) -> dict:
    import base64
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(raw).decode()}}


def test_images_scale_at_exactly_the_documented_limits():
    """Vision page: ceil(w / 28) x ceil(h / 28) visual tokens once the image fits 1,568 px and 1,568
    tokens (models before 4.7)."""
    assert image_tokens(_png(1568, 700)) == 56 * 25  # at the edge limit: not scaled
    assert image_tokens(_png(1569, 700)) == 56 * 25  # one pixel over: scaled to 1568 x 700
    assert image_tokens(_png(1500, 1500)) == 39 * 39  # over the token limit: scaled to 1092 x 1092
    assert image_tokens(_png(100, 75)) == 4 * 3
