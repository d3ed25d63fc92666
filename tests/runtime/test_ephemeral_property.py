"""Property: whatever is injected, over 100 injected turns, never reaches the history or the store."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import dumps
from minimal_runtime.core.store import RunStore
from tests.support import long_agent

injections = st.lists(st.tuples(st.sampled_from(["plan", "budget", "km", "policy"]),
                                st.text(min_size=1, max_size=40)), min_size=1, max_size=4)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(injections, min_size=100, max_size=100), st.booleans())
def test_no_ephemeral_text_in_history_or_store(per_call, prefill_model):
    with tempfile.TemporaryDirectory() as tmp:
        hooks = HookRegistry()
        marker = "EPHEMERAL-"

        def inject(event):
            for k, (source, body) in enumerate(per_call[len(event.agent.calls) % len(per_call)]):
                event.agent.inject_turn_scoped(source, f"{marker}{len(event.agent.calls)}-{k} {body}")
        hooks.register(Point.PRE_LLM_CALL, inject)
        model = "claude-opus-4-5" if prefill_model else "claude-sonnet-4-6"
        agent, emu = long_agent(Path(tmp), turns=99, model=model, hooks=hooks, store=RunStore(Path(tmp) / "run"))
        assert agent.run("Read the pages.").status == "done"
        assert len(agent.calls) == 100
        assert marker not in dumps(agent.messages)
        assert marker not in (Path(tmp) / "run" / "events.jsonl").read_text()
        assert marker in dumps(agent.last_request["messages"])  # it did ride in the calls
