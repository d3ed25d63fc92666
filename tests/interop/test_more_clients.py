"""Clients on their documented default path against plain ``serve --log`` (its default policy, no
``--policy``), each checked against what it keeps itself and what ``replay`` reads back (issue 60).

Per client, one model (the docstring of each driver says which and why: a 5.5 model where the client
takes it offline, else claude-sonnet-4-6), one ``serve`` as docs/serve.md starts it, and these checks:

- ``requests``: the client reached ``/v1/messages``; ``refused``: no request was answered >= 400 (the
  emulator refuses only what the API refuses, so a refusal is a bug here or a client-side error to name);
- ``loop``: the client's own loop ended normally (the driver's ``ok``), having run its tools;
- ``tokens``: each token total the client recorded itself (its trajectory, its logs database, its usage
  objects: the driver reads them, ``Client.record`` says where) equals the sum of what serve logged for
  the same calls; ``cost``: so does its own cost, where it keeps one (to the five decimals serve prints a call's);
- ``runs``: ``replay.load`` of serve's log gives one run per conversation the driver held;
- ``bill``: each run's ``replay(run, "recorded").cost`` equals the dollars serve printed for that run's
  calls (each log record's ``line``, which serve computed: not a figure replay computed), and all the
  runs together serve's summary.

A check that cannot hold for a reason on the client's side is named in ``Client.expected`` with the
reason; the table shows it, and it does not fail the test. A client whose install fails (a registry
that cannot be reached, a pin that does not install) is skipped with its reason in one line.
``conftest.py`` prints the table: requests, refused, tokens equal, runs from the log against
conversations, the recorded bill against serve's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from minimal_runtime.replay import load, replay

from .harness import Exchange, closed_network_env, serve_emulators
from .install import CACHE, HERE, Unreachable, ensure_client

DRIVER_TIMEOUT = 300
LAST_RUN = CACHE / "last-run"
TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
SERVE_DOLLARS = re.compile(r"\| read \d+% \$([0-9.]+)")  # serve's line: "... | read 88% $0.00307 | ..."
SERVE_SUMMARY = re.compile(r"summary: .* cost \$([0-9.]+)")
COST_ROUNDING = 5e-6  # a call's dollars as serve prints them: five decimals
BILL_TOLERANCE = 0.01  # relative: the recorded replay prices tokens in the log's own, calibrated


def python_driver(name: str) -> Callable[[Path], list[str]]:
    """A driver run by the client's own interpreter: ``drivers/NAME_driver.py``."""
    return lambda folder: [str(folder / "bin" / "python"), str(HERE / "drivers" / f"{name.replace('-', '_')}_driver.py")]


@dataclass(frozen=True)
class Client:
    model: str
    command: Callable[[Path], list[str]]  # the driver's command, given the install folder; MODEL=URL is appended
    record: str  # where the client keeps its own token figures ("not kept: why" where it keeps none)
    conversations: int = 1  # conversations the driver holds: runs serve's log must replay as
    expected: dict[str, str] = field(default_factory=dict)  # check -> the client-side reason it cannot hold


CLIENTS = {
    # -- part A: Python agents and libraries --
    "mini-swe-agent": Client("claude-sonnet-5-5", python_driver("mini-swe-agent"),
                             "its trajectory: info.model_stats, and each message's usage (litellm's)",
                             expected={"cost": "its cost is litellm's price table's (1.110.2), which prices Sonnet 5.5's "
                                               "cache reads at $0.10/MTok where serve's (the models overview) says "
                                               "$0.20: serve's tokens at litellm's prices are its figure"}),
    "gptme": Client("claude-sonnet-5-5", python_driver("gptme"), "each answer's metadata: usage and cost",
                    conversations=2),  # the chat, and the title it asks claude-haiku-4-5 for
    "llm": Client("claude-sonnet-5-5", python_driver("llm"), "its logs database: responses' tokens"),
    "autogen": Client("claude-sonnet-4-6", python_driver("autogen"), "each message's models_usage (RequestUsage)"),
    "semantic-kernel": Client("claude-sonnet-5-5", python_driver("semantic-kernel"),
                              "each answer's metadata['usage'] in the thread's history"),
    "griptape": Client("claude-sonnet-4-6", python_driver("griptape"), "its FinishPromptEvents' token counts",
                       expected={"runs": "its conversation memory keeps a run's input and output, not its tool calls: "
                                         "the second run sends the first without them, a rewritten history, from "
                                         "which replay starts a run (each call still billed once)"}),
    # -- part B --
    "langroid": Client("claude-sonnet-5-5", python_driver("langroid"), "LanguageModel.usage_cost_dict (LLMTokenUsage)"),
    "camel-ai": Client("claude-sonnet-5-5", python_driver("camel-ai"), "ChatAgent's on_request_usage, per request",
                       expected={"runs": "camel-ai 0.2.90 rewrites its history on the second step: its memory orders "
                                         "the first step's answer before that step's second tool round (calls 5-6 send "
                                         "[..., result 1, answer, tool_use 2, result 2, 'And tomorrow?']): by the "
                                         "rule a rewritten history starts a run, so 2 runs; each billed as serve did"}),
    "browser-use": Client("claude-sonnet-4-6", lambda folder: python_driver("browser-use")(folder) if Path("/usr/bin/chromium").exists()
                          else pytest.skip("interop browser-use: it drives Debian's /usr/bin/chromium, which is not installed "
                                           "(apt-get install -y chromium)"),
                          "the agent history's usage (token cost service)",
                          expected={"runs": "browser-use sends each step as a new prompt (its state and history written "
                                            "into user text, no assistant turns): each call is a conversation of its own "
                                            "as the API reads it, one run a call, each billed as serve did"}),
    "open-interpreter": Client("claude-sonnet-4-6", python_driver("open-interpreter"),
                               "not kept by open-interpreter; LiteLLM's response usage, per call"),
    "continue": Client("claude-sonnet-5-5", lambda folder: [sys.executable, str(HERE / "drivers" / "continue_driver.py"),
                                                            str(folder / "node_modules" / ".bin" / "cn")],
                       "its session file's usage and totalCost",
                       expected={"cost": "Continue 1.5.47's price table has no Sonnet 5.5: it prices the run at a few "
                                         "hundredths of serve's figure; on claude-sonnet-4-6 its totalCost equals "
                                         "serve's ($0.0181302 against $0.01813, measured)"}),
}
RESULTS: dict[str, dict] = {}  # client -> outcome; conftest prints the table


