"""The step as a durable transaction (issue 50 item 1): a run killed at any boundary of a step resumes
from it. Every completed tool and hook runs once, no call is paid twice (only one in flight at the
kill, and the record lists it as possibly billed), and the history and the bill are the uninterrupted
run's, on Sonnet 5.5 and Haiku 5.5.

The kill is in-process (``Killed``, a BaseException nothing in the loop catches, from a store that
dies with it: nothing written after it), so the emulator, whose cache is the server's, outlives it
as a real server outlives a client. ``test_store.py`` kills real processes with SIGKILL.
"""

from __future__ import annotations

import functools
import json

import pytest

from minimal_runtime.core.agent import Agent
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import dumps
from minimal_runtime.core.store import MemoryStore, load
from minimal_runtime.core.tools import FunctionTool, tool_use_id
from minimal_runtime.emulator import Emulator, Turn, tool_use
from minimal_runtime.provider.models import THREADS_BETA
from pydantic import BaseModel

MODELS = ["claude-sonnet-5-5", "claude-haiku-5-5"]


class Killed(BaseException):
    """The process died here."""


class DyingStore(MemoryStore):
    """A MemoryStore that dies (raises ``Killed``) right after writing its ``after``-th event, or in
    place of writing the ``before``-th; dead, it writes nothing more. A new one on its events resumes."""

    def __init__(self, events: list[dict] | None = None, after: int = 0, before: int = 0):
        super().__init__()
        self._log = [dumps(e) for e in events or []]
        self.after, self.before, self.dead = after, before, False

    def write(self, event: dict, sync: bool = True) -> None:
        if self.dead:
            raise Killed
        if len(self._log) + 1 == self.before:
            self.dead = True
            raise Killed
        super().write(event, sync)
        if len(self._log) == self.after:
            self.dead = True
            raise Killed


class Entry(BaseModel):
    n: int


