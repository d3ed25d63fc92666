"""Clients whose loops end by a tool, or that stopped on an edge of ``serve``, against plain ``serve`` (its default
policy, SIMULATED, no ``--policy``): each pinned client's own loop runs to its end on two current
models, every request accepted and through the prefix check.

- smolagents' ``ToolCallingAgent`` (LiteLLM's route, ``tool_choice: any`` every step, its steps
  resent as text) ends only when ``final_answer`` is called: it must end so, not at ``max_steps``;
  on claude-sonnet-5-5 LiteLLM itself refuses forced tool use, before any request, so it runs on
  claude-haiku-5-5 and claude-sonnet-4-6.
- the ``cline`` CLI (npm) ends when its model stops calling tools: ``finishReason: completed``.
- LangGraph's prebuilt ReAct agent (langchain-anthropic), agno's ``Agent`` with ``Claude``, the
  OpenAI Agents SDK with ``LitellmModel``, Google ADK's ``LlmAgent`` on ``LiteLlm``, and a crewAI ``Crew``
  (native Anthropic provider; it counts tokens before each call): each client's own tool loop, two turns.
- the ``opencode`` CLI (npm ``opencode-ai``), ``opencode run``, two turns (``--continue``); offline its
  bundled model catalog has no 5.5 model (it fails before any request), so on claude-opus-4-6 and
  claude-sonnet-4-6.
- mirascope 2's default loop (``execute_tools`` and ``resume`` until no tool call, two turns) moves its
  breakpoint each call and clears the one before with ``"cache_control": null``.

Each client is installed into its own folder (``install.ensure_client``: ``clients/NAME/`` holds its
pins); a registry that cannot be reached skips that client in one line. Each client's driver runs
once, for both models; ``make interop`` prints the table (requests, refused, prefix failures).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from .harness import Exchange, closed_network_env, serve_emulators
from .install import CACHE, HERE, Unreachable, ensure_client

DRIVER_TIMEOUT = 900
LAST_RUN = CACHE / "last-run"


@dataclass(frozen=True)
class Client:
    models: tuple[str, str]
    command: Callable[[Path], list[str]]  # the driver's command, given the client's install folder


CLIENTS = {
    "smolagents": Client(("claude-haiku-5-5", "claude-sonnet-4-6"),
                         lambda folder: [str(folder / "bin" / "python"), str(HERE / "drivers" / "smolagents_driver.py")]),
    "mirascope": Client(("claude-sonnet-5-5", "claude-sonnet-4-6"),
                        lambda folder: [str(folder / "bin" / "python"), str(HERE / "drivers" / "mirascope_driver.py")]),
    **{name: Client(("claude-sonnet-5-5", "claude-sonnet-4-6"), lambda folder, name=name: [
        str(folder / "bin" / "python"), str(HERE / "drivers" / f"{name.replace('-', '_')}_driver.py")])
       for name in ("langgraph", "agno", "openai-agents", "google-adk", "crewai")},
    "opencode": Client(("claude-opus-4-6", "claude-sonnet-4-6"),  # its bundled catalog has no 5.5 (offline)
                       lambda folder: [sys.executable, str(HERE / "drivers" / "opencode_driver.py"),
                                       str(folder / "node_modules" / ".bin" / "opencode")]),
    "cline": Client(("claude-sonnet-5-5", "claude-sonnet-4-6"),
                    lambda folder: [sys.executable, str(HERE / "drivers" / "cline_driver.py"),
                                    str(folder / "node_modules" / ".bin" / "cline")]),
}
RESULTS: dict[tuple[str, str], dict] = {}  # (client, model) -> outcome; conftest prints the table


def _run(name: str) -> None:
    client = CLIENTS[name]
    try:
        folder = ensure_client(name)
    except Unreachable as e:
        pytest.skip(f"interop {name}: {e}")
    logs = {m: LAST_RUN / f"default-policy.{name}.{m}.serve.jsonl" for m in client.models}
    with serve_emulators(None, list(client.models), logs=logs) as servers:
        started = time.perf_counter()
        try:
            done = subprocess.run(client.command(folder) + [f"{m}={url}" for m, (url, _) in servers.items()],
                                  capture_output=True, text=True, timeout=DRIVER_TIMEOUT, cwd=HERE / "drivers",
                                  env=closed_network_env(), stdin=subprocess.DEVNULL)
            out, stderr = done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            out, stderr = "", f"no answer after {DRIVER_TIMEOUT} s"
        elapsed = time.perf_counter() - started
    lines = {r["model"]: r for r in (json.loads(x) for x in out.splitlines() if x.startswith("{"))}
    for model, (_, exchanges) in servers.items():
        line = lines.get(model) or {"ok": False, "error": f"the driver printed nothing for it; stderr: {stderr[-1500:]}"}
        RESULTS[(name, model)] = {"client": name, "model": model, "exchanges": list(exchanges),
                                  "errors": [] if line["ok"] else [f"{line['error']}\n{line.get('traceback', '')}"],
                                  "tool_calls": line.get("tool_calls") or 0,
                                  "seconds": line.get("seconds", elapsed / len(servers)), "expected": ()}
        RESULTS[(name, model)]["result"] = "ok" if _passed(RESULTS[(name, model)]) else "FAILED"


def _passed(outcome: dict) -> bool:
    xs: list[Exchange] = outcome["exchanges"]
    return bool(xs) and not outcome["errors"] and outcome["tool_calls"] >= 2 and not any(
        x.refused or x.prefix_failures for x in xs)


@pytest.mark.parametrize("name, model", [(n, m) for n, c in CLIENTS.items() for m in c.models])
def test_a_loop_that_ends_by_a_tool_or_a_format_completes_against_plain_serve(name: str, model: str) -> None:
    if (name, model) not in RESULTS:
        _run(name)
    outcome = RESULTS[(name, model)]
    xs: list[Exchange] = outcome["exchanges"]
    report = "\n".join([*(f"client error: {e}" for e in outcome["errors"]),
                        *(f"refused {x.status} {x.path}: {x.error}\n  sent: {json.dumps(x.shape)}" for x in xs if x.refused),
                        *(f"prefix check failed from {x.prefix_failures[0]}" for x in xs if x.prefix_failures)])
    if report:
        pytest.fail(report, pytrace=False)
    assert xs and outcome["tool_calls"] >= 2, f"{len(xs)} requests, {outcome['tool_calls']} tools ran"
