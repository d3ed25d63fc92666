"""Chapter 04: the plan block at every state of a plan, and the executor's task block."""

from __future__ import annotations

import pytest

from minimal_runtime.example import planning_team
from minimal_runtime.example.planning import reference_items


def make_plan(impl, statuses):
    phases = [impl.Phase(title=t, status=s, skills=k) for (t, k), s in zip(
        [("Scope the sources", []), ("Collect pricing data", ["web_research", "spreadsheets"]),
         ("Build the comparison table", []), ("Write up the gaps", ["writing"])], statuses)]
    return impl.Plan(goal="compare four competitors' pricing", phases=phases)


def test_first_phase(impl):
    block = impl.render_plan_block(make_plan(impl, ["pending"] * 4))
    assert "The goal I am working toward: compare four competitors' pricing" in block
    assert "I am on phase 1 of 4: Scope the sources." in block
    assert "Progress so far: 0/4 phases done." in block
    assert "- phase 1 -- Scope the sources (pending)  <- I am here" in block
    assert "Skills that matter" not in block  # phase 1 has none
    assert block.rstrip().endswith(impl.COMMUNICATION_RULES)


def test_middle_phase(impl):
    block = impl.render_plan_block(make_plan(impl, ["done", "in_progress", "pending", "pending"]))
    assert "I am on phase 2 of 4: Collect pricing data." in block
    assert "Progress so far: 1/4 phases done." in block
    lines = block.splitlines()
    assert "- phase 1 -- Scope the sources (done)" in lines
    assert "- phase 2 -- Collect pricing data (in progress)  <- I am here" in lines
    assert "- phase 4 -- Write up the gaps (pending)" in lines
    assert "Skills that matter for this phase: web_research, spreadsheets." in block
    assert block.count("<- I am here") == 1


def test_all_done(impl):
    block = impl.render_plan_block(make_plan(impl, ["done"] * 4))
    assert "Every phase of my plan is done (4/4)" in block
    assert "I am on phase" not in block and "<- I am here" not in block
    assert impl.COMMUNICATION_RULES in block


def test_first_person_and_no_headers(impl):
    block = impl.render_plan_block(make_plan(impl, ["done", "in_progress", "pending", "pending"]))
    assert " I am " in f" {block} " and "You " not in block and "#" not in block


@pytest.mark.parametrize("scope_line", [True, False])
def test_task_block(impl, scope_line):
    plan = make_plan(impl, ["done", "in_progress", "pending", "pending"])
    task = impl.ExecutorTask(objective="fetch the Acme pricing page and save the tiers to acme-pricing.md",
                             phase=2, plan=plan, scope_line=scope_line)
    block = impl.render_task_block(task)
    assert "The task I have been handed: fetch the Acme pricing page and save the tiers to acme-pricing.md" in block
    assert "the overall goal I am contributing to is: compare four competitors' pricing" in block
    assert "This task is part of phase 2 of 4: Collect pricing data." in block
    assert "- phase 2 -- Collect pricing data (in progress)  <- my task belongs to this phase" in block.splitlines()
    assert "- phase 3 -- Build the comparison table (pending)" in block.splitlines()
    assert ("My scope for this run:" in block) is scope_line
    assert "report" in block


def test_a_team_runs_on_the_chapters_renderers(impl, tmp_path):
    team = planning_team(tmp_path, "Summarise the reference manual", reference_items(3), online=False,
                         render_plan=impl.render_plan_block, render_task=impl.render_task_block)
    assert team.planner.run("Summarise pages 0 to 2.").status == "done"
    assert team.plan.plan.done == 3 and len(team.executors) == 3
    assert "<!-- plan -->" in str(team.planner.last_request["messages"][-1])
