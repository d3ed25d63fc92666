"""Gemini's list prices, for the Gemini CLI chats ``replay`` reads: $ per million tokens of input
(uncached), of cached input (a hit of Gemini's implicit cache), and of output (thinking included),
each for prompts up to 200,000 tokens and for longer ones, where the model has the two tiers (the
whole request is billed at the tier of its prompt). Gemini's caching has no write premium: every
prompt token that is not a hit is input, as DeepSeek's (``deepseek.py``). Storage is billed only for
an explicit cache a client creates; the CLI's hits are implicit, so none is counted.

Sources (Google's "Gemini Developer API pricing" page, ai.google.dev/gemini-api/docs/pricing, Standard
tier; read through the copies below, 2026-12-07):
- gemini-2.5-pro: input $1.25 / $2.50 (prompts <= / > 200k tokens), output $10 / $15, context caching
  $0.125 / $0.25: the page as quoted on discuss.ai.google.dev ("Question about Gemini API caching
  pricing", topic 107349) and by deploybase.ai's "Gemini API Pricing 2026" (input and output tiers);
- gemini-2.5-flash: input $0.30, output $2.50 (morphllm.com "Gemini API pricing", from the page; one
  tier); context caching $0.03 [UNCERTAIN: a tenth of input, as the page lists it for 2.5 Pro; one
  report of May 2026 quotes $0.075, the 2025 price];
- gemini-2.5-flash-lite: input $0.10, output $0.40 (the same), context caching $0.01 [UNCERTAIN: a tenth];
- gemini-3-pro-preview: input $2 / $4, output $12 / $18 (aifreeapi.com "Gemini API Pricing 2026", from
  the page), context caching $0.20 / $0.40 [INFERRED: a tenth of input, as for 2.5 Pro].
A model not here is not priced (its cost is n/a; ``--model`` prices the replay as a model of the table).
"""

from __future__ import annotations

from dataclasses import dataclass

LONG = 200_000  # tokens of prompt: past this, a two-tier model bills the whole request at its long prices


@dataclass(frozen=True)
class Rates:
    """$ per million tokens: (input, cached, output) up to ``LONG`` tokens of prompt, and past it."""

    short: tuple[float, float, float]
    long: tuple[float, float, float]

    def dollars(self, hit: int, miss: int, output: int) -> float:
        fresh, cached, out = self.long if hit + miss > LONG else self.short
        return (miss * fresh + hit * cached + output * out) / 1e6


def _flat(*prices: float) -> Rates:
    return Rates(prices, prices)


LIST = {
    "gemini-2.5-pro": Rates((1.25, 0.125, 10.0), (2.50, 0.25, 15.0)),
    "gemini-2.5-flash": _flat(0.30, 0.03, 2.50),
    "gemini-2.5-flash-lite": _flat(0.10, 0.01, 0.40),
    "gemini-3-pro-preview": Rates((2.0, 0.20, 12.0), (4.0, 0.40, 18.0)),
}


def api_name(model: str | None) -> str | None:
    """The Gemini model a log names (``models/gemini-2.5-pro`` and ``google/...`` too), if it is priced here."""
    name = (model or "").lower().removeprefix("models/").removeprefix("google/").removeprefix("gemini/")
    return name if name in LIST else None


def rates(model: str | None) -> Rates | None:
    name = api_name(model)
    return LIST[name] if name else None


def note(model: str) -> str:
    return (f"{model} is priced at Gemini's list prices (gemini.py: input, cached input and output per MTok, the "
            "long-prompt tier past 200,000 tokens; a replay's cache writes are input, Gemini has no write premium)")
