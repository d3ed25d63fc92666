"""``replay`` of a ``serve --log`` groups calls as the API sees the conversation (issue 60, item 3).

``serve`` runs as docs/serve.md starts it (``python -m minimal_runtime serve --port 0 --log FILE``) and
the real SDK drives it in the shapes clients send: the prompt-caching docs' multi-turn pattern (the
``cache_control`` marker on the last user message each call, earlier turns sent back as plain strings),
docs/serve.md's ten-line loop (one top-level ``cache_control``), a Claude-Code-like loop (system blocks
and the last tool marked, the marker moving to the last block), litellm's (the newest tool result
marked, its content one text block, then a string on the next call), and a client that renumbers its
``tool_use`` ids midway
(open-interpreter), Continue CLI's (the marker on the last user text, tool results left after it uncached), and open-interpreter
0.4.3's default (every answer sent back with ids of its own: one conversation).
Each conversation must be one run whose ``recorded`` bill is what ``serve``
billed for its calls; the rewritten one is two runs, and no call is billed twice.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import anthropic
import pytest

from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import own_cost_line

MODEL = "claude-sonnet-4-6"
MARK = {"type": "ephemeral"}
SYSTEM = "You are a careful coding agent. Read every file before you change it. " * 60


def plain(content) -> list[dict]:
    """The reply's blocks as a client sends them back (the SDK's own models, no nulls)."""
    return [b.model_dump(exclude_none=True) for b in content]


def marked_last(messages: list[dict]) -> list[dict]:
    """The docs' multi-turn pattern: the marker on the last user message's last block only; earlier user
    turns sent back as the plain strings they were written as."""
    out = []
    for k, m in enumerate(messages):
        if k == len(messages) - 1:
            content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            out.append({**m, "content": [*content[:-1], {**content[-1], "cache_control": MARK}]})
        else:
            out.append(m)
    return out


def answered(reply) -> list[dict]:
    """A tool result for each tool call of ``reply``."""
    return [{"type": "tool_result", "tool_use_id": b.id, "content": f"output of {b.name}: " + "ok " * 200}
            for b in reply.content if b.type == "tool_use"]


def docs_multi_turn(client) -> int:
    messages = [{"role": "user", "content": "Summarise the design of this repository."}]
    for question in ("And the tests?", "And the benchmarks?", "Anything else?"):
        reply = client.messages.create(model=MODEL, max_tokens=300, system=SYSTEM, messages=marked_last(messages))
        messages += [{"role": "assistant", "content": plain(reply.content)}, {"role": "user", "content": question}]
    return 3


def ten_line_loop(client) -> int:
    messages = [{"role": "user", "content": "Plan the release in one line."}]
    for _ in range(3):
        reply = client.messages.create(model=MODEL, max_tokens=1024, messages=messages,
                                       system="You plan software releases. " * 300, cache_control=MARK)
        messages += [{"role": "assistant", "content": reply.content}, {"role": "user", "content": "And then?"}]
    return 3


TOOLS = [{"name": "Read", "description": "Read a file.", "input_schema": {
             "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}},
         {"name": "Bash", "description": "Run a command.", "input_schema": {
             "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
          "cache_control": MARK}]


def claude_code_like(client, litellm: bool = False, task: str = "Fix the failing test.",
                     who: str = "You are Claude Code, Anthropic's official CLI for Claude.") -> int:
    """System blocks and tools marked, the marker on the last block of the last message (moving each call),
    tool results as one text block; ``litellm``: the newest one so (and marked), older ones as strings."""
    system = [{"type": "text", "text": who},  # a system of its own: its first call writes it, reads nothing
              {"type": "text", "text": SYSTEM, "cache_control": MARK}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>files</system-reminder>"},
                                             {"type": "text", "text": task}]}]
    calls = 0
    while True:
        sent = [dict(m) for m in messages]
        last = sent[-1]["content"]
        if litellm and last[-1].get("type") == "tool_result":
            last = [*last[:-1], {**last[-1], "content": [{"type": "text", "text": last[-1]["content"]}]}]
        sent[-1] = {**sent[-1], "content": [*last[:-1], {**last[-1], "cache_control": MARK}]}
        reply = client.messages.create(model=MODEL, max_tokens=400, system=system, tools=TOOLS, messages=sent)
        calls += 1
        if reply.stop_reason != "tool_use":
            return calls
        results = answered(reply)
        if not litellm:
            results = [{**r, "content": [{"type": "text", "text": r["content"]}]} for r in results]
        messages += [{"role": "assistant", "content": plain(reply.content)}, {"role": "user", "content": results}]


def thinking_as_text(client) -> int:
    """gptme's shape: thinking on, each answer sent back as one text block of its own form, the thinking
    inside ``<think>`` tags with its signature in a comment, the marker on the last user message."""
    messages = [{"role": "user", "content": "Explain the build of this repository."}]
    for question in ("And the tests?", "Anything else?"):
        reply = client.messages.create(model=MODEL, max_tokens=2000, system=SYSTEM, messages=marked_last(messages),
                                       thinking={"type": "enabled", "budget_tokens": 1024})
        said = "\n".join(f"<think>\n{b.thinking}\n<!-- think-sig: {b.signature} -->\n</think>" if b.type == "thinking"
                         else b.text for b in reply.content if b.type in ("thinking", "text"))
        messages += [{"role": "assistant", "content": [{"type": "text", "text": said}]},
                     {"role": "user", "content": question}]
    client.messages.create(model=MODEL, max_tokens=2000, system=SYSTEM, messages=marked_last(messages),
                           thinking={"type": "enabled", "budget_tokens": 1024})
    return 3


def continue_cli(client) -> int:
    """Continue CLI 1.5.47's shape: its system block and last tool marked, and the marker on the last user message
    that is text, so a tool round's results follow it uncached (a few hundred tokens: no replay cache splits a
    call so); two user turns."""
    system = [{"type": "text", "text": SYSTEM, "cache_control": MARK}]
    messages: list[dict] = []
    calls = 0
    for question in ("What does this repository build?", "And its tests?"):
        messages.append({"role": "user", "content": [{"type": "text", "text": question}]})
        while True:
            last_text = max(k for k, m in enumerate(messages) if m["content"][0]["type"] == "text" and m["role"] == "user")
            sent = [{**m, "content": [{**m["content"][0], "cache_control": MARK}]} if k == last_text else m
                    for k, m in enumerate(messages)]
            reply = client.messages.create(model=MODEL, max_tokens=400, system=system, tools=TOOLS, messages=sent)
            calls += 1
            messages.append({"role": "assistant", "content": plain(reply.content)})
            if reply.stop_reason != "tool_use":
                break
            messages.append({"role": "user", "content": answered(reply)})
    return calls


def ids_of_its_own(client) -> int:
    """open-interpreter 0.4.3's default run: every answer sent back with ``tool_use`` ids of its own (``toolu_1``,
    ``toolu_2``, ... in order), its results under those, the earlier ones kept as first sent: one conversation."""
    messages = [{"role": "user", "content": "List the files here."}]
    calls = 0
    for turn in range(3):
        reply = client.messages.create(model=MODEL, max_tokens=300, system=SYSTEM, tools=TOOLS[:1], messages=messages)
        calls += 1
        answer = [{**b, "id": f"toolu_{turn + 1}"} if b.get("type") == "tool_use" else b for b in plain(reply.content)]
        messages += [{"role": "assistant", "content": answer}]
        if reply.stop_reason != "tool_use":
            break
        messages += [{"role": "user", "content": [{**r, "tool_use_id": f"toolu_{turn + 1}"} for r in answered(reply)]}]
    return calls


def renumbering(client) -> int:
    """Open-interpreter's shape: after two calls the client renumbers every tool_use id it sends back."""
    messages = [{"role": "user", "content": "Count the lines of every file here."}]
    calls = 0
    for turn in range(4):
        sent = messages
        if turn >= 2:  # the history as the client rewrote it: the same calls under ids of its own
            ids = {}
            sent = []
            for m in messages:
                blocks = []
                for b in m["content"] if isinstance(m["content"], list) else [m["content"]]:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        b = {**b, "id": ids.setdefault(b["id"], f"toolu_renumbered_{len(ids)}")}
                    elif isinstance(b, dict) and b.get("type") == "tool_result":
                        b = {**b, "tool_use_id": ids.setdefault(b["tool_use_id"], f"toolu_renumbered_{len(ids)}")}
                    blocks.append(b)
                sent.append({**m, "content": blocks if isinstance(m["content"], list) else m["content"]})
        reply = client.messages.create(model=MODEL, max_tokens=300, system=SYSTEM, tools=TOOLS[:1], messages=sent,
                                       cache_control=MARK)
        calls += 1
        if reply.stop_reason != "tool_use":
            messages = [*sent, {"role": "assistant", "content": plain(reply.content)},
                        {"role": "user", "content": "Now the tests."}]
        else:
            messages = [*sent, {"role": "assistant", "content": plain(reply.content)},
                        {"role": "user", "content": answered(reply)}]
    return calls


