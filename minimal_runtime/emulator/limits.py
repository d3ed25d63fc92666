"""The rate-limit headers every answer carries [RL: https://platform.claude.com/docs/en/api/rate-limits,
"Response headers"; API-2026.md §13]: ``anthropic-ratelimit-{requests,tokens,input-tokens,
output-tokens}-{limit,remaining,reset}``, ``*-reset`` in RFC 3339, token counts rounded to the
nearest thousand, ``tokens-*`` the sum of input and output where no workspace limit applies.

The emulator enforces no rate limit (``serve --faults 429:0.1`` emulates running into one), and the
headers say exactly that: NOMINAL limits (round numbers of ours, not any tier's), all of it
remaining, reset now. A client that reads them to pace itself is never held back.
"""

from __future__ import annotations

from datetime import datetime, timezone

NOMINAL = {"requests": 4_000, "input-tokens": 2_000_000, "output-tokens": 400_000}
NOMINAL["tokens"] = NOMINAL["input-tokens"] + NOMINAL["output-tokens"]


def ratelimit_headers(now: datetime | None = None, limits: dict[str, int] = NOMINAL,
                      prefix: str = "anthropic-ratelimit") -> dict[str, str]:
    """Each of ``limits`` as the three headers ``{prefix}-{name}-limit``, ``-remaining`` (all of it)
    and ``-reset`` (now)."""
    reset = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds").replace("+00:00", "Z")
    out = {}
    for name, limit in limits.items():
        out[f"{prefix}-{name}-limit"] = str(limit)
        out[f"{prefix}-{name}-remaining"] = str(limit)
        out[f"{prefix}-{name}-reset"] = reset
    return out


# Fast mode "has a dedicated rate limit separate from standard Opus rate limits", and a response
# carries its state in anthropic-fast-{input,output}-tokens-{limit,remaining,reset} [FM
# https://platform.claude.com/docs/en/build-with-claude/fast-mode "Rate limits"]: sent on an answer
# that ran fast (usage.speed "fast"), nominal as above, all remaining, reset now.
NOMINAL_FAST = {"input-tokens": 200_000, "output-tokens": 40_000}


def fast_ratelimit_headers(now: datetime | None = None) -> dict[str, str]:
    return ratelimit_headers(now, NOMINAL_FAST, "anthropic-fast")
