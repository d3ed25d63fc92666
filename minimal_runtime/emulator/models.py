"""What only the emulator needs to know of each model, keyed by model id: how it thinks, what it
keeps of earlier thinking, and which request checks it runs. The runtime's table
(``provider.models``) holds what an agent reads; ``lookup`` and ``model_spec`` here give the same
entries with these facts added, so emulator code reads one spec.

Sources as in ``provider.models`` ([models], [CE], [PT], [TB], [caching]; read 2026-11-30), and:
  [TH]  https://platform.claude.com/docs/en/build-with-claude/thinking (2026-09-02 copy):
        "Controlling thinking display" (the per-model ``display`` default), "Sampling parameters"
  [TT]  .../build-with-claude/thinking-troubleshooting (2026-09-02 copy): the per-model table of
        thinking types, defaults and the types each rejects
  [EFF] .../build-with-claude/effort (2026-09-02 copy): the supported models, and which support
        ``max`` and ``xhigh``
  [FM]  .../build-with-claude/fast-mode (see ``provider.models``): which models need the beta header
The 5.5 and 5.2 models postdate those copies: where a page's list stops before them, the entry says
which reading we chose.
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

FAST_BETA = "fast-mode-2026-02-01"  # [FM] speed "fast" on the models still in research preview
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"  # [TH] manual thinking: budget may exceed max_tokens
DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"  # [TH] display "updates"

EFFORTS = ("low", "medium", "high", "xhigh", "max")

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
    thinking_display: Literal["summarized", "omitted"] = Field(
        default="summarized", description="what thinking.display defaults to [TH]")
    efforts: tuple[str, ...] = Field(default=EFFORTS[:3] + ("max",), description="output_config.effort values "
                                     "accepted; empty: the parameter is a 400 [EFF]")
    default_effort: str | None = Field(default="high", description="the effort an omitted one means [EFF] [models]")
    effort_without_thinking: str | None = Field(default=None, description="the highest effort accepted with "
                                                "thinking turned off [TT; PAI]")
    sampling_deprecated: bool = Field(default=False, description="temperature other than 1, top_p, top_k are a "
                                      "400 under 2023-06-01 [TH; API-2026 §13]")
    fast_beta: bool = Field(default=False, description="speed 'fast' needs the fast-mode beta header [FM]")
    fast_runs_standard: bool = Field(default=False, description="speed 'fast' is accepted and runs at standard "
                                     "speed and rates, usage.speed 'standard' [FM]")
    interleaved_manual: bool = Field(default=True, description="the interleaved-thinking beta lets a manual "
                                     "budget_tokens reach max_tokens [TH]")

    def enforces_prefix_check(self, account_created: datetime) -> bool:
        """Is a failing thinking block a 400 when the request leaves ``prefix_mismatch_behavior`` unset? [PT]"""
        return self.prefix_check == "all_accounts" or (
            self.prefix_check == "new_accounts" and account_created >= PREFIX_CHECK_ACCOUNTS_FROM)


_BUDGETS = dict(task_budgets=True)
# 4.7 and later, and every 5.x model: display "omitted" by default [TH]; temperature, top_p and top_k
# refused [TH "Sampling parameters"; API-2026 §13, live probes of 5.5 and Haiku 5.5]; all five efforts
# [EFF]. The 5.5 and 5.2 models are not in the Sep 2026 pages' lists: we extend the 5.x reading to
# them [UNCERTAIN] (API-2026 §7 says "display defaults to omitted on 5.x" from PAI's live probes).
_NEW = dict(thinking_display="omitted", sampling_deprecated=True, efforts=EFFORTS)
# Fable/Mythos 5.2: task budgets are not in the pages' model lists (Sep 2026), which predate 5.2 [UNCERTAIN].
FACTS: dict[str, dict] = {
    "claude-fable-5-2": dict(thinking="always_on", **_NEW),
    "claude-mythos-5-2": dict(thinking="always_on", **_NEW),
    "claude-fable-5-1": dict(thinking="always_on", **_BUDGETS, **_NEW),
    "claude-mythos-5-1": dict(thinking="always_on", **_BUDGETS, **_NEW),
    # Opus 5.5 and Haiku 5.5 default to medium effort [models]. Sonnet 5.5 and Haiku 5.5 cap effort at
    # high with thinking off, as Opus 5 does [PAI, verified live; API-2026 §7].
    "claude-opus-5-5": dict(thinking="always_on", **_BUDGETS, **_NEW, default_effort="medium", fast_beta=False),
    "claude-sonnet-5-5": dict(thinking="default_on", **_BUDGETS, **_NEW, effort_without_thinking="high"),
    "claude-haiku-5-5": dict(thinking="default_on", **_BUDGETS, **_NEW, default_effort="medium",
                             effort_without_thinking="high"),
    # Opus 5: "disabled" only at effort high or below [TT footnote 2]; fast mode in research preview [FM].
    "claude-opus-5": dict(thinking="default_on", **_BUDGETS, **_NEW, effort_without_thinking="high", fast_beta=True),
    "claude-sonnet-5": dict(thinking="default_on", **_NEW),
    "claude-fable-5": dict(thinking="always_on", **_BUDGETS, **_NEW),
    "claude-mythos-5": dict(thinking="always_on", **_BUDGETS, **_NEW),
    "claude-opus-4-8": dict(**_BUDGETS, **_NEW, fast_beta=True),
    "claude-opus-4-7": dict(**_BUDGETS, **_NEW),
    # Opus 4.6 and Sonnet 4.6: max but not xhigh; display summarized [EFF; TH]. Opus 4.6 left fast mode
    # (the page lists Opus 5.5, 5 and 4.8): speed "fast" runs at standard speed and rates and reports
    # usage.speed "standard" [FM, as issue 48 quotes it; two clients' notes agree: "4.6 silently runs at
    # standard speed, while 4.7 rejects speed: fast"]. Its manual thinking has no interleaving [TH].
    "claude-opus-4-6": dict(fast_runs_standard=True, interleaved_manual=False),
    # Opus 4.5: effort without max; extended thinking only [EFF; TT].
    "claude-opus-4-5": dict(efforts=EFFORTS[:3]),
    # Haiku 4.5 and Sonnet 4.5: no effort parameter ("This model does not support the effort
    # parameter", live, github.com/oratis/LISA/pull/218); extended thinking only [TT].
    # Haiku 4.5 accepts the interleaved-thinking header and ignores it [TH].
    "claude-haiku-4-5": dict(keeps_prior_thinking=False, clear_thinking_keeps_all=False,
                             efforts=(), default_effort=None, interleaved_manual=False),
    "claude-sonnet-4-5": dict(keeps_prior_thinking=False, clear_thinking_keeps_all=False,
                              efforts=(), default_effort=None),
}


def emulated(spec: ModelSpec) -> EmulatedSpec:
    # A model not in the table is refused nothing the table could not tell: every effort level.
    facts = FACTS.get(spec.id, {}) if spec.known else dict(efforts=EFFORTS)
    return spec if isinstance(spec, EmulatedSpec) else EmulatedSpec(**{**dict(spec), **facts})


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
