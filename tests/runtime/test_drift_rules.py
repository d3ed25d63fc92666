"""The drift module's rules, each stated by a test (issue 27: scored by mutation): what an
objective names and an action touches, the worst verdict of a call, adherence over a window, the
recitation trigger, which failed turns are erased, and a framing chosen once per new result."""

from __future__ import annotations

from types import SimpleNamespace as NS

from minimal_runtime.core.hooks import CallEvent, HookEvent, HookRegistry, Point
from minimal_runtime.features.drift import (FRAMINGS, DriftMeter, ErasedErrors, EventRecitation, RecitationTrigger,
                                            VariedResults, serves, subjects, targets)


def use(name="fetch", **args):
    return {"type": "tool_use", "id": "t", "name": name, "input": args}


def test_an_objective_names_its_urls_without_query_or_trailing_punctuation_and_its_paths():
    assert subjects("Read https://a.example/p/1?x=2, then https://b.example/q/. and notes/a.md, data.csv.") == \
        {"https://a.example/p/1", "https://b.example/q", "notes/a.md", "data.csv"}
    assert subjects("Fetch http://c.example/page.md") == {"http://c.example/page.md"}  # not also a path
    assert subjects("Fetch https://c.example/docs//page.md") == {"https://c.example/docs//page.md"}  # "//" in a path
    assert subjects("think hard") == set()
    assert subjects("Read https://a.example/X") == {"https://a.example/X"}  # only / . and , are trailing punctuation


def test_an_action_touches_its_string_urls_and_file_paths_only():
    assert targets(use(url="https://a.example/p/1/?page=3", path="notes/a.md", note="some text.md here", n=3)) == \
        {"https://a.example/p/1", "notes/a.md"}
    assert targets({"name": "x"}) == set() and targets({"name": "x", "input": None}) == set()
    assert targets(use(url="https://a.example/X/")) == {"https://a.example/X"}


def test_the_verdict_is_phase_goal_or_off():
    phase, goal = {"https://a.example/1"}, {"https://a.example/1", "https://a.example/2"}
    assert serves(use(url="https://a.example/1"), phase, goal) == "phase"
    assert serves(use(url="https://a.example/2"), phase, goal) == "goal"
    assert serves(use(url="https://z.example/"), phase, goal) == "off"
    assert serves(use("plan", url="https://z.example/"), phase, goal) == "phase"  # bookkeeping
    assert serves(use(text="nothing named"), phase, goal) == "phase"


def response(*blocks):
    return NS(content=[NS(type=b["type"], model_dump=lambda b=b: b) if isinstance(b, dict) else b for b in blocks])


def record(meter, *blocks, agent=None):
    meter.record(CallEvent(Point.POST_LLM_CALL, agent or NS(), request={}, response=response(*blocks), batch=[]))


def test_a_call_is_judged_by_its_worst_action_and_a_call_without_actions_serves():
    meter = DriftMeter(["Read https://a.example/1", "Read https://a.example/2"], current=lambda agent: 0)
    record(meter, use(url="https://a.example/1"), use(url="https://a.example/2"))
    record(meter, use(url="https://a.example/2"), use(url="https://z.example/"), use(url="https://a.example/1"))
    record(meter, {"type": "text", "text": "thinking aloud"})
    record(meter, use(url="https://a.example/1"))
    assert meter.verdicts == ["goal", "off", "phase", "phase"]
    assert meter.adherence() == 0.5 and meter.adherence(last=2) == 1.0 and meter.adherence(last=3) == 2 / 3


def test_adherence_of_no_calls_is_zero_not_a_division_error_and_of_one_call_its_verdict():
    meter = DriftMeter([], current=lambda agent: None)
    assert meter.adherence() == 0.0
    meter.verdicts.append("phase")
    assert meter.adherence() == 1.0 and meter.adherence(last=1) == 1.0


def test_without_a_current_phase_or_past_the_plan_nothing_serves_the_phase():
    for current in (None, 2):
        meter = DriftMeter(["Read https://a.example/1", "Read https://a.example/2"], current=lambda agent, c=current: c)
        record(meter, use(url="https://a.example/1"))
        assert meter.verdicts == ["goal"]
    meter = DriftMeter(["Read https://a.example/1", "Read https://a.example/2"], current=lambda agent: 1)
    record(meter, use(url="https://a.example/2"))
    assert meter.verdicts == ["phase"]


def test_the_meter_records_after_every_call():
    meter = DriftMeter(["Read https://a.example/1"], current=lambda agent: 0)
    hooks = HookRegistry().install(meter)
    hooks.run(Point.POST_LLM_CALL, CallEvent(Point.POST_LLM_CALL, NS(), request={}, response=response(use(url="https://z.example/")), batch=[]))
    assert meter.verdicts == ["off"] and hooks.failures == []


def test_the_plan_is_recited_first_on_a_new_phase_and_after_a_drift_only():
    trigger = RecitationTrigger()
    calls = [(0, None), (0, "phase"), (1, "phase"), (1, "phase"), (1, "goal"), (1, "phase"), (1, "off"),
             (None, "phase"), (None, "phase")]
    assert [trigger.should_recite(p, v) for p, v in calls] == [True, False, True, False, True, False, True, True, False]
    assert RecitationTrigger().should_recite(None, None)  # the first call, even with no phase


class Agent:
    def __init__(self, messages=()):
        self.messages, self.injected, self.replaced = list(messages), [], []

    def inject_turn_scoped(self, source, text):
        self.injected.append((source, text))

    def replace_history(self, messages):
        self.replaced.append(list(messages))
        self.messages = list(messages)


