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
                    "cost": sum(costs) if None not in costs else run.cost_usd, "ms_per_call": None})
    for r in replays:
        out.append({"strategy": r.strategy, "calls": len(r.calls), "prompt_tokens": r.prompt_tokens,
                    "per_call": r.prompt_tokens / max(1, len(r.calls)), "cache_read_share": r.cache_read_share,
                    "cost": r.cost, "ms_per_call": 1000 * r.seconds / max(1, len(r.calls))})
    return out


def table(run: RecordedRun, replays: list[Replay]) -> str:
    model = replays[0].model if replays else run.model
    lines = [f"{run.path}  ({run.source}, {len(run.calls)} calls, {run.compactions} compactions; "
             f"logged model {run.model}, replay priced as {model}; replayed tokens are estimates)",
             f"{'strategy':<20} {'calls':>5} {'prompt tokens':>14} {'per call':>9} {'cache read':>10} {'cost $':>9} {'ms/call':>8}"]
    for row in rows(run, replays):
        share = "n/a" if row["cache_read_share"] is None else f"{row['cache_read_share']:.1%}"
        cost = "n/a" if row["cost"] is None else f"{row['cost']:.3f}"
        ms = "" if row["ms_per_call"] is None else f"{row['ms_per_call']:.1f}"
        lines.append(f"{row['strategy']:<20} {row['calls']:>5} {row['prompt_tokens']:>14,} {row['per_call']:>9,.0f} "
                     f"{share:>10} {cost:>9} {ms:>8}")
    lines += [f"  {r.strategy}: {STRATEGIES[r.strategy].about}" for r in replays if r.strategy in STRATEGIES]
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
    left.set_xlabel("call"); left.set_ylabel("prompt tokens"); left.set_title("Prompt per call"); left.legend(fontsize=8)
    right.set_xlabel("call"); right.set_ylabel("cache-read share"); right.set_title("Cache reads per call"); right.legend(fontsize=8)
    fig.suptitle(f"{Path(run.path).name}: recorded vs replayed (emulator accounting)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
