"""The planner/executor rules, each stated by a test (issue 27: the delegation module scored by
mutation): one objective per delegation into an existing phase, a plan snapshot bound at spawn
time, the task block's parts, and a phase marked done only by a report that says done."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.core.agent import RunResult
from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point
from minimal_runtime.features.delegation import (MY_PHASE, SCOPE_LINE, TASK_LINE, DelegateInput, ExecutorReport,
                                                 ExecutorTask, TaskHook, delegate_tool, read_report,
                                                 render_task_block, report_tool)
from minimal_runtime.features.plan import Phase, Plan, PlanState


def plan(*statuses):
    return Plan(goal="compare prices", phases=[Phase(title=f"step {i + 1}", status=s) for i, s in enumerate(statuses)])


class Executor:
    def __init__(self, result: RunResult, state: PlanState | None = None):
        self.result, self.state, self.asked, self.status_seen = result, state, [], None

    def run(self, task=None):
        self.asked.append(task)
        if self.state is not None:  # what the plan says while the executor works
            self.status_seen = self.state.plan.phases[self.spawned.phase - 1].status
        return self.result


def delegation(state, result, **settings):
    spawned = []

    def spawn(task):
        executor = Executor(result, state)
        executor.spawned = task
        spawned.append(executor)
        return executor
    return delegate_tool(state, spawn, **settings), spawned


DONE = RunResult(status="done", final_text=json.dumps({"status": "done", "did": "all of it"}))


def test_delegating_before_a_plan_exists_is_an_error_and_spawns_nothing():
    tool, spawned = delegation(PlanState(), DONE)
    out = tool.run({"objective": "x", "phase": 1})
    assert out.is_error and out.content == "delegate failed: ValueError: write the plan before delegating" and spawned == []


@pytest.mark.parametrize("phase", [0, 3, -1])
def test_a_phase_outside_the_plan_is_an_error_and_spawns_nothing(phase):
    state = PlanState(plan("pending", "pending"))
    tool, spawned = delegation(state, DONE)
    out = tool.run({"objective": "x", "phase": phase})
    assert out.is_error and f"phase {phase} does not exist" in out.content and spawned == []
    assert [p.status for p in state.plan.phases] == ["pending", "pending"]


def test_the_first_and_the_last_phase_can_be_delegated():
    state = PlanState(plan("pending", "pending"))
    tool, spawned = delegation(state, DONE)
    assert not tool.run({"objective": "a", "phase": 1}).is_error
    assert not tool.run({"objective": "b", "phase": 2}).is_error
    assert [e.spawned.phase for e in spawned] == [1, 2]


def test_an_empty_objective_is_refused():
    tool, spawned = delegation(PlanState(plan("pending")), DONE)
    assert tool.run({"objective": "", "phase": 1}).is_error and spawned == []
    with pytest.raises(ValueError):
        DelegateInput(objective="", phase=1)


def test_the_phase_is_in_progress_while_the_executor_works_and_done_after_a_done_report():
    state = PlanState(plan("pending", "pending"))
    tool, spawned = delegation(state, DONE)
    out = tool.run({"objective": "fetch the pages", "phase": 2})
    assert spawned[0].status_seen == "in_progress"
    assert [p.status for p in state.plan.phases] == ["pending", "done"]
    assert json.loads(out.content) == {"status": "done", "did": "all of it", "remains": ""}
    assert spawned[0].asked == ["fetch the pages"]  # the executor runs on the objective itself


def test_a_partial_report_leaves_the_phase_in_progress():
    state = PlanState(plan("pending"))
    partial = RunResult(status="done", final_text=json.dumps({"status": "partial", "did": "half", "remains": "rest"}))
    tool, _ = delegation(state, partial)
    assert json.loads(tool.run({"objective": "o", "phase": 1}).content)["remains"] == "rest"
    assert state.plan.phases[0].status == "in_progress"


def test_a_run_that_stops_without_a_report_is_partial_and_names_how_it_stopped():
    state = PlanState(plan("pending"))
    tool, _ = delegation(state, RunResult(status="max_steps", final_text=DONE.final_text))
    report = json.loads(tool.run({"objective": "the objective", "phase": 1}).content)
    assert report == {"status": "partial", "did": "stopped (max_steps) without a report", "remains": "the objective"}
    assert state.plan.phases[0].status == "in_progress"


def test_read_report_parses_a_done_run_and_refuses_anything_else():
    assert read_report("done", '{"status": "done", "did": "x", "remains": "y"}', "o") == \
        ExecutorReport(status="done", did="x", remains="y")
    for status, text in [("done", "not json"), ("done", '{"status": "finished", "did": "x"}'), ("error", "")]:
        assert read_report(status, text, "o") == ExecutorReport(
            status="partial", did=f"stopped ({status}) without a report", remains="o")


def test_the_executor_gets_a_snapshot_of_the_plan_taken_at_spawn_time():
    state = PlanState(plan("pending", "pending"))
    tool, spawned = delegation(state, DONE)
    tool.run({"objective": "o", "phase": 1})
    task = spawned[0].spawned
    assert task.plan is not state.plan
    assert [p.status for p in task.plan.phases] == ["in_progress", "pending"]  # as it was when spawned
    state.plan.phases[1].title = "renamed later"
    assert task.plan.phases[1].title == "step 2"
    assert task.objective == "o" and task.scope_line is True


def test_the_scope_line_setting_reaches_the_task():
    tool, spawned = delegation(PlanState(plan("pending")), DONE, scope_line=False)
    tool.run({"objective": "o", "phase": 1})
    assert spawned[0].spawned.scope_line is False
    assert ExecutorTask(objective="o", phase=1, plan=plan("pending")).scope_line is True


def test_the_task_block_carries_the_task_its_reason_its_place_and_the_scope():
    task = ExecutorTask(objective="read page 2", phase=2, plan=plan("done", "in_progress", "pending"))
    assert render_task_block(task).split("\n") == [
        f"{TASK_LINE}read page 2", "",
        "Why this task matters: it contributes to the overall goal: compare prices",
        "This task is part of phase 2 of 3: step 2.", "",
        "Where the phase sits in the larger plan:",
        "- phase 1 -- step 1 (done)",
        f"- phase 2 -- step 2 (in progress)  <- {MY_PHASE}",
        "- phase 3 -- step 3 (pending)", "",
        f"{SCOPE_LINE}the task above, nothing more. The other phases belong to the planner, which knows what else "
        "is in flight, even where something there looks doable. Staying inside phase 2 keeps the plan coherent.", "",
        "The run ends with a call to report: status done or partial, what was done, and what remains (also when the "
        "task cannot go further)."]


def test_without_the_scope_line_the_block_has_no_scope():
    task = ExecutorTask(objective="o", phase=1, plan=plan("pending"), scope_line=False)
    block = render_task_block(task)
    assert SCOPE_LINE not in block and block.endswith("(also when the task cannot go further).")


class Agent:
    def __init__(self):
        self.injected = []

    def inject_turn_scoped(self, source, text):
        self.injected.append((source, text))


def test_the_task_hook_recites_the_block_on_every_call():
    task = ExecutorTask(objective="o", phase=1, plan=plan("pending"))
    agent, hooks = Agent(), HookRegistry().install(TaskHook(task, render=lambda t: f"block for {t.objective}"))
    for _ in range(2):
        hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert agent.injected == [("task", "block for o")] * 2
    default = Agent()
    HookRegistry().install(TaskHook(task)).run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, default))
    assert default.injected == [("task", render_task_block(task))]


def test_the_report_tool_is_final_and_returns_the_report_as_json():
    tool = report_tool()
    assert tool.name == "report" and tool.final
    out = tool.run({"status": "partial", "did": "d"})
    assert not out.is_error and json.loads(out.content) == {"status": "partial", "did": "d", "remains": ""}
    assert tool.run({"status": "maybe", "did": "d"}).is_error


def test_the_tools_tell_the_planner_the_executor_starts_empty_and_the_executor_how_to_finish():
    delegate = delegate_tool(PlanState(), lambda task: None).definition()
    assert "it starts with no context: write the objective in full" in delegate["description"]
    assert "report status (done or partial), what you did and what remains" in report_tool().definition()["description"]
