"""Compaction that keeps what it drops: shorter contexts, nothing lost that a path cannot give back.

A long run outgrows any window, and reads worse long before it overflows. Whatever shortens the
context here follows one rule: nothing is dropped without a path that gives it back byte for byte
(a fetched page becomes its URL and a saved file, a written file its path), because nobody knows
which observation will matter ten steps later.

- **The ladder** (``ManusLadder``): every tool call has a full and a compact representation
  (``recall.compact_call``; what keeps compaction honest, the appendix and the restorability
  check included, is ``features.recall``). When the context passes a limit, the oldest half of the calls still in full
  is compacted, the last few always stay in full, and only when compacting stops paying (it freed
  less than ``min_gain`` of the context last time, or nothing is left to compact) is the history
  summarized, with a verbatim ``appendix`` of every URL and path it named.
- **Simple compaction** (``SimpleCompaction``): the whole history becomes one user message with
  the task, the summary, the appendix and the next step.
- **Compression awareness** (``ContextGauge``, ``handoff=True``): the agent is told how full its
  window is, in tenths, and asked for notes at each new tenth; before a summary it is asked for a
  handoff note, which the summary only merges.
- **The user's notice** (``CompactionNotice``): each compaction told to the person running the agent,
  in one line, and never to the model.

On the current models what matters as much as tokens is whether a strategy edits what was sent:
preserved thinking binds each thinking block to everything before it. The ladder rewrites history,
so either the thinking of the kept turns is stripped (``strip_thinking``) or the request says
``drop_block`` (``drop_block``), and the model loses that reasoning either way (``ThinkingLedger``
counts it). Simple compaction replays no thinking at all, so nothing can fail the check. The
provider's own clearing and compaction (``features.server_compaction``) edit the server's copy and
are not edits. createrole's rungs, which mask at every assembly, are in ``compaction_rungs``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Callable, Literal

from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.messages import user
from ..provider.models import BINDING_BETA
from .recall import (APPENDIX_FILE, RECALL, THINKING, Keeper, appendix_lines, compact_call, grouped_texts,
                     is_compacted, result_text, texts_of)

HANDOFF_PATH = "notes/handoff.md"
HANDOFF_ASK = (f"My context is about to be summarized. Before that I write {HANDOFF_PATH}: the facts I have "
               "confirmed, the files I produced, and my next step.")
SUMMARY_HEAD = "[Summary of earlier work: the history before this point was compacted into this message.]"
APPENDIX_HEAD = "Every URL and path the compacted history named, verbatim:"
Summarizer = Callable[[list[dict]], str]  # the compacted messages -> a summary (a model, or the mechanical one)


# -- the ladder's decision --------------------------------------------------------------------

def ladder_step(tokens: int, limit: int, compactable: int, last_gain: float | None,
                min_gain: float) -> Literal["wait", "compact", "summarize"]:
    """What the ladder does before a call: "wait" while the context is under ``limit`` tokens;
    past it, "compact" while calls are left to compact and compacting still pays (the last
    compaction freed at least ``min_gain`` of the context, or there was none yet); else "summarize"."""
    if tokens < limit:
        return "wait"
    if compactable and (last_gain is None or last_gain >= min_gain):
        return "compact"
    return "summarize"


# -- summaries --------------------------------------------------------------------------------

def mechanical_summary(messages: list[dict]) -> str:
    """A summary with no model: what was done, counted by tool, and the first line of each of the
    last 20 assistant turns. Deterministic; a real summarizer (a model) would be told what matters."""
    counts: dict[str, int] = {}
    lines = []
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                counts[block["name"]] = counts.get(block["name"], 0) + 1
            elif block.get("type") == "text" and block.get("text", "").strip():
                lines.append(block["text"].strip().splitlines()[0][:160])
    done = ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "nothing"
    return "\n".join([f"Tool calls made: {done}.", "The last steps:", *(f"- {line}" for line in lines[-20:])])


def summary_message(task: str, compacted: list[dict], summary: str, handoff: str | None, keeper: Keeper,
                    appendix_chars: int = 8000) -> dict:
    """The one user message a summary becomes: the task verbatim (protected), the handoff note
    verbatim (the summary only merges it), the summary, and the appendix of the compacted messages
    (an earlier summary's included). An appendix longer than ``appendix_chars`` is saved whole to a
    file the message names, and the message shows its newest lines: the appendix grows with the
    run, and must not become what overflows the window."""
    parts = [task, "", SUMMARY_HEAD]
    if handoff:
        parts += [f"My handoff note ({HANDOFF_PATH}):", handoff.strip()]
    lines = appendix_lines(grouped_texts(compacted))
    shown = lines
    if sum(len(x) + 1 for x in lines) > appendix_chars:
        saved = keeper.keep("\n".join(lines) + "\n", kind=APPENDIX_FILE)
        shown, size = [], 0
        for line in reversed(lines):
            size += len(line) + 1
            if size > appendix_chars:
                break
            shown.insert(0, line)
        shown = [f"- (all {len(lines)} lines are saved at {saved}; {RECALL} it to see every one; the newest follow)",
                 *shown]
    parts += [summary, "", APPENDIX_HEAD, *shown, "", "I continue the task from here."]
    return user("\n".join(parts))


# -- shared mechanics -------------------------------------------------------------------------

def estimate(messages: list[dict]) -> int:
    """Tokens, roughly: four characters each (the emulator's rule; a real tokenizer differs)."""
    return sum(len(s) for s in texts_of(messages)) // 4


def context_tokens(agent, system_tokens: int = 0) -> int:
    """The conservative size of the next request: the larger of the estimate and the last measured
    prompt (createrole's rule: an estimate misses what it cannot see, a measurement lags a call)."""
    measured = agent.calls[-1].prompt_tokens if agent.calls else 0
    return max(estimate(agent.messages) + system_tokens, measured)


def strip_thinking(messages: list[dict]) -> list[dict]:
    """The history without thinking blocks: nothing left for the prefix check to fail on."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(b.get("type") in THINKING for b in content):
            message = {**message, "content": [b for b in content if b.get("type") not in THINKING]}
        out.append(message)
    return out


def drop_block(layout):
    """A layout that asks the API to drop thinking blocks whose prefix changed, instead of a 400."""
    def with_drop_block(parts):
        request = layout(parts)
        request["thinking"] = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
        request["betas"] = [*request.get("betas", []), BINDING_BETA]
        return request
    return with_drop_block


def answered_calls(messages: list[dict]) -> list[tuple[int, int, int, int]]:
    """Every answered tool call: (message of the tool_use, its block, message of the result, its block)."""
    uses, out = {}, []
    for i, message in enumerate(messages):
        if not isinstance(message.get("content"), list):
            continue
        for j, block in enumerate(message["content"]):
            if block.get("type") == "tool_use":
                uses[block["id"]] = (i, j)
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in uses:
                out.append((*uses[block["tool_use_id"]], i, j))
    return out


def task_of(messages: list[dict]) -> str:
    """The task as first given: the first message, or the part of an earlier summary before its head."""
    first = messages[0] if messages else {"content": ""}
    text = result_text(first["content"]) if isinstance(first["content"], list) else str(first["content"])
    return text.split("\n\n" + SUMMARY_HEAD)[0]


@dataclass
class Compaction:
    """One rewrite: at which call, what kind, the context's estimated size before and after, and
    what the ladder's decision was made from (the size it saw, calls left to compact, last gain)."""

    call: int
    kind: str
    before: int
    after: int
    seen: tuple[int, int, float | None] = (0, 0, None)


class _Summarizing:
    """What the ladder and simple compaction share: the handoff note asked for before a summary."""

    def __init__(self, keeper: Keeper, limit: int, summarize: Summarizer, handoff: bool):
        self.keeper, self.limit, self.summarize, self.handoff = keeper, limit, summarize, handoff
        self.log: list[Compaction] = []
        self._asked: tuple[str | None, int] | None = None  # the note when it was asked for, calls waited

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.before_call)

    def before_call(self, event: HookEvent) -> None:
        raise NotImplementedError

    def _ready_to_summarize(self, agent, patience: int = 3) -> bool:
        """With ``handoff``, the first time a summary is due the agent is asked for its note, and the
        summary waits until the note is written (at most ``patience`` calls)."""
        if not self.handoff:
            return True
        if self._asked is None:
            agent.inject_turn_scoped("handoff", HANDOFF_ASK)
            self._asked = (self._read_note(), 0)
            return False
        before, waited = self._asked
        if self._read_note() != before or waited + 1 >= patience:
            self._asked = None
            return True
        self._asked = (before, waited + 1)
        return False

    def _read_note(self) -> str | None:
        target = self.keeper.root / HANDOFF_PATH
        return target.read_text(encoding="utf-8") if target.is_file() else None

    def _handoff_note(self) -> str | None:
        return self._read_note() if self.handoff else None

    def _rewrite(self, agent, kind: str, messages: list[dict], seen: tuple = (0, 0, None)) -> None:
        before = estimate(agent.messages)
        agent.replace_history(messages)
        self.log.append(Compaction(len(agent.calls), kind, before, estimate(messages), seen))


class SimpleCompaction(_Summarizing):
    """PRE_LLM_CALL: past ``limit`` tokens, the whole history becomes one user message (task, handoff
    note, summary, appendix). No earlier turn is replayed, so no thinking block can fail the prefix
    check: what the provider recommends for a summary written client-side."""

    def __init__(self, keeper: Keeper, limit: int, summarize: Summarizer = mechanical_summary, handoff: bool = True):
        super().__init__(keeper, limit, summarize, handoff)

    def before_call(self, event: HookEvent) -> None:
        agent = event.agent
        if context_tokens(agent) < self.limit or not self._ready_to_summarize(agent):
            return
        # every call is compacted first, so what the summary drops is saved and its path in the appendix
        messages = compact_calls(agent.messages, answered_calls(agent.messages), self.keeper)
        self._rewrite(agent, "summary", [summary_message(task_of(messages), messages, self.summarize(messages),
                                                         self._handoff_note(), self.keeper)])


class ManusLadder(_Summarizing):
    """PRE_LLM_CALL: past ``limit`` tokens, compact the oldest half of the calls still in full (never
    the last ``keep_last``); summarize only when that stops paying (``ladder_step``), keeping the
    last ``keep_last`` calls in full after the summary. The task and any earlier summary (the first
    message) are protected. ``strip_thinking``: the rewritten history carries no thinking, so the
    prefix check has nothing to fail on; without it, send ``drop_block`` (or, on a model that
    enforces the check, every rewrite is a 400)."""

    def __init__(self, keeper: Keeper, limit: int, *, keep_last: int = 5, min_gain: float = 0.2,
                 min_chars: int = 200, summarize: Summarizer = mechanical_summary, handoff: bool = False,
                 strip_thinking: bool = True):
        super().__init__(keeper, limit, summarize, handoff)
        self.keep_last, self.min_gain, self.min_chars, self.strip = keep_last, min_gain, min_chars, strip_thinking
        self.last_gain: float | None = None
        self._seen: tuple = (0, 0, None)

    def compactable(self, messages: list[dict]) -> list[tuple[int, int, int, int]]:
        """The calls that would shrink: all but the last ``keep_last``, not compact yet, big enough."""
        calls = answered_calls(messages)
        calls = calls[:max(0, len(calls) - self.keep_last)]
        out = []
        for i, j, ri, rj in calls:
            use, result = messages[i]["content"][j], messages[ri]["content"][rj]
            size = len(result_text(result.get("content"))) + len(json.dumps(use.get("input")))
            if size >= self.min_chars and not is_compacted(use, result, self.keeper):
                out.append((i, j, ri, rj))
        return out

    def before_call(self, event: HookEvent) -> None:
        agent = event.agent
        tokens = context_tokens(agent)
        if tokens < self.limit and self._asked is None:
            return  # the common case: no need to look through the history
        todo = self.compactable(agent.messages)
        if self._asked is None:
            self._seen = (tokens, len(todo), self.last_gain)  # what the decision below is made from
        step = "summarize" if self._asked is not None else ladder_step(tokens, self.limit, len(todo),
                                                                      self.last_gain, self.min_gain)
        if step == "compact":
            before = estimate(agent.messages)
            messages = self._compact(agent.messages, todo[:math.ceil(len(todo) / 2)])
            self.last_gain = 1 - estimate(messages) / max(1, before)
            self._rewrite(agent, "compact", strip_thinking(messages) if self.strip else messages, self._seen)
        elif step == "summarize" and self._ready_to_summarize(agent):
            self._summarize(agent)
            self.last_gain = None

    def _compact(self, messages: list[dict], calls) -> list[dict]:
        return compact_calls(messages, calls, self.keeper)

    def _summarize(self, agent) -> None:
        # every call about to be summarized is compacted first: what it drops is then saved. With
        # fewer calls than keep_last, all of them are summarized, so all of them are compacted.
        calls = answered_calls(agent.messages)
        keep = self.keep_last if len(calls) >= self.keep_last else 0
        messages = self._compact(agent.messages, calls[:len(calls) - keep])  # positions do not move
        cut = calls[-keep][0] if keep else len(messages)
        while cut > 1 and messages[cut - 1].get("role") == "system":  # the kept turn's own system entries
            cut -= 1
        # what is kept starts at an assistant turn or a system entry, never a user turn after the summary's
        compacted, kept = messages[:cut], messages[cut:]
        head = summary_message(task_of(messages), compacted, self.summarize(compacted), self._handoff_note(), self.keeper)
        kept = strip_thinking(kept) if self.strip else kept
        self._rewrite(agent, "summary", [head, *kept], self._seen)


def compact_calls(messages: list[dict], calls, keeper: Keeper) -> list[dict]:
    """A copy of ``messages`` with the given calls (``answered_calls`` positions) in their compact form."""
    messages = [{**m, "content": list(m["content"])} if isinstance(m.get("content"), list) else m for m in messages]
    for i, j, ri, rj in calls:
        use, result = compact_call(messages[i]["content"][j], messages[ri]["content"][rj], keeper)
        messages[i]["content"][j], messages[ri]["content"][rj] = use, result
    return messages


# -- compression awareness --------------------------------------------------------------------

CONTEXT_LINE = "I have used about {pct}% of my context window."
NOTES_ASK = (f"I just passed {{pct}}% of my context window: I write what I have confirmed, the files I "
             f"produced and my next step to {HANDOFF_PATH} now, so a compaction loses none of it.")


@dataclass
class ContextGauge:
    """PRE_LLM_CALL: the context's use, quantized to tenths of ``window``, in the batch; passing a
    new tenth asks the agent to write its notes (``NOTES_ASK``). After a compaction the gauge drops
    and the next tenths ask again."""

    window: int
    asks: int = 0
    _announced: int = field(default=0, repr=False)

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.tell)

    def tell(self, event: HookEvent) -> None:
        tenth = min(10, context_tokens(event.agent) * 10 // self.window)
        text = CONTEXT_LINE.format(pct=tenth * 10)
        if tenth > self._announced:
            text += " " + NOTES_ASK.format(pct=tenth * 10)
            self.asks += 1
        self._announced = tenth
        event.agent.inject_turn_scoped("context", text)


# -- the user's notice ------------------------------------------------------------------------

NOTICE = "Context compacted before call {call} ({kind}): about {before:,} -> {after:,} tokens. {kept}"
NOTICE_KEPT = {
    "compact": "Older tool calls were replaced by the paths that give them back.",
    "summary": "A summary replaced the history; every URL and path it named is in its appendix.",
    "server": "The server's summary replaced the earlier turns.",
    "server summary": "The server's summary replaced the history.",
}


def notice_line(compaction: Compaction) -> str:
    return NOTICE.format(call=compaction.call + 1, kind=compaction.kind, before=compaction.before,
                         after=compaction.after, kept=NOTICE_KEPT.get(compaction.kind, ""))


class CompactionNotice:
    """POST_LLM_CALL and END: tells the user, through ``tell`` (``print`` by default), each compaction
    the given strategies made (anything with a ``log`` of ``Compaction``: the ladder, simple
    compaction, ``ServerCompaction``, ``OnDemandCompaction``). createrole's rule (seed 004): the user
    sees a notice when compression happens, and the notice never enters the model's context. So
    nothing here is queued: the notice costs no token and moves no cached prefix, while the person
    watching learns why the agent may have to re-read a file. ``told`` keeps every line."""

    def __init__(self, *strategies, tell: Callable[[str], None] = print):
        self.strategies, self.tell = strategies, tell
        self.told: list[str] = []
        self._seen = [0] * len(strategies)

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_LLM_CALL, self.catch_up)
        hooks.register(Point.END, self.catch_up)  # a compaction before a call that failed is told too

    def catch_up(self, event: HookEvent) -> None:
        for k, strategy in enumerate(self.strategies):
            for compaction in strategy.log[self._seen[k]:]:
                self._seen[k] += 1  # counted first: a ``tell`` that raises does not repeat the line
                self.told.append(notice_line(compaction))
                self.tell(self.told[-1])