def serve_billed(log: Path) -> list[dict]:
    """What serve billed, per accepted /v1/messages call of its log: the usage and the dollars it printed."""
    calls = []
    for line in log.read_text().splitlines():
        d = json.loads(line) if line.strip() else {}
        if d.get("method") == "POST" and d.get("path") == "/v1/messages" and d.get("status") == 200:
            dollars = SERVE_DOLLARS.search(d.get("line") or "")
            calls.append({"usage": d.get("usage") or {}, "model": d.get("model"),
                          "dollars": float(dollars.group(1)) if dollars else None})
    return calls


def summary_dollars(printed: Path) -> float | None:
    found = SERVE_SUMMARY.search(printed.read_text()) if printed.exists() else None
    return float(found.group(1)) if found else None


def token_totals(calls: list[dict]) -> dict[str, int]:
    totals = {k: sum(c["usage"].get(k) or 0 for c in calls) for k in TOKEN_KEYS}
    totals["prompt_tokens"] = totals["input_tokens"] + totals["cache_read_input_tokens"] + totals["cache_creation_input_tokens"]
    return totals


def _usage_key(u: dict) -> tuple:
    return (u.get("input_tokens", 0) + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0),
            u.get("cache_read_input_tokens", 0), u.get("output_tokens"))


def runs_against_serve(log: Path, billed: list[dict]) -> list[dict]:
    """Each run ``replay`` reads from serve's log, with its recorded bill and what serve printed for its calls.
    A run's calls are found among the log's in order: every accepted call is in exactly one run, in log
    order, so each log call goes to the run whose next call has its usage (the earliest such run)."""
    runs = load(log)
    pending = [[(c.usage.prompt_tokens, c.usage.cache_read or 0, c.usage.output_tokens) if c.usage else None
                for c in run.calls] for run in runs]
    served: list[list[float | None]] = [[] for _ in runs]
    for call in billed:
        key = _usage_key(call["usage"])
        owner = next((i for i, p in enumerate(pending) if len(served[i]) < len(p) and p[len(served[i])] == key), None)
        if owner is not None:
            served[owner].append(call["dollars"])
    out = []
    for run, dollars, calls in zip(runs, served, pending):
        recorded = replay(run, "recorded")
        serve = sum(d for d in dollars if d is not None) if len(dollars) == len(calls) and None not in dollars else None
        out.append({"calls": len(calls), "recorded": recorded.cost, "serve": serve, "finished": recorded.finished})
    return out


def _run(name: str) -> dict:
    client = CLIENTS[name]
    try:
        folder = ensure_client(name)
    except Unreachable as e:
        pytest.skip(f"interop {name}: {e}")
    log = LAST_RUN / f"more-clients.{name}.{client.model}.serve.jsonl"
    workdir = LAST_RUN / f"more-clients.{name}.work"  # the client's own files, kept for a look until the next run
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    env = {**closed_network_env(), "INTEROP_WORKDIR": str(workdir)}
    with serve_emulators(None, [client.model], logs={client.model: log}) as servers:
        url, exchanges = servers[client.model]
        started = time.perf_counter()
        try:
            done = subprocess.run(client.command(folder) + [f"{client.model}={url}"], capture_output=True, text=True,
                                  timeout=DRIVER_TIMEOUT, cwd=workdir, env=env, stdin=subprocess.DEVNULL)
            out, stderr = done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            out, stderr = e.stdout or "", f"no answer after {DRIVER_TIMEOUT} s"
            out = out.decode() if isinstance(out, bytes) else out
        elapsed = time.perf_counter() - started
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    line = lines[-1] if lines else {"ok": False, "error": f"the driver printed nothing; stderr: {stderr[-2000:]}"}
    (LAST_RUN / f"more-clients.{name}.driver.txt").write_text(out + "\n--- stderr ---\n" + stderr)
    return outcome(name, client, line, list(exchanges), log, elapsed)


