"""How a log's model is billed: the one answer to "is this model priced, and as what" (``priced``).

- A model of the price table (``provider/models.py``) is billed at its own prices.
- A retired model the API no longer serves is replayed as a model the table has and billed at the
  multiple of its prices the provider listed for it (``RETIRED``).
- DeepSeek's models (mini-swe-agent logs) are billed at DeepSeek's own lists, by each call's date
  and hour (``deepseek.py``).
- Gemini's models (Gemini CLI chats) are billed at Gemini's list prices (``gemini.py``).
- Anything else is not priced (its cost is unknown, NaN): the report names the model and says how to
  price the replay as one of the table's (``--model``).

Retired models' source: Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing,
read 2026-12-03), which still lists them: Claude Opus 4.1 and Opus 4 at $15 base input, $18.75
5-minute writes, $30 1-hour writes, $1.50 cache hits, $75 output per MTok, 3x Opus 4.5's $5 / $6.25 /
$10 / $0.50 / $25 in every category; Claude Sonnet 4 and Sonnet 3.7 at Sonnet 4.5's $3 / $3.75 / $6 /
$0.30 / $15; Claude Haiku 3.5 at $0.80 / $1 / $1.60 / $0.08 / $4, 0.8x Haiku 4.5's. [UNCERTAIN] the
replay runs them with the stand-in's caching rules (its minimum cacheable prompt, its window); the
retired models' own minimums were 1,024 tokens for Opus and Sonnet 4 and 2,048 for Haiku 3.5.

The Claude 3 generation, from the same page's history (docs.anthropic.com/en/docs/about-claude/pricing
as archived in 2025, its "Model pricing" table): Claude Opus 3 $15 / $18.75 / $30 / $1.50 / $75 (3x
Opus 4.5's, as Opus 4.1's); Claude Sonnet 3.5 $3 / $3.75 / $6 / $0.30 / $15 (Sonnet 4.5's); Claude
Haiku 3 $0.25 / $0.30 / $0.50 / $0.03 / $1.25, no one multiple of Haiku 4.5's (its writes and reads
are not 0.25x), so it is billed at those listed prices themselves (``LISTED``). Claude Sonnet 3
(claude-3-sonnet-20240229) was $3 in / $15 out at the Claude 3 launch (anthropic.com/news/claude-3-family)
and never took prompt caching: billed as Sonnet 4.5, whose input and output prices are the same."""

from __future__ import annotations

from dataclasses import dataclass

from ..provider.cost import CallRecord
from ..provider.models import lookup
from . import deepseek, gemini

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
    "claude-3-opus": ("claude-opus-4-5", 3.0),
    "claude-3-opus-latest": ("claude-opus-4-5", 3.0),
    "claude-3-5-sonnet": ("claude-sonnet-4-5", 1.0),
    "claude-3-5-sonnet-latest": ("claude-sonnet-4-5", 1.0),
    "claude-3-sonnet": ("claude-sonnet-4-5", 1.0),
    "claude-3-haiku": ("claude-haiku-4-5", 1.0),  # at its own listed prices (LISTED), not a multiple
}

# $ per MTok: base input, 5-minute write, 1-hour write, cache hit, output; a retired model whose prices
# are no multiple of its stand-in's
LISTED: dict[str, tuple[float, float, float, float, float]] = {
    "claude-3-haiku": (0.25, 0.30, 0.50, 0.03, 1.25),
}


def retired(model: str | None) -> tuple[str, float] | None:
    """(the model the table has that it is billed as, the multiple of its prices), or None. Dated ids
    (claude-opus-4-1-20250805) are the model they date."""
    if not model:
        return None
    known, _, stamp = model.rpartition("-")
    return RETIRED.get(model) or (RETIRED.get(known) if len(stamp) == 8 and stamp.isdigit() else None)


@dataclass(frozen=True)
class Priced:
    """How a model's tokens are billed: as ``model`` (a model of the table) at ``factor`` times its
    prices, or, for DeepSeek's (``deepseek``: its API name), at DeepSeek's list of each call's time."""

    model: str
    factor: float = 1.0
    deepseek: str | None = None
    gemini: str | None = None  # Gemini's API name: billed at its list (gemini.py)
    retired: str | None = None  # the retired model's own name, replayed and billed as ``model``
    listed: tuple[float, float, float, float, float] | None = None  # its own prices, where no multiple (LISTED)

    @property
    def note(self) -> str | None:
        """What a report says of a run priced so, where it is not priced as the model it names."""
        if self.retired is None:
            return None
        if self.listed:
            return (f"{self.retired} is retired from the API: replayed as {self.model} and billed at the prices "
                    f"Anthropic's pricing page lists for it (${' / $'.join(f'{p:g}' for p in self.listed)} per MTok: "
                    "input, 5-minute and 1-hour writes, hits, output)")
        return (f"{self.retired} is retired from the API: replayed as {self.model} and billed at {self.factor:g}x "
                f"its prices, what Anthropic's pricing page lists for {self.retired} in every category")

    def cost(self, call: CallRecord, at: float | None = None) -> float:
        """Dollars of ``call``'s tokens billed so (``at``: its time, which DeepSeek's lists depend on);
        NaN where nothing prices them. ``call`` is labelled ``model``, what it is billed as."""
        if self.deepseek:  # hits, and every other prompt token a miss: DeepSeek has no write premium
            return deepseek.rates(self.deepseek, at).dollars(
                call.cache_read_input_tokens, call.input_tokens + call.cache_creation_input_tokens, call.output_tokens)
        if self.gemini:  # hits, and every other prompt token input: Gemini has no write premium either
            return gemini.rates(self.gemini).dollars(
                call.cache_read_input_tokens, call.input_tokens + call.cache_creation_input_tokens, call.output_tokens)
        if self.listed:
            fresh, write_5m, write_1h, read, out = self.listed
            return (call.input_tokens * fresh + call.cache_creation_5m * write_5m + call.cache_creation_1h * write_1h
                    + call.cache_read_input_tokens * read + call.output_tokens * out) / 1e6 + call.search_fee
        return (call.cost - call.search_fee) * self.factor + call.search_fee  # a search is billed per search


def total(calls: list[CallRecord], billed: list[Priced], times: list[float | None] | None = None) -> float:
    """Dollars of ``calls``, each billed as its ``Priced`` says (none given: the table's prices), at
    its time in ``times`` (DeepSeek's lists; a call past the last time takes the last)."""
    billed = billed or [Priced(c.model) for c in calls]
    at = times or [None]
    return sum(how.cost(c, at[min(k, len(at) - 1)]) for k, (c, how) in enumerate(zip(calls, billed)))


def priced(model: str | None) -> Priced | None:
    """How ``model`` is billed, or None where nothing here prices it."""
    stand_in = retired(model)
    if stand_in is not None:
        known, _, stamp = (model or "").rpartition("-")
        listed = LISTED.get(model or "") or (LISTED.get(known) if len(stamp) == 8 and stamp.isdigit() else None)
        return Priced(*stand_in, retired=model, listed=listed)
    spec = lookup(model or "")
    if spec is not None:
        return Priced(spec.id)
    name = deepseek.api_name(model)
    if name:
        return Priced(model, deepseek=name)
    name = gemini.api_name(model)
    return Priced(model, gemini=name) if name else None
