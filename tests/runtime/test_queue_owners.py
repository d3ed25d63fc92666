"""The turn-scoped queue as the agent uses it: a learner's chapter-01 queue (only ``inject`` and ``drain``
filled in) runs under the runtime's hooks, and a note another thread injects while a hook's notes move into
the step's record is delivered, not cut."""

from __future__ import annotations

import json

from exercises.ch01_ephemeral_queue import TurnScopedQueue as LearnerQueue
from minimal_runtime.core.context import TurnScopedQueue
from minimal_runtime.core.hooks import HookRegistry, Point
from tests.support import pricing_agent

TASK = "List the files, then read the README."


class Filled(LearnerQueue):
    """What a learner writes in chapter 01: the two methods, as the solution has them."""

    inject = TurnScopedQueue.inject
    drain = TurnScopedQueue.drain


def planning_hooks(sent: list[str]) -> HookRegistry:
    """A plan note before each call; each request as sent, into ``sent``."""
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", f"PLAN call {len(e.agent.calls)}"))
    hooks.register(Point.POST_LLM_CALL, lambda e: sent.append(json.dumps(e.request["messages"][-1])))
    return hooks


def test_a_learner_queue_with_inject_and_drain_filled_in_runs_under_the_runtime_s_hooks(tmp_path):
    # it lacked ``since``, which the hook registry calls after each hook: AttributeError on the first call
    sent: list[str] = []
    agent, _, _ = pricing_agent(tmp_path, model="claude-sonnet-5-5", hooks=planning_hooks(sent), turn_queue=Filled())
    result = agent.run(TASK)
    assert result.status == "done", result.error
    assert sent and all("PLAN call" in s for s in sent)


class Busy(TurnScopedQueue):
    """A queue whose background writer injects once, just after the registry read the plan hook's notes
    before the second call (the first call's notes stay queued: the layout is not known yet)."""

    def __init__(self) -> None:
        super().__init__()
        self.plans = 0

    def since(self, length: int):
        notes = super().since(length)
        self.plans += bool(notes)
        if notes and self.plans == 2:
            self.inject("knowledge", "KM-NOTE from another thread")
        return notes


def test_a_note_injected_while_a_hook_s_notes_move_to_the_step_is_delivered_once(tmp_path):
    sent: list[str] = []
    agent, _, _ = pricing_agent(tmp_path, model="claude-sonnet-5-5", hooks=planning_hooks(sent), turn_queue=Busy())
    assert agent.run(TASK).status == "done"
    carried = [k for k, s in enumerate(sent) if "KM-NOTE" in s]
    assert len(carried) == 1, f"the background note reached calls {carried}: it was cut with the hook's notes"
