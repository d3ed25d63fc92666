"""Dollars from usage, and the per-call record a run keeps for plots.

Billing rule [pricing]: the prompt of one call is split three ways and each part has its own
price. ``cache_read_input_tokens`` at the read price (0.1x base input on most models; less on the
5.5 generation), ``cache_creation_input_tokens`` at the 5-minute or 1-hour write price (1.25x and
2x), ``input_tokens`` (what came after the last cache breakpoint) at the base price. Output is
separate. A model priced in tiers (Haiku 5.5) bills the whole call at the tier of its prompt size.

Server-side compaction runs a summarization call of its own inside a request; its usage comes in
``usage.iterations`` and is left out of the top-level figures [compaction-threshold], so a record
keeps those iterations and adds their cost.

A request sent in a Message Batch (``usage.service_tier == "batch"``) costs 50% of all of the above,
input, output, cache writes and reads and compaction alike: the discounts stack [batch-processing;
pricing "Batch processing"], so a batch cache read costs 0.05x base input where a read is 0.1x.

Fast mode and US-only inference multiply every category of a call's prices (1.1x for
``inference_geo: "us"`` on Opus 4.6 and newer [data-residency]; the model's fast-mode multiplier
[fast-mode]); a record keeps the ``speed`` and ``inference_geo`` its usage reported, so its cost
is the one billed.

Web search is billed per search on top of its tokens: "$10 per 1,000 searches", counted in
``usage.server_tool_use.web_search_requests`` [pricing "Web search tool";
https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool "Usage and pricing"]. The
fee is per search, so neither the batch discount nor a speed or geography multiplier touches it
[INFERRED: the pages state those as multipliers of token prices]. Other server tools' fees (code
execution hours, web fetch) are not modelled.

A model that is not in the table has no prices: its cost is NaN, so a total that includes it is
NaN too (unknown), never a wrong number and never a crash.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from .models import model_spec

BATCH_DISCOUNT = 0.5  # "All usage is charged at 50% of the standard API prices" [batch-processing]
WEB_SEARCH_PRICE = 10 / 1000  # dollars per search [pricing "Web search tool"]


class CallRecord(BaseModel):
    """One model call as a run remembers it: usage as the provider reported it, plus dollars."""

    model: str
    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_creation_5m: int = 0
    cache_creation_1h: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    compactions: list["CallRecord"] = Field(default_factory=list)  # server-side summarization iterations
    batch: bool = False  # sent in a Message Batch: half price
    speed: str | None = None  # usage.speed: "fast" is billed at the model's fast-mode rates
    inference_geo: str | None = None  # usage.inference_geo: "us" is billed at 1.1x where the model offers it
    web_search_requests: int = 0  # usage.server_tool_use.web_search_requests: billed per search

    @classmethod
    def from_usage(cls, usage: Any, model: str) -> "CallRecord":
        """Accept the SDK's ``Usage`` object or a plain dict of the same shape."""
        u = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
        created = u.get("cache_creation_input_tokens") or 0
        breakdown = u.get("cache_creation") or {}
        one_hour = breakdown.get("ephemeral_1h_input_tokens") or 0
        # Without a breakdown every write is a 5-minute write, the API's default TTL.
        five_min = breakdown.get("ephemeral_5m_input_tokens", created - one_hour) or 0
        tier = u.get("service_tier")
        compactions = [cls.from_usage({**{k: v for k, v in it.items() if k != "iterations"}, "service_tier": tier}, model)
                       for it in u.get("iterations") or [] if it.get("type") == "compaction"]
        return cls(
            model=model,
            input_tokens=u.get("input_tokens") or 0,
            cache_creation_input_tokens=created,
            cache_creation_5m=five_min,
            cache_creation_1h=one_hour,
            cache_read_input_tokens=u.get("cache_read_input_tokens") or 0,
            output_tokens=u.get("output_tokens") or 0,
            compactions=compactions,
            batch=tier == "batch",
            speed=u.get("speed"),
            inference_geo=u.get("inference_geo"),
            web_search_requests=(u.get("server_tool_use") or {}).get("web_search_requests") or 0,
        )

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read on this call, cached or not (compaction iterations aside)."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def cache_read_share(self) -> float:
        return self.cache_read_input_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def cost(self) -> float:
        """Dollars for this call, compaction iterations included (NaN for an unpriced model)."""
        p = model_spec(self.model).price(self.prompt_tokens, self.speed, self.inference_geo)
        if p is None:
            return math.nan
        own = (self.input_tokens * p.input + self.cache_creation_5m * p.write_5m + self.cache_creation_1h * p.write_1h
               + self.cache_read_input_tokens * p.read + self.output_tokens * p.output) / 1e6
        return own * self._discount + self.search_fee + sum(c.cost for c in self.compactions)

    @property
    def cost_without_cache(self) -> float:
        """What the same call would cost with no caching at all: every prompt token at the base price."""
        own = uncached(self.model, self.prompt_tokens, self.output_tokens, self.speed, self.inference_geo)
        return own * self._discount + self.search_fee + sum(c.cost_without_cache for c in self.compactions)

    @property
    def search_fee(self) -> float:
        """Dollars for the web searches the call ran, on top of its tokens."""
        return self.web_search_requests * WEB_SEARCH_PRICE

    @property
    def _discount(self) -> float:
        return BATCH_DISCOUNT if self.batch else 1.0


def uncached(model: str, prompt_tokens: int, output_tokens: int, speed: str | None = None,
             inference_geo: str | None = None) -> float:
    """Dollars for a call whose whole prompt is read uncached, at the base input price of the tier its
    size falls in (at that speed and inference geography), and ``output_tokens`` of output: what a call
    costs at most for that prompt and output (NaN for an unpriced model)."""
    p = model_spec(model).price(prompt_tokens, speed, inference_geo)
    return math.nan if p is None else (prompt_tokens * p.input + output_tokens * p.output) / 1e6


class Bill(BaseModel):
    """What a run record cost: the calls its history holds (``stored``), the calls paid for whose turns
    never landed (``lost``), and an estimate (``estimated``) for each of the ``unanswered`` calls:
    recorded as sent, never answered (a kill while the call was in flight), possibly billed. Only
    ``estimated`` is an estimate; ``str`` says so."""

    stored: float = 0.0
    lost: float = 0.0
    estimated: float = 0.0
    unanswered: int = 0

    @property
    def total(self) -> float:
        return self.stored + self.lost + self.estimated

    def __str__(self) -> str:
        if not self.unanswered:
            return f"${self.total:.6f}"
        calls = "call" if self.unanswered == 1 else "calls"
        return (f"${self.total:.6f} (of which ${self.estimated:.6f} is an estimate, for {self.unanswered} {calls} "
                "sent and never answered)")
