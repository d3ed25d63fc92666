"""Max-steps warning, partial-never-done, workspace counters, compaction in the store."""

from __future__ import annotations

import tempfile
from pathlib import Path

from minimal_runtime.core.agent import Agent
from minimal_runtime.features.budget import MaxStepsWarning
from minimal_runtime.features.delegation import read_report, report_tool
from minimal_runtime.emulator import Emulator
from minimal_runtime.example import SteppingClock, Workspace, pricing_tools
from minimal_runtime.example.executors import FilesystemExecutor, PagesExecutor, pages_objective
from minimal_runtime.features.filesystem import NAIVE_RULES, REFINED_RULES, FilesystemRules, WorkspaceCounters
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import user
from minimal_runtime.core.store import RunStore, load_run
from tests.support import long_agent


def executor(tmp_path, policy, cap, *features, store=None):
    emu = Emulator(policy=policy, clock=SteppingClock())
    hooks = HookRegistry().install(*features)
    tools = [*(t for t in pricing_tools(Workspace(tmp_path / "ws"), []) if t.name != "message_user"), report_tool()]
    return Agent(emu.client(), model=emu.model, system="You are an executor.", tools=tools, hooks=hooks,
                 max_steps=cap, store=store, name="executor")


def carried(agent, source):
    return [i + 1 for i, r in enumerate(agent.requests) if f"<!-- {source} -->" in str(r["messages"][-1])]


def track(agent):
    agent.requests = []
    agent.hooks.register(Point.POST_LLM_CALL, lambda e: agent.requests.append(e.request))
    return agent


def test_max_steps_warning_fires_once_at_cap_minus_three_and_gets_a_partial_report(tmp_path):
    warning = MaxStepsWarning()
    agent = track(executor(tmp_path, PagesExecutor(), 8, warning))
    result = agent.run(pages_objective(0, 19, "notes/a.md"))  # 20 pages: far more than 8 calls
    assert carried(agent, "steps") == [6]  # 5 calls made = cap - 3: the 6th call carries it, only it
    report = read_report(result.status, result.final_text, "x")
    assert report.status == "partial" and report.remains == pages_objective(5, 19, "notes/a.md")


def test_a_capped_run_without_a_report_is_partial_never_done(tmp_path):
    agent = executor(tmp_path, PagesExecutor(), 8)  # no warning: it simply runs out
    result = agent.run(pages_objective(0, 19, "notes/a.md"))
    assert result.status == "max_steps"
    report = read_report(result.status, result.final_text, "the objective")
    assert report.status == "partial" and report.remains == "the objective"


def test_an_executor_that_finishes_in_time_reports_done_and_never_sees_the_warning(tmp_path):
    agent = track(executor(tmp_path, PagesExecutor(), 12, MaxStepsWarning()))
    result = agent.run(pages_objective(0, 2, "notes/a.md"))
    assert read_report(result.status, result.final_text, "x").status == "done"
    assert carried(agent, "steps") == []


def test_counters_show_the_naive_reminders_duplicates_and_rereads(tmp_path):
    figures = {}
    for name, rules in (("naive", NAIVE_RULES), ("refined", REFINED_RULES)):
        counters, store = WorkspaceCounters(), RunStore(tmp_path / name / "run")
        agent = executor(tmp_path / name, FilesystemExecutor(seed=1), 60,
                         FilesystemRules(rules), counters, store=store)
        agent.run(pages_objective(0, 9, "notes/x.md"))
        figures[name] = counters.as_dict()
        assert store.load().state["counters"] == counters.as_dict()  # in the run record
    assert figures["refined"] == {"files_written": 10, "duplicate_writes": 0, "reflexive_rereads": 0}
    assert figures["naive"]["duplicate_writes"] > 0 and figures["naive"]["reflexive_rereads"] > 0


def test_compaction_is_recorded_and_survives_reloading(tmp_path):
    store = RunStore(tmp_path / "run")
    agent, _ = long_agent(tmp_path, 10, store=store)
    agent.run("Read the pages.")
    kept = [user("Read the pages. [earlier turns were compacted]"), *agent.messages[-3:]]
    agent.replace_history(kept)
    assert agent.messages == kept
    saved = load_run(tmp_path / "run")
    assert saved.messages == kept and saved.compactions == 1


def test_a_seeded_long_run_draws_its_page_lengths_from_the_seed_and_an_unseeded_one_does_not():
    """Chapter 05's seeds: the reader's pages vary in length (half to one and a half times
    ``page_chars``), the same seed gives the same run and another seed another one."""
    import re

    from minimal_runtime.example.policy import LongRunPolicy

    def lengths(seed):
        emu = Emulator(policy=LongRunPolicy(12, 4000, 5, seed=seed), clock=SteppingClock())
        agent = Agent(emu.client(), model=emu.model, tools=pricing_tools(Workspace(Path(tempfile.mkdtemp()) / "ws"), []))
        agent.run("Read the reference manual.")
        return [int(re.search(r"chars=(\d+)", c["input"]["url"]).group(1))
                for m in agent.messages if m["role"] == "assistant" for c in m["content"]
                if c.get("type") == "tool_use" and c["name"] == "fetch"]

    assert set(lengths(None)) == {4000}
    seeded = lengths(1)
    assert len(set(seeded)) > 1 and all(2000 <= n <= 6000 for n in seeded)
    assert lengths(1) == seeded and lengths(2) != seeded
