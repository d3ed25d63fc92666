"""The loop's per-call time on the client side, by layout, next to pydantic-ai's, as a run grows.

A server that answers at once (an httpx transport in the process, the same for both loops) makes
the figure the client's own work: the loop (ours, or pydantic-ai 2.68's) and the ``anthropic`` SDK
(the same version on both sides) building, encoding and sending the request and reading the answer.
A task is one tool call after another (each tool returns about 500 characters; a model of the 5.x
generation answers with a thinking block first). Times are the process's CPU time, so the machine's
other work does not count; the figure at turn N is the median of the 61 calls around it. On a busy
machine CPU time still varies by a fifth from run to run; the Python function calls a step makes at
the last turn (``calls/step``) do not, so two trees' work can be compared exactly.

Ours runs every layout its model can take: ``tail_layout`` (2025) on Sonnet 4.6, ``turn_scoped_layout``
(2026) and ``threaded_layout`` (the third generation: on a message thread, a call sends only what is
new) on Sonnet 5.5 and Haiku 5.5, with a one-line progress note on every call (the batch). The
server answers a continue as readily as a create: this measures the client, not the thread. One
agent per turn measured is run up to it, then the agents make their next calls in turn, one each,
so what slows the machine slows them alike. pydantic-ai runs one task through (a call's time is from
its request's arrival to the next one's; it asks for a stream, the server sends the same answer as
events) in the interop venv (``tests/interop/requirements.txt``,
installed into ``.interop/venv`` as ``make interop`` does: never into the project's own
dependencies); when PyPI cannot be reached its column is skipped, in one line. Ratios come from this
one run; absolute times depend on the machine.

Targets (issue 38), on the threaded layout on Sonnet 5.5 and Haiku 5.5: turn 1000 <= 1.3x turn
100, and <= 0.1x pydantic-ai's time at turn 1000.

Our agents run in a process of their own for each layout. With ``--compare REF`` our loop at git
ref REF is measured in the same run (its ``minimal_runtime`` checked out into a temporary folder),
the trees taking turns ``--repeat`` times (first in one round, last in the next), the least median of each
kept, both set against the one pydantic-ai run of each model. ``--models`` takes some of the models.

    python benchmarks/loop_speed.py [TURNS] [--models M ...] [--compare REF] [--repeat N]   # TURNS: 1000
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import httpx2
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
CODE = os.environ.get("LOOP_SPEED_CODE", str(ROOT))  # whose minimal_runtime is measured (--compare: REF's)
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "interop"))
sys.path.insert(0, CODE)
from install import CACHE, Unreachable, _python_env  # noqa: E402  (the interop suite's installer: pins, cache, probe)
from loop_speed_pydantic_ai import PAGE, SYSTEM, respond  # noqa: E402  (the one definition of both sides' server)
from minimal_runtime.core.agent import Agent  # noqa: E402
from minimal_runtime.core.context import tail_layout, threaded_layout, turn_scoped_layout  # noqa: E402
from minimal_runtime.core.hooks import HookRegistry, Point  # noqa: E402
from minimal_runtime.core.tools import FunctionTool  # noqa: E402

AT = (100, 300, 1000)
WINDOW = 30  # calls each side of the turn measured
COUNTED = 5  # steps after them whose Python function calls are counted
RUNS = {  # model -> our layouts
    "claude-sonnet-4-6": (tail_layout,),
    "claude-sonnet-5-5": (turn_scoped_layout, threaded_layout),
    "claude-haiku-5-5": (turn_scoped_layout, threaded_layout),
}


class Url(BaseModel):
    url: str


def instant_client(model: str, turns: int) -> anthropic.Anthropic:
    answered = [0]

    def handler(request: httpx2.Request) -> httpx2.Response:
        answered[0] += 1
        return respond(request.read(), answered[0] - 1, turns, model)
    return anthropic.Anthropic(api_key="x", base_url="http://instant.invalid",
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def ours(model: str, layout, at: list[int], turns: int) -> tuple[dict[int, list[float]], float]:
    """Our loop's calls around each turn of ``at``: one agent per turn, run to just before it, then
    their next calls made in turn (one of each, over and over), so the machine's other work falls
    on all of them alike. A call is one step of the loop: its hooks, the layout, the SDK's request
    and the answer's parsing, the tool, the store. With the times, the Python function calls a step
    makes at the last turn (``COUNTED`` more steps, counted by cProfile): the same on any machine, however busy."""
    agents = {}
    for turn in at:
        hooks = HookRegistry()
        hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("progress", f"I have made {len(e.agent.calls)} calls."))
        agent = Agent(instant_client(model, turns + COUNTED), model=model, system=SYSTEM, hooks=hooks, layout=layout,
                      max_steps=turn - 1 - WINDOW, tools=[FunctionTool("fetch", "Fetch a page.", Url, lambda a: PAGE)])
        assert agent.run("Read the pages.").status == "max_steps"
        if layout is threaded_layout:  # what is measured is a continue: only the new messages sent
            assert agent.store.load().threads[-1]["type"] == "continue"
        agents[turn] = agent
    times: dict[int, list[float]] = {turn: [] for turn in at}
    for _ in range(2 * WINDOW + 1):
        for turn, agent in agents.items():
            start = time.process_time()
            assert agent._step() is None  # a tool call: the run goes on
            times[turn].append(time.process_time() - start)
    counter = cProfile.Profile()
    with counter:
        for _ in range(COUNTED):
            assert agents[at[-1]]._step() is None
    return times, pstats.Stats(counter).total_calls / COUNTED


def pydantic_ai(model: str, turns: int) -> tuple[list[float] | None, str]:
    """pydantic-ai's arrivals, run by the interop venv's interpreter; None and why when it cannot run."""
    try:
        _python_env(CACHE / "venv")
    except Unreachable as e:
        return None, f"pydantic-ai skipped: {e}"
    out = subprocess.run([str(CACHE / "venv" / "bin" / "python"), str(ROOT / "benchmarks" / "loop_speed_pydantic_ai.py"),
                          model, str(turns)], capture_output=True, text=True, check=True)
    run = json.loads(out.stdout)
    return run["arrivals"], f"pydantic-ai {run['pydantic_ai']} on anthropic {run['anthropic']}"


def around(arrivals: list[float], turn: int) -> list[float]:
    """The calls around ``turn`` of one run: from a request's arrival to the next one's."""
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]  # gaps[k]: call k + 1, from its request to the next
    return gaps[max(0, turn - 1 - WINDOW):turn + WINDOW]


def ours_apart(code: Path, model: str, layout: str, at: list[int], turns: int) -> tuple[dict[int, float], float]:
    """``ours`` run by the code in ``code``, in a process of its own: the median per turn, and the calls a step makes."""
    out = subprocess.run([sys.executable, __file__, "--ours", model, layout, json.dumps(at), str(turns)],
                         env={**os.environ, "LOOP_SPEED_CODE": str(code)}, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"measuring {code} failed:\n{out.stderr[-2000:]}")
    medians, calls = json.loads(out.stdout.splitlines()[-1])
    return {int(t): v for t, v in medians.items()}, calls


def checkout(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "minimal_runtime"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main(turns: int = 1000, models: list[str] | None = None, compare: str | None = None, repeat: int = 1) -> None:
    at = [t for t in AT if t < turns] + [turns]
    length = turns + WINDOW + 1  # tool calls in a run: the last turn measured has its window after it
    print(f"client-side time per call, ms (median of the {2 * WINDOW + 1} calls around each turn); "
          f"anthropic {anthropic.__version__}; {length} tool calls per run")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT} if compare is None else {compare: checkout(compare, Path(tmp)), "this tree": ROOT}
        rows, theirs, said, calls_per_step = [], {}, set(), {}
        for model in models or RUNS:
            arrivals, note = pydantic_ai(model, length)
            said.add(note)
            if arrivals is not None:
                theirs[model] = {t: statistics.median(around(arrivals, t)) for t in at}
                rows.append((model, "pydantic-ai", theirs[model]))
            for layout in RUNS[model]:
                best: dict[str, dict[int, float]] = {}
                counted: dict[str, float] = {}
                for round_ in range(repeat):  # the trees take turns: first in one round, last in the next
                    for label, code in (list(trees.items()) if round_ % 2 == 0 else list(trees.items())[::-1]):
                        times, counted[label] = ours_apart(code, model, layout.__name__, at, length)
                        best[label] = {t: min(times[t], best.get(label, times)[t]) for t in at}
                for label in trees:
                    name = layout.__name__ if compare is None else f"{layout.__name__} ({label})"
                    rows.append((model, name, best[label]))
                    calls_per_step[(model, name)] = counted[label]
    print("; ".join(sorted(said)) + (f"; each of ours the least of {repeat} runs" if repeat > 1 else ""))
    print(f"{'model':<19} {'loop':<34}" + "".join(f"{f'turn {t}':>11}" for t in at)
          + f" {f'{at[-1]}/{at[0]}':>9} {'x pydantic-ai':>14} {f'calls/step at {at[-1]}':>20}")
    for model, loop, times in rows:
        vs = f"{times[at[-1]] / theirs[model][at[-1]]:.3f}x" if model in theirs and loop != "pydantic-ai" else "-"
        counted = f"{calls_per_step[(model, loop)]:,.0f}" if (model, loop) in calls_per_step else "-"
        print(f"{model:<19} {loop:<34}" + "".join(f"{times[t] * 1000:>11.2f}" for t in at)
              + f" {times[at[-1]] / times[at[0]]:>8.2f}x {vs:>14} {counted:>20}")
    for model, loop, times in rows:
        if not loop.startswith("threaded_layout"):
            continue
        growth = times[at[-1]] / times[at[0]]
        verdict = f"turn {at[-1]} / turn {at[0]} {growth:.2f}x ({'meets' if growth <= 1.3 else 'MISSES'} 1.3x)"
        if model in theirs:
            share = times[at[-1]] / theirs[model][at[-1]]
            verdict += f"; {share:.3f}x pydantic-ai's ({'meets' if share <= 0.1 else 'MISSES'} 0.1x)"
        print(f"{loop} on {model}: {verdict}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ours"]:  # one tree's agents, in a process of their own (ours_apart)
        model, name, at, length = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
        layout = next(f for f in RUNS[model] if f.__name__ == name)
        all_times, calls = ours(model, layout, at, length)
        print(json.dumps([{t: statistics.median(v) for t, v in all_times.items()}, calls]))
        raise SystemExit
    parser = argparse.ArgumentParser()
    parser.add_argument("turns", nargs="?", type=int, default=1000)
    parser.add_argument("--models", nargs="+", choices=list(RUNS), default=None)
    parser.add_argument("--compare", default=None, metavar="REF", help="also measure our loop at this git ref")
    parser.add_argument("--repeat", type=int, default=1, help="measure our loop this many times, trees in turn")
    args = parser.parse_args()
    main(args.turns, args.models, args.compare, args.repeat)
