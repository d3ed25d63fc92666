"""Dollars from usage, and the per-call record a run keeps for plots.

Billing rule [pricing]: the prompt of one call is split three ways and each part has its
own price. ``cache_read_input_tokens`` cost 0.1x the base input price,
``cache_creation_input_tokens`` cost 1.25x (5-minute entries) or 2x (1-hour entries), and
``input_tokens`` (what came after the last cache breakpoint) cost 1x. Output is separate.

A model that is not in the table has no prices: its cost is NaN, so a total that includes it is
NaN too (unknown), never a wrong number and never a crash.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from .models import CACHE_READ, CACHE_WRITE_1H, CACHE_WRITE_5M, model_spec


class CallRecord(BaseModel):
    """One model call as a run remembers it: usage as the provider reported it, plus dollars."""

    model: str
    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_creation_5m: int = 0
    cache_creation_1h: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def from_usage(cls, usage: Any, model: str) -> "CallRecord":
        """Accept the SDK's ``Usage`` object or a plain dict of the same shape."""
        u = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
        created = u.get("cache_creation_input_tokens") or 0
        breakdown = u.get("cache_creation") or {}
        one_hour = breakdown.get("ephemeral_1h_input_tokens", 0) or 0
        # Without a breakdown every write is a 5-minute write, the API's default TTL.
        five_min = breakdown.get("ephemeral_5m_input_tokens", created - one_hour) or 0
        return cls(
            model=model,
            input_tokens=u.get("input_tokens") or 0,
            cache_creation_input_tokens=created,
            cache_creation_5m=five_min,
            cache_creation_1h=one_hour,
            cache_read_input_tokens=u.get("cache_read_input_tokens") or 0,
            output_tokens=u.get("output_tokens") or 0,
        )

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read on this call, cached or not."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def cache_read_share(self) -> float:
        return self.cache_read_input_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def cost(self) -> float:
        """Dollars for this call under the published multipliers (NaN for an unpriced model)."""
        spec = model_spec(self.model)
        if spec.input_usd_per_mtok is None or spec.output_usd_per_mtok is None:
            return math.nan
        base = spec.input_usd_per_mtok / 1e6
        return (
            self.input_tokens * base
            + self.cache_creation_5m * base * CACHE_WRITE_5M
            + self.cache_creation_1h * base * CACHE_WRITE_1H
            + self.cache_read_input_tokens * base * CACHE_READ
            + self.output_tokens * spec.output_usd_per_mtok / 1e6
        )

    @property
    def cost_without_cache(self) -> float:
        """What the same call would cost with no caching at all: every prompt token at 1x."""
        spec = model_spec(self.model)
        if spec.input_usd_per_mtok is None or spec.output_usd_per_mtok is None:
            return math.nan
        return (self.prompt_tokens * spec.input_usd_per_mtok + self.output_tokens * spec.output_usd_per_mtok) / 1e6
