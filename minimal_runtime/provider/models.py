"""Per-model facts the runtime reads, in one table (what only a simulator of the API needs besides
is kept with the simulator).

Every figure is a published fact with its source and the date we read it. Where sources disagree
the entry says so ([UNCERTAIN]: the reading we chose, and the other). If a provider changes a
price or a limit, this is the only file to edit.

Sources (read 2026-11-30; the full texts of the newest pages are their Aug-Sep 2026 copies):
  [models]   https://platform.claude.com/docs/en/models/<id>/overview (window, max output, prices,
             thinking, release) and https://platform.claude.com/docs/en/about-claude/pricing
  [caching]  .../docs/en/build-with-claude/prompt-caching ("Cache limitations": minimum length)
  [prefill]  .../docs/en/about-claude/models/migration-guide (4.6 and later: no trailing assistant)
  [PT]       .../docs/en/build-with-claude/preserved-thinking (which models run the prefix check and
             for which accounts; "Changes that invalidate thinking")
  [F52]      .../docs/en/models/fable-5-2/whats-new-fable-5-2 (5.2: enforced for every account)
  [MCSM]     .../docs/en/build-with-claude/mid-conversation-system-messages (system messages,
             clear_at, tool_addition / tool_removal: supported models)
  [CT] [COD] .../docs/en/build-with-claude/compaction-threshold, .../compaction-on-demand
  [TB]       .../docs/en/build-with-claude/task-budgets
  [CE]       .../docs/en/build-with-claude/context-editing (clear_thinking defaults)
  [PAI]      pydantic-ai 2.68 profiles/anthropic.py and providers/anthropic.py, recording live probes
             (forced tool_choice rejected; Sonnet 5 ignores system messages; Haiku 5.5's boundary)
  [DR]       .../docs/en/build-with-claude/data-residency (Feb 2026 copy): ``inference_geo`` "us" is
             "priced at 1.1x the standard rate across all token pricing categories" on "Claude Opus
             4.6 and newer"; "Requests with inference_geo on legacy models return a 400 error"
  [FM]       .../docs/en/build-with-claude/fast-mode: the de ``.md`` front matter (Nov 2026) lists
             supportedModels claude-opus-5-5, claude-opus-5, claude-opus-4-8, "Fast Mode on Claude Opus
             5 and Claude Opus 4.8 ... needs the beta header fast-mode-2026-02-01"; "priced at a
             per-model multiplier on standard rates", caching and data-residency multipliers "apply on
             top"; "Requests at different speeds do not share cached prefixes". The Opus 5 and Opus
             4.8 fast rates ($10 / $50, 2x) are third-party listings (OpenRouter, Vercel AI Gateway)
             quoting the pricing page; no source read gives Opus 5.5's [UNCERTAIN]
  [MT]       .../docs/en/build-with-claude/message-threads, its front matter's ``supportedModels`` (read
             2026-12-02; the page launched 2026-11-02)
  [VIS]      .../docs/en/build-with-claude/vision ("Resolution and token cost", "General limits"; Aug 2026
             copy, quoted in third-party notes of 2026-08-29 and later): an image costs
             ``ceil(width / 28) x ceil(height / 28)`` visual tokens after it is scaled to fit the model's
             limits, "Claude 4.7 and later models: 2576 px, 4784 tokens", "all other models: 1568 px,
             1568 tokens"; "100 per request on the API, for models with a 200k-token context window",
             "600 per request on the API, for all other models"
  [TOOLS]    .../docs/en/agents-and-tools/tool-use/overview, "Pricing" (and the pricing page's "Tool use
             pricing"): "When you use tools, the API also automatically includes a special system prompt
             for the model which enables tool use", one size for tool_choice auto/none and one for
             any/tool, "added to your normal input"; "If no tools are provided, then a tool choice of
             none uses 0 additional system prompt tokens". The table read lists Opus 4.8 290/410, 4.7
             675/804, 4.6 497/589, 4.5 496/588, Sonnet 5 354/474, Sonnet 4.6 497/589, Sonnet 4.5
             496/588, Haiku 4.5 496/588; Opus 5 286/406 from the late-2026 pricing page as issue 48
             quotes it (a third-party study note of 2026-09 gives the same pair)
  [TOK]      .../docs/en/about-claude/pricing and .../build-with-claude/token-counting: Claude Opus 4.7
             "and later" use "a new tokenizer" that gives "roughly 30% more tokens for the same text";
             .../models/sonnet-5/whats-new-sonnet-5: Sonnet 5 "uses a new tokenizer that produces
             approximately 30% more tokens for the same text"; Fable/Mythos 5 are named with it (issue
             48's reading of the pricing page)
  [PY]       the ``anthropic`` Python SDK 2.15.0: ``lib/threads/_thread_state.py`` (what a thread turn
             sends, when it replays), ``_client.py`` (``_supports_message_threads``: which clients thread)
"""

