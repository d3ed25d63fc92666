"""Replaying a recorded run through the runtime under different context strategies.

The emulated model re-issues the recorded assistant turns in order, and the tools answer with the
recorded observations, so every strategy replays the same run: same calls, same results. Only what
the runtime does around them changes (layout, batch, offloading), and the emulator prices each.

What a replay cannot know, and how it approximates it:
- the provider's tokenizer: the emulator estimates four characters a token; where the log records
  usage, the counts are calibrated to it afterwards (``calibration.py``), the same for every strategy;
- the layout: each strategy takes the one the runtime picks for the replay model (``layout_for``),
  so on a model that binds thinking to its prefix nothing already sent is edited; ``tail-2025``
  keeps the 2025 layout, to show what that does there;
- the hidden system prompt and tool definitions (Claude Code sends tens of thousands of tokens the
  session file does not contain): the first call's recorded prompt size minus our estimate of what
  the log does show is added to the system prompt as a stand-in the emulator counts as that many
  tokens (``emulator.tokens.stand_in``: no bytes are built or sent for them), so the stable prefix
  has about the right size. A headless log has no prompt line either: there, what the first call read from
  cache (earlier runs wrote it: system and tools) is taken as the hidden system, and the rest as
  the missing prompt, which a compaction later removes. Likewise, where a session's first call
  after its compaction read the head from cache, that read is the stable head and the rest of the
  hidden part was in the first message (attachments, reminders), which the compaction dropped;
- a warm first call: when the log read tokens from cache on its first call, earlier sessions had
  written them; the replay seeds the emulator's cache with a prefix of that size first (one
  call that is not counted), so the first replayed call reads what the logged one read;
- breakpoints: where Claude Code puts them, on the system prompt and at the end of the messages,
  with the TTL the log's writes had (1 hour when it wrote any 1-hour tokens); ``recorded`` places
  none where the log read and wrote nothing from cache on every call (its client sent none), and
  follows the log's own split where a call left a long tail uncached or read a cache another
  process warmed (``as_logged.py``);
- output: the log's, recovered where its per-call counts are placeholders (``output.py``); calls
  the log counts but does not show (a compaction's summary call, side calls) are billed in every
  row from the log's totals, as counted;
- tool schemas: only names are logged; each tool gets a generic schema;
- time: the emulator's clock follows the logged time of each call, so a long pause expires the
  cache in the replay as it did in the run.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ..core.agent import Agent, RunResult
from ..core.context import layout_for, tail_layout
from ..core.hooks import HookRegistry, Point
from ..core.messages import text_block, user
from ..core.protocols import Layout
from ..core.store import MemoryStore
from ..emulator import Emulator
from ..emulator.cache import PromptCache
from ..emulator.compaction import MIN_TRIGGER
from ..emulator.policies import Turn
from ..example.layouts import batch_after_system_layout
from ..features.compaction import ManusLadder, SimpleCompaction, context_tokens, drop_block
from ..features.filesystem import Offloader
from ..features.recall import Keeper
from ..features.server_compaction import ServerClearing, ServerCompaction
from ..provider.cost import CallRecord
from ..emulator.models import model_spec
from ..emulator.tokens import estimate_tokens, stand_in
from ..provider.models import ModelSpec, UnknownModelWarning, lookup
from .as_logged import mirror_tail, mirrored_misses, misses_note, priced_as_logged, warmed_note
from .calibration import Calibration, Limits, fit
from .recorded import RecordedRun
from . import deepseek, gemini
from .. import tracing
from .pricing import Priced, priced, total


def _own_layout(spec: ModelSpec) -> Layout:
    return layout_for(spec)[0]


@dataclass
class Strategy:
    """A way to run the same calls. New strategies (compaction, ...) plug in here, not in the driver."""

    name: str
    about: str
    # A fresh layout per replay (some keep state), made for the replay model: by default the one the
    # runtime picks for that model (``layout_for``), the course's own recommendation there.
    layout: Callable[[ModelSpec], Layout] = _own_layout
    batch: bool = True  # inject a per-call progress note, as a runtime with hooks would
    offload_threshold: int | None = None
    # a compaction strategy for the run's workspace: a feature (``install``), maybe with ``layout(inner)``;
    # its limits, given in the log's tokens, are translated to the estimate the features measure (``Limits``)
    compaction: Callable[[Path, Limits], object] | None = None
    needs_server_compaction: bool = False  # only models that take compact_20260112 can replay it
    as_logged: bool = False  # reproduce the log's own caching, none included


COMPACTION_LIMIT = 60_000  # tokens of the log's: where the compaction strategies start to act


def _early(spec: ModelSpec) -> Layout:
    """The batch right after the system prompt. On a model that binds thinking to its prefix that
    moves every later block on each call, so the request asks the API to drop the thinking it
    invalidates (``drop_block``) rather than take a 400: what a client doing this would have to send."""
    return drop_block(batch_after_system_layout) if spec.prefix_check != "none" else batch_after_system_layout


STRATEGIES = {s.name: s for s in [
    Strategy("recorded", "the history as logged, breakpoints on system and the last message, nothing injected",
             batch=False, as_logged=True),
    Strategy("tail", "the model's own layout (layout_for): breakpoint on the last durable block, a per-call batch "
             "after it (a turn-scoped system message where the model takes one)"),
    Strategy("tail-2025", "the 2025 layout on any model: the batch in the call's copy of the last user turn",
             lambda spec: tail_layout),
    Strategy("early", "the same batch, inserted right after the system prompt (drop_block where thinking is bound)",
             _early),
    Strategy("offload", "tail, with tool results over 4,000 characters offloaded to files", offload_threshold=4000),
    Strategy("ladder", "tail; past 60,000 tokens the oldest half of the calls compacted (paths kept), summarized "
             "when that stops paying; the rewritten history carries no thinking (it passes the prefix check)",
             compaction=lambda work, limits: ManusLadder(Keeper(work), limits.prompt(COMPACTION_LIMIT))),
    Strategy("simple", "tail; past 60,000 tokens the whole history becomes one summary message (no earlier "
             "turn, so no thinking to fail the prefix check)",
             compaction=lambda work, limits: SimpleCompaction(Keeper(work), limits.prompt(COMPACTION_LIMIT), handoff=False)),
    Strategy("clearing", "tail; past 60,000 tokens the server clears old tool results (the last 3 kept), "
             "30,000 tokens or more at a time",
             compaction=lambda work, limits: ServerClearing(limits.prompt(COMPACTION_LIMIT), keep=3,
                                                   clear_at_least=limits.amount(30_000, at=COMPACTION_LIMIT))),
    # The limit in the emulator's tokens is under the API's smallest trigger (50,000) wherever the log's
    # tokenizer counts more than 1.2 of its tokens per estimated one (code, JSON): sent as it is, the
    # request is refused at call 1. The API's minimum then stands (the summary comes a little later).
    Strategy("server-compact", "tail; the server summarizes past 60,000 tokens (compact_20260112)",
             compaction=lambda work, limits: ServerCompaction(max(MIN_TRIGGER, limits.prompt(COMPACTION_LIMIT))),
             needs_server_compaction=True),
]}


THINKING = ("thinking", "redacted_thinking")


class _ReplayPolicy:
    """The recorded assistant turns, in order: a model that says exactly what it said then."""

    def __init__(self, run: RecordedRun):
        # Recorded thinking blocks carry the real API's signatures, which no emulator can verify, so
        # they are not sent back as they are: their text becomes the emulator's own thinking on a
        # model that thinks unasked (signed by the emulator, bound to the replay's own prefix), and
        # is left out on a model that thinks only when asked (the replay does not ask).
        self.turns = [[b for b in c.assistant["content"] if b.get("type") not in THINKING] for c in run.calls]
        self.thinking = ["\n\n".join(b.get("thinking") or "" for b in c.assistant["content"] if b.get("type") == "thinking")
                         for c in run.calls]
        self.recorded = sum(b.get("type") in THINKING for c in run.calls for b in c.assistant["content"])
        self.next = 0

    def __call__(self, request: dict) -> Turn:
        k = self.next
        content = self.turns[k] if k < len(self.turns) else [text_block("(end of the recording)")]
        self.next += 1
        return Turn(content=content or [text_block("(empty turn)")], stop_reason=None,
                    thinking=self.thinking[k] if k < len(self.thinking) else None)


class _RecordedClock:
    """The emulator's clock during a replay: the time each call was made, as logged, so cache
    entries expire as they did (a pause of more than five minutes costs a re-write). Where the log
    has no times, each call is one second after the last."""

    def __init__(self, run: RecordedRun):
        times = [c.at for c in run.calls]
        self.times = times if all(t is not None for t in times) else [float(k) for k in range(len(times))]
        self.now = self.times[0] if self.times else 0.0
        self.k = 0  # the call being made

    def at(self, k: int) -> None:
        self.k = k
        if k < len(self.times):
            self.now = self.times[k]

    def __call__(self) -> float:
        return self.now


def _tool_definitions(run: RecordedRun) -> list[dict]:
    """Only tool names are logged: each gets a generic schema."""
    return [{"name": n, "description": "(a recorded tool; its schema is not in the log)", "input_schema": {"type": "object"}}
            for n in run.tools]


class RecordedTools:
    """The recorded run's tools: generic definitions for the logged names, and each call answered
    with its recorded observation. The calls of the recording's last turn are final: a replay ends
    where the recording ended, without one call past it."""

    def __init__(self, run: RecordedRun):
        self.results = {i: r for c in run.calls for i, r in c.results.items()}
        self.definitions = _tool_definitions(run)
        self.masked: set[str] = set()
        last = run.calls[-1].assistant["content"] if run.calls else []
        self._last_ids = {b.get("id") for b in last if b.get("type") == "tool_use"}

    def is_final(self, tool_use: dict, result: dict) -> bool:
        return tool_use.get("id") in self._last_ids

    def mask(self, *names: str) -> None:
        self.masked |= set(names)

    def unmask(self, *names: str) -> None:
        self.masked -= set(names)

    def call(self, tool_use: dict) -> dict:
        recorded = self.results.get(tool_use["id"])
        if recorded is None:
            return {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "(no result was recorded)",
                    "is_error": True}
        content = recorded.get("content", "")
        block = {"type": "tool_result", "tool_use_id": tool_use["id"],
                 "content": content if isinstance(content, (str, list)) else str(content)}
        if recorded.get("is_error"):
            block["is_error"] = True
        return block


@dataclass
class Replay:
    strategy: str
    model: str
    calls: list[CallRecord]
    seconds: float
    hidden_tokens: int = 0
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None  # "stopped at call N: <the error's first line>": the replay did not finish
    layout: Calibration = field(default_factory=Calibration)  # where the hidden part of each prompt sits
    calibrated: bool = False  # tokens in the log's own (calibration.py), not the emulator's estimate
    unlogged: list[CallRecord] = field(default_factory=list)  # calls the log counts but does not show, as counted
    sizes: Sizes | None = None  # what the log does not show, as this replay sized it
    raw: list[CallRecord] = field(default_factory=list)  # the calls in the emulator's own tokens, before calibration
    crashed: bool = False  # stopped by an error of the replay itself (a log shape nothing here foresaw), not the API's
    own_cache: list[CallRecord] | None = None  # recorded: the calls as the replay's own cache had them, before mirroring

    @property
    def finished(self) -> bool:
        return self.stopped is None


    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def cache_read_share(self) -> float:
        return sum(c.cache_read_input_tokens for c in self.calls) / max(1, self.prompt_tokens)

    # how each call is billed (pricing.py: its model's prices, a retired model's multiple of its stand-in's,
    # DeepSeek's list of the call's time), one per call and one per unlogged call; none: the table's prices
    billed: list[Priced] = field(default_factory=list)
    unlogged_billed: list[Priced] = field(default_factory=list)
    times: list[float | None] = field(default_factory=list)  # each call's logged time (DeepSeek's lists go by it)
    parted: int | None = None  # the call from which it was replayed on its own: until then tail's (``Parting``)

    @property
    def cost(self) -> float:
        """The run's bill under this strategy: the replayed calls, and the calls the log does not show."""
        return total(self.calls, self.billed, self.times) + self.unlogged_cost

    @property
    def unlogged_cost(self) -> float:
        """What the calls the log counts but does not show add to the bill."""
        return total(self.unlogged, self.unlogged_billed)