def outcome(name: str, client: Client, line: dict, exchanges: list[Exchange], log: Path, elapsed: float) -> dict:
    """The checks' findings (check -> what is wrong; empty where it held) and the table's figures."""
    messages = [x for x in exchanges if x.path == "/v1/messages" and x.method == "POST"]
    refused = [x for x in exchanges if x.refused]
    billed = serve_billed(log) if log.exists() else []
    problems: dict[str, str] = {}
    if not messages:
        problems["requests"] = "no /v1/messages request reached serve"
    if refused:
        problems["refused"] = "; ".join(f"{x.status} {x.path}: {x.error} (sent {json.dumps(x.shape)[:600]})"
                                        for x in refused[:3])
    if not line.get("ok"):
        problems["loop"] = f"{line.get('error')}\n{line.get('traceback', '')}"
    elif not line.get("tool_calls"):
        problems["loop"] = "the client's loop ran no tool"
    # a client's record may cover its main model's calls only (gptme keeps no record of its title call)
    covered = line.get("usage_models")
    recorded_calls = [c for c in billed if not covered or c["model"] in covered]
    usage, totals = line.get("usage"), token_totals(recorded_calls)
    if usage is None:
        tokens = "not kept"
    else:
        differ = {k: (v, totals.get(k)) for k, v in usage.items() if v != totals.get(k)}
        tokens = "no" if differ else "yes"
        if differ:
            problems["tokens"] = "client's own against serve's: " + ", ".join(f"{k} {a} vs {b}" for k, (a, b) in differ.items())
    own, serve_own = line.get("cost_usd"), sum(c["dollars"] or 0 for c in recorded_calls)
    if own is not None and abs(own - serve_own) > COST_ROUNDING * max(len(recorded_calls), 1):
        problems["cost"] = f"the client's own ${own:.6f} against serve's ${serve_own:.5f} for the same calls"
    runs = runs_against_serve(log, billed) if billed else []
    if len(runs) != client.conversations:
        problems["runs"] = f"replay read {len(runs)} runs from serve's log; the driver held {client.conversations} conversations"
    summary = summary_dollars(log.with_suffix(".out"))
    recorded = sum(r["recorded"] for r in runs)
    wrong = [r for r in runs if not r["finished"] or r["serve"] is None
             or abs(r["recorded"] - r["serve"]) > BILL_TOLERANCE * max(r["serve"], 1e-9)]
    if wrong or summary is None or abs(recorded - summary) > BILL_TOLERANCE * max(summary, 1e-9):
        problems["bill"] = (f"recorded ${recorded:.5f} against serve's summary {summary}; runs "
                            + ", ".join(f"{r['calls']} calls ${r['recorded']:.5f} vs {r['serve']}" for r in runs))
    return {"client": name, "model": client.model, "requests": len(messages), "refused": len(refused),
            "tokens": tokens, "record": line.get("record") or client.record, "cost_usd": own, "serve_own": serve_own,
            "serve_cost": summary, "runs": len(runs), "conversations": client.conversations,
            "recorded": recorded, "tool_calls": line.get("tool_calls"), "seconds": line.get("seconds", elapsed),
            "problems": problems, "expected": {k: v for k, v in client.expected.items() if k in problems},
            "result": "ok" if set(problems) <= set(client.expected) else "FAILED"}


@pytest.mark.parametrize("name", list(CLIENTS))
def test_a_client_on_its_default_path_is_served_billed_and_replayed_as_it_recorded(name: str) -> None:
    if name not in RESULTS:
        RESULTS[name] = _run(name)
    found = RESULTS[name]
    unexpected = {k: v for k, v in found["problems"].items() if k not in found["expected"]}
    if unexpected:
        pytest.fail("\n".join(f"{k}: {v}" for k, v in unexpected.items()), pytrace=False)


def more_clients_table(rows: list[dict]) -> str:
    """One line per client: requests, refused, tokens equal, runs against conversations, the recorded bill
    against serve's, and what each expected limitation is."""
    header = ("client", "model", "requests", "refused", "tokens equal", "client's own cost / serve's",
              "runs from log / conversations", "recorded bill / serve's", "tools", "seconds", "result")
    lines = [header]
    for r in rows:
        serve = f"${r['serve_cost']:.5f}" if r["serve_cost"] is not None else "-"
        own = f"${r['cost_usd']:.5f} / ${r['serve_own']:.5f}" if r["cost_usd"] is not None else "not kept"
        lines.append((r["client"], r["model"], str(r["requests"]), str(r["refused"]), r["tokens"], own,
                      f"{r['runs']} / {r['conversations']}", f"${r['recorded']:.5f} / {serve}", str(r["tool_calls"]),
                      f"{r['seconds']:.1f}", r["result"] + "".join(f"; expected {k}: {v}" for k, v in r["expected"].items())))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    fmt = lambda line: "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(lines[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, lines[1:])])

