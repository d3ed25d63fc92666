"""The plan hook keeps the goal's words at the tail of every call, tainted runs included (issue 64).

Measured with the course's one measure of "the goal is stated" (``example.attention``: the goal's own
words within ``STATED_WITHIN`` tokens of the end of what the model reads), on the runtime's own
``PlanHook``, on both layouts."""

from __future__ import annotations

import pytest

from minimal_runtime.core import taint
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.example.attention import STATED_WITHIN, goal_distance, stated
from minimal_runtime.example.planning import PlanWorker, reference_items
from minimal_runtime.features.plan import TASK_KEY, PlanHook, PlanState, plan_tool
from tests.support import pricing_agent

GOAL = "Summarise reference pages 0 to 7, one note per page."


def planned_reading(tmp_path, model):
    """An agent that writes its plan, then fetches eight pages (outside text: the run is tainted)."""
    state, hooks, requests = PlanState(), HookRegistry(), []
    hooks.install(PlanHook(state))
    hooks.register(Point.POST_LLM_CALL, lambda e: requests.append(e.request))
    agent, _, _ = pricing_agent(tmp_path, policy=PlanWorker(GOAL, reference_items(8)), model=model, hooks=hooks,
                                max_steps=60, extra_tools=(plan_tool(state),))
    assert agent.run(GOAL).status == "done"
    return agent, requests


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-sonnet-4-6"])
def test_the_goal_stays_at_the_tail_of_every_call_once_the_run_is_tainted(tmp_path, model):
    agent, requests = planned_reading(tmp_path, model)
    assert taint.by(agent.state) is not None and agent.state.get(TASK_KEY) == GOAL
    planned = requests[1:]  # the first call writes the plan
    distances = [goal_distance(r, GOAL) for r in planned]
    assert len(planned) > 20 and all(d is not None and d <= STATED_WITHIN for d in distances), distances
    # and the goal speaks from the system entry only in the user's words: nothing a page said is there
    page_words = "Reference page"
    tail = [b for r in planned for b in r["messages"][-1]["content"] if isinstance(b, dict)]
    assert not any(page_words in b.get("text", "") for b in tail if b.get("text", "").startswith("<!-- plan -->"))


def test_the_measure_reads_words_not_a_label():
    request = {"system": "You are careful.", "messages": [
        {"role": "user", "content": GOAL},
        {"role": "assistant", "content": "x" * 4000},
        {"role": "user", "content": "The goal of this run: (as written in the user turn: the plan-text note)"}]}
    assert goal_distance(request, GOAL) > STATED_WITHIN and not stated(request, GOAL)
    request["messages"][-1]["content"] += " " + GOAL
    assert goal_distance(request, GOAL) == 0 and stated(request, GOAL)
    assert goal_distance({"messages": [{"role": "user", "content": "nothing"}]}, GOAL) is None