def logged_uncached(run: RecordedRun) -> bool:
    """Did the run read and write nothing from cache on every call, as its usage says? Then its
    client placed no breakpoints (a cache that worked would have read something by the second call)."""
    usages = [c.usage for c in run.calls if c.usage]
    return bool(usages) and all(u.cache_read == 0 and u.cache_write == 0 for u in usages)


def replay_model(run: RecordedRun, model: str | None = None) -> str:
    """The model to replay and price as: the one asked for, else the log's (a retired one as the
    model it is billed as: ``pricing.py``). A model that is not in the table is replayed as the
    table says of unknown models (its cost is unknown, NaN, unless ``pricing.py`` prices it)."""
    how = priced(run.model) if model is None else None
    name = how.model if how else model or run.model or "unknown"
    with warnings.catch_warnings():
        if how:  # priced, if not in the table (DeepSeek's): "cost unknown" would be false
            warnings.simplefilter("ignore", UnknownModelWarning)
        return model_spec(name).id


def _text(blocks: list[dict]) -> str:
    return "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text") or "(continue)"


def _with_ttl(layout: Layout, ttl: str | None, uncached: bool = False) -> Layout:
    """The layout, with every breakpoint it sets written for ``ttl`` (None: the default 5 minutes),
    or, ``uncached``, with none at all (a client that sent no breakpoints)."""
    if ttl is None and not uncached:
        return layout

    def mark(value):
        if isinstance(value, dict):
            return {k: ({**v, "ttl": ttl} if k == "cache_control" else mark(v)) for k, v in value.items()
                    if not (uncached and k == "cache_control")}
        return [mark(v) for v in value] if isinstance(value, list) else value

    def with_ttl(parts):
        request = layout(parts)
        return {**request, "system": mark(request.get("system", [])), "messages": mark(request["messages"])}
    return with_ttl