from __future__ import annotations

import threading
import warnings
from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

# Prompt-caching rules every model shares [caching].
LOOKBACK_BLOCKS = 20  # a read walks back at most 20 block positions from a breakpoint (itself included)
CACHE_WRITE_5M, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.0, 0.10  # the usual multipliers on base input [pricing]

# The anthropic-beta values of the 2026 features the runtime sends (each with the page that names it).
CLEAR_AT_BETA = "mid-conversation-system-clear-at-2026-08-21"  # [MCSM] turn-scoped system messages
INLINE_TOOLS_BETA = "inline-tools-2026-09-15"  # [MCSM] tool_addition / tool_removal, by reference or value
BINDING_BETA = "thinking-binding-controls-2026-08-01"  # [PT] block_binding, input_transformations
CONTEXT_EDITING_BETA = "context-management-2025-06-27"  # [CE]
COMPACT_THRESHOLD_BETA = "compact-2026-01-12"  # [CT]
COMPACT_ON_DEMAND_BETA = "compact-2026-09-04"  # [COD]
TASK_BUDGET_BETA = "task-budgets-2026-03-13"  # [TB]
THREADS_BETA = "message-threads-2026-08-12"  # [MT] message threads: the server holds the conversation
THREAD_TTL_SECONDS = 300  # [MT] "a thread expires 5 minutes after its last request"

class Prices(BaseModel, frozen=True):
    """Dollars per million tokens. ``up_to``: the largest prompt (in tokens) these prices apply to;
    None for no limit. A model priced in tiers has one ``Prices`` per tier, smallest first."""

    input: float
    output: float
    write_5m: float
    write_1h: float
    read: float
    up_to: int | None = None


def _usual(input: float, output: float, read: float | None = None) -> Prices:
    """Prices that follow the usual cache multipliers (read 0.1x unless the page says otherwise), in
    one tier (a model priced in tiers gives each tier's ``Prices`` whole)."""
    return Prices(input=input, output=output, write_5m=input * CACHE_WRITE_5M, write_1h=input * CACHE_WRITE_1H,
                  read=input * CACHE_READ if read is None else read)


class ModelSpec(BaseModel, frozen=True):
    """What a model accepts and what it costs. ``None`` means unknown (a model not in the table)."""

    id: str
    known: bool = Field(default=True, description="in the table; False for a model we know nothing of")
    status: Literal["current", "legacy", "deprecated", "unknown"] = "current"
    released: date | None = Field(default=None, description="[models]")
    context_window: int | None = Field(description="max prompt tokens [models]")
    max_output: int | None = Field(default=None, description="max output tokens [models]")
    prices: tuple[Prices, ...] = Field(default=(), description="one per prompt-size tier [models]; empty: unknown")
    min_cacheable_tokens: int | None = Field(description="shorter prefixes are processed uncached, no error [caching]")
    supports_prefill: bool = Field(description="accepts a request ending in an assistant message [prefill]")
    prefix_check: Literal["none", "new_accounts", "all_accounts"] = Field(
        default="none", description="preserved thinking: for which accounts a failing block is a 400 [PT]")
    system_messages: Literal["no", "ignored", "yes"] = Field(default="no", description="role 'system' entries "
                                                              "in messages: 400, accepted and ignored, or read [MCSM]")
    tool_changes: bool = Field(default=False, description="tool_addition / tool_removal blocks [MCSM]")
    system_boundary: bool = Field(default=False, description="may read a system entry right after a tool_result "
                                  "as tool output: a short text block goes between them [PAI]")
    compaction: bool = Field(default=False, description="compact_20260112 and on-demand compaction [CT] [COD]")
    rejects_forced_tool_choice: bool = Field(default=False, description="tool_choice any/tool is a 400 [PAI]")
    thinking_refused: tuple[str, ...] = Field(default=(), description="thinking.type values that are a 400 [models] "
                                              "[PAI]: manual budget_tokens on Opus 4.7 and later, turning it off where "
                                              "it is always on")
    us_inference: float | None = Field(default=None, description="price multiplier of inference_geo 'us'; None: "
                                       "the parameter is a 400 on this model [DR]")
    fast: float | None = Field(default=None, description="price multiplier of speed 'fast'; None: not offered [FM]")
    threads: bool = Field(default=False, description="message threads: ``thread`` create / continue [MT]")
    image_limits: tuple[int, int] = Field(default=(1568, 1568), description="an image is scaled to fit this "
                                          "long edge (px) and this many visual tokens [VIS]")
    tool_prompt: tuple[int, int] | None = Field(default=None, description="tokens of the tool-use system prompt "
                                                "with tool_choice auto/none, and any/tool; None: unknown, 0 [TOOLS]")
    tokenizer: float = Field(default=1.0, description="tokens of a text on this model per token of the same text "
                                                      "on Sonnet 4.6 and earlier [TOK]")

    @property
    def max_images(self) -> int:
        """Images one request may carry: 100 with a 200K window, 600 on the others [VIS]."""
        return 100 if self.context_window is not None and self.context_window <= 200_000 else 600

    def price(self, prompt_tokens: int, speed: str | None = None, inference_geo: str | None = None) -> Prices | None:
        """The prices of a call whose prompt (cached or not) is ``prompt_tokens`` long, at the speed and
        inference geography the response reported: each multiplier applies to every token category,
        and they stack [FM] [DR]."""
        found = next((p for p in self.prices if p.up_to is None or prompt_tokens <= p.up_to), None)
        factor = (self.fast or 1.0 if speed == "fast" else 1.0) * (
            self.us_inference or 1.0 if inference_geo == "us" else 1.0)
        if found is None or factor == 1.0:
            return found
        return Prices(**{k: v * factor for k, v in found.model_dump().items() if k != "up_to"}, up_to=found.up_to)


