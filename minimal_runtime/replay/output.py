"""The output a log really wrote, where its per-call counts are streaming placeholders.

Claude Code writes each call's usage as the stream began: the prompt side whole, the output a
placeholder (1 to a few dozen tokens, even for a call that wrote kilobytes), in session files and in
headless stream-json logs alike. A bill made of those leaves most of the output out. What the
log does know:

- a stream-json log ends in a ``result`` event that adds the process up: ``usage`` (the main
  thread's calls, output included) and ``modelUsage`` per model (every call the process made,
  those no line shows too: the compaction's own summary call, small side calls on another model).
  The output per model comes from there, spread over that model's calls in proportion to what each
  call wrote (its text, tool inputs and thinking, counted as the emulator counts), on top of the
  count each call logged. What ``modelUsage`` holds beyond the calls the log shows is kept apart
  (``unlogged``): calls the replay cannot re-issue, billed as the log counted them;
- a log without totals (a session file): each call's output is estimated from what it wrote, at
  least what it logged, and the run says so (``output_from``).

- a stream-json log without ``modelUsage`` whose calls' output had to be estimated, but whose
  ``total_cost_usd`` is there and whose every prompt figure is the log's own: the output is the one
  unknown of the bill, so it is solved from the total (``solve``) and spread as above, and the run
  says that its ``recorded`` row then matches the total by construction, no independent check.

Otherwise ``total_cost_usd`` is never read here: it stays the independent figure the replay is checked against.
"""

from __future__ import annotations

from .recorded import ModelTotals, RecordedCall, RecordedRun

FROM_TOTALS = "modelUsage"
ESTIMATED = "estimated"
SOLVED = "total_cost_usd"
_CHARS_PER_TOKEN = 4  # the emulator's estimate (emulator/tokens.py)


