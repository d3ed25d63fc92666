"""Chapter 08: an action is judged against the current phase and the goal; the plan is recited
on events (a new phase, a drift), not on every call."""

from __future__ import annotations

PHASE = {"https://docs.example/page/3", "notes/page-3.md"}
GOAL = PHASE | {"https://docs.example/page/4", "notes/page-4.md"}


def use(name: str, **args) -> dict:
    return {"type": "tool_use", "id": "t", "name": name, "input": args}


def judge(impl, tool_use: dict) -> str:
    return impl.serves(tool_use, PHASE, GOAL)


def test_an_action_on_the_current_phase_serves_it(impl):
    action = use("fetch", url="https://docs.example/page/3?chars=500")
    assert (got := judge(impl, action)) == "phase", \
        f"fetching the current phase's page (its query aside: compare targets() with the phase) is 'phase', not {got!r}"
    action = use("write_file", path="notes/page-3.md", content="x")
    assert (got := judge(impl, action)) == "phase", f"writing the current phase's note is 'phase', not {got!r}"


def test_an_action_on_another_phase_serves_the_goal_not_the_phase(impl):
    action = use("fetch", url="https://docs.example/page/4")
    assert (got := judge(impl, action)) == "goal", \
        f"page 4 belongs to another phase (in goal, not in phase): 'goal', not {got!r}"


def test_an_action_outside_the_plan_is_off(impl):
    action = use("fetch", url="https://docs.example/page/12345")
    assert (got := judge(impl, action)) == "off", f"a page no phase names is 'off', not {got!r}"
    action = use("write_file", path="notes/elsewhere.md", content="x")
    assert (got := judge(impl, action)) == "off", f"a path no phase names is 'off', not {got!r}"


def test_bookkeeping_and_actions_that_name_nothing_serve_the_phase(impl):
    for action, why in [(use("plan", phase=2, status="done"), "bookkeeping (its name is in BOOKKEEPING)"),
                        (use("report", status="done", did="all"), "bookkeeping (its name is in BOOKKEEPING)"),
                        (use("read_file", path="notes/page-3.md"), "it touches the current phase's note"),
                        (use("message_user", text="On it."), "it touches nothing a phase names")]:
        assert (got := judge(impl, action)) == "phase", f"{action['name']}{action['input']} is 'phase' ({why}), not {got!r}"


def test_the_plan_is_recited_first_then_on_a_new_phase_or_a_drift(impl):
    trigger = impl.RecitationTrigger()
    steps = [
        (0, None, True, "the first call"),
        (0, "phase", False, "the same phase, served"),
        (1, "phase", True, "a new phase"),
        (1, "phase", False, "the same phase, served"),
        (1, "off", True, "the last call drifted off the plan"),
        (1, "phase", False, "the same phase, served"),
        (1, "goal", True, "the last call drifted to another phase"),
        (1, "phase", False, "the same phase, served"),
        (None, "phase", True, "the plan is done: no phase current is a new phase"),
        (None, "phase", False, "still no phase current"),
    ]
    for n, (phase, verdict, expected, why) in enumerate(steps, start=1):
        got = trigger.should_recite(phase, verdict)
        assert got == expected, f"call {n} (phase {phase}, last verdict {verdict!r}): recite {expected} ({why}), not {got!r}"
