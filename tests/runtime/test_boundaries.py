"""Boundaries a mutation run showed no test was watching: the budget threshold at exactly 80% and
its default, what the workspace counters count (and that they reach the run record), a system
prompt given as blocks."""

from __future__ import annotations

import pytest

from minimal_runtime.core.hooks import HookRegistry
from minimal_runtime.core.store import RunState, RunStore, load_run
from minimal_runtime.emulator import ScriptedPolicy, tool_use
from minimal_runtime.features.budget import BudgetMonitor
from minimal_runtime.features.filesystem import WorkspaceCounters
from tests.support import TASK, pricing_agent


class _Calls:
    def __init__(self, prompt_tokens: int):
        self.calls = [type("Call", (), {"prompt_tokens": prompt_tokens})()]
        self.injected: list[tuple[str, str]] = []
        self.state = RunState()

    def inject_turn_scoped(self, source: str, text: str) -> None:
        self.injected.append((source, text))


@pytest.mark.parametrize("prompt, warns", [(7_000, False), (7_999, False), (8_000, True), (8_001, True)])
def test_the_budget_warning_fires_at_exactly_the_threshold_and_the_default_is_the_sources_80_percent(prompt, warns):
    """80%: the source's threshold (features/budget.py), not a sweep's; chapter 05 shows its simulated sweep."""
    agent = _Calls(prompt)
    event = type("Event", (), {"agent": agent})()
    monitor = BudgetMonitor(budget=10_000)  # the default threshold
    monitor.record(event)
    monitor.warn(event)
    assert bool(agent.injected) is warns
    assert monitor.threshold == 0.8


def test_workspace_counters_count_once_within_their_window_skip_errors_and_reach_the_run_record(tmp_path):
    same = "Acme: $10 per user per month\n"
    policy = ScriptedPolicy([
        [tool_use("write_file", {"path": "notes/a.md", "content": same})],       # call 1: written
        [tool_use("write_file", {"path": "notes/a-copy.md", "content": same})],  # call 2: a duplicate
        [tool_use("read_file", {"path": "notes/a.md"})],                          # call 3: a reflexive re-read
        [tool_use("fetch", {"url": "https://acme.example/pricing"})],             # calls 4-6: other work
        [tool_use("fetch", {"url": "https://globex.example/pricing"})],
        [tool_use("fetch", {"url": "https://initech.example/pricing"})],
        [tool_use("read_file", {"path": "notes/a.md"})],                          # call 7: out of the window
        [tool_use("write_file", {"path": "../outside.md", "content": same})],    # call 8: an error, not counted
        "done",
    ])
    counters, hooks = WorkspaceCounters(), HookRegistry()
    hooks.install(counters)
    store = RunStore(tmp_path / "run")
    agent, _, _ = pricing_agent(tmp_path, policy=policy, hooks=hooks, store=store)
    agent.run(TASK)
    expected = {"files_written": 2, "duplicate_writes": 1, "reflexive_rereads": 1}
    assert counters.as_dict() == expected
    assert load_run(tmp_path / "run").state["counters"] == expected


def test_a_system_prompt_given_as_blocks_is_sent_as_those_blocks(tmp_path):
    blocks = [{"type": "text", "text": "You are a research agent."}, {"type": "text", "text": "Be brief."}]
    from minimal_runtime.core.agent import Agent
    from minimal_runtime.example.backend import make_client
    client, _ = make_client(ScriptedPolicy(["ok"]), model="claude-sonnet-4-6")
    agent = Agent(client, model="claude-sonnet-4-6", system=blocks)
    agent.run(TASK)
    sent = agent.last_request["system"]
    assert [b["text"] for b in sent] == ["You are a research agent.", "Be brief."]
    assert "cache_control" in sent[-1] and "cache_control" not in sent[0]


def test_a_failing_hook_is_logged_and_recorded_with_its_name_point_and_error(caplog):
    """An operator reading the log learns which hook failed, where, and why (found by mutation testing:
    the log line's parts were not checked)."""
    import logging

    from minimal_runtime.core.context import TurnScopedQueue
    from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point

    class View:
        turn_queue = TurnScopedQueue()

    def half_written(event):
        event.agent.turn_queue.inject("note", "half")
        raise ValueError("boom")
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, half_written)
    with caplog.at_level(logging.WARNING):
        hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, View(), queue=View.turn_queue))
    assert [r.getMessage() for r in caplog.records] == ["hook half_written failed at pre_llm_call: ValueError: boom"]
    assert hooks.failures[0].hook == "half_written" and hooks.failures[0].error == "ValueError: boom"
    assert len(View.turn_queue) == 0  # its half-written note is not delivered


def test_a_failing_hook_rolls_back_only_its_own_notes_and_a_condition_sees_the_event():
    from minimal_runtime.core.context import TurnScopedQueue
    from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point, hook_name

    class View:
        turn_queue = TurnScopedQueue()
        phase = "execute"

    class Counter:  # a callable object: named after its type
        def __call__(self, event):
            event.agent.turn_queue.inject("count", "1")

    def failing(event):
        event.agent.turn_queue.inject("note", "half")
        raise ValueError("boom")
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, Counter(), when=lambda e: e.agent.phase == "execute")
    hooks.register(Point.PRE_LLM_CALL, failing)
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.turn_queue.inject("plan", "p"), when=lambda e: e.agent.phase == "plan")
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, View(), queue=View.turn_queue))
    assert [i.source for i in View.turn_queue.drain()] == ["count"]  # before the failure: kept; the false condition: skipped
    assert hooks.names(Point.PRE_LLM_CALL)[:2] == ["Counter", "failing"] and hook_name(Counter()) == "Counter"


