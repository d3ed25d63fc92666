"""``recorded``: the log's own split of each prompt into read, written and uncached tokens.

The replay's emulator decides what is read and written from its own cache, on the breakpoints the
layout sets; ``recorded`` sets them where the log's client did, so the split comes out as the log's
wherever the emulator can know it:

- **an uncached tail.** A call's ``input_tokens`` are what followed its last breakpoint. Claude Code
  puts that breakpoint at the end of the messages, so most calls leave a few tokens uncached; some
  leave tens of thousands (big tool results after the breakpoint). There the replay puts its last
  breakpoint on the block that leaves about as many tokens after it: those are then uncached on this
  call and written on the next, as in the log, instead of written now and read next time;
- **a cache warmed elsewhere.** A call that read more than the run had ever sent read what another
  process wrote (a sub-agent, an earlier session in the same project). No replay of this run can
  write it, so the replay reads what it can; ``recorded`` bills the rest as the log did (read
  rather than written), and every replay notes the call as a departure it did not reproduce;
- **a miss the replay cannot see.** A call that read much less than the replay's cache holds (its
  client changed a byte of the prefix, Claude Code's microcompaction cleared old tool results, the
  entry was evicted): ``recorded`` bills it with the log's own split, as it bills the log's reads,
  and the report says on which calls and what the replay's own cache would have billed instead.
"""

from __future__ import annotations

from typing import Callable

from ..core.context import CallPlan
from ..core.messages import blocks_of
from ..core.protocols import Layout
from ..emulator.prompt import render_block
from ..emulator.tokens import block_tokens
from ..provider.cost import CallRecord
from ..provider.models import ModelSpec
from .recorded import RecordedRun

MIRRORED_TAIL = 1_024  # log tokens: a shorter uncached tail is Claude Code's usual few tokens, left alone
DEPARTURE = 0.20  # a call whose replayed cache-read share is this far from the logged one departs from the log
UNMARKABLE = ("thinking", "redacted_thinking")


def uncached(usage) -> int:
    if usage is None or usage.cache_read is None or usage.cache_write is None:
        return 0
    return usage.prompt_tokens - usage.cache_read - usage.cache_write


def mirror_tail(layout: Layout, run: RecordedRun, call: Callable[[], int], spec: ModelSpec | None = None) -> Layout:
    """``layout``, with the last breakpoint in the messages moved back where the log's call
    ``call()`` left a long uncached tail: onto the block after which about that many tokens follow,
    in the emulator's estimate (the log's tail scaled by how the log counted the tokens this call
    added against the emulator). Only blocks added since the previous call are candidates; ``spec``,
    the replay model, counts their images and text as the emulator bills them."""
    seen = {"messages": 0}
    facts = (spec.image_limits, spec.tokenizer) if spec is not None else ()

    def mirrored(parts):
        plan = CallPlan.of(layout(parts))
        messages = plan.request["messages"]
        new_from, seen["messages"] = seen["messages"], len(messages)
        k = call()
        if not 0 < k < len(run.calls) or not run.calls[k - 1].usage or not run.calls[k].usage:
            return plan  # a call the log has no usage for (a cancelled request, say) mirrors nothing
        usage, before = run.calls[k].usage, run.calls[k - 1].usage
        tail, added = uncached(usage), usage.prompt_tokens - before.prompt_tokens
        if tail < MIRRORED_TAIL or added <= 0:
            return plan
        blocks = [(m, i, block_tokens(b, render_block(b, messages[m]["role"]), *facts))
                  for m in range(new_from, len(messages)) for i, b in enumerate(blocks_of(messages[m]))]
        estimated = sum(n for _, _, n in blocks)
        marked = [(m, i) for m, i, _ in blocks if "cache_control" in blocks_of(messages[m])[i]]
        if not estimated or not marked:
            return plan
        want = tail * estimated / added  # the tail, in estimated tokens
        best, after = None, 0
        for m, i, n in reversed(blocks):  # the markable block whose tokens after it come nearest the tail
            block = blocks_of(messages[m])[i]
            if block.get("type") not in UNMARKABLE and (best is None or abs(after - want) < best[0]):
                best = (abs(after - want), m, i)
            after += n
        _, m, i = best
        if (m, i) == marked[-1]:
            return plan
        marker = blocks_of(messages[marked[-1][0]])[marked[-1][1]]["cache_control"]
        messages = list(messages)
        for (mm, ii), change in ((marked[-1], None), ((m, i), marker)):
            content = list(blocks_of(messages[mm]))
            block = {key: value for key, value in content[ii].items() if key != "cache_control"}
            content[ii] = {**block, "cache_control": change} if change else block
            messages[mm] = {**messages[mm], "content": content}
        plan.request = {**plan.request, "messages": messages}
        return plan
    return mirrored


def warmed_elsewhere(run: RecordedRun, calls: list[CallRecord] | None = None) -> dict[int, tuple[int, int]]:
    """{call index: (tokens it read, the largest prompt the run had sent before it)} for calls
    that read more than the run could have written. The first call's read is the seeding's, unless
    it read more than the replay's first call (``calls``, in the log's tokens) could after it: a run
    that begins where an earlier one left off (``serve --log``'s rewritten conversation) reads history
    the earlier run wrote, which no seeding of a head writes."""
    out, largest = {}, 0
    for k, call in enumerate(run.calls):
        u = call.usage
        if u is None:
            continue
        if k and u.cache_read and u.cache_read > largest + MIRRORED_TAIL:
            out[k] = (u.cache_read, largest)
        if not k and calls and u.cache_read and u.cache_read > calls[0].cache_read_input_tokens + MIRRORED_TAIL:
            out[k] = (u.cache_read, 0)
        largest = max(largest, u.prompt_tokens)
    return out


