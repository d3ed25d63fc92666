"""The course's online path, exercised offline: ``COURSE_BACKEND=api`` and ``ANTHROPIC_BASE_URL``
pointing at ``serve``, so the demo builds a plain ``anthropic.Anthropic`` from the environment, as a
learner with a key runs it. The behaviour is serve's default policy (a simulation), not the demo's."""

from __future__ import annotations

import io

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started


def test_the_demo_runs_to_the_end_on_the_online_path_against_serve(monkeypatch):
    from minimal_runtime.example.demo import run_demo
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        monkeypatch.setenv("COURSE_BACKEND", "api")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
        out = io.StringIO()
        agent = run_demo(out=out)
    text = out.getvalue()
    assert f"via the Messages API at {url}" in text and "SIMULATED" not in text.splitlines()[0]
    assert "run done after 3 calls" in text  # two tool rounds, then the answer
    assert len(agent.calls) == len(emulator.calls) == len(front.lines) == 3
    assert front.report.refused == 0 and all("prefix ok" in line for line in front.lines)
    assert [c.cache_read_input_tokens for c in agent.calls] == [c.cache_read_input_tokens for c in emulator.calls]