def _filler(label: str, tokens: int) -> str:
    """What a log does not show, ``tokens`` long: a label, and a stand-in the emulator counts for the rest."""
    header = f"\n\n[{label}, approximated] "
    return header + stand_in(max(0, tokens - estimate_tokens(header)))


def calibrate(run: RecordedRun, model: str | None = None) -> Calibration:
    """The run's calibration (``calibration.py``): from one uncalibrated ``recorded`` replay, where
    the log records usage; none where it does not. The calibration keeps that replay: ``recorded``
    is the same calls in the log's tokens, so it is not replayed twice."""
    if not any(c.usage for c in run.calls):
        return Calibration()
    first = _replay(run, STRATEGIES["recorded"], replay_model(run, model), None, Calibration())
    return fit(run, first.calls, first.layout, source=first)


def unlogged_calls(run: RecordedRun, model: str | None = None) -> tuple[list[CallRecord], list[Priced], str | None]:
    """The calls the log counts but does not show, as the log counted them, and how each is billed:
    those of the log's own model as the replay model (``model``; None: as the log's own), the others
    (side calls: Haiku 3.5 in 2025's Claude Code) as their own model is (``pricing.py``). A model
    nothing prices is left out, and said."""
    calls, billed, unknown = [], [], []
    own = priced(run.model)
    as_own = own if model is None or model == replay_model(run) else Priced(model)
    for name, t in run.unlogged.items():
        how = priced(name)
        if how is None:
            unknown.append(name)
            continue
        if own is not None and (how.model, how.factor, how.listed) == (own.model, own.factor, own.listed):
            how = as_own
        calls.append(CallRecord(model=how.model, input_tokens=t.input_tokens, cache_creation_input_tokens=t.cache_write,
                                cache_creation_5m=t.cache_write, cache_read_input_tokens=t.cache_read,
                                output_tokens=t.output_tokens))
        billed.append(how)
    why = f"calls on {', '.join(unknown)} the log does not show are not billed: nothing here prices " \
          "that model" if unknown else None
    return calls, billed, why


