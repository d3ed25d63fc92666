"""``make experiment CHAPTER=NN``: a chapter's deciding experiment on a real model, beside the
simulated one.

Every behavioural figure of the course comes from a SIMULATED policy. This runs the same harness
with a model answering instead, so a learner can check a verdict:

1. It runs the experiment offline first (the simulated policy, the emulator's accounting) and prints
   what those calls cost at the model's list prices: the estimate. A real model may take more or
   fewer calls; the cap, not the estimate, bounds what is spent.
2. Without ``ANTHROPIC_API_KEY`` it stops there, having spent nothing.
3. With a key it refuses an estimate over ``--cap``, then runs each setting on the API, each run
   stopped by the runtime's own ``max_cost_usd`` at what is left of the cap, and writes the figures,
   the simulated ones beside them, to ``workbook/experiments/NN.json``. The chapter's last cell
   shows that file when it is there.

``ANTHROPIC_BASE_URL`` points it at any server that speaks the Messages API (the tests use ``serve``).
"""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Callable

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
WORKBOOK = ROOT / "workbook" / "experiments"


class RunFigures(BaseModel):
    """One setting's run, as the chapter's table counts it."""

    status: str
    calls: int
    adherence: float | None
    prompt_tokens: int
    cost: float


class Experiment(BaseModel):
    """A chapter's deciding experiment: its settings, and what decides its verdict."""

    chapter: str
    title: str
    verdict: str  # what the simulated run says, in one sentence, and the rule of the reader that decides it
    settings: tuple[str, ...]
    options: dict


EXPERIMENTS = {
    "08": Experiment(
        chapter="08", title="drift: the goal at the tail, recited on every call or on events, or not at all",
        verdict=("simulated: with nothing at the tail the reader drifts, because it is built to drift more the "
                 "further the goal's words are from the tail; the plan hook holds 100%"),
        settings=("none", "plan hook", "event recitation"), options={"pages": 12, "per_phase": 4}),
}


def run_chapter_08(setting: str, *, online: bool, **limits) -> RunFigures:
    from .drift import drift_run
    r = drift_run(setting, online=online, **EXPERIMENTS["08"].options, **limits)
    agent = r["agent"]
    return RunFigures(status=r["result"].status, calls=len(agent.calls), adherence=r["meter"].adherence(),
                      prompt_tokens=sum(c.prompt_tokens for c in agent.calls), cost=agent.bill().total)


RUNNERS: dict[str, Callable[..., RunFigures]] = {"08": run_chapter_08}


def result_path(chapter: str) -> Path:
    return WORKBOOK / f"{chapter}.json"


def main(chapter: str, cap: float, out=print) -> int:
    """The experiment of ``chapter`` (see the module's docstring). Returns the exit status."""
    chapter = chapter.zfill(2)
    if chapter not in EXPERIMENTS:
        out(f"no real-model experiment for chapter {chapter} yet; there is one for: {', '.join(EXPERIMENTS)}")
        return 2
    experiment, run = EXPERIMENTS[chapter], RUNNERS[chapter]
    out(f"chapter {experiment.chapter}: {experiment.title}")
    simulated = {s: run(s, online=False) for s in experiment.settings}
    estimate = sum(f.cost for f in simulated.values())
    out(f"the simulated run: {sum(f.calls for f in simulated.values())} calls, ${estimate:.4f} at the model's list "
        f"prices: the estimate (a real model may take more or fewer calls)")
    if not os.environ.get("ANTHROPIC_API_KEY"):
        out(f"no ANTHROPIC_API_KEY: nothing was sent. With a key, `make experiment CHAPTER={chapter} CAP=<dollars>` "
            f"runs it for about ${estimate:.2f}, never past the cap")
        return 0
    if estimate > cap:
        out(f"the estimate ${estimate:.4f} is over the cap ${cap:g}: nothing was sent (raise CAP to run it)")
        return 2
    real, spent = {}, 0.0
    for setting in experiment.settings:
        figures = run(setting, online=True, max_cost_usd=cap - spent)
        real[setting], spent = figures, spent + figures.cost
        out(f"  {setting:<17} {figures.status:<9} {figures.calls:>3} calls  adherence "
            f"{'n/a' if figures.adherence is None else f'{figures.adherence:.1%}'}  ${figures.cost:.4f}")
        if figures.status == "max_cost":
            out(f"the cap ${cap:g} is reached: the settings after {setting!r} were not run")
            break
    path = result_path(chapter)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "chapter": chapter, "date": date.today().isoformat(), "server": os.environ.get("ANTHROPIC_BASE_URL", "api"),
        "verdict": experiment.verdict, "cap": cap, "spent": spent,
        "real": {s: f.model_dump() for s, f in real.items()},
        "simulated": {s: f.model_dump() for s, f in simulated.items()}}, indent=1) + "\n")
    out(f"spent ${spent:.4f} of the cap ${cap:g}; the figures are in {path}, which the chapter's last cell shows")
    return 0


def shown(chapter: str) -> str:
    """The chapter's last cell: the real run beside the simulated one, or how to make it."""
    path = result_path(chapter)
    if not path.is_file():
        return (f"no real run yet (no workbook/experiments/{chapter}.json): `make experiment CHAPTER={chapter}`\n"
                "says what it would cost, and with ANTHROPIC_API_KEY and CAP=<dollars> runs it")
    data = json.loads(path.read_text())
    lines = [f"real run of {data['date']} ({data['server']}), spent ${data['spent']:.4f}",
             f"{'setting':<17} {'adherence real':>14} {'simulated':>10} {'calls real':>10} {'simulated':>10}"]
    for setting, sim in data["simulated"].items():
        real = data["real"].get(setting)
        pct = lambda v: "n/a" if v is None else f"{v:.1%}"  # noqa: E731
        lines.append(f"{setting:<17} {pct(real['adherence']) if real else 'not run':>14} {pct(sim['adherence']):>10} "
                     f"{real['calls'] if real else '':>10} {sim['calls']:>10}")
    return "\n".join(lines)
