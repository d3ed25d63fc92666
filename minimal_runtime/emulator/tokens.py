"""A deterministic offline token estimate.

The provider's tokenizer is not public, so offline we estimate: one token per four characters
of a block's rendered form, rounded up, at least one token per block. English prose and JSON
both come out near the ratio published for Claude models (about 3.5-4 characters a token), which is
close enough for the shapes the course measures: growth, ratios, cache-read shares. Absolute
counts differ from the real API; online, the provider's own ``usage`` replaces this estimate.

The same function is used for accounting and for ``count_tokens``, so the count of a request always
equals ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` of that request.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate_tokens(rendered: str) -> int:
    """Tokens for one rendered block (see ``prompt.render_block``)."""
    return max(1, -(-len(rendered) // CHARS_PER_TOKEN))