def replay(run: RecordedRun, strategy: Strategy | str = "tail", *, model: str | None = None,
           progress: Callable[[int, int], None] | None = None, calibration: Calibration | None = None) -> Replay:
    """Replay ``run`` under ``strategy``, priced as ``model``; tokens in the log's own
    (``calibration``: computed here when not given; pass ``calibrate(run)`` to share it)."""
    strategy = STRATEGIES[strategy] if isinstance(strategy, str) else strategy
    model = replay_model(run, model)
    if strategy.needs_server_compaction and not model_spec(model).compaction:
        why = (f"stopped at call 1: {strategy.name} needs a model that takes server-side compaction and {model} "
               f"does not (replay it as one: --model claude-sonnet-4-6)")
        return Replay(strategy.name, model, [], 0.0, notes=[why], stopped=why)
    calibration = calibrate(run, model) if calibration is None else calibration
    if strategy.as_logged and calibration.source is not None and calibration.source.model == model:
        raw = calibration.source  # the calibration's own replay: the same calls
        if progress:
            progress(len(raw.calls), len(run.calls))
    else:
        raw = _replay(run, strategy, model, progress, calibration)
    return _in_log_tokens(run, strategy, raw, calibration)


def _replay(run: RecordedRun, strategy: Strategy, model: str, progress: Callable[[int, int], None] | None,
            calibration: Calibration, start: Fork | None = None, parting: Parting | None = None) -> Replay:
    """The replay in the emulator's own tokens (a compaction's limits are in the log's: ``calibration``).
    What the log does not show is sized once per run: the calibration's replay did it. From ``start``
    where given (a strategy going on from where it parts from tail); ``parting`` watches this replay
    (tail's) for where the others part from it."""
    source = calibration.source
    known = source.sizes if source is not None and source.model == model else None
    if strategy.offload_threshold is None and strategy.compaction is None:  # writes no files
        return _replay_in(Path(os.devnull), run, strategy, model, progress, calibration, known, start, parting)
    # the offloaded files matter only during the run: in memory where the machine has a tmpfs
    with tempfile.TemporaryDirectory(prefix="replay-", dir=SCRATCH if os.path.isdir(SCRATCH) else None) as tmp:
        return _replay_in(Path(tmp), run, strategy, model, progress, calibration, known, start, parting)


SCRATCH = "/dev/shm"


def _in_log_tokens(run: RecordedRun, strategy: Strategy, raw: Replay, calibration: Calibration) -> Replay:
    """``raw`` in the log's tokens (calibration.py), with what the log shows of its cache kept where
    ``recorded`` can (as_logged.py), and the calls the log does not show."""
    notes = list(raw.notes)
    calls = [calibration.apply(k, c) for k, c in enumerate(raw.calls)]
    if not calibration.identity:
        notes.append(calibration.about())
    warm = warmed_note(run, calls)
    if warm:
        notes.append(warm)
        calls = priced_as_logged(run, calls) if strategy.as_logged else calls
    calls, billed, switched = billing(run, raw.model, calls)
    notes += [switched] if switched else []
    own_cache = calls
    if strategy.as_logged:
        calls, moved = mirrored_misses(run, calls)
        notes += [misses_note(run, own_cache, calls, moved)] if moved else []
    unlogged, unlogged_billed, why = unlogged_calls(run, raw.model)
    notes += [why] if why else []
    how = priced(run.model) if raw.model == replay_model(run) else None  # the log's own model, billed as it is
    times = [c.at for c in run.calls]
    notes += [how.note] if how and how.note else []
    notes += [deepseek.note(run.model, times[:len(calls)])] if how and how.deepseek and calls else []
    notes += [gemini.note(run.model)] if how and how.gemini else []
    return Replay(raw.strategy, raw.model, calls, raw.seconds, raw.hidden_tokens, notes, raw.stopped, raw.layout,
                  not calibration.identity, unlogged, raw.sizes, raw.calls, raw.crashed, own_cache, billed, unlogged_billed,
                  times)


