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
   shows that file when it is there. The limit is the working agent's: a knowledge manager's calls
   (chapter 07) and a planner's calls after its last executor (chapter 04) can pass what was left of
   the cap by their own cost; no setting starts once the cap is spent.

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
    """One setting's run, as the chapter's table counts it: what every run has, and the chapter's own
    figures (None where the run gave nothing to count, e.g. no compaction happened)."""

    status: str
    calls: int
    prompt_tokens: int
    cost: float
    figures: dict[str, float | int | None]

    def shown(self, name: str) -> float | int | None:
        return self.figures[name] if name in self.figures else getattr(self, name)


def measured(result: dict, **figures) -> RunFigures:
    """The figures of a harness's run: ``result["result"]``, and its ``agent`` or ``agents`` (a team's)."""
    agents = result.get("agents") or [result["agent"]]
    calls = [c for agent in agents for c in agent.calls]
    return RunFigures(status=result["result"].status, calls=len(calls), cost=sum(a.bill().total for a in agents),
                      prompt_tokens=sum(c.prompt_tokens for c in calls), figures=figures)


class Experiment(BaseModel):
    """A chapter's deciding experiment: its settings, and what decides its verdict."""

    chapter: str
    title: str
    verdict: str  # what the simulated run says, in one sentence, and the rule of the reader that decides it
    settings: tuple[str, ...]
    options: dict  # the harness's keyword arguments: the sizes of the run (the tests make them small)
    shows: dict[str, str]  # the figures the table shows (a chapter's own, or calls, cost), each with its format


EXPERIMENTS = {
    "07": Experiment(
        chapter="07", title="the knowledge manager on and off, beside a long run of page reading",
        verdict=("simulated: with the KM the reader's longest stretch of pages without a note is shorter, because it "
                 "is built to write its note at once when a nudge says pages read are not in one"),
        settings=("without the KM", "with the KM"), options={"turns": 40},
        shows={"longest unsaved": "{}", "pages read": "{}", "cost": "${:.4f}"}),
    "08": Experiment(
        chapter="08", title="drift: the goal at the tail, recited on every call or on events, or not at all",
        verdict=("simulated: with nothing at the tail the reader drifts, because it is built to drift more the "
                 "further the goal's words are from the tail; the plan hook holds 100%"),
        settings=("none", "plan hook", "event recitation"), options={"pages": 12, "per_phase": 4},
        shows={"adherence": "{:.1%}", "calls": "{}"}),
    "04": Experiment(
        chapter="04", title="keeping the plan current: the plan hook agent, or planner + executors, on a short task",
        verdict=("simulated: the plan hook agent spends a third of its actions on its plan and the team one, because "
                 "the single agent is built to mark each phase done with the plan tool, and the team's runtime "
                 "moves the plan on each executor's report"),
        settings=("plan hook, one agent", "planner + executors"), options={"phases": 6},
        shows={"plan-keeping actions": "{}", "actions": "{}", "cost": "${:.4f}"}),
    "05": Experiment(
        chapter="05", title="the budget warning at BudgetMonitor's default (80%), or none, before a compaction",
        verdict=("simulated: warned at 80% the reader loses more figures at the compaction than unwarned, because it "
                 "is built to save every 3 pages counted from its last save, so the save a warning prompts moves "
                 "every later one"),
        settings=("without", "with the warning"),
        options={"turns": 20, "page_chars": 16_000, "budget": 50_000, "task_budget": 50_000, "seed": 0},
        shows={"figures lost": "{}", "calls": "{}", "cost": "${:.4f}"}),
    "09": Experiment(
        chapter="09", title="compaction on the long reader: the server's alone, or with a saved copy's path in view",
        verdict=("simulated: the server's compaction alone recalls fewer codes than the two that keep a path to a "
                 "saved copy in view, because the reader is built to report only the codes it sees or reads back "
                 "through a path in view"),
        settings=("server compaction", "simple + handoff", "offload + server compaction"),
        options={"pages": 30, "limit": 50_000},  # one compaction each (the server's trigger is at least 50,000)
        shows={"codes recalled": "{}", "restorable": "{:.0%}", "cost": "${:.4f}"}),
    "11": Experiment(
        chapter="11", title="a long task in sessions: handed over through a progress file, or through the memory tool",
        verdict=("simulated: both hand-overs redo no page and recall every code, because the reader is built to take "
                 "the next page the progress file or its memory names and to read back what a path in view holds"),
        settings=("progress file", "memory tool"), options={"pages": 24, "session_steps": 16},
        shows={"sessions": "{}", "pages fetched twice": "{}", "codes recalled": "{}", "cost": "${:.4f}"}),
}


def run_chapter_07(setting: str, *, online: bool, **limits) -> RunFigures:
    from .knowledge import km_run, longest_unsaved, pages_read
    r = km_run(setting == "with the KM", online=online, **EXPERIMENTS["07"].options, **limits)
    figures = measured(r, **{"longest unsaved": longest_unsaved(r["agent"]), "pages read": pages_read(r["agent"])})
    km_calls = r["km"].calls if r["km"] else []  # the KM's own calls count: its cost is part of the verdict
    return figures.model_copy(update={"calls": figures.calls + len(km_calls),
                                      "cost": figures.cost + sum(c.cost for c in km_calls)})


