"""Chapter 08's mitigations in the runtime, on the simulated reader: the meter, event-driven
recitation, errors kept or erased (and what erasing costs on each generation), variation placed
at creation or everywhere, the KM's drift nudge."""

from __future__ import annotations

import json
import logging

from minimal_runtime.core.context import layout_for
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import tool_uses
from minimal_runtime.example.backend import make_client
from minimal_runtime.example.drift import DriftingReader, current_page, flaky_fetch, reader_agent, reference_objective
from minimal_runtime.example.knowledge import RunClock, SimulatedKM
from minimal_runtime.features.drift import DriftMeter, ErasedErrors, EventRecitation, revaried_layout
from minimal_runtime.features.knowledge import KnowledgeManager, SerialPool
from minimal_runtime.features.plan import Phase, Plan, render_plan_block
from minimal_runtime.provider.models import model_spec

PAGES = 30
TASK = f"Summarise reference pages 0 to {PAGES - 1}, one note per page."


def plan_for(reader):
    current = current_page(reader)

    def render(agent) -> str:
        c = current(agent)
        c = PAGES if c is None else c
        return render_plan_block(Plan(goal=TASK, phases=[Phase(title=f"Summarise reference page {n}", status=(
            "done" if n < c else "in_progress" if n == c else "pending")) for n in range(PAGES)]))
    return render


def run(tmp_path, *, drift=0.5, half_life=400.0, features=(), model="claude-sonnet-5-5", seed=0, **agent_kwargs):
    reader = DriftingReader(0, PAGES - 1, drift=drift, half_life=half_life, seed=seed)
    meter = DriftMeter([reference_objective(n) for n in range(PAGES)], current_page(reader))
    hooks = HookRegistry().install(meter)
    for make in features:
        hooks.install(make(reader, meter))
    agent, emulator = reader_agent(tmp_path, reader, model=model, hooks=hooks, **agent_kwargs)
    result = agent.run(TASK)
    return agent, meter, result, emulator


def test_the_meter_sees_drift_and_event_recitation_removes_it_for_fewer_blocks_than_every_call(tmp_path):
    agent, meter, result, _ = run(tmp_path / "none")
    assert result.status == "done" and meter.adherence() < 0.9 and {"goal", "off"} <= set(meter.verdicts)
    recite = []

    def event_recitation(reader, meter):
        feature = EventRecitation(plan_for(reader), current_page(reader), meter)
        recite.append(feature)
        return feature
    agent, meter, result, _ = run(tmp_path / "event", features=(event_recitation,))
    assert result.status == "done" and meter.adherence() == 1.0
    assert 0 < recite[0].recitations < len(agent.calls)  # on events only: not every call


def test_the_kms_drift_nudge_brings_the_reader_back(tmp_path):
    def km_feature(reader, meter):
        clock = RunClock()
        client, _ = make_client(SimulatedKM(), model="claude-haiku-5-5")
        km = KnowledgeManager(client, "claude-haiku-5-5", clock, pool=SerialPool())

        class Wiring:
            def install(self, hooks):
                hooks.register(Point.PRE_LLM_CALL, clock.advance)
                hooks.install(km)
        return Wiring()
    _, without, _, _ = run(tmp_path / "none")
    _, with_km, result, _ = run(tmp_path / "km", features=(km_feature,))
    assert result.status == "done" and with_km.adherence() > without.adherence()


def _failing_runs(tmp_path, model, eraser):
    reader = DriftingReader(0, PAGES - 1, drift=0.0)
    hooks = HookRegistry()
    if eraser is not None:
        hooks.install(eraser)
    agent, _ = reader_agent(tmp_path, reader, fetch=flaky_fetch(fail_every=5, failures=3), model=model, hooks=hooks,
                            check_append_only=True)
    return agent, agent.run(TASK)


def test_kept_errors_are_worked_around_erased_ones_are_retried_blind(tmp_path):
    kept, result = _failing_runs(tmp_path / "kept", "claude-sonnet-5-5", None)
    assert result.status == "done"
    fetches = [json.dumps(c["input"]) for m in kept.messages if m["role"] == "assistant" for c in tool_uses(m)
               if c["name"] == "fetch"]
    assert len(fetches) == len(set(fetches))  # never the same failing call twice: the mirror instead
    eraser = ErasedErrors()
    erased, result = _failing_runs(tmp_path / "erased", "claude-sonnet-5-5", eraser)
    assert result.status == "done" and eraser.erased == 3 * 6  # six flaky pages, each failed three times unseen
    assert len(erased.calls) == len(kept.calls) + 2 * 6 and erased.edits == []  # nothing it was sent changed


def test_erasing_errors_the_model_already_saw_is_an_edit_refused_on_a_current_model(tmp_path):
    logging.getLogger("minimal_runtime.core.agent").setLevel(logging.ERROR)
    older, result = _failing_runs(tmp_path / "4.6", "claude-sonnet-4-6", ErasedErrors(after_seen=True))
    assert result.status == "done" and len(older.edits) == 6
    current, result = _failing_runs(tmp_path / "5.5", "claude-sonnet-5-5", ErasedErrors(after_seen=True))
    assert result.status == "error" and "Invalid `signature` in `thinking` block" in result.error


def test_variation_made_once_stays_cached_variation_everywhere_edits_every_call(tmp_path):
    logging.getLogger("minimal_runtime.core.agent").setLevel(logging.ERROR)
    reader = DriftingReader(0, 9, drift=0.0)
    varied, _ = reader_agent(tmp_path / "once", reader, model="claude-sonnet-4-6", vary=1, check_append_only=True)
    assert varied.run(TASK).status == "done" and varied.edits == []
    framings = {c["content"].split("\n")[0].replace("fetch", "").replace("write_file", "")
                for m in varied.messages if m["role"] == "user" for c in m["content"] if c.get("type") == "tool_result"}
    assert len(framings) > 1
    everywhere, _ = reader_agent(tmp_path / "everywhere", DriftingReader(0, 9, drift=0.0), model="claude-sonnet-4-6",
                                 layout=revaried_layout(layout_for(model_spec("claude-sonnet-4-6"))[0]), check_append_only=True)
    assert everywhere.run(TASK).status == "done" and len(everywhere.edits) >= len(everywhere.calls) - 3
    share = lambda agent: sum(c.cache_read_input_tokens for c in agent.calls) / sum(c.prompt_tokens for c in agent.calls)
    assert share(everywhere) < share(varied) - 0.3
