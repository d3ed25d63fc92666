"""The features' small contracts, one behaviour each: the offloader's defaults, names and failures,
the workspace counters, the step warning's record, the plan's errors. Mutation testing found each
of these unpinned (``make mutate-runtime``)."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

from minimal_runtime.core.context import TurnScopedQueue
from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point, ToolResultEvent
from minimal_runtime.core.store import RunState
from minimal_runtime.features.budget import MaxStepsWarning
from minimal_runtime.features.filesystem import OBSERVATIONS, Offloader, WorkspaceCounters
from minimal_runtime.features.plan import PLAN_TOOL_DESCRIPTION, Phase, Plan, PlanEdit, PlanHook, PlanState, plan_tool


def big(n: int, fill: str = "x") -> str:
    """``n`` characters; ``counted``: no stretch of it appears twice."""
    return "".join(f"{i:05d}," for i in range(n))[:n] if fill == "counted" else fill * n


def result(content: str) -> dict:
    return {"type": "tool_result", "tool_use_id": "t1", "content": content}


def fetch(tool_id: str = "t1", **input) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "fetch", "input": input}


# the offloader -------------------------------------------------------------------------------------

def test_the_defaults_offload_above_4000_characters_with_a_600_head_and_a_300_tail(tmp_path):
    offloader = Offloader(tmp_path)
    assert offloader(fetch(), result(big(4000))) == result(big(4000))
    text = big(4001, "counted")
    kept = offloader(fetch(), result(text))["content"]
    assert f"--- first 600 characters ---\n{text[:600]}\n--- last 300 characters ---\n{text[-300:]}" in kept
    assert text[:601] not in kept and text[-301:] not in kept


def test_saved_names_are_readable_and_safe():
    offloader = Offloader("/tmp/unused")
    digest = lambda s: hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:10]  # noqa: E731
    assert offloader.path_for("toolu_01/A-B.c") == f"{OBSERVATIONS}/toolu_01A-Bc-{digest('toolu_01/A-B.c')}.txt"
    assert offloader.path_for("../..") == f"{OBSERVATIONS}/result-{digest('../..')}.txt"
    assert offloader.path_for("y" * 60) == f"{OBSERVATIONS}/{'y' * 48}-{digest('y' * 60)}.txt"
    assert offloader.path_for("\ud800") == f"{OBSERVATIONS}/result-{digest(chr(0xD800))}.txt"  # a broken id still gets a name


def test_a_saved_output_read_back_is_not_saved_again_but_other_paths_are(tmp_path):
    offloader = Offloader(tmp_path, threshold=10)
    read_back = {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": f"{OBSERVATIONS}/t1.txt"}}
    assert offloader(read_back, result(big(50))) == result(big(50))
    other = {"type": "tool_use", "id": "t3", "name": "read_file", "input": {"path": "notes/observations.txt"}}
    assert "saved at" in offloader(other, result(big(50)))["content"]


def test_a_repeated_id_with_other_undecodable_content_gets_its_own_exact_file(tmp_path):
    offloader = Offloader(tmp_path, threshold=10)
    first, second = big(50), big(50) + "\udcff"  # a lone surrogate: a byte that was not UTF-8
    paths = []
    for content in (first, second):
        kept = offloader(fetch("same"), result(content))["content"]
        paths.append(kept.split("saved at ")[1].split(";")[0])
    assert paths[0] != paths[1]
    assert [offloader.restore(p) for p in paths] == [first, second]


def test_a_workspace_that_cannot_be_written_gives_an_error_result_with_the_preview(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    offloader = Offloader(tmp_path / "file", threshold=10, head=5, tail=5)
    text = big(50, "counted")
    kept = offloader(fetch(), result(text))
    assert kept["is_error"]
    assert kept["content"].startswith("The output could not be saved to the workspace (NotADirectoryError: ")
    assert "the full output is saved at (not saved)" in kept["content"] and f"\n{text[:5]}\n" in kept["content"]


def test_the_workspace_is_created_as_needed_and_nothing_outside_it_is_touched(tmp_path):
    offloader = Offloader(tmp_path / "a" / "b", threshold=10)
    kept = offloader(fetch(), result(big(50)))
    assert not kept.get("is_error") and offloader.restore(offloader.path_for("t1")) == big(50)
    for act in (lambda: offloader.offload("x", "../escape.txt"), lambda: offloader.restore("../escape.txt")):
        with pytest.raises(PermissionError, match=r"^'\.\./escape\.txt' is outside the workspace$"):
            act()


# the workspace counters ----------------------------------------------------------------------------

class _Agent:
    def __init__(self):
        self.calls: list = []
        self.store = SimpleNamespace(saved=[])  # what the run state was given to keep
        self.state = SimpleNamespace(set=lambda key, value: self.store.saved.append(value))


def _tool(counters: WorkspaceCounters, agent: _Agent, name: str, is_error: bool = False, **input) -> None:
    call = {"type": "tool_use", "id": "t", "name": name, "input": input}
    counters.count(ToolResultEvent(Point.POST_TOOL_CALL, agent, call,
                                   {"type": "tool_result", "tool_use_id": "t", "content": "ok", "is_error": is_error}))


def test_counters_count_every_duplicate_and_reread_and_store_only_changes():
    counters, agent = WorkspaceCounters(recent=3), _Agent()
    _tool(counters, agent, "write_file", path="a.md", content="")
    _tool(counters, agent, "write_file", path="b.md")  # no content: the same empty content as a.md
    _tool(counters, agent, "write_file", path="c.md", content="")
    _tool(counters, agent, "write_file", path="d.md", content="x", is_error=True)  # failed: not counted, not stored
    assert counters.as_dict() == {"files_written": 3, "duplicate_writes": 2, "reflexive_rereads": 0}
    assert len(agent.store.saved) == 3
    agent.calls = [None] * 3  # exactly `recent` calls after the writes
    _tool(counters, agent, "read_file", path="a.md")
    _tool(counters, agent, "read_file", path="b.md")
    agent.calls = [None] * 4
    _tool(counters, agent, "read_file", path="c.md")  # older than `recent`: a real need, not a reflex
    assert counters.reflexive_rereads == 2 and agent.store.saved[-1] == counters.as_dict() and len(agent.store.saved) == 5


# the step warning and the plan ---------------------------------------------------------------------

def test_the_step_warning_records_the_call_it_rides_on():
    warning = MaxStepsWarning(margin=3)
    agent = SimpleNamespace(calls=[None] * 7, steps=7, max_steps=10, turn_queue=TurnScopedQueue(), state=RunState())
    agent.inject_turn_scoped = agent.turn_queue.inject
    warning.warn(HookEvent(Point.PRE_LLM_CALL, agent))
    (note,) = agent.turn_queue.drain()
    assert warning.warned_at == 8 and note.source == "steps" and note.text.startswith("3 calls are left")


def test_the_plan_tool_says_what_is_wrong_and_a_state_can_start_with_a_plan():
    state = PlanState()
    with pytest.raises(ValueError, match=r"^there is no plan yet: write one with goal and phases first$"):
        state.apply(PlanEdit(phase=1, status="done"))
    ready = PlanState(Plan(goal="g", phases=[Phase(title="a"), Phase(title="b")]))
    with pytest.raises(ValueError, match=r"^phase 3 does not exist \(1 to 2\)$"):
        ready.apply(PlanEdit(phase=3, status="done"))
    assert ready.apply(PlanEdit(phase=2, status="done")) == "Phase 2 is now done."
    assert plan_tool(ready).definition()["description"] == PLAN_TOOL_DESCRIPTION


def test_the_plan_hook_waits_for_a_plan_without_failing():
    state, hooks = PlanState(), HookRegistry()
    hooks.install(PlanHook(state))
    agent = SimpleNamespace(turn_queue=TurnScopedQueue())
    agent.inject_turn_scoped = agent.turn_queue.inject
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert hooks.failures == [] and len(agent.turn_queue) == 0
    state.apply(PlanEdit(goal="g", phases=[Phase(title="a")]))
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert [i.source for i in agent.turn_queue.drain()] == ["plan"]