def billing(run: RecordedRun, model: str, calls: list[CallRecord]) -> tuple[list[CallRecord], list[Priced], str | None]:
    """How each replayed call is billed: as ``model`` where the replay runs as another model than the
    log's; else as the model that made it (``pricing.py``; the log's own where a call names none or
    one nothing prices), so a session that changed model midway (Sonnet 4.5 to Opus 4.6) is billed
    per call, and said. The calls come back labelled with the model they are billed as."""
    # A replayed call runs the web searches the logged one ran (the task's, not the strategy's), each
    # billed per search [pricing "Web search tool"].
    searched = [r.usage.web_search_requests if r.usage else 0 for r in run.calls]
    calls = [c.model_copy(update={"web_search_requests": searched[k]}) if k < len(searched) and searched[k] else c
             for k, c in enumerate(calls)]
    if model != replay_model(run):
        return calls, [Priced(model)] * len(calls), None
    own = priced(run.model) or Priced(model)
    each = [(priced(c.model) if c.model else None) or own for c in run.calls]
    names = [p.retired or p.model for p in each]
    changes = [f"{names[k - 1]} -> {names[k]} at call {k + 1}" for k in range(1, len(names)) if names[k] != names[k - 1]]
    calls = [c if c.model == p.model else c.model_copy(update={"model": p.model}) for c, p in zip(calls, each)]
    why = (f"the session changes model ({', '.join(changes[:3])}{', ...' if len(changes) > 3 else ''}): the replay "
           f"runs as {model} and prices each call as the model that made it") if changes else None
    return calls, each[:len(calls)], why


def replay_all(run: RecordedRun, names: list[str], *, model: str | None = None,
               calibration: Calibration | None = None,
               progress: Callable[[str], Callable[[int, int], None] | None] | None = None) -> list[Replay]:
    """``run`` under each strategy of ``names``, sharing what they share: one calibration; ``tail-2025``
    is ``tail`` wherever the replay model takes the 2025 layout anyway (the same requests); and a
    strategy that lays out as ``tail`` does (``offload``, the compaction strategies) sends what
    ``tail`` sends until its own machinery first acts (``Parting``), so it goes on from ``tail``'s
    replay there (``Fork``), or is ``tail``'s replay where it never acts (where ``tail`` is asked for,
    or two such strategies share it: never for one alone). ``progress(name)`` gives
    each replay its progress callback (a strategy that goes on from tail's reports from there)."""
    calibration = calibrate(run, model) if calibration is None else calibration
    model_name = replay_model(run, model)
    spec = model_spec(model_name)
    done: dict[str, Replay] = {}
    followers = {name: STRATEGIES[name] for name in names if _follows_tail(STRATEGIES[name], spec)}
    if "tail" not in names and len(followers) < 2:  # tail's replay made for one strategy alone costs more than it saves
        followers = {}
    parting = Parting(run, followers, Limits(calibration, run).prompt(COMPACTION_LIMIT)) if followers else None

    def replayed(name: str, start: Fork | None = None) -> Replay:
        if name not in done:
            strategy = STRATEGIES[name]
            if name == "tail" and parting is not None or start is not None:
                raw = _replay(run, strategy, model_name, progress(name) if progress else None, calibration,
                              start, parting if name == "tail" else None)
                done[name] = _in_log_tokens(run, strategy, raw, calibration)
            else:
                done[name] = replay(run, name, model=model, calibration=calibration,
                                    progress=progress(name) if progress else None)
        return done[name]

    for name in names:
        strategy = STRATEGIES[name]
        if name == "tail-2025" and layout_for(spec)[0] is tail_layout:
            done[name] = replace(replayed("tail"), strategy=name)
        elif name in followers:
            tail = replayed("tail")
            fork = parting.forks.get(name)
            if fork is not None:
                done[name] = replace(replayed(name, fork), parted=fork.k)
            elif tail.finished:  # it never acted: tail's replay is its own
                why = (f"no tool result of the log is over {strategy.offload_threshold:,} characters" if
                       strategy.offload_threshold else f"the run never reached its limit ({COMPACTION_LIMIT:,} "
                       "of the log's tokens)")
                done[name] = replace(tail, strategy=name, notes=[*tail.notes, f"{name}: {why}, so it sent what "
                                                                  "tail sent"])
        replayed(name)  # from its first call: it lays out otherwise, or tail stopped before it parted
    return [done[name] for name in names]