_FIVE = dict(context_window=1_000_000, max_output=128_000, supports_prefill=False, us_inference=1.1)  # 4.6 on [DR]
# Thinking [models] [PAI]: manual budget_tokens thinking is a 400 on Opus 4.7 and later and on every 5.x
# model; where adaptive thinking is always on, so is turning it off; Sonnet 5.5 turns it off only
# with between_tools (its overview lists "disabled" among the breaking changes).
_MANUAL, _ALWAYS_ON = ("enabled",), ("enabled", "disabled", "between_tools")
_EXTENDED_ONLY = ("adaptive",)  # Opus 4.5, Haiku 4.5, Sonnet 4.5: "adaptive thinking is not supported on this model" [TT]
# Message threads [MT]: every model of the page's list but Fable/Mythos 5.2, which came out after it
# and are not named there [UNCERTAIN]: left off until a source says they take ``thread``.
_CURRENT = dict(**_FIVE, system_messages="yes", tool_changes=True, compaction=True, threads=True)
# Vision [VIS]: "Claude 4.7 and later models" scale to 2576 px and 4784 visual tokens; the rest to 1568 and
# 1568 (also what a model not in the table gets [UNCERTAIN]). Haiku 5.5 and the 5.1/5.2 models are not named
# on the page; they are "later" than 4.7 by version, so they are read as included [INFERRED].
_HIGH_RES = (2576, 4784)
# The new tokenizer [TOK]: only on the models a page names (Opus 4.7 and the Opus that follow it in the
# page's "4.7 and later", Sonnet 5, Fable/Mythos 5). A 5.1, 5.2 or 5.5 model is named by no page read:
# 1.0 [UNCERTAIN] until a source says which tokenizer it uses.
_NEW_TOKENIZER = 1.3
# The tool-use system prompt [TOOLS]. Where the table gives no figure, the nearest listed model of the
# same family and generation [UNCERTAIN]: Opus 5.5 -> Opus 5; Sonnet 5.5 -> Sonnet 5; Haiku 5.5 -> Sonnet 5
# (no Haiku of the 5 generation is listed, and the table's figures follow the generation, not the family:
# Opus, Sonnet and Haiku 4.5 share 496/588); Fable and Mythos (no row at all) -> Opus 5.
_TOOLS_OPUS5, _TOOLS_SONNET5 = (286, 406), (354, 474)

