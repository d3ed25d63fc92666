"""What only the emulator needs to know of each model, keyed by model id: how it thinks, what it
keeps of earlier thinking, and which request checks it runs. The runtime's table
(``provider.models``) holds what an agent reads; ``lookup`` and ``model_spec`` here give the same
entries with these facts added, so emulator code reads one spec.

Sources as in ``provider.models`` ([models], [CE], [PT], [TB], [caching]; read 2026-11-30).
"""

from __future__ import annotations

import warnings
from datetime import datetime, timezone
from functools import lru_cache
from typing import Literal

from pydantic import Field

from ..provider import models as table
from ..provider.models import ModelSpec

# Prompt-caching limits the emulator enforces [caching].
MAX_BREAKPOINTS = 4  # "You can define up to 4 cache breakpoints"
TTL_SECONDS = {"5m": 300, "1h": 3600}  # default 5 minutes; "ttl": "1h" option

# anthropic-beta values only the emulator checks (API-2026.md).
TOOL_CHANGES_BETA = "mid-conversation-tool-changes-2026-07-01"  # [MCSM] tool changes, by reference only
OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"  # [MCSM] per-message effort
# The header Claude Code sends for the same per-message output_config on role "system" entries. No
# first-party page names it; a live probe recorded in github.com/router-for-me/CLIProxyAPI/pull/5563
# ("direct to api.anthropic.com, with per-turn-control-2026-07-01: 200; without it: 400
# messages.1.output_config: Extra inputs are not permitted") and issue #5738 show it admits the field.
PER_TURN_CONTROL_BETA = "per-turn-control-2026-07-01"
# cache_control.scope: without this value the API answers "system.1.cache_control.ephemeral.scope:
# Extra inputs are not permitted" (captured in github.com/caozhiyuan/copilot-api/issues/145).
CACHE_SCOPE_BETA = "prompt-caching-scope-2026-01-05"

# [PT] "enforced by default for accounts created on or after 2026-08-31 00:00 UTC"
PREFIX_CHECK_ACCOUNTS_FROM = datetime(2026, 8, 31, tzinfo=timezone.utc)


class EmulatedSpec(ModelSpec, frozen=True):
    """A model-table entry with what the emulator needs besides."""

    thinking: Literal["on_request", "default_on", "always_on"] = Field(
        default="on_request", description="adaptive thinking always on, on by default, or only when asked [models]")
    keeps_prior_thinking: bool = Field(default=True, description="earlier turns' thinking blocks stay in the "
                                                                 "counted context (Opus 4.5 and later) [CE]")
    clear_thinking_keeps_all: bool = Field(default=True, description="clear_thinking_20251015's default keep: "
                                                                     "all turns, else the last one [CE]")
    task_budgets: bool = Field(default=False, description="output_config.task_budget [TB]")

    def enforces_prefix_check(self, account_created: datetime) -> bool:
        """Is a failing thinking block a 400 when the request leaves ``prefix_mismatch_behavior`` unset? [PT]"""
        return self.prefix_check == "all_accounts" or (
            self.prefix_check == "new_accounts" and account_created >= PREFIX_CHECK_ACCOUNTS_FROM)


_BUDGETS = dict(task_budgets=True)
# Fable/Mythos 5.2: task budgets are not in the pages' model lists (Sep 2026), which predate 5.2 [UNCERTAIN].
FACTS: dict[str, dict] = {
    "claude-fable-5-2": dict(thinking="always_on"),
    "claude-mythos-5-2": dict(thinking="always_on"),
    "claude-fable-5-1": dict(thinking="always_on", **_BUDGETS),
    "claude-mythos-5-1": dict(thinking="always_on", **_BUDGETS),
    "claude-opus-5-5": dict(thinking="always_on", **_BUDGETS),
    "claude-sonnet-5-5": dict(thinking="default_on", **_BUDGETS),
    "claude-haiku-5-5": dict(thinking="default_on", **_BUDGETS),
    "claude-opus-5": dict(thinking="default_on", **_BUDGETS),
    "claude-sonnet-5": dict(thinking="default_on"),
    "claude-fable-5": dict(thinking="always_on", **_BUDGETS),
    "claude-mythos-5": dict(thinking="always_on", **_BUDGETS),
    "claude-opus-4-8": dict(**_BUDGETS),
    "claude-opus-4-7": dict(**_BUDGETS),
    "claude-haiku-4-5": dict(keeps_prior_thinking=False, clear_thinking_keeps_all=False),
    "claude-sonnet-4-5": dict(keeps_prior_thinking=False, clear_thinking_keeps_all=False),
}


def emulated(spec: ModelSpec) -> EmulatedSpec:
    return spec if isinstance(spec, EmulatedSpec) else EmulatedSpec(**{**dict(spec), **FACTS.get(spec.id, {})})


@lru_cache(maxsize=None)
def lookup(model: str) -> EmulatedSpec | None:
    """``provider.models.lookup``, with the emulator's facts."""
    spec = table.lookup(model)
    return None if spec is None else emulated(spec)


def model_spec(model: str) -> EmulatedSpec:
    """``provider.models.model_spec`` (a model not in the table warns once), with the emulator's facts."""
    found = lookup(model)
    if found is not None:
        return found
    with warnings.catch_warnings(record=True) as caught:  # re-issued below so they name our caller's line
        warnings.simplefilter("always")
        spec = table.model_spec(model)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    return emulated(spec)
