"""The prompt cache: which prefixes are stored, for how long, and what a request is billed.

Rules, each from https://platform.claude.com/docs/en/build-with-claude/prompt-caching:

- A write stores one entry per breakpoint: the prefix ending at the breakpoint block.
- A read walks back from each breakpoint over at most 20 block positions (the breakpoint itself
  is the first) looking for an entry that an *earlier* request wrote; the longest hit wins.
- A prefix shorter than the model's minimum cacheable length is processed uncached, no error.
- Entries live 5 minutes by default or 1 hour with ``ttl: "1h"``; a hit refreshes the lifetime.
- Usage: ``cache_read_input_tokens`` is the prefix served from cache, ``cache_creation_input_tokens``
  the tokens written after it up to the last breakpoint (split by TTL in ``cache_creation``),
  and ``input_tokens`` whatever follows the last breakpoint.
- "A cache entry only becomes available after the first response begins": what a request writes
  is pending until ``commit``, so concurrent identical requests each write.
- Caches are not shared between organizations: an entry is its writer's (``owner``, a digest of the
  API key the request was sent with: ``threads.credential``), read only by requests sent with that
  key; two requests with one key share. A key stands for an organization here (a workshop's
  attendees each have one), the strictest reading, as threads bind to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..provider.models import LOOKBACK_BLOCKS
from .prompt import Prompt


@dataclass
class CacheOutcome:
    read: int  # cache_read_input_tokens
    written_5m: int
    written_1h: int
    uncached: int  # input_tokens
    pending: dict = field(default_factory=dict)  # (owner, digest) -> (expires_at, ttl): readable after commit

    @property
    def written(self) -> int:
        return self.written_5m + self.written_1h


class PromptCache:
    """Entries keyed by prefix digest, with expiry times on the emulator's clock. Not thread-safe
    on its own: the emulator serialises access."""

    def __init__(self) -> None:
        self._expires: dict[tuple[str, bytes], tuple[float, int]] = {}  # (owner, digest) -> (expires_at, ttl)

    def __len__(self) -> int:
        return len(self._expires)

    def copy(self) -> PromptCache:
        """The same entries, to go on from separately (a replay's strategies each start from one seeded cache)."""
        twin = PromptCache()
        twin._expires = dict(self._expires)
        return twin

    def _alive(self, key: tuple[str, bytes], now: float) -> bool:
        entry = self._expires.get(key)
        return entry is not None and entry[0] > now

    def apply(self, prompt: Prompt, min_tokens: int, now: float, owner: str = "") -> CacheOutcome:
        """Bill ``prompt``, sent by ``owner``, against that owner's entries, then store what it writes."""
        key = lambda pos: (owner, prompt.digests[pos])  # noqa: E731
        hit = -1  # pragma: no mutate (the position of the longest prefix read from cache; any negative: none)
        for pos, _ttl in prompt.breakpoints:
            for back in range(pos, max(pos - LOOKBACK_BLOCKS, -1), -1):  # pragma: no mutate (-1 or -2: position -1 never hits)
                if self._alive(key(back), now):
                    hit = max(hit, back)
                    break
        if hit >= 0:
            _, ttl = self._expires[key(hit)]
            self._expires[key(hit)] = (now + ttl, ttl)  # a hit refreshes the TTL

        cached_upto, written, pending = hit, {300: 0, 3600: 0}, {}
        for pos, ttl in prompt.breakpoints:
            if prompt.prefix_tokens(pos) < min_tokens:
                continue  # too short to cache: processed as plain input, no error
            if pos > cached_upto:  # pragma: no mutate (>= writes 0 more tokens: the same)
                written[ttl] += prompt.prefix_tokens(pos) - prompt.prefix_tokens(cached_upto)
                cached_upto = pos
            # Writing a prefix that is already stored keeps the longer of its two lifetimes.
            old = self._expires.get(key(pos))
            alive = old is not None and old[0] > now
            keep = old[1] if alive and old[1] > ttl else ttl  # pragma: no mutate (>= ttl: the same ttl)
            pending[key(pos)] = (now + keep, keep)

        if len(self._expires) > 4096:  # pragma: no mutate (housekeeping: dropping expired entries changes nothing)
            self._expires = {d: e for d, e in self._expires.items() if e[0] > now}  # pragma: no mutate
        read = prompt.prefix_tokens(hit)
        return CacheOutcome(
            read=read,
            written_5m=written[300],
            written_1h=written[3600],
            uncached=prompt.total - prompt.prefix_tokens(cached_upto),
            pending=pending,
        )

    def commit(self, outcome: CacheOutcome) -> None:
        """The writing response has begun: its entries are readable from now on."""
        self._expires.update(outcome.pending)
        outcome.pending = {}  # pragma: no mutate (an outcome is committed once)
