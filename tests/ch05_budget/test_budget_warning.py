"""Chapter 05: the budget warning fires once, at the crossing, never before, never twice."""

from __future__ import annotations

import re

from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.store import RunState
from minimal_runtime.provider.models import model_spec
from tests.support import CURRENT_MODEL, long_agent, on_both_generations

WINDOW = 20_000  # a small budget, so a short run crosses 80% of it


def run_with_monitor(impl, tmp_path, turns=60, threshold=0.8, model=None):
    monitor, hooks = impl.BudgetMonitor(budget=WINDOW, threshold=threshold), HookRegistry()
    monitor.install(hooks)
    warned = []
    hooks.register(Point.POST_LLM_CALL, lambda e: warned.append("<!-- budget -->" in str(e.request["messages"][-1])))
    agent, _ = long_agent(tmp_path, turns, hooks=hooks, page_chars=1000, **({"model": model} if model else {}))
    agent.run("Read the pages.")
    return agent, monitor, warned


@on_both_generations
def test_warns_once_right_after_the_crossing(impl, tmp_path, model):
    agent, monitor, warned = run_with_monitor(impl, tmp_path, model=model)
    prompts = [c.prompt_tokens for c in agent.calls]
    crossing = next(i for i, p in enumerate(prompts) if p >= 0.8 * WINDOW)  # 0-based index of the first call over
    assert warned.count(True) == 1, f"the warning should ride on exactly one call, not {warned.count(True)}: warn once per run"
    assert warned.index(True) == crossing + 1, \
        (f"call {crossing + 1}'s prompt was the first at 80% of the budget, so call {crossing + 2} carries the warning, "
         f"not call {warned.index(True) + 1}: record() keeps the last prompt, warn() acts on it before the next call")
    assert monitor.warned_at == crossing + 2, f"warned_at should be {crossing + 2} (calls so far + 1), not {monitor.warned_at}"
    assert prompts[-1] >= 0.8 * WINDOW, "the test's setting changed: its run no longer stays over the threshold to the end"


def test_never_before_the_crossing(impl, tmp_path):
    agent, monitor, warned = run_with_monitor(impl, tmp_path, turns=20)  # stays well under 80%
    assert max(c.prompt_tokens for c in agent.calls) < 0.8 * WINDOW, "the test's setting changed: its run crosses the threshold"
    assert not any(warned) and monitor.warned_at is None, \
        f"a warning went out under the threshold (call {warned.index(True) + 1 if any(warned) else None}): warn only at >= threshold * budget"
    assert monitor.last_prompt_tokens == agent.calls[-1].prompt_tokens, \
        (f"record() should keep the last call's prompt_tokens ({agent.calls[-1].prompt_tokens:,}), "
         f"not {monitor.last_prompt_tokens:,}")
    assert agent.hooks.failures == [], f"a hook raised during the run: {agent.hooks.failures}"


def test_the_budget_not_the_window_decides_on_a_1m_model(impl, tmp_path):
    assert model_spec(CURRENT_MODEL).context_window >= 50 * WINDOW, "the test's setting: a window this run never fills to 80%"
    agent, monitor, warned = run_with_monitor(impl, tmp_path, model=CURRENT_MODEL)
    crossing = next(i for i, c in enumerate(agent.calls) if c.prompt_tokens >= 0.8 * WINDOW)
    assert warned.count(True) == 1 and True in warned and warned.index(True) == crossing + 1, \
        (f"on a 1M-token model the warning should still come once, on call {crossing + 2}, right after the prompt "
         f"crossed 80% of the *budget* (self.budget, not the model's window); it rode on {warned.count(True)} calls")


# Any first-person form: "I am", "I'm", "I've", "my", "me". A system entry states facts instead.
FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'll|I'd|[Mm]y|[Mm]e|[Mm]ine)\b")
PERSIST = re.compile(r"\b(files?|write|written|writing|save|saved|saving|notes?|persist\w*)\b", re.IGNORECASE)


class FakeAgent:
    """An agent whose last call read ``prompt_tokens``: only what record() and warn() touch."""

    def __init__(self, prompt_tokens: int):
        self.calls = [type("C", (), {"prompt_tokens": prompt_tokens})()]
        self.injected = []
        self.state = RunState()  # what the runtime's agent keeps across crashes (a solution may use it)

    def inject_turn_scoped(self, source, text):
        self.injected.append((source, text))


def test_the_warning_states_the_share_and_what_to_persist_as_a_fact(impl):
    monitor = impl.BudgetMonitor(budget=100, threshold=0.8)
    fake = FakeAgent(85)
    event = type("E", (), {"agent": fake})()
    monitor.record(event)
    monitor.warn(event)
    monitor.warn(event)
    assert len(fake.injected) == 1 and fake.injected[0][0] == "budget", \
        f"two warn() calls after an 85% prompt should inject once, with source 'budget': injected {fake.injected}"
    text = fake.injected[0][1]
    assert "85%" in text, f"85 of 100 tokens: the warning should state the fill as '85%': {text!r}"
    assert PERSIST.search(text), f"the warning should say to write down what is not in a file yet: {text!r}"
    assert not FIRST_PERSON.search(text), f"a system entry states facts; it does not speak as the agent: {text!r}"


def test_a_prompt_exactly_at_the_threshold_warns_one_under_does_not(impl):
    for tokens, expected in ((80, 1), (79, 0)):  # 80 of 100 is exactly the 80% threshold: ">=", not ">"
        monitor, fake = impl.BudgetMonitor(budget=100, threshold=0.8), FakeAgent(tokens)
        event = type("E", (), {"agent": fake})()
        monitor.record(event)
        monitor.warn(event)
        assert len(fake.injected) == expected, \
            (f"a last prompt of {tokens} tokens against 0.8 * 100 should inject {expected} warning(s), not "
             f"{len(fake.injected)}: warn when the prompt is >= threshold * budget (the crossing includes the boundary)")


def test_a_new_user_message_gets_its_own_warning(impl, tmp_path):
    agent, monitor, warned = run_with_monitor(impl, tmp_path)
    assert warned.count(True) == 1, f"the first run should carry one warning, not {warned.count(True)}"
    agent.run("One more thing.")  # the simulated policy answers at once: one call
    assert warned.count(True) == 2 and warned[-1], \
        "a new user message starts a new run (reset() clears warned_at): its first call over the threshold carries a warning"
    assert monitor.warned_at == len(agent.calls), f"warned_at should be {len(agent.calls)}, the call it rode on, not {monitor.warned_at}"