# -- what was lost ----------------------------------------------------------------------------

@dataclass
class ThinkingLedger:
    """POST_LLM_CALL: thinking blocks produced, and those the model no longer reads, counted two ways.

    ``gone``: every block produced before the last call that the model did not read on that call,
    whatever took it away: its turn rewritten into a summary (a summary stands in for a turn's
    content, not for its reasoning), ignored by the API because it precedes the newest compaction
    block (server compaction, emulator/compaction.py [CT]), stripped from a turn still sent, dropped
    by the API (``drop_block``) or cleared by the server (``clear_thinking_20251015`` clears the oldest
    thinking turns first). ``stripped``: blocks the model lost while it still read their turn, the
    part of ``gone`` where the model sees an action without the reasoning behind it."""

    produced: int = 0
    gone: set = field(default_factory=set)  # as of the last call
    stripped: set = field(default_factory=set)
    _signatures: list = field(default_factory=list, repr=False)  # every block produced so far
    _by_turn: dict = field(default_factory=dict, repr=False)  # first tool_use id of a turn -> its thinking
    _turns: dict = field(default_factory=dict, repr=False)  # id of an assistant turn -> what _read found in it

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_LLM_CALL, self.count)

    def _read(self, message: dict) -> tuple[list, list, str | None]:
        """(compaction marks, thinking signatures, first tool_use id) of an assistant turn. The history
        repeats from call to call, so each turn is read once (kept with the turn, to check identity)."""
        seen = self._turns.get(id(message))
        if seen is None or seen[0] is not message:
            content = message["content"]
            seen = self._turns[id(message)] = (
                message, [j for j, b in enumerate(content) if b.get("type") == "compaction"],
                [b.get("signature") for b in content if b.get("type") in THINKING],
                next((b.get("id") for b in content if b.get("type") == "tool_use"), None))
        return seen[1:]

    def count(self, event: HookEvent) -> None:
        sent = event.request["messages"]
        turns = [m for m in sent if m.get("role") == "assistant" and isinstance(m.get("content"), list)]
        read = [self._read(m) for m in turns]
        for k in range(len(read) - 1, -1, -1):  # the API ignores what precedes the newest compaction block
            marks = read[k][0]
            if marks:
                after = turns[k]["content"][marks[-1] + 1:]
                read = [([], [b.get("signature") for b in after if b.get("type") in THINKING],
                         next((b.get("id") for b in after if b.get("type") == "tool_use"), None)), *read[k + 1:]]
                break
        edits = getattr(getattr(event.response, "context_management", None), "applied_edits", None) or []
        cleared = sum(getattr(e, "cleared_thinking_turns", 0) or 0 for e in edits
                      if getattr(e, "type", None) == "clear_thinking_20251015")
        dropped = set()
        for change in getattr(event.response, "input_transformations", None) or []:
            if change.type == "thinking_dropped":
                _, i, _, j = change.path.split(".")
                dropped.add(sent[int(i)]["content"][int(j)].get("signature"))
        in_view = set()
        for _, signatures, _ in read:
            if signatures and cleared:  # cleared by the server, oldest thinking turns first
                cleared -= 1
            else:
                in_view.update(signatures)
        in_view -= dropped
        self.stripped |= dropped  # the API dropped it from a turn it still reads
        for _, _, first in read:  # a turn the model still reads, short of the thinking it was made with
            self.stripped.update(s for s in self._by_turn.get(first, ()) if s not in in_view)
        self.gone = set(self._signatures) - in_view
        thinking = [b.signature for b in event.response.content if b.type == "thinking"]
        uses = [b.id for b in event.response.content if b.type == "tool_use"]
        self.produced += len(thinking)
        self._signatures += thinking
        if uses and thinking:
            self._by_turn[uses[0]] = thinking
