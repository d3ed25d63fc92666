"""The plan tool and hooks, planner and executors, START and coordination hooks."""

from __future__ import annotations

import json

from minimal_runtime.features.coordination import Coordination, SharedSandbox
from minimal_runtime.features.delegation import read_report
from minimal_runtime.emulator import ScriptedPolicy, tool_use
from minimal_runtime.example import planning_team
from minimal_runtime.example.planning import reference_items
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import tool_uses
from minimal_runtime.features.plan import MessageDiscipline, PlanHook, PlanState, StartNote, plan_tool
from tests.support import TASK, pricing_agent


def batch_sources(agent) -> list[str]:
    tail = agent.last_request["messages"][-1]["content"]
    return [b["text"][5:b["text"].index(" -->")] for b in tail if b.get("text", "").startswith("<!-- ")]


def planner_hooks(state):
    hooks = HookRegistry().install(StartNote(), MessageDiscipline(state), PlanHook(state))
    seen = []
    hooks.register(Point.POST_LLM_CALL, lambda e: seen.append(batch_sources(e.agent)))
    return hooks, seen


def test_start_fires_once_per_user_message_and_discipline_hands_over_to_the_plan(tmp_path):
    state = PlanState()
    policy = ScriptedPolicy([
        [tool_use("message_user", {"text": "On it."})],
        [tool_use("plan", {"goal": "compare pricing", "phases": [{"title": "collect"}, {"title": "write"}]})],
        [tool_use("plan", {"phase": 1, "status": "done"})],
        "First answer.",
        "Second answer.",
    ])
    hooks, seen = planner_hooks(state)
    agent, _, _ = pricing_agent(tmp_path, policy=policy, hooks=hooks, extra_tools=(plan_tool(state),))
    agent.run(TASK)
    agent.run("A follow-up question.")
    assert seen == [["start", "discipline"], ["discipline"], ["plan"], ["plan"], ["start", "plan"]]


def test_the_plan_hook_reads_the_plan_fresh_every_call(tmp_path):
    state = PlanState()
    policy = ScriptedPolicy([
        [tool_use("plan", {"goal": "g", "phases": [{"title": "one"}, {"title": "two"}]})],
        [tool_use("plan", {"phase": 1, "status": "done"})],
        "done",
    ])
    hooks = HookRegistry()
    hooks.install(PlanHook(state))
    blocks = []
    hooks.register(Point.POST_LLM_CALL, lambda e: blocks.append(str(e.request["messages"][-1])))
    agent, _, _ = pricing_agent(tmp_path, policy=policy, hooks=hooks, extra_tools=(plan_tool(state),))
    agent.run(TASK)
    assert "<!-- plan -->" not in blocks[0]
    assert "Current phase: 1 of 2: one." in blocks[1] and "Current phase: 2 of 2: two." in blocks[2]


def test_malformed_plan_input_is_an_error_result_and_the_run_goes_on(tmp_path):
    state = PlanState()
    policy = ScriptedPolicy([
        [tool_use("plan", {"goal": "g"})],                                    # no phases
        [tool_use("plan", {"phase": 3, "status": "done"})],                   # no plan yet
        [tool_use("plan", {"goal": "g", "phases": [{"title": "x", "status": "finished"}]})],  # bad status
        [tool_use("plan", {"goal": "g", "phases": [{"title": "x"}]})],
        "ok",
    ])
    agent, _, _ = pricing_agent(tmp_path, policy=policy, extra_tools=(plan_tool(state),))
    assert agent.run(TASK).status == "done"
    results = [b for m in agent.messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert [bool(r.get("is_error")) for r in results] == [True, True, True, False]
    assert "a new plan needs a goal and at least one phase" in results[0]["content"]
    assert "there is no plan yet" in results[1]["content"]
    assert "phases.0.status" in results[2]["content"]
    assert state.plan.phases[0].title == "x"


def test_planner_delegates_one_objective_per_call_and_the_reports_move_the_plan(tmp_path):
    team = planning_team(tmp_path, "Summarise the reference manual", reference_items(5), online=False)
    assert team.planner.run("Summarise pages 0 to 4.").status == "done"
    calls = [c for m in team.planner.messages if m["role"] == "assistant" for c in tool_uses(m)]
    assert [c["name"] for c in calls].count("plan") == 1  # written once, never updated by hand
    delegations = [c for c in calls if c["name"] == "delegate"]
    assert [d["input"]["phase"] for d in delegations] == [1, 2, 3, 4, 5]
    assert all(e.messages[0]["content"][0]["text"] == d["input"]["objective"] for e, d in zip(team.executors, delegations))
    assert team.plan.plan.done == 5
    executor = team.executors[0]
    assert len(executor.messages[0]["content"]) == 1  # it started from an empty history: the objective only
    assert "<!-- task -->" in str(executor.last_request["messages"][-1])


def test_an_executor_that_hits_its_cap_is_partial_and_gets_re_delegated(tmp_path):
    team = planning_team(tmp_path, "Summarise the reference manual", reference_items(2), online=False,
                         executor_max_steps=1, max_steps=8)  # too few steps to fetch, write and report
    team.planner.run("Summarise pages 0 and 1.")
    reports = [json.loads(b["content"]) for m in team.planner.messages if m["role"] == "user"
               for b in m["content"] if b.get("type") == "tool_result" and b["content"].startswith("{")]
    assert reports and all(r["status"] == "partial" for r in reports)
    assert reports[0]["remains"].startswith("Read https://docs.example/page/0")
    assert team.plan.plan.done == 0  # nothing was marked done on a stop without a report


def test_read_report_never_turns_a_stop_into_done():
    assert read_report("max_steps", '{"status": "done", "did": "x"}', "obj").status == "partial"
    assert read_report("done", "I finished everything!", "obj").status == "partial"
    assert read_report("done", '{"status": "done", "did": "all"}', "obj").status == "done"


def test_coordination_is_silent_alone_and_speaks_when_shared(tmp_path):
    sandbox = SharedSandbox()
    sandbox.join("planner")
    hooks = HookRegistry().install(Coordination(sandbox, "planner"))
    policy = ScriptedPolicy(["alone", [tool_use("read_file", {"path": "AGENTS.md"})], "together"])
    agent, _, _ = pricing_agent(tmp_path, policy=policy, hooks=hooks)
    agent.run(TASK)
    assert batch_sources(agent) == []
    sandbox.join("executor-1")
    agent.run("Now with company.")
    first, second = [str(m) for m in agent.last_request["messages"][-1:]], None
    assert "<!-- coordination -->" in first[0] and "I have read it in this conversation" in first[0]
    assert sandbox.claim("executor-1", "wt/a") == "wt/a is yours."
    try:
        sandbox.claim("planner", "wt/a")
    except ValueError as e:
        second = str(e)
    assert second == "'wt/a' is claimed by executor-1"