def priced_as_logged(run: RecordedRun, calls: list[CallRecord]) -> list[CallRecord]:
    """The calls, where the log read from a cache another process warmed: read as much as the log
    did (out of what the replay wrote, then of what it left uncached)."""
    calls = list(calls)
    for k, (read, _) in warmed_elsewhere(run, calls).items():
        if k >= len(calls):
            continue
        c = calls[k]
        missing = min(read, c.prompt_tokens) - c.cache_read_input_tokens
        if missing <= 0:
            continue
        from_written = min(missing, c.cache_creation_input_tokens)
        from_uncached = min(missing - from_written, c.input_tokens)
        one_hour = min(c.cache_creation_1h, from_written)
        calls[k] = c.model_copy(update={
            "cache_read_input_tokens": c.cache_read_input_tokens + from_written + from_uncached,
            "cache_creation_input_tokens": c.cache_creation_input_tokens - from_written,
            "cache_creation_1h": c.cache_creation_1h - one_hour,
            "cache_creation_5m": c.cache_creation_5m - (from_written - one_hour),
            "input_tokens": c.input_tokens - from_uncached})
    return calls


def mirrored_misses(run: RecordedRun, calls: list[CallRecord]) -> tuple[list[CallRecord], list[int]]:
    """``recorded``'s calls, where the log read at least ``MIRRORED_TAIL`` tokens less than the
    replay's cache did (or, on a prompt smaller than five of those, a ``DEPARTURE`` share of it
    less: a small prompt's miss is as real): the log's own split of the call's prompt (read, written with its TTLs,
    uncached), scaled to the replayed prompt. Where the log's usage is exact (``run.usage_exact``, serve's
    own log: the API's split of the very request replayed), every call whose split differs from the
    replay's is billed with the log's: a client whose breakpoints leave a short tail uncached (Continue)
    or write what the replay reads is billed as serve billed it. Returns (the calls, the indices mirrored)."""
    out, moved = list(calls), []
    for k, (call, c) in enumerate(zip(run.calls, calls)):
        u = call.usage
        if u is None or u.cache_read is None or not u.prompt_tokens or not c.prompt_tokens:
            continue
        scale = c.prompt_tokens / u.prompt_tokens
        read = min(c.prompt_tokens, round(u.cache_read * scale))
        # a log of hits only (DeepSeek's, OpenAI's cached_tokens) bills every other token as input: so does
        # the replay of it (calibration.py bills its writes as input), so its miss is uncached input here
        write = min(c.prompt_tokens - read, round((u.cache_write or 0) * scale))
        if run.usage_exact:
            if (read, write) == (c.cache_read_input_tokens, c.cache_creation_input_tokens):
                continue
        elif c.cache_read_input_tokens - read < min(MIRRORED_TAIL, DEPARTURE * c.prompt_tokens):
            continue
        one_hour = min(write, round(u.cache_write_1h * scale))
        out[k] = c.model_copy(update={"cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                                      "cache_creation_1h": one_hour, "cache_creation_5m": write - one_hour,
                                      "input_tokens": c.prompt_tokens - read - write})
        moved.append(k)
    return out, moved


def misses_note(run: RecordedRun, before: list[CallRecord], after: list[CallRecord], moved: list[int]) -> str:
    own, mirrored = sum(c.cost for c in before), sum(c.cost for c in after)
    shown = ", ".join(f"{k + 1} (read {run.calls[k].usage.cache_read_share:.0%} logged, "
                      f"{before[k].cache_read_share:.0%} replayed)" for k in moved[:6])
    change = f"{mirrored / own - 1:+.1%}" if own and own == own else "n/a"
    if run.usage_exact:
        return (f"the log gives each call's split as the API billed it: recorded bills as the log did the "
                f"{len(moved)} call(s) the replay's own cache would have split otherwise: {shown}"
                f"{', ...' if len(moved) > 6 else ''}"
                + (f": ${mirrored:.4f} against ${own:.4f} with the replay's own cache ({change})" if own == own else ""))
    return (f"the log missed the cache where the replay's would have read, on {len(moved)} call(s): {shown}"
            f"{', ...' if len(moved) > 6 else ''} (a client-side change of the prefix, a microcompaction, an "
            f"eviction); recorded bills those as the log did"
            + (f": ${mirrored:.4f} against ${own:.4f} with the replay's own cache ({change})" if own == own else
               " (the model is not priced: no dollars to compare)"))


def warmed_note(run: RecordedRun, calls: list[CallRecord] | None = None) -> str | None:
    warm = warmed_elsewhere(run, calls)
    if not warm:
        return None
    shown = ", ".join(f"{k + 1} (read {read:,}, the run had sent at most {largest:,})"
                      for k, (read, largest) in list(warm.items())[:4])
    return (f"the log read from a cache another process warmed on call(s) {shown}{', ...' if len(warm) > 4 else ''}: "
            "no replay of this run writes it; recorded bills those reads as the log did, the other strategies "
            "as their own cache has them")