MODELS: dict[str, ModelSpec] = {m.id: m for m in [
    # -- the current lineup (Nov 2026) ------------------------------------------------------------
    # Fable/Mythos 5.2: min cacheable not found [UNCERTAIN]: we use 512, the value of every other 5.x
    # model. Prefix check on every account [F52]. Compaction: the pages' model lists (Sep 2026)
    # predate 5.2 and do not name it [UNCERTAIN]; we follow the lists and leave it off.
    # System messages and tool changes: supported per PAI's model lists [INFERRED from PAI; MCSM predates 5.2].
    *(ModelSpec(id=f"claude-{name}-5-2", released=date(2026, 11, 9), prices=(_usual(8, 40, read=0.20),),
                min_cacheable_tokens=512, prefix_check="all_accounts", thinking_refused=_ALWAYS_ON,
                rejects_forced_tool_choice=True, image_limits=_HIGH_RES, tool_prompt=_TOOLS_OPUS5,
                **{**_CURRENT, "compaction": False, "threads": False})
      for name in ("fable", "mythos")),
    # Fable 5.1 runs the check for new accounts [PT]. Mythos 5.1 [UNCERTAIN]: the Sep 2026 PT says it
    # does not run the check (PAI agrees); the current F52 and the prefix-check page's model list
    # (Nov 2026) say it does, on every account. We follow the newer pages.
    ModelSpec(id="claude-fable-5-1", released=date(2026, 9, 1), prices=(_usual(10, 50, read=0.25),),
              min_cacheable_tokens=512, prefix_check="new_accounts", thinking_refused=_ALWAYS_ON,
              rejects_forced_tool_choice=True, image_limits=_HIGH_RES, tool_prompt=_TOOLS_OPUS5, **_CURRENT),
    ModelSpec(id="claude-mythos-5-1", released=date(2026, 9, 1), prices=(_usual(10, 50, read=0.25),),
              min_cacheable_tokens=512, prefix_check="all_accounts", thinking_refused=_ALWAYS_ON,
              rejects_forced_tool_choice=True, image_limits=_HIGH_RES, tool_prompt=_TOOLS_OPUS5, **_CURRENT),
    # Fast mode on Opus 5.5 [FM]; its rate was not in what we read: the 2x of Opus 5 and 4.8 [UNCERTAIN].
    ModelSpec(id="claude-opus-5-5", released=date(2026, 9, 23), prices=(_usual(4, 20, read=0.20),),
              min_cacheable_tokens=512, prefix_check="new_accounts", thinking_refused=_ALWAYS_ON,
              rejects_forced_tool_choice=True, fast=2.0, image_limits=_HIGH_RES, tool_prompt=_TOOLS_OPUS5,
              **_CURRENT),
    # Sonnet 5.5: min cacheable 512 from secondary sources [UNCERTAIN]; cache read $0.20 per its
    # overview page [UNCERTAIN]: two third-party tools say $0.10, and so does Claude Code 2.1.332's own
    # cost figure (costBasis "list", its logs' total_cost_usd, Dec 2026). A client's price list is not
    # the bill; the first-party page wins until a bill says otherwise (replay prints the gap).
    ModelSpec(id="claude-sonnet-5-5", released=date(2026, 9, 28), prices=(_usual(2, 10, read=0.20),),
              min_cacheable_tokens=512, prefix_check="new_accounts", thinking_refused=("enabled", "disabled"),
              rejects_forced_tool_choice=True, image_limits=_HIGH_RES, tool_prompt=_TOOLS_SONNET5, **_CURRENT),
    # Haiku 5.5: two price tiers by prompt size [models]; the 1h write above 100k follows the 2x
    # multiplier [INFERRED]; reads per the apidog guide. Min cacheable not found [UNCERTAIN]: 512, as
    # the rest of the 5.x generation. Forced tool_choice accepted (not in PAI's list). A system entry
    # right after a tool_result may be read as tool output; PAI's boundary text block raised
    # compliance from 12 to 64 of 64 runs, in PAI's live measurement [PAI].
    ModelSpec(id="claude-haiku-5-5", released=date(2026, 10, 7),
              prices=(Prices(input=0.10, output=0.50, write_5m=0.125, write_1h=0.20, read=0.01, up_to=100_000),
                      Prices(input=0.50, output=2.50, write_5m=0.625, write_1h=1.00, read=0.05)),
              min_cacheable_tokens=512, prefix_check="new_accounts", thinking_refused=_MANUAL, system_boundary=True,
              image_limits=_HIGH_RES, tool_prompt=_TOOLS_SONNET5, **_CURRENT),
    # -- legacy, still served [models] -----------------------------------------------------------
    ModelSpec(id="claude-opus-5", status="legacy", released=date(2026, 7, 24), prices=(_usual(5, 25, read=0.50),),
              min_cacheable_tokens=512, thinking_refused=_MANUAL, fast=2.0, image_limits=_HIGH_RES,
              tool_prompt=_TOOLS_OPUS5, tokenizer=_NEW_TOKENIZER, **_CURRENT),  # fast: $10 / $50 [FM]
    # Sonnet 5 accepts role "system" entries and ignores them [PAI]; rejects tool changes [MCSM].
    ModelSpec(id="claude-sonnet-5", status="legacy", released=date(2026, 6, 30), prices=(_usual(2, 10, read=0.20),),
              min_cacheable_tokens=1024, compaction=True, system_messages="ignored", thinking_refused=_MANUAL,
              threads=True, image_limits=_HIGH_RES, tool_prompt=_TOOLS_SONNET5, tokenizer=_NEW_TOKENIZER, **_FIVE),
    *(ModelSpec(id=f"claude-{name}-5", status="legacy", released=date(2026, 6, 9), prices=(_usual(10, 50, read=1.0),),
                min_cacheable_tokens=512, thinking_refused=_ALWAYS_ON, image_limits=_HIGH_RES, tool_prompt=_TOOLS_OPUS5,
                tokenizer=_NEW_TOKENIZER, **_CURRENT) for name in ("fable", "mythos")),
    # Fast mode on Opus 4.8: $10 / $50 (2x), deprecated 2026-10-30, removed 2026-11-30 per Claude Code's
    # fast-mode page [FM]; kept while the API page still lists it.
    ModelSpec(id="claude-opus-4-8", status="legacy", prices=(_usual(5, 25),), min_cacheable_tokens=1024,
              system_messages="yes", tool_changes=True, compaction=True, thinking_refused=_MANUAL, fast=2.0, threads=True,
              image_limits=_HIGH_RES, tool_prompt=(290, 410), tokenizer=_NEW_TOKENIZER, **_FIVE),
    ModelSpec(id="claude-opus-4-7", status="legacy", prices=(_usual(5, 25),), min_cacheable_tokens=2048,
              compaction=True, thinking_refused=_MANUAL, threads=True, image_limits=_HIGH_RES, tool_prompt=(675, 804),
              tokenizer=_NEW_TOKENIZER, **_FIVE),
    ModelSpec(id="claude-opus-4-6", status="legacy", released=date(2026, 2, 5), prices=(_usual(5, 25),),
              min_cacheable_tokens=4096, compaction=True, threads=True, tool_prompt=(497, 589), **_FIVE),
    ModelSpec(id="claude-sonnet-4-6", status="legacy", released=date(2026, 2, 17), prices=(_usual(3, 15),),
              min_cacheable_tokens=1024, compaction=True, threads=True, tool_prompt=(497, 589), **_FIVE),
    # Opus 4.5: deprecated 2026-11-23, retirement tentatively 2027-01-22 (third-party note) [UNCERTAIN].
    ModelSpec(id="claude-opus-4-5", status="deprecated", prices=(_usual(5, 25),), context_window=200_000,
              max_output=64_000, min_cacheable_tokens=4096, supports_prefill=True, thinking_refused=_EXTENDED_ONLY,
              threads=True, tool_prompt=(496, 588)),
    ModelSpec(id="claude-haiku-4-5", status="legacy", prices=(_usual(1, 5),), context_window=200_000,
              max_output=64_000, min_cacheable_tokens=4096, supports_prefill=True, thinking_refused=_EXTENDED_ONLY,
              threads=True, tool_prompt=(496, 588)),
    # Sonnet 4.5 reaches end of life on 2026-11-30; kept while it is still answered.
    ModelSpec(id="claude-sonnet-4-5", status="deprecated", prices=(_usual(3, 15),), context_window=200_000,
              max_output=64_000, min_cacheable_tokens=1024, supports_prefill=True, thinking_refused=_EXTENDED_ONLY,
              threads=True, tool_prompt=(496, 588)),
]}


