"""The real-client suite: pinned clients nobody here wrote, against the emulator over HTTP.

Each client holds, on each current model, a conversation of two tool rounds and a follow-up turn
(two more rounds), against ``python -m minimal_runtime serve`` (the command users run; see harness.py). A (client, model) passes when the client reports no error, ran at least four
tools, and every request it sent was accepted and passed the prefix check, except the refusals its
driver is there to recover from (``Driver.expected``: a lost thread, a request the server cannot
thread, an injected fault), each of which it must meet at least once. Any other refused request fails
the test with its error and the shape of what was sent (field paths, block types, headers: no
client prose), so the emulator's owner can see exactly what the client sends.

Not collected by plain ``pytest`` (see conftest.py); ``make interop`` runs it. The clients are
installed on first use into ``.interop/`` (see install.py); a registry that cannot be reached then
skips the whole module in one line. Logs of the last run: ``.interop/last-run/``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time

from dataclasses import dataclass
from typing import Callable

import pytest
from .harness import Exchange, closed_network_env, serve_emulators
from .install import CACHE, HERE, Unreachable, ensure_clients
from .policy import ToolRounds

MODELS = ["claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5", "claude-sonnet-4-6"]


@dataclass(frozen=True)
class Driver:
    """How to start a client's driver (given the installed clients), the ``serve`` it meets, and the
    refusals its runs must meet and recover from (by ``error.details.error_code``; ``emulated_fault``
    for ``--faults``): each at least once per model, none of them a failure."""

    command: Callable
    serve_args: tuple = ()
    rounds: int = 2  # tool calls the policy makes per user turn
    env: tuple = ()
    expected: tuple = ()


def _node(name: str) -> Callable:
    return lambda c: ["node", str(CACHE / "npm" / name)]


def _python(name: str) -> Callable:
    return lambda c: [str(c.python), str(HERE / "drivers" / name)]


RECOVERY = dict(serve_args=("--thread-ttl", "3"), rounds=4, env=(("INTEROP_MODE", "recovery"), ("INTEROP_OUTLAST", "4")),
                expected=("thread_unsupported_request", "thread_not_found"))
DRIVERS = {  # client -> its driver
    "ts-sdk": Driver(_node("ts_sdk_driver.mjs")),
    "pydantic-ai": Driver(_python("pydantic_ai_driver.py")),
    "langchain-anthropic": Driver(_python("langchain_driver.py")),
    "litellm": Driver(_python("litellm_driver.py")),
    # the SDKs' own tool runners, threads on by default (API-2026.md §11.8), with their recoveries
    "python-tool-runner": Driver(_python("python_tool_runner_driver.py"), **RECOVERY),
    "ts-tool-runner": Driver(_node("ts_tool_runner_driver.mjs"), **RECOVERY),
    "vercel-ai": Driver(_node("vercel_ai_driver.mjs")),
    # the Python tool runner's retries through serve --faults (seed 3: faults, never five in a row)
    "python-retry": Driver(_python("python_tool_runner_driver.py"), serve_args=("--faults", "429:0.2,529:0.2",
                           "--fault-seed", "3"), rounds=4, env=(("INTEROP_MODE", "retry"),), expected=("emulated_fault",)),
}
CLIENTS = ["claude-code", *DRIVERS]
MIN_TOOL_CALLS = 4  # two rounds in each of the two turns
LAST_RUN = CACHE / "last-run"
DRIVER_TIMEOUT = 600

try:
    _started = time.perf_counter()
    INSTALLED = ensure_clients()
    INSTALL_SECONDS = time.perf_counter() - _started
except Unreachable as e:
    pytest.skip(f"interop: {e}", allow_module_level=True)

RESULTS: dict[tuple[str, str], dict] = {}  # (client, model) -> outcome; read by conftest's summary
STARTUP: dict[str, float] = {}  # driver -> seconds of its process outside the conversations (imports)


def _run_driver(client: str) -> None:
    """One driver process for all models, one ``serve`` command per model."""
    for script in (HERE / "drivers").glob("*.mjs"):
        shutil.copy(script, CACHE / "npm")  # ESM resolves packages next to the file
    driver = DRIVERS[client]
    logs = {m: LAST_RUN / f"{client}.{m}.serve.jsonl" for m in MODELS}
    with serve_emulators(ToolRounds(rounds=driver.rounds), MODELS, logs=logs, options=driver.serve_args) as servers:
        command = driver.command(INSTALLED) + [f"{m}={url}" for m, (url, _) in servers.items()]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=DRIVER_TIMEOUT,
                                  cwd=HERE / "drivers", env={**closed_network_env(), **dict(driver.env)},
                                  stdin=subprocess.DEVNULL)
            out, stderr = done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            out, stderr = "", f"no answer after {DRIVER_TIMEOUT} s"
        elapsed = time.perf_counter() - started
    lines = _lines(out)  # the servers have stopped: their logs are read
    STARTUP[client] = elapsed - sum(r.get("seconds", 0) for r in lines.values())
    for model, (_, exchanges) in servers.items():
        line = lines.get(model) or {"ok": False, "error": f"the driver printed nothing for it; stderr: {stderr[-1500:]}"}
        errors = [] if line["ok"] else [line["error"] + "\n" + line.get("traceback", "")]
        _record(client, model, list(exchanges), errors, line.get("tool_calls") or 0, line.get("seconds", 0.0))


def _lines(out: str) -> dict[str, dict]:
    return {r["model"]: r for r in (json.loads(x) for x in out.splitlines() if x.startswith("{"))}


def _run_claude_code(model: str) -> None:
    from .fixtures import generate_claude_code_logs
    started = time.perf_counter()
    run = generate_claude_code_logs(LAST_RUN / "claude-code" / model, model, INSTALLED.claude)
    _record("claude-code", model, run.exchanges, run.errors, run.tool_uses, time.perf_counter() - started)


def _record(client, model, exchanges: list[Exchange], errors: list[str], tool_calls: int, seconds: float) -> None:
    LAST_RUN.mkdir(parents=True, exist_ok=True)
    with open(LAST_RUN / f"{client}.{model}.exchanges.jsonl", "w") as f:
        for x in exchanges:
            f.write(json.dumps(x.to_json()) + "\n")
    expected = DRIVERS[client].expected if client in DRIVERS else ()
    met = {x.error_code for x in exchanges if x.refused and x.error_code in expected}
    errors = errors + [f"never met {code}: the recovery from it was not exercised" for code in expected if code not in met]
    passed = not errors and tool_calls >= MIN_TOOL_CALLS and not any(
        (x.refused and x.error_code not in expected) or x.prefix_failures for x in exchanges)
    RESULTS[(client, model)] = {"client": client, "model": model, "exchanges": exchanges, "errors": errors,
                                "tool_calls": tool_calls, "seconds": seconds, "result": "ok" if passed else "FAILED",
                                "expected": expected}


def _outcome(client: str, model: str) -> dict:
    if (client, model) not in RESULTS:
        if client == "claude-code":
            _run_claude_code(model)
        else:
            _run_driver(client)
    return RESULTS[(client, model)]


@pytest.fixture(scope="session", autouse=True)
def _fresh_logs():
    shutil.rmtree(LAST_RUN, ignore_errors=True)
    LAST_RUN.mkdir(parents=True)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("client", CLIENTS)
def test_client_completes(client: str, model: str) -> None:
    outcome = _outcome(client, model)
    exchanges: list[Exchange] = outcome["exchanges"]
    refused = [x for x in exchanges if x.refused and x.error_code not in outcome["expected"]]
    broken = [x for x in exchanges if x.prefix_failures]
    report = "\n".join(
        [*(f"client error: {e}" for e in outcome["errors"]),
         *(f"refused {x.status} {x.path}: {x.error}\n  sent: {json.dumps(x.shape)}" for x in refused),
         *(f"prefix check failed: {len(x.prefix_failures)} blocks from {x.prefix_failures[0]} on (accepted: the model "
           f"does not enforce it)" for x in broken if not x.refused)])
    if refused or broken or outcome["errors"]:
        pytest.fail(report, pytrace=False)
    assert exchanges, "the client sent no request"
    assert outcome["tool_calls"] >= MIN_TOOL_CALLS, f"{outcome['tool_calls']} tools ran, {MIN_TOOL_CALLS} expected"
