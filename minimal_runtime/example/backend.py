"""Which model answers: the offline emulator (default) or a real Messages API.

The runtime takes any ``anthropic.Anthropic`` it is given; this module is the wiring. Offline, a
policy (a simulation) decides what the emulated model says. Online, the policy is ignored and the
real model decides; set ``ANTHROPIC_API_KEY`` (and ``ANTHROPIC_BASE_URL`` for any other server that
speaks the Messages API) and opt in with ``online=True`` or ``COURSE_BACKEND=api``.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Callable

import anthropic

from ..emulator import Emulator

# A current model (Nov 2026): it binds thinking to its prefix, so the runtime lays the batch out as a
# turn-scoped system message. COURSE_MODEL picks another (a model of the previous generation gets
# the 2025 layout; see minimal_runtime.core.context.layout_for).
DEFAULT_MODEL = os.environ.get("COURSE_MODEL", "claude-sonnet-5-5")


def online_requested() -> bool:
    return os.environ.get("COURSE_BACKEND", "emulator") == "api"


def make_client(policy: Callable | None = None, *, model: str = DEFAULT_MODEL, online: bool | None = None,
                clock: Callable[[], float] | None = None, account_created: date | None = None
                ) -> tuple[anthropic.Anthropic, Emulator | None]:
    """A client and, offline, the emulator behind it (for its per-call records and its clock).
    ``account_created`` sets the emulated account's age (it decides whether the prefix check of
    preserved thinking is enforced); online, the real account is what it is."""
    online = online_requested() if online is None else online
    if online:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise RuntimeError("online backend requested but ANTHROPIC_API_KEY is not set")
        return anthropic.Anthropic(), None
    options = {**({"clock": clock} if clock else {}), **({"account_created": account_created} if account_created else {})}
    emulator = Emulator(model=model, policy=policy, **options)
    return emulator.client(), emulator