def policy(request: dict) -> Turn:
    """Simulated: three rounds of two tool calls each (parallel), then an answer; it reads only the
    request, so a call sent again is answered the same."""
    results = sum(1 for m in request["messages"] if isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    if results < 6:
        return Turn.of([tool_use("append", {"n": results}), tool_use("append", {"n": results + 1})])
    return Turn.of(f"Done after {results} appends.")


class World:
    """What outlives the process: the server, the side effects of tools and hooks, the record."""

    def __init__(self, model: str):
        self.model = model
        self.emu = Emulator(model=model, policy=policy)
        self.appended: list[int] = []  # the file a tool appends to
        self.tool_runs: list[str] = []  # tool_use ids, each time a tool ran
        self.hook_runs: list[tuple] = []  # (point, where), each time a hook ran

    def agent(self, store: DyingStore, die_in: tuple | None = None) -> Agent:
        def append(entry: Entry) -> str:
            self.tool_runs.append(tool_use_id())
            self.appended.append(entry.n)
            return f"{len(self.appended)} lines"

        def noted(point: Point):
            def hook(event):
                where = (event.agent.steps, getattr(event, "tool_call", {}).get("id"))
                self.hook_runs.append((point.value, where))
                if die_in == (point.value, len(self.hook_runs)):
                    raise Killed
                if point is Point.PRE_LLM_CALL:
                    count = event.agent.state.get("notes", 0) + 1
                    event.agent.state.set("notes", count)
                    event.agent.inject_turn_scoped("count", f"Note {count}.")
            return hook
        hooks = HookRegistry()
        for point in (Point.START, Point.PRE_LLM_CALL, Point.POST_LLM_CALL, Point.PRE_TOOL_CALL, Point.POST_TOOL_CALL,
                      Point.END):
            hooks.register(point, noted(point))
        return Agent(self.emu.client(max_retries=0), model=self.model, system="You append.", hooks=hooks, store=store,
                     tools=[FunctionTool("append", "Append a line.", Entry, append)])

    def run(self, after: int = 0, before: int = 0, die_in: tuple | None = None) -> dict:
        """Run the task until done, killed as asked, resumed as the same script run again."""
        store = DyingStore(after=after, before=before)
        try:
            result = self.agent(store, die_in).run("Append six lines.")
        except Killed:
            store = DyingStore(load_events(store))
            agent = self.agent(store)
            result = agent.run("Append six lines.")  # the same script, run again: resumed, not asked twice
        else:
            agent = None
        saved = load(load_events(store))
        return {"result": result, "saved": saved, "agent": agent}


def load_events(store: MemoryStore) -> list[dict]:
    return [json.loads(line) for line in store._log]


def bill(saved) -> float:
    return round(sum(c.cost for c in [*saved.calls, *saved.lost_calls]), 10)


def uninterrupted(model: str):
    world = World(model)
    store = DyingStore()
    result = world.agent(store).run("Append six lines.")
    return world, result, load_events(store)


@functools.cache
def clean(model: str):
    return uninterrupted(model)


def assert_as_uninterrupted(world: World, run: dict, model: str, repeats: int = 0) -> None:
    ref_world, ref_result, ref_events = clean(model)
    saved = run["saved"]
    assert run["result"].status == "done", run["result"].error
    assert dumps(saved.messages) == dumps(load(ref_events).messages)  # the history
    paid_twice = len(world.emu.calls) - len(ref_world.emu.calls)
    # the bill: calls and lost calls. A call in flight at the kill wrote the cache its re-send then
    # reads (as the API's would, once the prompt passes the model's minimum, which the tool-use system
    # prompt of issue 48 makes it do here), so after one the bill can only be lower
    if paid_twice:
        assert bill(saved) <= bill(load(ref_events))
    else:
        assert bill(saved) == bill(load(ref_events))
    assert saved.state == load(ref_events).state
    assert world.appended == ref_world.appended  # each side effect once
    assert 0 <= paid_twice <= len(saved.unanswered_calls)  # only a call in flight at the kill, and it is listed
    assert len(world.tool_runs) - len(set(world.tool_runs)) == 0
    assert len(world.hook_runs) == len(ref_world.hook_runs) + repeats
    assert sorted(set(world.hook_runs)) == sorted(set(ref_world.hook_runs))


@pytest.mark.parametrize("model", MODELS)
def test_a_kill_after_any_event_of_the_record_resumes_as_if_it_never_happened(model):
    """After every event the uninterrupted run writes (the sent record, the reply, each hook, each
    tool's result, each turn, the ended record): nothing runs twice, nothing is paid twice."""
    _, _, events = clean(model)
    kinds = [e["type"] for e in events]
    assert {"sent", "reply", "tool_output", "turn", "hooked", "ended", "status"} <= set(kinds)
    for after in range(1, len(events)):
        world = World(model)
        run = world.run(after=after)
        try:
            assert_as_uninterrupted(world, run, model)
        except AssertionError as e:
            raise AssertionError(f"killed after event {after} ({kinds[after - 1]}): {e}") from None
        assert len(run["saved"].unanswered_calls) == (kinds[after - 1] == "sent")  # sent, never answered: listed


@pytest.mark.parametrize("model", MODELS)
def test_a_call_in_flight_at_the_kill_is_listed_as_possibly_billed_and_the_only_call_paid_twice(model):
    _, _, events = clean(model)
    replies = [i + 1 for i, e in enumerate(events) if e["type"] == "reply"]
    for before in replies:
        world = World(model)
        run = world.run(before=before)  # the server answered; the process died before the reply was stored
        assert_as_uninterrupted(world, run, model)
        (unanswered,) = run["saved"].unanswered_calls
        assert unanswered["model"] == model and run["agent"].unanswered_calls == [unanswered]
        assert len(world.emu.calls) == len(clean(model)[0].emu.calls) + 1


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("point", ["pre_llm_call", "post_llm_call", "pre_tool_call", "post_tool_call", "end"])
def test_a_kill_inside_a_hook_runs_that_hook_again_and_nothing_else(model, point):
    ref_world = clean(model)[0]
    nth = next(i for i, (p, _) in enumerate(ref_world.hook_runs, 1) if p == point and i > 4)
    world = World(model)
    run = world.run(die_in=(point, nth))
    assert_as_uninterrupted(world, run, model, repeats=1)  # the killed hook ran again: the only repeat


def test_each_tool_is_handed_its_tool_use_id():
    world, _, _ = clean(MODELS[0])
    ids = [b["id"] for m in load(clean(MODELS[0])[2]).messages if m["role"] == "assistant"
           for b in m["content"] if b["type"] == "tool_use"]
    assert world.tool_runs == ids and len(ids) == 6


# -- issue 50 items 3 and 5: the plan and the budget warning after a kill ---------------------------------

def planning_policy(request: dict) -> Turn:
    """Simulated: write a plan of three phases, mark each done, then answer."""
    results = sum(1 for m in request["messages"] if isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    if results == 0:
        return Turn.of([tool_use("plan", {"goal": "Append three lines.",
                                          "phases": [{"title": f"Line {k}"} for k in (1, 2, 3)]})])
    if results <= 3:
        return Turn.of([tool_use("plan", {"phase": results, "status": "done"})])
    return Turn.of("All three lines are done.")


def planned_run(model: str, emu: Emulator, store: MemoryStore) -> tuple[Agent, object]:
    from minimal_runtime.features.budget import BudgetMonitor
    from minimal_runtime.features.plan import PlanHook, PlanState, plan_tool
    plan = PlanState()
    hooks = HookRegistry().install(BudgetMonitor(budget=100, threshold=0.5), PlanHook(plan))  # over it from call 1
    agent = Agent(emu.client(max_retries=0), model=model, system="You plan.", hooks=hooks, store=store,
                  tools=[plan_tool(plan)])
    plan.kept_in(agent.state)
    return agent, plan


@pytest.mark.parametrize("model", MODELS)
def test_the_plan_and_the_budget_warning_after_a_kill_are_the_uninterrupted_runs(model):
    """Issue 50: after a kill the plan was recited 3 times where the clean run recited it 13, two plan
    updates failed with "there is no plan yet", and the warning moved from call 8 to 9 (PlanState and
    BudgetMonitor kept in memory what the record did not have)."""
    clean_store = DyingStore()
    clean, _ = planned_run(model, Emulator(model=model, policy=planning_policy), clean_store)
    assert clean.run("Append three lines.").status == "done"
    expected = load(load_events(clean_store))
    recited = dumps(expected.messages).count("<!-- plan -->")
    assert recited == 4 and dumps(expected.messages).count("<!-- budget -->") == 1
    assert "no plan yet" not in dumps(expected.messages)
    for after in range(1, len(load_events(clean_store))):
        emu = Emulator(model=model, policy=planning_policy)
        store = DyingStore(after=after)
        try:
            planned_run(model, emu, store)[0].run("Append three lines.")
        except Killed:
            store = DyingStore(load_events(store))
            agent, plan = planned_run(model, emu, store)  # a new process: a new PlanState, a new monitor
            assert agent.run("Append three lines.").status == "done"
            assert [p.status for p in plan.plan.phases] == ["done"] * 3
        saved = load(load_events(store))
        assert dumps(saved.messages) == dumps(expected.messages), f"killed after event {after}"
        assert saved.state == expected.state and saved.state["budget.warned_at"] == 2


def test_a_reply_resumed_on_a_client_that_does_not_thread_is_seen_as_it_was_sent():
    emu, seen = Emulator(model="claude-sonnet-5-5", policy=policy), []

    def agent(store: MemoryStore) -> Agent:
        client = emu.client(max_retries=0)
        client._supports_message_threads = False  # as on Bedrock or Vertex: the threaded layout's plans go whole
        hooks = HookRegistry()
        hooks.register(Point.POST_LLM_CALL, lambda event: seen.append(event.request.get("betas", [])))
        return Agent(client, model="claude-sonnet-5-5", system="You append.", hooks=hooks, store=store,
                     tools=[FunctionTool("append", "Append a line.", Entry, lambda entry: "appended")])

    clean = MemoryStore()
    assert agent(clean).run("Append six lines.").status == "done"
    sent = seen[0]
    assert THREADS_BETA not in sent
    first_reply = next(k for k, e in enumerate(clean.events(), 1) if e["type"] == "reply")
    seen.clear()
    store = DyingStore(after=first_reply)
    with pytest.raises(Killed):
        agent(store).run("Append six lines.")
    assert agent(DyingStore(load_events(store))).run("Append six lines.").status == "done"
    assert seen[0] == sent  # the stored reply's request, laid out again, is the one that was sent
