"""Chapter 08: an action is judged against the current phase and the goal; the plan is recited
on events (a new phase, a drift), not on every call."""

from __future__ import annotations

PHASE = {"https://docs.example/page/3", "notes/page-3.md"}
GOAL = PHASE | {"https://docs.example/page/4", "notes/page-4.md"}


def use(name: str, **args) -> dict:
    return {"type": "tool_use", "id": "t", "name": name, "input": args}


def test_an_action_on_the_current_phase_serves_it(impl):
    assert impl.serves(use("fetch", url="https://docs.example/page/3?chars=500"), PHASE, GOAL) == "phase"
    assert impl.serves(use("write_file", path="notes/page-3.md", content="x"), PHASE, GOAL) == "phase"


def test_an_action_on_another_phase_serves_the_goal_not_the_phase(impl):
    assert impl.serves(use("fetch", url="https://docs.example/page/4"), PHASE, GOAL) == "goal"


def test_an_action_outside_the_plan_is_off(impl):
    assert impl.serves(use("fetch", url="https://docs.example/page/12345"), PHASE, GOAL) == "off"
    assert impl.serves(use("write_file", path="notes/elsewhere.md", content="x"), PHASE, GOAL) == "off"


def test_bookkeeping_and_actions_that_name_nothing_serve_the_phase(impl):
    assert impl.serves(use("plan", phase=2, status="done"), PHASE, GOAL) == "phase"
    assert impl.serves(use("report", status="done", did="all"), PHASE, GOAL) == "phase"
    assert impl.serves(use("read_file", path="notes/page-3.md"), PHASE, GOAL) == "phase"
    assert impl.serves(use("message_user", text="On it."), PHASE, GOAL) == "phase"


def test_the_plan_is_recited_first_then_on_a_new_phase_or_a_drift(impl):
    trigger = impl.RecitationTrigger()
    decisions = [trigger.should_recite(phase, verdict) for phase, verdict in [
        (0, None),       # first call: recite
        (0, "phase"),    # same phase, served: no
        (1, "phase"),    # a new phase: recite
        (1, "phase"),    # no
        (1, "off"),      # the last call drifted: recite
        (1, "phase"),    # no
        (1, "goal"),     # drifted to another phase: recite
        (1, "phase"),    # no
        (None, "phase"), # the plan is done: a new "phase" (none current): recite once
        (None, "phase"), # no
    ]]
    assert decisions == [True, False, True, False, True, False, True, False, True, False]