def test_event_recitation_injects_the_plan_when_due_and_counts_it():
    meter = DriftMeter(["Read https://a.example/1"], current=lambda agent: 0)
    recitation = EventRecitation(lambda agent: "the plan", lambda agent: 0, meter)
    agent, hooks = Agent(), HookRegistry().install(recitation)
    for verdict in (None, "phase", "off"):
        if verdict:
            meter.verdicts.append(verdict)
        hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert agent.injected == [("plan", "the plan")] * 2 and recitation.recitations == 2 and hooks.failures == []


def text(role, t="x"):
    return {"role": role, "content": [{"type": "text", "text": t}]}


def call(i):
    return {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "fetch", "input": {}}]}


def result(i, error=False):
    block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "out"}
    return {"role": "user", "content": [{**block, "is_error": True} if error else block]}


def erase(after_seen, messages):
    feature, agent = ErasedErrors(after_seen=after_seen), Agent(messages)
    hooks = HookRegistry().install(feature)
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert hooks.failures == []
    return feature, agent


def test_a_new_failure_is_erased_with_its_call_before_the_model_sees_it():
    history = [text("user"), call(1), result(1, error=True), call(2), result(2, error=True)]
    feature, agent = erase(False, history)
    assert agent.messages == history[:3] and feature.erased == 1  # the seen failure stays


def test_after_seen_erases_the_failures_already_seen_and_keeps_the_newest():
    history = [text("user"), call(1), result(1, error=True), call(2), result(2), call(3), result(3, error=True)]
    feature, agent = erase(True, history)
    assert agent.messages == [history[0], *history[3:]] and feature.erased == 1


def test_nothing_is_erased_without_a_failed_result_after_a_call():
    for history in ([text("user"), call(1), result(1)],
                    [text("user"), result(1, error=True)],                    # no call before it
                    [result(1, error=True)],                                  # the first message
                    [text("user"), call(1), {"role": "user", "content": ["a string block"]}]):
        feature, agent = erase(False, history)
        assert agent.replaced == [] and feature.erased == 0
    # a failed result first in the history has no call before it, even when the history ends in one
    feature, agent = erase(True, [result(0, error=True), call(1), result(1), call(2)])
    assert agent.replaced == [] and feature.erased == 0


def test_a_history_that_starts_with_the_call_still_has_its_failure_erased():
    """After an on-demand compaction the history starts with an assistant message."""
    feature, agent = erase(False, [call(1), result(1, error=True)])
    assert agent.messages == [] and feature.erased == 1


class Tools:
    definitions = [{"name": "fetch"}]

    def __init__(self):
        self.masked, self.calls = set(), []

    def mask(self, *names):
        self.masked |= set(names)

    def unmask(self, *names):
        self.masked -= set(names)

    def is_final(self, tool_use, result):
        return tool_use["name"] == "report" and not result.get("is_error")

    def call(self, tool_use):
        self.calls.append(tool_use)
        return {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "out"} if tool_use["name"] != "img" \
            else {"type": "tool_result", "tool_use_id": tool_use["id"], "content": [{"type": "image"}]}


def test_each_new_result_is_framed_by_a_seeded_draw_and_the_rest_passes_through():
    import random
    tools = Tools()
    varied = VariedResults(tools, seed=7)
    rng = random.Random(7)
    for i in range(6):
        out = varied.call({"id": f"t{i}", "name": "fetch", "input": {}})
        assert out == {"type": "tool_result", "tool_use_id": f"t{i}", "content": rng.choice(FRAMINGS).format(name="fetch", out="out")}
    assert varied.call({"id": "i", "name": "img"})["content"] == [{"type": "image"}]  # not text: as it came
    assert varied.definitions == tools.definitions
    varied.mask("fetch")
    assert varied.masked == {"fetch"}
    varied.unmask("fetch")
    assert varied.masked == set()
    assert varied.is_final({"name": "report"}, {}) and not varied.is_final({"name": "fetch"}, {})
    assert not varied.is_final({"name": "report"}, {"is_error": True})
    default, zero = VariedResults(Tools()), random.Random(0)
    assert [default.call({"id": f"t{i}", "name": "f"})["content"] for i in range(5)] == \
        [zero.choice(FRAMINGS).format(name="f", out="out") for _ in range(5)]
    only = VariedResults(Tools(), framings=("<{name}> {out}",))
    assert only.call({"id": "t", "name": "fetch"})["content"] == "<fetch> out"


def test_the_revaried_layout_reframes_every_earlier_result_with_a_fresh_seeded_draw():
    import random

    from minimal_runtime.core.context import CallParts
    from minimal_runtime.features.drift import revaried_layout
    durable = [text("user", "task"), call(1), result(1), call(2),
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": [text("user")]},
                                            {"type": "text", "text": "note"}]}]
    sent = revaried_layout(lambda parts: {"messages": parts.durable}, seed=3)(CallParts(system=[], tools=[], durable=durable))
    rng = random.Random(3)
    framed = rng.choice(FRAMINGS).format(name="tool", out="out")
    assert sent["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": framed}]
    assert sent["messages"][:2] == durable[:2] and sent["messages"][3:] == durable[3:]  # not a string result: as it was
    assert durable[2] == result(1)  # the history itself is not touched
    again = revaried_layout(lambda parts: {"messages": parts.durable})(CallParts(system=[], tools=[], durable=durable))
    assert again["messages"][2]["content"][0]["content"] == random.Random(0).choice(FRAMINGS).format(name="tool", out="out")