SHAPES = {"docs multi-turn": docs_multi_turn, "ten-line loop": ten_line_loop, "claude-code-like": claude_code_like,
          "litellm": lambda client: claude_code_like(client, litellm=True, task="Fix the lint.",
                                                     who="You are mini-swe-agent, through litellm."),
          "thinking as text": thinking_as_text, "continue": continue_cli, "ids of its own": ids_of_its_own,
          "renumbering": renumbering}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One ``serve --log`` process as the docs start it, every shape run through it in turn; per shape, the
    dollars serve printed for its calls (one line each), and serve's summary."""
    log = tmp_path_factory.mktemp("serve") / "calls.jsonl"
    server = subprocess.Popen([sys.executable, "-m", "minimal_runtime", "serve", "--port", "0", "--log", str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    billed: dict[str, list[float]] = {}
    try:
        line = server.stdout.readline()
        url = server.stdout.readline().strip().removeprefix("export ANTHROPIC_BASE_URL=")
        assert url.startswith("http://127.0.0.1:"), [line, url]
        while not line.startswith("one line per call") and line:
            line = server.stdout.readline()
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        for name, drive in SHAPES.items():
            calls = drive(client)
            lines = [server.stdout.readline() for _ in range(calls)]
            assert all(" 200 | " in x for x in lines), lines
            billed[name] = [float(re.search(r"\| read \d+% \$([0-9.]+)", x).group(1)) for x in lines]
    finally:
        server.send_signal(signal.SIGINT)
        rest, errors = server.communicate(timeout=30)
    summary = float(re.search(r"summary: .* cost \$([0-9.]+)", rest).group(1))
    return log, billed, summary


@pytest.fixture(scope="module")
def runs(served):
    log, billed, _ = served
    runs = load(log)
    return {name: [r for r in runs if r.task and name_of(r) == name] for name in billed}


def name_of(run) -> str:
    task = " ".join(b.get("text", "") for b in run.task)
    return next(name for name, first in [("docs multi-turn", "Summarise"), ("ten-line loop", "Plan the release"),
                                         ("claude-code-like", "Fix the failing"), ("litellm", "Fix the lint"),
                                         ("thinking as text", "Explain the build"), ("renumbering", "Count the lines"),
                                         ("continue", "What does this repository build"),
                                         ("ids of its own", "List the files here")]
                if first in task)


@pytest.mark.parametrize("shape", ["docs multi-turn", "ten-line loop", "claude-code-like", "litellm", "thinking as text",
                                   "continue", "ids of its own"])
def test_a_conversation_whose_client_moves_its_marker_is_one_run_billed_as_serve_billed_it(served, runs, shape):
    _, billed, _ = served
    (run,) = runs[shape]  # was: one run per call that moved the marker
    assert len(run.calls) == len(billed[shape])
    assert run.cost_usd == pytest.approx(sum(billed[shape]), abs=1e-5 * len(billed[shape]))
    recorded = replay(run, "recorded")
    assert recorded.finished and len(recorded.calls) == len(billed[shape])
    assert recorded.cost == pytest.approx(sum(billed[shape]), rel=0.01), (recorded.cost, billed[shape])
    assert f"${run.cost_usd:.4f}" in own_cost_line(run, [recorded])  # the exact sum: serve prints each line rounded


def test_a_rewritten_history_starts_a_run_from_the_rewritten_call_and_no_call_is_billed_twice(served, runs):
    _, billed, summary = served
    first, second = runs["renumbering"]
    assert (len(first.calls), len(second.calls)) == (2, len(billed["renumbering"]) - 2)
    # each row compares with what serve billed for the calls in it, not with one call's cost
    assert first.cost_usd == pytest.approx(sum(billed["renumbering"][:2]), abs=1e-5 * 2)
    assert second.cost_usd == pytest.approx(sum(billed["renumbering"][2:]), abs=1e-5 * len(second.calls))
    bills = [replay(run, "recorded") for run in (first, second)]
    assert [len(b.calls) for b in bills] == [len(first.calls), len(second.calls)]  # was: the history billed again
    assert sum(b.cost for b in bills) == pytest.approx(sum(billed["renumbering"]), rel=0.01)


def test_every_run_of_the_log_together_bills_serves_summary_once(served, runs):
    _, _, summary = served
    everything = [run for shape in runs.values() for run in shape]
    assert len(everything) == len(load(served[0])) == 9
    assert sum(run.cost_usd for run in everything) == pytest.approx(summary, abs=5e-5)
    recorded = sum(replay(run, "recorded").cost for run in everything)  # was: a history billed again per run
    assert recorded == pytest.approx(summary, rel=0.01)

