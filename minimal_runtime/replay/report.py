"""The replay's outputs: a table (recorded next to replayed) and a plot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..provider.cost import CallRecord
from .driver import STRATEGIES, Replay, unlogged_calls
from .as_logged import DEPARTURE
from .pricing import priced, total
from .recorded import RecordedRun


def usage_bill(run: RecordedRun) -> float | None:
    """The log's own usage priced by our table: its calls (output recovered where it was a
    placeholder) and the calls it counts but does not show. None where it cannot be priced."""
    own = [c.model for c in run.calls if c.usage]
    usages = [c.usage for c in run.calls if c.usage]
    times = [c.at for c in run.calls if c.usage]
    costs = [u.cost(m if priced(m) else run.model, at) for u, m, at in zip(usages, own, times)] \
        if run.model and usages else [None]
    if None in costs:
        return None
    unlogged, billed, _ = unlogged_calls(run)
    return sum(costs) + total(unlogged, billed)


def prices_one_hour_as_five_minutes(run: RecordedRun) -> bool:
    """Whether the log's own cost priced its 1-hour cache writes at the 5-minute rate (1.25x input,
    not the documented 2x): Claude Code 2.0's ``modelUsage.costUSD`` is its tokens priced so, to the
    cent, where its calls wrote 1-hour entries. Only a check of the log's own arithmetic: nothing is
    billed from it."""
    if not sum(c.usage.cache_write_1h for c in run.calls if c.usage):
        return False
    costs = [(t.cost(name), t.cost_usd) for name, t in run.model_usage.items()
             if t.cost_usd and t.cache_write and priced(name)]
    return bool(costs) and all(abs(ours - theirs) <= 0.002 * theirs for ours, theirs in costs)


def at_five_minute_rate(replayed: Replay) -> float:
    """The replay's bill with its 1-hour writes priced as 5-minute ones (how such a log prices them)."""
    flat = [CallRecord(**{**c.model_dump(), "cache_creation_5m": c.cache_creation_input_tokens, "cache_creation_1h": 0})
            for c in replayed.calls]
    return replace(replayed, calls=flat).cost


def own_cost_line(run: RecordedRun, replays: list[Replay]) -> str | None:
    """The log's own total cost beside the replayed bill: the figure nothing here was fit to."""
    if run.cost_usd is None:
        return None
    recorded = next((r for r in replays if r.strategy == "recorded" and r.calls), None)
    line = f"the log's own {run.cost_from}: ${run.cost_usd:.4f}"
    session = run.session_cost_usd
    if session is not None and abs(session - run.cost_usd) > 0.005 * max(session, run.cost_usd):
        line = (f"the log's own cost of its calls: ${run.cost_usd:.4f} (model_usage_since_last_result; its "
                f"total_cost_usd, ${session:.4f}, counts the session since it began: a resumed session's earlier "
                "runs too)")
    if recorded is None or recorded.cost != recorded.cost or not run.cost_usd:
        return line
    line += f"; recorded ${recorded.cost:.4f} ({recorded.cost / run.cost_usd - 1:+.1%})"
    if prices_one_hour_as_five_minutes(run):
        flat = at_five_minute_rate(recorded)
        line += (f"; this log's own cost prices its 1-hour cache writes at the 5-minute rate (1.25x input, not "
                 f"2x): priced so, recorded comes to ${flat:.4f} ({flat / run.cost_usd - 1:+.1%})")
    else:
        line += "".join(f"; the log prices {name}'s own token counts at ${theirs:.4f} where the model table "
                        f"prices them at ${ours:.4f} ({theirs / ours - 1:+.1%}): a difference of prices, not of tokens"
                        for name, ours, theirs in price_differences(run))
    return line


def price_differences(run: RecordedRun, tolerance: float = 0.01) -> list[tuple[str, float, float]]:
    """(model, its modelUsage tokens priced by our table, the log's own costUSD for them) where the
    two differ by more than ``tolerance``: the log's client used other prices (a table of its own)."""
    out = []
    for name, t in run.model_usage.items():
        if not priced(name) or not t.cost_usd:
            continue
        ours = t.cost(name)
        if ours and abs(t.cost_usd / ours - 1) > tolerance:
            out.append((name, ours, t.cost_usd))
    return out


