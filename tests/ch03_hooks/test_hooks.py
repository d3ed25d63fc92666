"""Chapter 03: hooks run in registration order, can be conditional, and never end the run."""

from __future__ import annotations

import pytest

from minimal_runtime.core.hooks import HookEvent
from tests.support import CURRENT_MODEL, TASK, on_both_generations, pricing_agent


def event(impl, point):
    return impl.HookEvent(point=point, agent=None)


def test_hooks_run_in_registration_order(impl):
    registry, order = impl.HookRegistry(), []
    for name in ("policy", "discipline", "plan", "budget"):
        registry.register(impl.Point.PRE_LLM_CALL, lambda e, n=name: order.append(n), name=name)
    registry.run(impl.Point.PRE_LLM_CALL, event(impl, impl.Point.PRE_LLM_CALL))
    assert order == ["policy", "discipline", "plan", "budget"], f"hooks must run in the order registered, not {order}"
    names = registry.names(impl.Point.PRE_LLM_CALL)
    assert names == order, f"names() should list the names given at register(), in order: got {names}"
    assert registry.names(impl.Point.END) == [], "names() of a point with no hooks is an empty list"


def test_a_raising_hook_is_recorded_and_skipped(impl):
    registry, ran = impl.HookRegistry(), []

    def broken(e):
        raise ValueError("boom")
    registry.register(impl.Point.POST_TOOL_CALL, broken)
    registry.register(impl.Point.POST_TOOL_CALL, lambda e: ran.append("after"), name="after")
    registry.run(impl.Point.POST_TOOL_CALL, event(impl, impl.Point.POST_TOOL_CALL))
    assert ran == ["after"], "a raising hook stopped the hooks after it: catch its exception and go on"
    failures = [(f.point, f.hook, f.error) for f in registry.failures]
    assert failures == [(impl.Point.POST_TOOL_CALL, "broken", "ValueError: boom")], \
        f"record HookFailure(point=..., hook=hook_name(hook), error='Type: message'): got {failures}"


def test_conditions_decide_whether_a_hook_runs(impl):
    registry, ran = impl.HookRegistry(), []
    state = {"plan": None}
    registry.register(impl.Point.PRE_LLM_CALL, lambda e: ran.append("discipline"), when=lambda e: state["plan"] is None,
                      name="discipline")
    registry.register(impl.Point.PRE_LLM_CALL, lambda e: ran.append("plan"), when=lambda e: state["plan"] is not None,
                      name="plan")
    registry.run(impl.Point.PRE_LLM_CALL, event(impl, impl.Point.PRE_LLM_CALL))
    state["plan"] = "a plan"
    registry.run(impl.Point.PRE_LLM_CALL, event(impl, impl.Point.PRE_LLM_CALL))
    assert ran == ["discipline", "plan"], f"run a hook only when its when(event) is true (each call asks again): ran {ran}"


def test_a_raising_condition_counts_as_a_failure(impl):
    registry, ran = impl.HookRegistry(), []
    registry.register(impl.Point.START, lambda e: ran.append("x"), when=lambda e: 1 / 0, name="x")
    registry.run(impl.Point.START, event(impl, impl.Point.START))
    assert ran == [], "the hook ran although its condition raised: a raising condition skips the hook"
    assert registry.failures and registry.failures[0].error.startswith("ZeroDivisionError"), \
        f"a raising condition is recorded as a failure of its hook, like a raising hook: failures {registry.failures}"


@pytest.mark.parametrize("point", ["START", "PRE_LLM_CALL", "POST_LLM_CALL", "PRE_TOOL_CALL", "POST_TOOL_CALL", "END"])
def test_a_raising_hook_at_any_point_leaves_the_run_finishing(impl, tmp_path, point):
    registry = impl.HookRegistry()

    def explode(e: HookEvent) -> None:
        raise RuntimeError(f"hook failure at {point}")
    registry.register(getattr(impl.Point, point), explode)
    agent, _, outbox = pricing_agent(tmp_path, hooks=registry)
    result = agent.run(TASK)
    assert result.status == "done" and len(outbox) == 2, \
        f"a hook raising at {point} ended the run ({result.status}: {result.error}): catch it in run() and go on"
    assert registry.failures and all(f.hook == "explode" for f in registry.failures), \
        f"every failure at {point} should be recorded under the hook's name 'explode': {registry.failures}"


def test_a_raising_error_hook_still_stops_cleanly(impl, tmp_path):
    registry = impl.HookRegistry()
    registry.register(impl.Point.ERROR, lambda e: 1 / 0, name="bad_error_hook")
    agent, emu, _ = pricing_agent(tmp_path, hooks=registry)
    emu.inject_fault(529, count=10)
    result = agent.run(TASK)
    assert result.status == "error" and "Overloaded" in str(result.error), \
        f"the run should stop on the API's 529 and say so, whatever the ERROR hook does: {result.status}: {result.error}"
    assert registry.failures and registry.failures[0].hook == "bad_error_hook", \
        f"the raising ERROR hook should be recorded under the name given: {registry.failures}"
    assert agent.messages == [agent.messages[0]], "only the task may be in the history: nothing half-done appended"


@on_both_generations
def test_the_batch_order_is_the_registration_order(impl, tmp_path, model):
    registry = impl.HookRegistry()
    for source in ("policy", "plan", "budget"):
        registry.register(impl.Point.PRE_LLM_CALL, lambda e, s=source: e.agent.inject_turn_scoped(s, f"{s} note"), name=source)
    agent, _, _ = pricing_agent(tmp_path, hooks=registry, model=model)
    agent.run(TASK)
    last = agent.last_request["messages"][-1]
    if model == CURRENT_MODEL:  # the batch is its own turn-scoped system entry
        assert last["role"] == "system" and last.get("clear_at") == "next_user_message", \
            f"the last call's batch should end the request as a turn-scoped system entry: {last!r}"
    sources = [b.get("text", "").split("\n")[0] for b in last["content"][-3:]]
    assert sources == ["<!-- policy -->", "<!-- plan -->", "<!-- budget -->"], \
        f"the batch should hold the hooks' injections in registration order (policy, plan, budget): got {sources}"
