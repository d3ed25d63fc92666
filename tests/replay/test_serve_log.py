"""``serve --log`` as a format (``replay/formats/serve_log.py``): a run of the SDK's own tool runner
through ``serve``, replayed from the log ``serve`` wrote, bills what ``serve`` billed."""

from __future__ import annotations

import io
import json

import anthropic
import pytest
from anthropic import beta_tool

from minimal_runtime.emulator import Emulator
from minimal_runtime.replay import load, replay, table
from minimal_runtime.serve import ToolThenAnswer, started

SYSTEM = "You are a careful assistant. Read every file the user names before you answer. " * 40


def served_run(log, rounds: int = 5, model: str = "claude-sonnet-4-6", **runner_options):
    """The SDK's tool runner (threads on, as by default) against ``serve --log``; returns serve's front."""
    @beta_tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: the file's path
        """
        return f"the contents of {path}:\n" + "def f(x):\n    return x * 2\n" * 40

    emulator = Emulator(model=model, policy=ToolThenAnswer(rounds=rounds))
    with started(emulator, log=str(log), out=io.StringIO()) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        runner = client.beta.messages.tool_runner(model=model, max_tokens=400, system=SYSTEM, tools=[read_file],
                                                  messages=[{"role": "user", "content": "Read the files."}],
                                                  **runner_options)
        assert list(runner)[-1].stop_reason == "end_turn"
    return front


@pytest.mark.parametrize("caching", ["cached", "uncached"])
def test_a_tool_runner_run_replayed_from_serves_log_bills_what_serve_billed(tmp_path, caching):
    log = tmp_path / "serve.jsonl"
    front = served_run(log, **({"cache_control": {"type": "ephemeral"}} if caching == "cached" else {}))
    served = sum(c.cost for c in front.report.calls)
    (run,) = load(log)
    assert run.source == "serve-log" and len(run.calls) == 6 and len(front.report.calls) == 6
    assert sum(len(c.results) for c in run.calls) == 5  # every tool call answered, threads rebuilt
    recorded = replay(run, "recorded")
    assert recorded.finished and len(recorded.calls) == 6
    assert round(recorded.cost, 2) == round(served, 2) and recorded.cost == pytest.approx(served, rel=0.01), \
        (recorded.cost, served)
    assert f"${served:.4f}" in table(run, [recorded])  # serve's own figure, beside the replay's


def test_several_conversations_in_one_serve_log_are_several_runs_and_other_exchanges_are_counted(tmp_path):
    log = tmp_path / "serve.jsonl"
    served_run(log, rounds=2)
    served_run(log, rounds=3)
    with open(log, "a") as f:
        f.write(json.dumps({"n": 99, "method": "GET", "path": "/v1/models", "status": 200, "response": {"data": []}})
                + "\n")
    first, second = load(log)
    assert (len(first.calls), len(second.calls)) == (3, 4)
    assert first.skipped == {"GET /v1/models": 1}