def _follows_tail(strategy: Strategy, spec: ModelSpec) -> bool:
    """Does ``strategy`` send what ``tail`` sends until its offloader or compaction acts? The same
    layout and batch, nothing of the log's caching, and a model it can run on."""
    return (strategy.name != "tail" and strategy.layout is _own_layout and strategy.batch and not strategy.as_logged
            and bool(strategy.offload_threshold or strategy.compaction)
            and not (strategy.needs_server_compaction and not spec.compaction))


@dataclass
class Fork:
    """A replay as it stood just before call ``k``'s hooks ran, to go on from separately. The
    agent's state is its run record up to there (``record``'s first ``upto`` events): an agent made
    on it resumes as after a kill at that boundary (``core/agent.py``), with the ``task`` of the run in
    progress. The emulator's state is a copy (``Emulator.copy``: its cache, ids and thinking blocks),
    and the model had said its first ``answered`` turns. A strategy's own hooks and layout start
    fresh: until they act they hold nothing (what ``Parting`` waits for)."""

    k: int
    record: _Kept
    upto: int
    emulator: Emulator
    answered: int
    task: str

    def events(self) -> list[dict]:
        return self.record.first(self.upto)


class Parting:
    """Watches ``tail``'s replay for the call where each strategy of ``waiting`` parts from it: the
    first call at which the strategy's own machinery could act, so its request (or the result its
    history keeps) could differ from tail's. Until then it sends what tail sends, call for call. A
    rule that errs early costs only time (the strategy replays a few calls more); one that erred late
    would be wrong, so each errs early:

    - an offloader: at the call whose reply asks for a tool the log answered with a text over its
      threshold (the result it keeps differs from there; ``Offloader``);
    - a compaction strategy: at the call where the context its hooks measure before the call
      (``context_tokens``: ``ManusLadder``, ``SimpleCompaction``), or the prompt the server counts
      (``ServerClearing``, ``ServerCompaction``: the prompt is tail's until then), reaches ``limit``,
      the lowest limit any of them acts at (the limit, in the emulator's tokens).

    ``before`` runs first among tail's PRE_LLM_CALL hooks, ``after`` first among its POST_LLM_CALL
    hooks; ``snapshot()`` makes the ``Fork`` of the call about to be made."""

    def __init__(self, run: RecordedRun, waiting: dict[str, Strategy], limit: int):
        self.run, self.waiting, self.limit = run, dict(waiting), limit
        self.results = {i: r for c in run.calls for i, r in c.results.items()}  # as ``RecordedTools`` answers
        self.forks: dict[str, Fork] = {}
        self._pending: Fork | None = None  # this call's, for a rule decided by its prompt

    def before(self, agent: Agent, snapshot: Callable[[], Fork]) -> None:
        self._pending = None
        if not self.waiting:
            return
        k = len(agent.calls)
        context = context_tokens(agent) if any(s.compaction for s in self.waiting.values()) else 0
        parts = [name for name, s in self.waiting.items() if (s.compaction is not None and context >= self.limit)
                 or (s.offload_threshold and self._offloaded(k, s.offload_threshold))]
        if parts or any(s.compaction is not None for s in self.waiting.values()):
            self._pending = snapshot()
        self._part(parts)

    def after(self, agent: Agent) -> None:
        if self._pending is not None:
            prompt = agent.calls[-1].prompt_tokens
            self._part([name for name, s in self.waiting.items() if s.compaction is not None and prompt >= self.limit])

    def _part(self, names: list[str]) -> None:
        for name in names:
            self.forks[name] = self._pending
            del self.waiting[name]

    def _offloaded(self, k: int, threshold: int) -> bool:
        """Does call ``k``'s reply ask for a tool the log answered with a text over ``threshold``?"""
        if k >= len(self.run.calls):
            return False
        asked = {b.get("id") for b in self.run.calls[k].assistant["content"] if b.get("type") == "tool_use"}
        return any(isinstance(r.get("content"), str) and len(r["content"]) > threshold
                   for r in (self.results.get(i) for i in asked) if r is not None)


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


@dataclass(frozen=True)
class Sizes:
    """What a log does not show, sized once per run and model (the same for every strategy)."""

    hidden: int  # the hidden system prompt and tool definitions
    prompt_hidden: int  # the hidden part of the first message (until the log's first compaction)
    warm_part: int  # the part of the hidden head the log found cached on its first call
    warm: int  # what the first call read from cache
    start: int  # estimated tokens of what the log shows of the head (tools, system text)
    until: int  # the log's first compaction
    # the emulator's cache once the warm prefix is seeded: each strategy starts from a copy of it (the
    # seeding request is the same for every strategy: the head, its tools and the log's TTL)
    seeded: PromptCache | None = None