def test_registering_a_feature_object_says_how_to_install_it():
    from minimal_runtime.core.hooks import HookRegistry, Point
    from minimal_runtime.features.budget import BudgetMonitor

    with pytest.raises(TypeError, match=r"BudgetMonitor is not callable; install a feature with hooks\.install"):
        HookRegistry().register(Point.PRE_LLM_CALL, BudgetMonitor(budget=1000))


def test_masks_accumulate_and_unmask_lifts_only_what_it_names():
    from pydantic import BaseModel

    from minimal_runtime.core.tools import FunctionTool, ToolBox

    class NoInput(BaseModel):
        pass
    tools = ToolBox([FunctionTool(name, name, NoInput, lambda args: "ok") for name in "abc"])
    tools.mask("a")
    tools.mask("b")
    assert tools.masked == {"a", "b"}
    tools.unmask("a")
    assert tools.masked == {"b"}
    refused = tools.call({"type": "tool_use", "id": "t", "name": "b", "input": {}})
    assert refused["is_error"] and "not available" in refused["content"]
    assert not tools.call({"type": "tool_use", "id": "t", "name": "a", "input": {}}).get("is_error")


def test_a_tool_says_every_input_problem_and_a_tool_without_final_is_not_final():
    from pydantic import BaseModel

    from minimal_runtime.core.tools import FunctionTool, ToolBox

    class Page(BaseModel):
        url: str
        depth: int

    class Nested(BaseModel):
        page: Page

    tool = FunctionTool("open", "open", Nested, lambda args: "ok")
    out = tool.run({"page": {"depth": "deep"}})
    assert out.is_error and out.content == ("Invalid input for open: page.url: Field required; "
                                            "page.depth: Input should be a valid integer, unable to parse string as an integer")
    assert FunctionTool("open", "open", Page, lambda args: "ok").run([]).content.startswith("Invalid input for open: input: ")

    class Bare:  # a Tool of one's own, without the optional `final`
        name, description = "bare", "bare"

        def definition(self):
            return {"name": "bare", "description": "bare", "input_schema": {"type": "object"}}

        def run(self, raw_input):
            raise AssertionError("not called")
    assert not ToolBox([Bare()]).is_final({"name": "bare"}, {"content": "ok"})


def test_the_message_helpers_keep_exactly_what_the_api_sent():
    from anthropic.types import TextBlock, ToolUseBlock

    from minimal_runtime.core.messages import assistant_message, text_of, tool_result_block

    message = assistant_message([TextBlock(type="text", text="a"), ToolUseBlock(type="tool_use", id="t", name="f", input={"x": 1}),
                                 {"type": "text", "text": "b"}])
    assert message == {"role": "assistant", "content": [  # no None fields the SDK's models carry (citations, caller)
        {"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "f", "input": {"x": 1}}, {"type": "text", "text": "b"}]}
    assert text_of(message) == "a\nb"
    assert not tool_result_block("t", "ok").get("is_error") and tool_result_block("t", "no", True)["is_error"]


def test_a_tool_definition_and_an_unknown_tool_answer_are_exact():
    from pydantic import BaseModel

    from minimal_runtime.core.tools import FunctionTool, ToolBox

    class NoInput(BaseModel):
        pass
    tools = ToolBox([FunctionTool("a", "does a", NoInput, lambda args: "ok"), FunctionTool("b", "does b", NoInput, lambda args: "ok")])
    assert tools.definitions[0] == {"name": "a", "description": "does a", "input_schema": NoInput.model_json_schema()}
    assert tools.call({"type": "tool_use", "id": "t", "name": "c", "input": {}})["content"] == "Unknown tool 'c'. Available: a, b."


def test_a_call_record_reads_every_shape_of_usage():
    from minimal_runtime.core.messages import dumps
    from minimal_runtime.provider.cost import CallRecord

    def split(usage: dict) -> tuple[int, int, int]:
        r = CallRecord.from_usage(usage, "claude-sonnet-4-6")
        return r.cache_creation_input_tokens, r.cache_creation_5m, r.cache_creation_1h
    assert split({"input_tokens": 5, "output_tokens": 2}) == (0, 0, 0)
    assert split({"input_tokens": 5, "cache_creation_input_tokens": None, "cache_creation": None}) == (0, 0, 0)
    assert split({"input_tokens": 5, "cache_creation_input_tokens": 100}) == (100, 100, 0)  # no breakdown: the default TTL
    assert split({"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_creation": {"ephemeral_1h_input_tokens": 40}}) \
        == (100, 60, 40)
    assert split({"input_tokens": 5, "cache_creation_input_tokens": 100,
                  "cache_creation": {"ephemeral_1h_input_tokens": 40, "ephemeral_5m_input_tokens": 50}}) == (100, 50, 40)
    assert dumps({"b": "é", "a": [1, 2]}) == '{"b":"é","a":[1,2]}'  # key order kept, compact, not escaped