def rows(run: RecordedRun, replays: list[Replay]) -> list[dict]:
    """One row for what the log recorded (where it says), one per replayed strategy."""
    out = []
    usages = [c.usage for c in run.calls if c.usage]
    if usages:
        prompt = sum(u.prompt_tokens for u in usages)
        reads = [u.cache_read for u in usages]
        bill = usage_bill(run)
        out.append({"strategy": "the log itself", "calls": len(usages), "prompt_tokens": prompt,
                    "per_call": prompt / len(usages),
                    "cache_read_share": None if None in reads or not prompt else sum(reads) / prompt,  # no base, no share
                    "cost": bill, "ms_per_call": None, "stopped": None})  # the log's own cost has a line of its own
    for r in replays:
        out.append({"strategy": r.strategy, "calls": len(r.calls), "prompt_tokens": r.prompt_tokens,
                    "per_call": r.prompt_tokens / max(1, len(r.calls)), "cache_read_share": r.cache_read_share,
                    "cost": r.cost if r.calls else None,  # nothing replayed: no bill (n/a), not $0
                    "ms_per_call": 1000 * r.seconds / max(1, len(r.calls)), "stopped": r.stopped})
    return out


def per_call(run: RecordedRun, replayed: Replay) -> list[dict]:
    """Logged vs replayed cache reads, call by call. A call that departs from the log shows where
    the log saw something the replay cannot: a changed system prompt or tool list, a reconnect,
    a cache entry another process wrote or evicted. ``billed_as_logged``: ``recorded`` bills the
    call with the log's own split (``as_logged.mirrored_misses``), so its row does not depart there."""
    out = []
    own = replayed.own_cache if replayed.own_cache is not None else replayed.calls  # before recorded mirrored a miss
    for k, (call, ours, billed) in enumerate(zip(run.calls, own, replayed.calls), start=1):
        logged = call.usage.cache_read_share if call.usage else None
        share = ours.cache_read_input_tokens / max(1, ours.prompt_tokens)
        out.append({"call": k, "logged_read": call.usage.cache_read if call.usage else None,
                    "replayed_read": ours.cache_read_input_tokens, "logged_share": logged, "replayed_share": share,
                    "departs": logged is not None and abs(share - logged) > DEPARTURE,
                    "billed_as_logged": billed is not ours})
    return out


def table(run: RecordedRun, replays: list[Replay]) -> str:
    model = replays[0].model if replays else run.model
    lines = [f"{run.path}  ({run.source}, {len(run.calls)} calls, {run.compactions} compactions; "
             f"logged model {run.model}, replay priced as {model}; replayed tokens "
             f"{'calibrated to the log' if any(r.calibrated for r in replays) else 'are estimates'})",
             f"{'strategy':<20} {'calls':>5} {'prompt tokens':>14} {'per call':>9} {'cache read':>10} {'cost $':>9} {'ms/call':>8}"]
    for row in rows(run, replays):
        share = "n/a" if row["cache_read_share"] is None else f"{row['cache_read_share']:.1%}"
        cost = "n/a" if row["cost"] is None or row["cost"] != row["cost"] else f"{row['cost']:.3f}"
        ms = "" if row["ms_per_call"] is None else f"{row['ms_per_call']:.1f}"
        lines.append(f"{row['strategy']:<20} {row['calls']:>5} {row['prompt_tokens']:>14,} {row['per_call']:>9,.0f} "
                     f"{share:>10} {cost:>9} {ms:>8}" + (f"  {row['stopped']}" if row["stopped"] else ""))
    own = own_cost_line(run, replays)
    lines += [f"  {own}"] if own else []
    if not any(c.usage for c in run.calls):
        lines.append("  the log records no usage: every row's tokens, cache reads and cost are the replay's own "
                     "estimates, none of them recorded" + ("" if priced(run.model) else
                                                           " (and it names no model the price table has: give --model)"))
    lines += [f"  {r.strategy}: {STRATEGIES[r.strategy].about}" for r in replays if r.strategy in STRATEGIES]
    notes = list(dict.fromkeys([*run.notes, *(n for r in replays for n in r.notes)]))
    lines += [f"  note: {n}" for n in notes]
    for r in (r for r in replays if r.strategy == "recorded"):
        departures = [d for d in per_call(run, r) if d["departs"] and not d["billed_as_logged"]]  # those: the misses note
        if departures:
            shown = ", ".join(f"{d['call']} ({d['logged_share']:.0%} logged, {d['replayed_share']:.0%} replayed)"
                              for d in departures[:6])
            lines.append(f"  recorded departs from the log on {len(departures)} call(s): {shown}"
                         f"{', ...' if len(departures) > 6 else ''}")
    return "\n".join(lines)