def _sizes(run: RecordedRun, emulator: Emulator, model: str) -> Sizes:
    first = next((c.usage for c in run.calls[:1] if c.usage), None)
    warm = (first.cache_read or 0) if first else 0
    hidden = _hidden_tokens(run, emulator, model)
    prompt_hidden = 0
    if run.prompt_missing and hidden:
        # what was already cached on call 1 is the stable head (system, tools); the rest was the prompt
        prompt_hidden = hidden - min(hidden, warm) if warm else 0
        hidden -= prompt_hidden
    base = _shown_tokens(run, emulator, model, system=run.system, task="-")
    until = next((k for k, c in enumerate(run.calls) if c.compacted_before), len(run.calls))
    after = run.calls[until].usage if until < len(run.calls) and not run.prompt_missing else None
    if hidden and after and base < (after.cache_read or 0) < base + hidden:
        # The log's first call after its compaction read the stable head (tools, system): the rest
        # of the hidden part was in the first message (attachments, reminders), which it dropped.
        prompt_hidden = base + hidden - after.cache_read
        hidden -= prompt_hidden
    warm_part = max(0, min(warm, base + hidden) - base)  # the part of the hidden head the log found cached
    # the head is ``base`` less its one-message prompt: the system as a string or as its one text block
    # counts the same (the API treats the two alike), so it is not counted again
    bare = emulator.count_tokens({"model": model, "messages": [user("-")]})
    return Sizes(hidden, prompt_hidden, warm_part, warm, base - bare, until)


def _replay_in(workdir: Path, run: RecordedRun, strategy: Strategy, model: str,
               progress: Callable[[int, int], None] | None, calibration: Calibration, known: Sizes | None,
               start: Fork | None = None, parting: Parting | None = None) -> Replay:
    clock = _RecordedClock(run)
    policy = _ReplayPolicy(run)
    # no spans: a replay's calls are the emulator's own, and ten strategies' worth of them are no one's trace
    emulator = Emulator(model=model, policy=policy, clock=clock) if start is None else start.emulator.copy(policy, clock)
    if start is not None:  # the model has said its first start.answered turns
        policy.next = start.answered
    client = emulator.client(open_telemetry=False)
    notes: list[str] = []
    sizes = known or _sizes(run, emulator, model)
    hidden, prompt_hidden, warm_part, warm = sizes.hidden, sizes.prompt_hidden, sizes.warm_part, sizes.warm
    system = [text_block(run.system)] if run.system else []
    system += [text_block(_filler("hidden prompt, cached before this run", warm_part))] if warm_part else []
    system += [text_block(_filler("hidden prompt and tool definitions", hidden - warm_part))] if hidden - warm_part else []
    ttl = "1h" if any(c.usage and c.usage.cache_write_1h for c in run.calls) else None
    tools = _tool_definitions(run)
    where = Calibration(sizes.start, hidden, prompt_hidden, sizes.until)
    if start is not None:
        pass  # the cache as tail left it there: seeded, if it was, before tail's first call
    elif warm_part and sizes.seeded is not None:
        emulator.cache = sizes.seeded.copy()
    elif warm_part:  # earlier sessions wrote this prefix: seed it, then start the recording from its first turn
        clock.at(0)
        head = system[:len(system) - (1 if hidden - warm_part else 0)]
        marker = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
        client.messages.create(model=model, max_tokens=1, messages=[user("(seeding the cache)")],
                               system=[*head[:-1], {**head[-1], "cache_control": marker}], **({"tools": tools} if tools else {}))
        policy.next = 0
        sizes = replace(sizes, seeded=emulator.cache.copy())
    if warm_part:
        notes.append(f"the log read {warm:,} tokens from cache on its first call (written before the run): "
                     f"the replay's cache was seeded with a prefix of that size")
    if policy.recorded:
        notes.append(_thinking_note(run, policy, model_spec(model)))
    hooks = HookRegistry()
    # tail's run record is kept (in memory) where a strategy may go on from it; the others keep none
    store = _Unrecorded(start.events() if start is not None else ()) if parting is None else _Kept()
    if parting is not None:  # first: it sees each call as tail's own hooks are about to
        hooks.register(Point.PRE_LLM_CALL, lambda event: parting.before(event.agent, lambda: Fork(
            len(event.agent.calls), store, store.written, emulator.copy(), policy.next, task)))
        hooks.register(Point.POST_LLM_CALL, lambda event: parting.after(event.agent))
    uncached = strategy.as_logged and logged_uncached(run)
    if uncached:
        notes.append("the log read and wrote nothing from cache on every call (its client sent no breakpoints): "
                     "recorded places none")
    layout = _with_ttl(strategy.layout(model_spec(model)), ttl, uncached)
    if strategy.as_logged and not uncached:
        layout = mirror_tail(layout, run, lambda: clock.k, lookup(model))
    if strategy.compaction is not None:
        compaction = strategy.compaction(workdir, Limits(calibration, run))
        hooks.install(compaction)
        layout = compaction.layout(layout) if hasattr(compaction, "layout") else layout
    agent = Agent(client, model=model, system=system, layout=layout, hooks=hooks, store=store,
                  toolbox=RecordedTools(run), max_steps=len(run.calls) + 1, max_tokens=21_000,  # above ~21K the SDK insists on streaming
                  offloader=Offloader(workdir, strategy.offload_threshold) if strategy.offload_threshold else None)

    def before_call(event) -> None:
        k = len(event.agent.calls)
        clock.at(k)
        if k < len(run.calls) and run.calls[k].compacted_before:  # the log's compaction, reproduced
            event.agent.replace_history([user(run.calls[k].compacted_before)])
        if strategy.batch:
            event.agent.inject_turn_scoped("progress", f"I have made {k} calls so far.")

    def after_call(event) -> None:
        k = len(event.agent.calls) - 1
        if progress:
            progress(k + 1, len(run.calls))
        # user text that arrived between two calls; after the last one (an interrupt, say) nothing answered it
        if k < len(run.calls) - 1 and run.calls[k].then_user and any(b.get("type") == "tool_use"
                                                                     for b in run.calls[k].assistant["content"]):
            event.agent.steer(_text(run.calls[k].then_user))

    hooks.register(Point.PRE_LLM_CALL, before_call)
    hooks.register(Point.POST_LLM_CALL, after_call)
    tracing.hooks(hooks, attributes={"minimal_runtime.replay.strategy": strategy.name,  # only where OTEL_* ask
                                     "minimal_runtime.replay.log": run.path})
    task = _text(run.task) + (_filler("the prompt, not in the log", prompt_hidden) if prompt_hidden else "")
    if start is not None:  # the run() in progress there, resumed from its record (``Agent.run``: the same task)
        task = start.task
    began = time.perf_counter()
    stopped, crashed = None, False
    while len(agent.calls) < len(run.calls):
        before = len(agent.calls)
        try:
            result = agent.run(task)
        except Exception as e:  # a log shape nothing here foresaw: the row says where, the rest still replays
            result, crashed = RunResult(status="error", error=f"{type(e).__name__}: {e}"), True
        if result.status == "error":
            stopped = f"stopped at call {len(agent.calls) + 1}: {first_line(result.error or 'an error')}"
            notes.append(f"stopped at call {len(agent.calls) + 1}: {result.error}")
            break
        if len(agent.calls) == before or len(agent.calls) >= len(run.calls):
            break
        task = _text(run.calls[len(agent.calls) - 1].then_user)
    if stopped is None and len(agent.calls) < len(run.calls):
        stopped = f"stopped at call {len(agent.calls) + 1}: the replayed run ended before the recording did"
    return Replay(strategy.name, model, list(agent.calls[:len(run.calls)]), time.perf_counter() - began,
                  hidden + prompt_hidden, notes, stopped, where, sizes=sizes, crashed=crashed)


