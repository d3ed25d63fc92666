"""Per-model facts the runtime and the emulator both need, in one table.

Every figure here is a published fact with its source and the date we read it.
If a provider changes a price or a limit, this is the only file to edit.

Sources (read 2026-11-29):
  [models]  https://platform.claude.com/docs/en/about-claude/models/overview
            and the per-model pages, e.g. .../docs/en/models/sonnet-4-6/overview
  [pricing] https://platform.claude.com/docs/en/about-claude/pricing
  [caching] https://platform.claude.com/docs/en/build-with-claude/prompt-caching
            ("Cache limitations": minimum cacheable prompt length per model)
  [prefill] https://platform.claude.com/docs/en/about-claude/models/migration-guide
            (the 4.6 generation and later reject a trailing assistant message)
"""

from __future__ import annotations

import threading
import warnings

from pydantic import BaseModel, Field

# Cache price multipliers on the base input price [pricing].
CACHE_WRITE_5M = 1.25
CACHE_WRITE_1H = 2.0
CACHE_READ = 0.10

# Prompt-caching rules every model shares [caching].
MAX_BREAKPOINTS = 4  # "You can define up to 4 cache breakpoints"
LOOKBACK_BLOCKS = 20  # a read walks back at most 20 block positions from a breakpoint (itself included)
TTL_SECONDS = {"5m": 300, "1h": 3600}  # default 5 minutes; "ttl": "1h" option


class ModelSpec(BaseModel, frozen=True):
    """What a model accepts and what it costs. ``None`` means unknown (a model not in the table)."""

    id: str
    known: bool = Field(default=True, description="in the table; False for a model we know nothing of")
    context_window: int | None = Field(description="max prompt tokens [models]")
    min_cacheable_tokens: int | None = Field(description="shorter prefixes are processed uncached, no error [caching]")
    supports_prefill: bool = Field(description="accepts a request ending in an assistant message [prefill]")
    input_usd_per_mtok: float | None = Field(description="base input price, $ per million tokens [pricing]")
    output_usd_per_mtok: float | None = Field(description="output price, $ per million tokens [pricing]")


MODELS: dict[str, ModelSpec] = {
    m.id: m
    for m in [
        ModelSpec(id="claude-sonnet-4-5", context_window=200_000, min_cacheable_tokens=1024,
                  supports_prefill=True, input_usd_per_mtok=3.0, output_usd_per_mtok=15.0),
        ModelSpec(id="claude-sonnet-4-6", context_window=1_000_000, min_cacheable_tokens=1024,
                  supports_prefill=False, input_usd_per_mtok=3.0, output_usd_per_mtok=15.0),
        ModelSpec(id="claude-haiku-4-5", context_window=200_000, min_cacheable_tokens=4096,
                  supports_prefill=True, input_usd_per_mtok=1.0, output_usd_per_mtok=5.0),
        ModelSpec(id="claude-opus-4-5", context_window=200_000, min_cacheable_tokens=4096,
                  supports_prefill=True, input_usd_per_mtok=5.0, output_usd_per_mtok=25.0),
        ModelSpec(id="claude-opus-4-6", context_window=1_000_000, min_cacheable_tokens=4096,
                  supports_prefill=False, input_usd_per_mtok=5.0, output_usd_per_mtok=25.0),
        ModelSpec(id="claude-opus-4-7", context_window=1_000_000, min_cacheable_tokens=2048,
                  supports_prefill=False, input_usd_per_mtok=5.0, output_usd_per_mtok=25.0),
    ]
}


_warned: set[str] = set()
_warned_lock = threading.Lock()


def lookup(model: str) -> ModelSpec | None:
    """The table's entry for ``model`` (dated ids such as claude-sonnet-4-5-20250929 included), or None."""
    if model in MODELS:
        return MODELS[model]
    return next((spec for known, spec in MODELS.items() if model.startswith(known + "-")), None)


def model_spec(model: str) -> ModelSpec:
    """Look a model up by id, accepting dated ids such as claude-sonnet-4-5-20250929.

    A model not in the table (a local server's, a newer one) gets one behaviour everywhere: a
    warning (once per name), no prefill (the safe choice: every current model refuses it), no known
    cache minimum, no known window, and no prices, so its cost is reported as unknown (NaN) rather
    than guessed or crashed on."""
    spec = lookup(model)
    if spec is not None:
        return spec
    with _warned_lock:
        first = model not in _warned
        _warned.add(model)
    if first:
        warnings.warn(f"model {model!r} is not in the model table: no prefill, no known cache minimum or "
                      "window, cost unknown", UnknownModelWarning, stacklevel=2)
    return ModelSpec(id=model, known=False, context_window=None, min_cacheable_tokens=None, supports_prefill=False,
                     input_usd_per_mtok=None, output_usd_per_mtok=None)


class UnknownModelWarning(UserWarning):
    """A model name that is not in the table."""