def plot(run: RecordedRun, replays: list[Replay], path: str | Path | None = None):
    """Prompt tokens and cache-read share per call; saved to ``path`` if given. Returns the figure.
    Strategies that give the same series (below a limit they never reached, several do) share one
    line and one legend entry; the legend sits under the panels, off the data."""
    # Saved to a file, the figure is made without pyplot: switching pyplot's backend to a file-only
    # one here turned off every later plot of a notebook that had saved one (chapter 10's last plot
    # was saved without its image so).
    if path is None:
        import matplotlib.pyplot as plt
        fig = plt.figure(figsize=(12, 4.6))
    else:
        from matplotlib.figure import Figure
        fig = Figure(figsize=(12, 4.6))
    left, right = fig.subplots(1, 2)
    usages = [c.usage for c in run.calls]

    def numbers(values) -> range:  # calls are counted from 1, as the table does
        return range(1, len(values) + 1)

    if any(usages):
        prompts = [u.prompt_tokens if u else None for u in usages]
        left.plot(numbers(prompts), prompts, color="black", linewidth=2.2, alpha=0.35, label="the log itself")
        shares = [u.cache_read_share if u else None for u in usages]
        if any(s is not None for s in shares):
            right.plot(numbers(shares), shares, color="black", linewidth=2.2, alpha=0.35)
    series: dict[tuple, list[str]] = {}
    for r in replays:
        if r.calls:
            key = (tuple(c.prompt_tokens for c in r.calls), tuple(round(c.cache_read_share, 4) for c in r.calls))
            series.setdefault(key, []).append(r.strategy)
    styles = ["-", "--", "-.", ":"]
    for k, ((prompts, shares), names) in enumerate(series.items()):
        style = dict(linewidth=1.3, linestyle=styles[k % len(styles)], color=f"C{k % 10}")
        left.plot(numbers(prompts), prompts, label=" = ".join(names), **style)
        right.plot(numbers(shares), shares, **style)
    for r in replays:
        if r.strategy == "recorded":
            departs = [d for d in per_call(run, r) if d["departs"]]
            if departs:
                right.scatter([d["call"] for d in departs], [d["replayed_share"] for d in departs], marker="x",
                              color="red", zorder=3, label="recorded departs from the log")
    left.set_xlabel("call"); left.set_ylabel("prompt tokens"); left.set_title("Prompt per call")
    right.set_xlabel("call"); right.set_ylabel("cache-read share"); right.set_title("Cache reads per call")
    right.set_ylim(-0.03, 1.03)
    handles = [h for ax in (left, right) for h in ax.get_legend_handles_labels()[0]]
    labels = [x for ax in (left, right) for x in ax.get_legend_handles_labels()[1]]
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8, frameon=False)
    fig.suptitle(f"{Path(run.path).name}: recorded vs replayed (emulator accounting)")
    fig.tight_layout(rect=(0, 0.06 + 0.035 * ((len(labels) - 1) // 3), 1, 1))
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
