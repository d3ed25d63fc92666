"""Logs Claude Code itself wrote, made at test time (``tests.interop.fixtures``): Claude Code, headless,
two turns (the second ``--resume``s the first) against ``python -m minimal_runtime serve`` on Sonnet 5.5,
Haiku 5.5 and Opus 5.5. Every strategy replays every call of its stream-json output and of its session
file. Runs with the real-client suite (``make interop``, which installs Claude Code into ``.interop/``),
not in ``make test``. Nothing Claude Code wrote is committed."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from minimal_runtime.replay import STRATEGIES, calibrate, load, replay
from minimal_runtime.replay.current import CURRENT_MODELS
from tests.interop.install import Unreachable, ensure_clients

if os.environ.get("INTEROP") != "1":
    pytest.skip("the real-client suite runs with make interop (INTEROP=1)", allow_module_level=True)
try:
    CLAUDE = ensure_clients().claude  # current already when the client suite ran first: nothing to install
except Unreachable as e:
    pytest.skip(f"interop: {e}", allow_module_level=True)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from tests.interop.fixtures import generate_claude_code_logs
    root = tmp_path_factory.mktemp("claude-code")
    with ThreadPoolExecutor(len(CURRENT_MODELS)) as pool:  # each waits on its own processes
        runs = dict(zip(CURRENT_MODELS, pool.map(lambda m: generate_claude_code_logs(root / m, m, CLAUDE),
                                                 CURRENT_MODELS)))
    for model, run in runs.items():
        assert not run.errors and run.tool_uses >= 4, (model, run.errors)
        assert not any(x.refused for x in run.exchanges), model
    return runs


@pytest.mark.parametrize("model", CURRENT_MODELS)
@pytest.mark.parametrize("kind", ["stream", "session"])
def test_every_strategy_replays_every_call_of_a_claude_code_log(logs, model, kind):
    files = logs[model].streams if kind == "stream" else logs[model].sessions
    runs = [r for f in files for r in load(f)]
    assert runs and sum(len(r.calls) for r in runs) >= 3 and all(r.model == model for r in runs)
    for run in runs:
        calibration = calibrate(run)
        for name in STRATEGIES:
            if name == "tail-2025":  # the 2025 layout stops at call 2 here, by design (test_current_models)
                continue
            result = replay(run, name, calibration=calibration)
            assert result.finished and len(result.calls) == len(run.calls), (kind, name, result.stopped)
