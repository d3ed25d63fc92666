"""Errors on demand, so a client's retry path can be tested through ``serve``.

    serve --faults 429:0.1,529:0.05,500:0.01     each API request draws once: 10% 429, 5% 529, 1% 500
    serve --faults 529:0.2 --fault-seed 7         another repeatable sequence

The draws come from a ``random.Random`` seeded by ``--fault-seed`` (default 0), so the same
requests in the same order meet the same faults: a run repeats. A ``--script`` line
``{"error": {"status": 529}}`` (optional ``message``, ``retry_after`` seconds, ``error_code``) answers
the call that reaches it with that error, before anything is billed, as the real API answers a 429
or a 529; the next call takes the next line. The bodies and headers are the emulator's own
(``errors.fault``: the API's error shape, a ``retry-after``).
"""

from __future__ import annotations

import random
import threading

from ..emulator.errors import ERROR_TYPES, ApiError, fault

MESSAGES = "/v1/messages"


class Faults:
    def __init__(self, rates: dict[int, float] | None = None, seed: int = 0, script=None):
        self.rates = dict(rates or {})
        self.script = script  # a policy.Script whose error lines are answered here
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, spec: str | None, seed: int = 0, script=None) -> "Faults":
        """``STATUS:PROBABILITY,...``; raises ValueError naming what is wrong."""
        rates: dict[int, float] = {}
        for part in filter(None, (p.strip() for p in (spec or "").split(","))):
            status, sep, share = part.partition(":")
            try:
                code, p = int(status), float(share)
            except ValueError:
                raise ValueError(f"--faults {part!r}: expected STATUS:PROBABILITY, e.g. 529:0.05") from None
            if not sep or code not in ERROR_TYPES or not 0 <= p <= 1:
                raise ValueError(f"--faults {part!r}: a status the API answers ({', '.join(map(str, ERROR_TYPES))}) "
                                 "and a probability from 0 to 1")
            rates[code] = rates.get(code, 0.0) + p
        if sum(rates.values()) > 1:
            raise ValueError(f"--faults {spec!r}: the probabilities add up to more than 1")
        return cls(rates, seed, script)

    def draw(self, path: str) -> ApiError | None:
        """The error this request is answered with, or None (called by the emulator for each request to
        the Messages API: a message, a count, a batch's every call, its polls included; not the model listing)."""
        if self.script is not None and path == MESSAGES and (scripted := self.script.take_error()) is not None:
            return scripted
        if not self.rates:
            return None
        with self._lock:
            x = self._random.random()
        for status, p in sorted(self.rates.items()):
            if x < p:
                return fault(status)
            x -= p
        return None


def scripted_error(value: dict) -> ApiError:
    """A ``--script`` line's ``{"error": {...}}`` (or ``{"error": 529}``) as the error it answers with."""
    spec = value["error"] if isinstance(value["error"], dict) else {"status": value["error"]}
    status = spec.get("status")
    if not isinstance(status, int) or status not in ERROR_TYPES:
        raise ValueError(f"error.status: one of {', '.join(map(str, ERROR_TYPES))}")
    return fault(status, float(spec.get("retry_after", 0.01)), spec.get("message"), spec.get("error_code"))
