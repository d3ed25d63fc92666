"""Models a log may name that the API no longer serves: what the provider priced them at, as a
multiple of a model the table has (the replay runs as that model and bills at the multiple).

Source: Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing, read 2026-12-03),
which still lists the retired models: Claude Opus 4.1 and Opus 4 at $15 base input, $18.75 5-minute
writes, $30 1-hour writes, $1.50 cache hits, $75 output per MTok, 3x Opus 4.5's $5 / $6.25 / $10 /
$0.50 / $25 in every category; Claude Sonnet 4 and Sonnet 3.7 at Sonnet 4.5's $3 / $3.75 / $6 / $0.30
/ $15; Claude Haiku 3.5 at $0.80 / $1 / $1.60 / $0.08 / $4, 0.8x Haiku 4.5's. [UNCERTAIN] the
replay runs them with the stand-in's caching rules (its minimum cacheable prompt, its window); the
retired models' own minimums were 1,024 tokens for Opus and Sonnet 4 and 2,048 for Haiku 3.5.
DeepSeek's models (mini-swe-agent logs) are priced at DeepSeek's own lists, by date: ``deepseek.py``.
Other providers' models are not priced: the report names the model and says how to price the replay
as one of the table's (``--model``)."""

from __future__ import annotations

RETIRED: dict[str, tuple[str, float]] = {
    "claude-opus-4-1": ("claude-opus-4-5", 3.0),
    "claude-opus-4-0": ("claude-opus-4-5", 3.0),
    "claude-opus-4": ("claude-opus-4-5", 3.0),
    "claude-sonnet-4-0": ("claude-sonnet-4-5", 1.0),
    "claude-sonnet-4": ("claude-sonnet-4-5", 1.0),
    "claude-3-7-sonnet": ("claude-sonnet-4-5", 1.0),
    "claude-3-7-sonnet-latest": ("claude-sonnet-4-5", 1.0),
    "claude-3-5-haiku": ("claude-haiku-4-5", 0.8),
    "claude-3-5-haiku-latest": ("claude-haiku-4-5", 0.8),
}


def retired(model: str | None) -> tuple[str, float] | None:
    """(the model the table has that it is billed as, the multiple of its prices), or None. Dated ids
    (claude-opus-4-1-20250805) are the model they date."""
    if not model:
        return None
    known, _, stamp = model.rpartition("-")
    return RETIRED.get(model) or (RETIRED.get(known) if len(stamp) == 8 and stamp.isdigit() else None)


def priced_as(model: str) -> tuple[str, float]:
    """The model to price ``model``'s tokens as, and the multiple: itself at 1x unless retired."""
    return retired(model) or (model, 1.0)


def note(model: str) -> str | None:
    stand_in = retired(model)
    if stand_in is None:
        return None
    return (f"{model} is retired from the API: replayed as {stand_in[0]} and billed at {stand_in[1]:g}x its prices, "
            f"what Anthropic's pricing page lists for {model} in every category")
