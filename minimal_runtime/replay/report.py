"""The replay's outputs: a table (recorded next to replayed) and a plot."""

from __future__ import annotations

from pathlib import Path

from .driver import STRATEGIES, Replay
from .recorded import RecordedRun


def rows(run: RecordedRun, replays: list[Replay]) -> list[dict]:
    """One row for what the log recorded (where it says), one per replayed strategy."""
    out = []
    usages = [c.usage for c in run.calls if c.usage]
    if usages:
        prompt = sum(u.prompt_tokens for u in usages)
        reads = [u.cache_read for u in usages]
        costs = [u.cost(run.model) for u in usages] if run.model else [None]
        out.append({"strategy": "the log itself", "calls": len(usages), "prompt_tokens": prompt,
                    "per_call": prompt / len(usages),
                    "cache_read_share": None if None in reads else sum(reads) / prompt,
                    "cost": sum(costs) if None not in costs else run.cost_usd, "ms_per_call": None, "stopped": None})
    for r in replays:
        out.append({"strategy": r.strategy, "calls": len(r.calls), "prompt_tokens": r.prompt_tokens,
                    "per_call": r.prompt_tokens / max(1, len(r.calls)), "cache_read_share": r.cache_read_share,
                    "cost": r.cost, "ms_per_call": 1000 * r.seconds / max(1, len(r.calls)), "stopped": r.stopped})
    return out


DEPARTURE = 0.20  # a call whose replayed cache-read share is this far from the logged one is marked


def per_call(run: RecordedRun, replayed: Replay) -> list[dict]:
    """Logged vs replayed cache reads, call by call. A call that departs from the log shows where
    the log saw something the replay cannot: a changed system prompt or tool list, a reconnect,
    a cache entry another process wrote or evicted."""
    out = []
    for k, (call, ours) in enumerate(zip(run.calls, replayed.calls), start=1):
        logged = call.usage.cache_read_share if call.usage else None
        share = ours.cache_read_input_tokens / max(1, ours.prompt_tokens)
        out.append({"call": k, "logged_read": call.usage.cache_read if call.usage else None,
                    "replayed_read": ours.cache_read_input_tokens, "logged_share": logged, "replayed_share": share,
                    "departs": logged is not None and abs(share - logged) > DEPARTURE})
    return out


def table(run: RecordedRun, replays: list[Replay]) -> str:
    model = replays[0].model if replays else run.model
    lines = [f"{run.path}  ({run.source}, {len(run.calls)} calls, {run.compactions} compactions; "
             f"logged model {run.model}, replay priced as {model}; replayed tokens "
             f"{'calibrated to the log' if any(r.calibrated for r in replays) else 'are estimates'})",
             f"{'strategy':<20} {'calls':>5} {'prompt tokens':>14} {'per call':>9} {'cache read':>10} {'cost $':>9} {'ms/call':>8}"]
    for row in rows(run, replays):
        share = "n/a" if row["cache_read_share"] is None else f"{row['cache_read_share']:.1%}"
        cost = "n/a" if row["cost"] is None else f"{row['cost']:.3f}"
        ms = "" if row["ms_per_call"] is None else f"{row['ms_per_call']:.1f}"
        lines.append(f"{row['strategy']:<20} {row['calls']:>5} {row['prompt_tokens']:>14,} {row['per_call']:>9,.0f} "
                     f"{share:>10} {cost:>9} {ms:>8}" + (f"  {row['stopped']}" if row["stopped"] else ""))
    lines += [f"  {r.strategy}: {STRATEGIES[r.strategy].about}" for r in replays if r.strategy in STRATEGIES]
    notes = list(dict.fromkeys([*run.notes, *(n for r in replays for n in r.notes)]))
    lines += [f"  note: {n}" for n in notes]
    for r in (r for r in replays if r.strategy == "recorded"):
        departures = [d for d in per_call(run, r) if d["departs"]]
        if departures:
            shown = ", ".join(f"{d['call']} ({d['logged_share']:.0%} logged, {d['replayed_share']:.0%} replayed)"
                              for d in departures[:6])
            lines.append(f"  recorded departs from the log on {len(departures)} call(s): {shown}"
                         f"{', ...' if len(departures) > 6 else ''}")
    return "\n".join(lines)


def plot(run: RecordedRun, replays: list[Replay], path: str | Path | None = None):
    """Prompt tokens and cache-read share per call; saved to ``path`` if given. Returns the figure."""
    import matplotlib
    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    usages = [c.usage for c in run.calls]
    if any(usages):
        left.plot([u.prompt_tokens if u else None for u in usages], color="black", linewidth=1, label="the log itself")
        shares = [u.cache_read_share if u else None for u in usages]
        if any(s is not None for s in shares):
            right.plot(shares, color="black", linewidth=1, label="the log itself")
    for r in replays:
        left.plot([c.prompt_tokens for c in r.calls], label=r.strategy, linewidth=1)
        right.plot([c.cache_read_share for c in r.calls], label=r.strategy, linewidth=1)
        if r.strategy == "recorded":
            departs = [d for d in per_call(run, r) if d["departs"]]
            if departs:
                right.scatter([d["call"] - 1 for d in departs], [d["replayed_share"] for d in departs], marker="x",
                              color="red", zorder=3, label="recorded departs from the log")
    left.set_xlabel("call"); left.set_ylabel("prompt tokens"); left.set_title("Prompt per call"); left.legend(fontsize=8)
    right.set_xlabel("call"); right.set_ylabel("cache-read share"); right.set_title("Cache reads per call"); right.legend(fontsize=8)
    fig.suptitle(f"{Path(run.path).name}: recorded vs replayed (emulator accounting)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