def written_tokens(call: RecordedCall) -> int:
    """What a call wrote, in estimated tokens: its text, tool inputs and visible thinking. Redacted
    thinking is not counted (its size is not the thinking's)."""
    import json
    chars = 0
    for b in call.assistant["content"]:
        kind = b.get("type")
        if kind == "text":
            chars += len(b.get("text") or "")
        elif kind == "thinking":
            chars += len(b.get("thinking") or "")
        elif kind == "tool_use":
            chars += len(b.get("name") or "") + len(json.dumps(b.get("input") or {}, ensure_ascii=False))
    return -(-chars // _CHARS_PER_TOKEN)


def spread(calls: list[RecordedCall], total: int) -> bool:
    """Give ``calls`` ``total`` output tokens between them: each keeps what it logged, and what is
    left goes by what each wrote (the largest remainders take the rounding). False (nothing
    changed) where the calls logged more than ``total`` already."""
    logged = [c.usage.output_tokens or 0 for c in calls]
    extra = total - sum(logged)
    if extra < 0 or not calls:
        return False
    weights = [max(1, written_tokens(c)) for c in calls]
    whole = sum(weights)
    shares = [extra * w // whole for w in weights]
    by_remainder = sorted(range(len(calls)), key=lambda k: -(extra * weights[k] % whole))
    for k in by_remainder[:extra - sum(shares)]:
        shares[k] += 1
    for call, own, share in zip(calls, logged, shares):
        call.usage.output_recovered = own + share
    return True


def estimate(run: RecordedRun, totals: ModelTotals | None = None) -> None:
    """No per-model totals in the log: each call's output is what it wrote, at least what it logged;
    where an older log's result event has ``usage`` (the main thread's own calls, no ``modelUsage``),
    its output is spread over the calls instead."""
    calls = [c for c in run.calls if c.usage]
    if totals is not None and totals.output_tokens and calls and spread(calls, totals.output_tokens):
        run.output_from = "result.usage"
        run.notes.append("output tokens from the result event's usage (this log has no modelUsage), spread over the "
                         "calls by what each wrote (the log's per-call counts are streaming placeholders)")
        return
    for call in calls:
        call.usage.output_recovered = max(call.usage.output_tokens or 0, written_tokens(call))
    if calls:
        run.output_from = ESTIMATED
        run.notes.append("output tokens estimated from what each call wrote (text, tool inputs, thinking; "
                         "the log's own counts are streaming placeholders and it has no totals)")


def _key(model: str | None) -> str:
    from ..provider.models import lookup
    spec = lookup(model or "")
    return spec.id if spec else (model or "unknown")


def recover(runs: list[RecordedRun], totals: dict[str, ModelTotals], main_usage: ModelTotals | None) -> None:
    """Per model, ``totals`` (the result event's ``modelUsage``) over the calls of ``runs`` (the
    main thread first, then its sub-agents). Where ``main_usage`` (the event's ``usage``) matches
    the main thread's logged prompt figures, it says the main thread's own output, and the rest of
    the model's output belongs to the calls the log does not show; else all of it is spread over
    the calls it does show. What is left of ``totals`` goes to the main run's ``unlogged``."""
    main = runs[0]
    by_model: dict[str, list[tuple[RecordedRun, RecordedCall]]] = {}
    for run in runs:
        for call in run.calls:
            if call.usage:
                by_model.setdefault(_key(run.model), []).append((run, call))
    named = {_key(name): (name, t) for name, t in totals.items()}
    for key, (name, t) in named.items():
        shown = by_model.get(key, [])
        logged = ModelTotals(input_tokens=sum(c.usage.prompt_tokens - (c.usage.cache_read or 0) - (c.usage.cache_write or 0)
                                              for _, c in shown),
                             cache_read=sum(c.usage.cache_read or 0 for _, c in shown),
                             cache_write=sum(c.usage.cache_write or 0 for _, c in shown), output_tokens=0)
        own = [c for r, c in shown if r is main]
        others = [c for r, c in shown if r is not main]
        left = t.output_tokens
        if own and main_usage is not None and _same_prompts(main_usage, own) and spread(own, main_usage.output_tokens):
            # the rest is the sub-agents' and the unshown calls': the sub-agents' estimated, the unshown get what is left
            for call in others:
                call.usage.output_recovered = max(call.usage.output_tokens or 0, written_tokens(call))
            left = max(0, left - main_usage.output_tokens - sum(c.usage.output_recovered for c in others))
        elif shown and spread([c for _, c in shown], t.output_tokens):
            left = 0  # no telling which output was the unshown calls': all of it goes to the calls shown
        elif shown:
            left = 0
        rest = {"input_tokens": t.input_tokens - logged.input_tokens, "cache_read": t.cache_read - logged.cache_read,
                "cache_write": t.cache_write - logged.cache_write}
        fewer = [kind for kind, n in rest.items() if n < 0]
        prompt, shown_prompt = t.input_tokens + t.cache_read + t.cache_write, sum(c.usage.prompt_tokens for _, c in shown)
        if fewer and shown_prompt and abs(prompt - shown_prompt) <= SAME_PROMPTS * shown_prompt:
            # the same prompts, split otherwise: the totals the API returned win (issue: 72.4% read per
            # event, 44.5% in modelUsage); each call keeps its prompt size, its split scaled to the totals'
            main.notes.append(_rescaled(name, [c for _, c in shown], t, logged))
            rest = {kind: 0 for kind in rest}
        elif fewer:  # the calls show more of one kind than the totals: the kinds the totals hold more of are billed
            main.notes.append(f"modelUsage counts fewer {name} {' and '.join(_KIND[k] for k in fewer)} tokens than "
                              "the log's own calls: the calls' own figures are kept, and of the calls the log does "
                              "not show only the kinds modelUsage holds more of are billed ("
                              + ", ".join(f"{n:,} {_KIND[k]}" for k, n in rest.items() if n > 0) + ")")
            rest = {kind: max(0, n) for kind, n in rest.items()}
        rest = ModelTotals(**rest, output_tokens=max(0, left))
        if rest.input_tokens + rest.cache_read + rest.cache_write + rest.output_tokens:
            main.unlogged[name] = rest
    for run in runs:
        run.output_from = FROM_TOTALS
    main.notes.append("output tokens from the result event's modelUsage, spread over each model's calls by what "
                      "each wrote (the log's per-call counts are streaming placeholders)")
    if main.unlogged:
        main.notes.append("calls the log does not show (a compaction's summary call, side calls): "
                          + "; ".join(f"{name} {t.input_tokens + t.cache_read + t.cache_write:,} prompt and "
                                      f"{t.output_tokens:,} output tokens" for name, t in main.unlogged.items())
                          + ", from modelUsage minus the calls the log shows; billed in every row as counted")


SAME_PROMPTS = 0.005  # the calls' prompts and the totals' within this share of each other: the same calls
_KIND = {"input_tokens": "uncached", "cache_read": "cache-read", "cache_write": "cache-write"}


def _rescaled(name: str, calls: list[RecordedCall], t: ModelTotals, logged: ModelTotals) -> str:
    """Each call's split (read, written, uncached) fitted to the totals' by kind, its prompt kept:
    iterative proportional fitting (scale the kinds to the totals, then each call to its prompt,
    until both hold); a kind a call had none of stays none."""
    parts = [[float(c.usage.cache_read or 0), float(c.usage.cache_write or 0),
              float(c.usage.prompt_tokens - (c.usage.cache_read or 0) - (c.usage.cache_write or 0))] for c in calls]
    want = [t.cache_read, t.cache_write, t.input_tokens]
    for _ in range(50):
        for j in range(3):
            have = sum(p[j] for p in parts)
            for p in parts:
                p[j] *= want[j] / have if have else 1.0
        for p, c in zip(parts, calls):
            whole = sum(p)
            for j in range(3):
                p[j] *= c.usage.prompt_tokens / whole if whole else 1.0
    for p, call in zip(parts, calls):
        u = call.usage
        read = min(u.prompt_tokens, round(p[0]))
        write = min(u.prompt_tokens - read, round(p[1]))
        u.cache_write_1h = min(write, round(u.cache_write_1h * write / u.cache_write)) if u.cache_write else 0
        u.cache_read, u.cache_write = read, write
    was = logged.cache_read / max(1, logged.input_tokens + logged.cache_read + logged.cache_write)
    now = t.cache_read / max(1, t.input_tokens + t.cache_read + t.cache_write)
    return (f"the calls' own usage reads {was:.1%} of {name}'s prompt tokens from cache where modelUsage (the "
            f"totals the API returned) says {now:.1%}: the totals win; each call's split of its prompt was scaled "
            "to theirs, its size kept")


def _same_prompts(usage: ModelTotals, calls: list[RecordedCall]) -> bool:
    reads = sum(c.usage.cache_read or 0 for c in calls)
    writes = sum(c.usage.cache_write or 0 for c in calls)
    prompts = sum(c.usage.prompt_tokens for c in calls)
    return (usage.cache_read, usage.cache_write, usage.input_tokens) == (reads, writes, prompts - reads - writes)


def solve(runs: list[RecordedRun], total_usd: float | None) -> bool:
    """The estimated output of ``runs`` (a main thread and its sub-agents) solved from the log's own
    ``total_cost_usd``: what the total leaves once every call's prompt side, and the output the log
    does know, are priced, over the output price. Only where one priced model made every estimated
    call (one output price), every call carries its prompt figures, and the total leaves at least the
    output the calls logged. False (nothing changed) otherwise."""
    from ..provider.cost import CallRecord
    from .pricing import priced
    calls = [(r, c) for r in runs for c in r.calls]
    guessed = [c for r, c in calls if r.output_from == ESTIMATED and c.usage]
    if total_usd is None or not guessed or any(c.usage is None or c.usage.cache_read is None for _, c in calls):
        return False
    billed = {priced(c.model or r.model) for r, c in calls if r.output_from == ESTIMATED}
    if len(billed) != 1 or None in billed:
        return False
    how = billed.pop()
    known = [(c.usage.model_copy(update={"output_tokens": 0, "output_recovered": None}) if r.output_from == ESTIMATED
              else c.usage).cost(c.model or r.model or how.model) for r, c in calls]  # all but the unknown output
    if None in known:
        return False
    known = sum(known)
    per_token = how.cost(CallRecord(model=how.model, input_tokens=0, output_tokens=1_000_000)) / 1e6
    if not per_token or per_token != per_token:
        return False
    output = round((total_usd - known) / per_token)
    for c in guessed:
        c.usage.output_recovered = None
    if not spread(guessed, output):
        for c in guessed:
            c.usage.output_recovered = max(c.usage.output_tokens or 0, written_tokens(c))
        return False
    for r in runs:
        if r.output_from == ESTIMATED:
            r.output_from = SOLVED
            r.notes[:] = [n for n in r.notes if not n.startswith("output tokens estimated")]
    runs[0].notes.append(f"output tokens solved from the log's own total_cost_usd (this log has no modelUsage, and "
                         f"every prompt figure is its own): {output:,} tokens over the calls whose output was a "
                         "streaming placeholder, spread by what each wrote; recorded matches the total by "
                         "construction here, so it is no independent check of it")
    return True