def lookup(model: str) -> ModelSpec | None:
    """The table's entry for ``model`` (dated ids such as claude-sonnet-4-5-20250929 included), or None."""
    if model in MODELS:
        return MODELS[model]
    known, _, stamp = model.rpartition("-")
    return MODELS.get(known) if len(stamp) == 8 and stamp.isdigit() else None


_warned: set[str] = set()
_warned_lock = threading.Lock()


def model_spec(model: str) -> ModelSpec:
    """Look a model up by id, accepting dated ids such as claude-sonnet-4-5-20250929.

    A model not in the table (a local server's, a newer one) gets one behaviour everywhere: a
    warning (once per name), no prefill (the safe choice: every current model refuses it), no known
    cache minimum, no known window, none of the 2026 features, and no prices, so its cost is
    reported as unknown (NaN) rather than guessed or crashed on."""
    spec = lookup(model)
    if spec is not None:
        return spec
    with _warned_lock:
        first = model not in _warned
        _warned.add(model)
    if first:
        warnings.warn(f"model {model!r} is not in the model table: no prefill, no known cache minimum or "
                      "window, cost unknown", UnknownModelWarning, stacklevel=2)
    return ModelSpec(id=model, known=False, status="unknown", context_window=None, min_cacheable_tokens=None,
                     supports_prefill=False)


class UnknownModelWarning(UserWarning):
    """A model name that is not in the table."""
