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

from pydantic import BaseModel, Field

# Cache price multipliers on the base input price [pricing].
CACHE_WRITE_5M = 1.25
CACHE_WRITE_1H = 2.0
CACHE_READ = 0.10


class ModelSpec(BaseModel, frozen=True):
    """What a model accepts and what it costs."""

    id: str
    context_window: int = Field(description="max prompt tokens [models]")
    min_cacheable_tokens: int = Field(description="shorter prefixes are processed uncached, no error [caching]")
    supports_prefill: bool = Field(description="accepts a request ending in an assistant message [prefill]")
    input_usd_per_mtok: float = Field(description="base input price, $ per million tokens [pricing]")
    output_usd_per_mtok: float = Field(description="output price, $ per million tokens [pricing]")


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


def model_spec(model: str) -> ModelSpec:
    """Look a model up by id, accepting dated ids such as claude-sonnet-4-5-20250929."""
    if model in MODELS:
        return MODELS[model]
    for known in MODELS:
        if model.startswith(known + "-"):
            return MODELS[known]
    raise KeyError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