def run_chapter_08(setting: str, *, online: bool, **limits) -> RunFigures:
    from .drift import drift_run
    r = drift_run(setting, online=online, **EXPERIMENTS["08"].options, **limits)
    return measured(r, adherence=r["meter"].adherence())


def run_chapter_04(setting: str, *, online: bool, **limits) -> RunFigures:
    from .planning import PLAN_KEEPING, actions, reference_items, strategy_run
    phases = EXPERIMENTS["04"].options["phases"]
    goal = f"Summarise reference pages 0 to {phases - 1}, one note per page."
    r = strategy_run(setting, goal, reference_items(phases), online=online, **limits)
    counts = actions(r)
    return measured(r, **{"plan-keeping actions": sum(counts[k] for k in PLAN_KEEPING),
                          "actions": sum(counts.values())})


def run_chapter_05(setting: str, *, online: bool, **limits) -> RunFigures:
    from .budget_warning import survival, warning_run
    r = warning_run(with_warning=setting == "with the warning", online=online, **EXPERIMENTS["05"].options, **limits)
    compacted = "compacted_at" in r["seen"]  # a run that ends before the budget is never compacted: nothing lost
    return measured(r, **{"figures lost": len(survival(r["seen"])[2]) if compacted else None,
                          "warned on call": r["warned"].index(True) + 1 if True in r["warned"] else None})


def run_chapter_09(setting: str, *, online: bool, **limits) -> RunFigures:
    from .compaction import figures, run
    r = run(setting, **EXPERIMENTS["09"].options, online=online, **limits)
    f = figures(r)
    back, dropped = f["restorable"]  # nothing dropped (no compaction happened): no share to show
    return measured(r, **{"codes recalled": f["recalled"], "restorable": back / dropped if dropped else None})


def run_chapter_11(setting: str, *, online: bool, max_cost_usd: float | None = None) -> RunFigures:
    import tempfile

    from .sessions import fetched_pages, recalled, run_in_sessions
    r = run_in_sessions(**EXPERIMENTS["11"].options, workdir=Path(tempfile.mkdtemp(prefix="sessions-")),
                        memory=setting == "memory tool", online=online, max_cost_usd=max_cost_usd)
    sessions = r["sessions"]
    fetched = fetched_pages(sessions)
    figures = measured({"agents": [agent for agent, _, _ in sessions], "result": sessions[-1][1]},
                       **{"sessions": len(sessions), "pages fetched twice": len(fetched) - len(set(fetched)),
                          "codes recalled": recalled(sessions, r["reader"].planted)})
    return figures


RUNNERS: dict[str, Callable[..., RunFigures]] = {"04": run_chapter_04, "05": run_chapter_05, "07": run_chapter_07,
                                                  "08": run_chapter_08, "09": run_chapter_09, "11": run_chapter_11}


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
            f"runs it for about ${estimate:.2f}, stopped at the cap")
        return 0
    if estimate > cap:
        out(f"the estimate ${estimate:.4f} is over the cap ${cap:g}: nothing was sent (raise CAP to run it)")
        return 2
    real, spent = {}, 0.0
    for setting in experiment.settings:
        figures = run(setting, online=True, max_cost_usd=cap - spent)
        real[setting], spent = figures, spent + figures.cost
        out(f"  {setting:<17} {figures.status:<9} " + "  ".join(
            f"{name} {shown_as(fmt, figures.shown(name))}" for name, fmt in experiment.shows.items()))
        # a KM's calls (07) and a team's planner after its last executor (04) are outside the agent's
        # max_cost_usd, so a setting can end past what was left: the next one is not started then
        if figures.status == "max_cost" or spent >= cap:
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


def shown_as(fmt: str, value) -> str:
    return "n/a" if value is None else fmt.format(value)


def shown(chapter: str) -> str:
    """The chapter's last cell: the real run beside the simulated one, or how to make it."""
    path = result_path(chapter)
    if not path.is_file():
        return (f"no real run yet (no workbook/experiments/{chapter}.json): `make experiment CHAPTER={chapter}`\n"
                "says what it would cost, and with ANTHROPIC_API_KEY and CAP=<dollars> runs it")
    data = json.loads(path.read_text())
    shows = EXPERIMENTS[chapter].shows
    width = max(20, *map(len, shows))
    lines = [f"real run of {data['date']} ({data['server']}), spent ${data['spent']:.4f}; each cell: real (simulated)",
             f"{'setting':<17} " + " ".join(f"{name:>{width}}" for name in shows)]
    for setting, sim in data["simulated"].items():
        sim, real = RunFigures(**sim), data["real"].get(setting)
        real = RunFigures(**real) if real else None
        cells = [f"{shown_as(fmt, real.shown(name)) if real else 'not run'} ({shown_as(fmt, sim.shown(name))})"
                 for name, fmt in shows.items()]
        lines.append(f"{setting:<17} " + " ".join(f"{cell:>{width}}" for cell in cells))
    return "\n".join(lines)