class _Kept(MemoryStore):
    """Tail's run record, in memory, its events counted: a ``Fork`` is the record as it stood then."""

    def __init__(self) -> None:
        super().__init__()
        self.written = 0

    def write(self, event: dict, sync: bool = True) -> None:
        super().write(event, sync)
        self.written += 1

    def first(self, n: int) -> list[dict]:
        """The first ``n`` events (only those are read back)."""
        return [json.loads(line) for line in self._log[:n]]


class _Unrecorded(MemoryStore):
    """A replay's run record: nothing is kept past ``events``, the record it starts from (tail's,
    where it parts from tail: ``Fork``). The replay reads the agent's calls, never its record."""

    def __init__(self, events: list[dict] | tuple = ()):
        super().__init__()
        self._events = list(events)

    def write(self, event: dict, sync: bool = True) -> None:
        pass

    def events(self) -> list[dict]:
        return self._events


def _thinking_note(run: RecordedRun, policy: _ReplayPolicy, spec: ModelSpec) -> str:
    """What the replay did with the log's thinking, and its tokens next to what the replay bills."""
    text_tokens = sum(-(-len(t) // 4) for t in policy.thinking)  # the emulator's estimate of the logged text
    redacted = sum(b.get("type") == "redacted_thinking" for c in run.calls for b in c.assistant["content"])
    done = ("re-issued as the emulator's own thinking (the same text, signed by the emulator: the log's signatures "
            "cannot be verified offline)" if spec.thinking != "on_request" else
            f"left out ({spec.id} thinks only when asked, and the replay does not ask)")
    logged_output = sum(c.usage.output or 0 for c in run.calls if c.usage)
    billed = (f"output is billed as the log's own output, {logged_output:,} tokens over the run, thinking included"
              if logged_output else "output is billed as the emulator estimates the answers")
    return (f"the log recorded {policy.recorded} thinking blocks ({redacted} redacted), ~{text_tokens:,} tokens of "
            f"thinking text: {done}; {billed}")


def _shown_tokens(run: RecordedRun, emulator: Emulator, model: str, *, system: str, task: str) -> int:
    tools = _tool_definitions(run)
    return emulator.count_tokens({"model": model, "system": system or "-", "messages": [user(task)],
                                  **({"tools": tools} if tools else {})})


def _hidden_tokens(run: RecordedRun, emulator: Emulator, model: str) -> int:
    """First call's recorded prompt minus our estimate of what the log shows of it."""
    first = next((c.usage for c in run.calls[:1] if c.usage), None)
    if first is None:
        return 0
    return max(0, first.prompt_tokens - _shown_tokens(run, emulator, model, system=run.system, task=_text(run.task)))
