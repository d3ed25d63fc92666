"""The agent loop's small contracts, one behaviour each: what a steer may weigh, where a steer and a
task start are recorded, what every hook point is told, how an API error is described. Mutation
testing found each unpinned (``make mutate-runtime``)."""

from __future__ import annotations

import anthropic
import httpx
import pytest

from minimal_runtime.core.agent import _describe
from minimal_runtime.core.hooks import Point
from minimal_runtime.steering import SteerTooLarge
from minimal_runtime.core.store import MemoryStore
from tests.support import TASK, pricing_agent


def test_a_steer_may_take_what_is_left_of_the_window_and_not_a_token_more(tmp_path):
    agent, _, _ = pricing_agent(tmp_path)
    window = agent.spec.context_window
    assert agent.steer("x" * (4 * window + 3)) is False  # window tokens at four characters each: fits (no run: 409)
    with pytest.raises(SteerTooLarge, match=rf"^a steer of {4 * window + 4:,} characters would not fit the {window:,}-token window$"):
        agent.steer("x" * (4 * window + 4))
    agent.run(TASK)
    left = window - agent.calls[-1].prompt_tokens  # after a call, the last prompt counts too
    assert agent.steer("x" * (4 * left)) is False
    with pytest.raises(SteerTooLarge):
        agent.steer("x" * (4 * left + 4))


def test_an_accepted_steer_is_stored_as_sent_and_each_task_marks_a_run_start(tmp_path):
    store = MemoryStore()
    agent, _, _ = pricing_agent(tmp_path, store=store)
    agent.hooks.register(Point.POST_LLM_CALL, lambda e: e.agent.steer("check the annual prices") if len(e.agent.calls) == 2 else None)
    agent.run(TASK)
    first = len(agent.calls)
    agent.run("And the monthly ones?")
    saved = store.load()
    assert saved.current.first_call == first and saved.calls == agent.calls
    assert sum("check the annual prices" in str(m["content"]) for m in saved.messages) == 1 and saved.pending_steers == []


def test_every_hook_point_gets_an_event_of_its_own_type_with_only_what_that_point_has(tmp_path):
    from minimal_runtime.core.hooks import CallEvent, EndEvent, ErrorEvent, HookEvent, ToolCallEvent, ToolResultEvent
    agent, emu, _ = pricing_agent(tmp_path)
    seen = []
    for point in Point:
        agent.hooks.register(point, lambda e: seen.append((e.point, type(e), e.agent is agent, e.queue is agent.turn_queue)))
    agent.run(TASK)
    emu.inject_fault(529, count=10)
    agent.run("And once more.")
    kinds = {point: kind for point, kind, *_ in seen}
    assert kinds == {Point.START: HookEvent, Point.PRE_LLM_CALL: HookEvent, Point.POST_LLM_CALL: CallEvent,
                     Point.PRE_TOOL_CALL: ToolCallEvent, Point.POST_TOOL_CALL: ToolResultEvent,
                     Point.END: EndEvent, Point.ERROR: ErrorEvent}
    assert all(mine and queue for *_, mine, queue in seen)  # the live agent, and the queue a failed hook is cut back in
    assert not hasattr(HookEvent(Point.START, agent), "tool_result")  # no field a point does not fill


def test_an_api_error_is_described_by_its_type_status_and_the_api_message():
    request = httpx.Request("POST", "https://api.anthropic.com/v1/messages")

    def error(status: int, body) -> anthropic.APIStatusError:
        return anthropic.APIStatusError("fallback text", response=httpx.Response(status, request=request), body=body)
    assert _describe(error(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})) \
        == "APIStatusError 401: invalid x-api-key"
    assert _describe(error(400, {"type": "error"})) == "APIStatusError 400: fallback text"  # no error object
    assert _describe(error(400, "not json")) == "APIStatusError 400: fallback text"  # a body that is not JSON
    assert _describe(anthropic.APIConnectionError(request=request)) == "APIConnectionError: Connection error."


def test_a_steer_accepted_just_before_a_crash_lands_once_after_resuming(tmp_path):
    store, crashed = MemoryStore(), MemoryStore()
    agent, _, _ = pricing_agent(tmp_path / "a", store=store)

    def steer(event):
        if len(event.agent.calls) == 2:
            event.agent.steer("check the annual prices")
            crashed._log = list(store._log)  # the record as a kill right after the 200 would leave it
    agent.hooks.register(Point.POST_LLM_CALL, steer)
    agent.run(TASK)
    assert crashed.load().pending_steers == ["check the annual prices"]
    resumed, _, _ = pricing_agent(tmp_path / "b", store=crashed)
    resumed.run()
    assert sum("check the annual prices" in str(m["content"]) for m in resumed.messages) == 1
    assert crashed.load().pending_steers == []


def test_a_steer_left_when_the_step_cap_ends_the_run_is_kept_once_and_the_result_says_where_it_stopped(tmp_path):
    store = MemoryStore()
    agent, _, _ = pricing_agent(tmp_path, store=store, max_steps=3)
    agent.run(TASK)
    first = len(agent.calls)
    agent.hooks.register(Point.POST_LLM_CALL, lambda e: e.agent.steer("and the annual ones") if len(e.agent.calls) == first + 3 else None)
    result = agent.run("Now the monthly prices.")
    assert result.status == "max_steps" and result.steps == 3 and len(agent.calls) == first + 3
    assert agent.messages[-1]["content"][0]["text"] == "and the annual ones" and result.final_text == ""
    saved = store.load()
    assert saved.pending_steers == [] and saved.messages == agent.messages


def test_the_call_is_laid_out_with_the_models_prefill_and_the_configured_tool_choice(tmp_path):
    agent, emulator, _ = pricing_agent(tmp_path, model="claude-sonnet-4-5", tool_choice={"type": "auto"})
    points = []
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: (points.append(e.point), e.agent.inject_turn_scoped("note", "n")))
    agent.run(TASK)
    request = agent.last_request
    assert request["tool_choice"] == {"type": "auto"} and set(points) == {Point.PRE_LLM_CALL}
    assert request["messages"][-1]["role"] == "assistant"  # a model that takes prefill: the batch rides after the turn


@pytest.mark.parametrize("mode", ["enabled", "adaptive", "disabled", "between_tools"])
def test_the_runtime_refuses_a_thinking_mode_exactly_where_the_emulator_answers_400(mode):
    """The model table's ``thinking_refused`` (checked before a run) and the emulator's own check agree."""
    from minimal_runtime.core.config import AgentConfig
    from minimal_runtime.emulator.errors import ApiError
    from minimal_runtime.emulator.models import lookup
    from minimal_runtime.emulator.validate import check_thinking
    from minimal_runtime.provider.models import MODELS
    thinking = {"type": mode, **({"budget_tokens": 2048} if mode == "enabled" else {})}
    for model in MODELS:
        try:
            check_thinking({"thinking": thinking}, lookup(model), set())
            answered = True
        except ApiError:
            answered = False
        try:
            AgentConfig.of(model=model, thinking=thinking)
            accepted = True
        except ValueError:
            accepted = False
        assert accepted == answered, f"{model} {mode}: the runtime {'accepts' if accepted else 'refuses'} it"
