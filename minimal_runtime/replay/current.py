"""Claude Code shaped logs of current-model runs, made by the runtime's own agent on the emulator.

Most logs a learner has today come from current models (Sonnet 5.5, Haiku 5.5, Opus 5.5), which
bind each thinking block to everything sent before it. The course cannot ship anyone's logs, so
tests, the benchmark and chapter 10 make their own: the runtime's ``Agent`` on the ``Emulator``
does a small coding task with tool rounds (``Bash``, ``Read``), hands one question to a sub-agent
(``Task``), is compacted once (its history replaced by a summary, as Claude Code's auto-compact
does), and is then continued with a second prompt (``claude --continue``). The run is written out
the two ways Claude Code writes one (the shapes ``importers.py`` reads; every text is ours):

- a session file, as in ``~/.claude/projects/<project>/<session>.jsonl``: a ``queue-operation``
  line first, one ``assistant`` line per content block (same ``message.id`` and ``usage``),
  ``progress`` and ``file-history-snapshot`` lines between, the compaction as a
  ``compact_boundary`` line and an ``isCompactSummary`` user line, the sub-agent in
  ``<session>/subagents/agent-<id>.jsonl`` (every line ``isSidechain``);
- a headless ``stream-json`` log (``claude -p --output-format stream-json``): an ``init`` line, no
  prompt line, the sub-agent's lines marked with ``parent_tool_use_id``, the summary as an
  ``isSynthetic`` user line, a ``result`` line. A headless run is one process, so this log stops
  where the first prompt's work ends (a ``--continue`` would be a log of its own).

The usage on each line is what the emulator billed the agent, as Claude Code writes it: the prompt
side whole, the output a streaming placeholder (1 on a call's first line, growing a little line by
line, never the answer's size). The ``result`` line carries what Claude Code adds up over the run:
``usage`` (the main thread's calls, output included), ``modelUsage`` per model (every call the
process made: the sub-agent's, the compaction's summary call and a small side call on Haiku 4.5,
which no line of the log shows) and ``total_cost_usd``. With ``hidden_tokens`` the agents' system
prompt carries that many tokens no log shows, as Claude Code's does (about 20,000): a stand-in block
(``emulator.tokens.stand_in``), so making hundreds of logs stays cheap.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from ..core.agent import Agent
from ..core.hooks import HookRegistry, Point
from ..core.messages import text_block, user
from ..core.tools import FunctionTool
from ..emulator import Emulator
from ..emulator.policies import Turn, text, tool_use
from ..emulator.tokens import stand_in
from ..provider.cost import CallRecord

CURRENT_MODELS = ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5")
START = datetime(2026, 11, 30, 14, 0, tzinfo=timezone.utc)
SYSTEM = "You are a coding agent working in a small Python repository. Use the tools; be brief."
SUB_SYSTEM = "You are a sub-agent: answer the one question you are given, using the tools, then stop."
PROMPT = "The test suite of the billing module fails. Find out why and fix it."
CONTINUED = "Now add a test for the rounding rule you fixed."
QUESTION = "Which functions in the repository call round_cents?"
SUMMARY = ("This session is being continued from an earlier conversation. Summary: the billing tests failed "
           "because round_cents rounded half down; the fix is in billing/money.py.")
SUMMARIZE = "Summarize the conversation so far for a continuation: the task, what was found, what is left."
THINKING = ("Weighing which file to look at next. The failing test names the rounding of cents, so the money "
            "helpers come first; the invoice and tax modules call them, and a change there would show in both. "
            "Reading before editing keeps the history short, and one command that runs the narrowest test is "
            "cheaper than the whole suite. ") * 2  # a call writes kilobytes its log's count does not show
SIDE_MODEL = "claude-haiku-4-5"  # Claude Code's small side calls (titles, command checks): in no line of a log


class Command(BaseModel):
    command: str


class File(BaseModel):
    file_path: str


class Question(BaseModel):
    description: str
    prompt: str


def _listing(seed: str, chars: int) -> str:
    """A deterministic tool output of about ``chars`` characters: lines a shell could print."""
    lines, k = [], 0
    while sum(len(line) + 1 for line in lines) < chars:
        lines.append(f"{seed}:{k:04d}: def step_{k}(amount): return round_cents(amount * {k % 7 + 1}) # line {k * 13}")
        k += 1
    return "\n".join(lines)


class _Script:
    """The emulated model for both agents, told apart by their system prompt: the main agent reads
    and runs ``rounds`` times (once through the sub-agent) and answers; after the continue it does
    two more rounds. The sub-agent runs one command and answers."""

    def __init__(self, rounds: int):
        self.main = [*self._rounds(rounds, "main"), [text("The fix is in billing/money.py: round half up.")],
                     *self._rounds(2, "more"), [text("Added tests/test_rounding.py; it passes.")]]
        task_at = min(2, rounds - 1)
        self.main[task_at] = [text("I will ask a sub-agent."),
                              tool_use("Task", {"description": "find callers", "prompt": QUESTION})]
        self.sub = [[tool_use("Bash", {"command": "grep -rn round_cents ."})],
                    [text("round_cents is called by billing/invoice.py and billing/tax.py.")]]

    @staticmethod
    def _rounds(n: int, tag: str) -> list[list[dict]]:
        out = []
        for k in range(n):
            call = tool_use("Read", {"file_path": f"billing/{tag}_{k}.py"}) if k % 2 else \
                tool_use("Bash", {"command": f"pytest -q billing -k {tag}_{k}"})
            out.append([text(f"Step {k + 1}: checking {tag} {k}."), call])
        return out

    def __call__(self, request: dict) -> Turn:
        last = request["messages"][-1]["content"]
        asked = last[-1].get("text", "") if isinstance(last, list) and last else str(last)
        if asked == SUMMARIZE:  # the compaction's own call
            return Turn(content=[text(SUMMARY)], thinking="What matters for the rest of the task?")
        if request.get("model") == SIDE_MODEL:
            return Turn(content=[text("billing-rounding-fix")])
        system = request.get("system")
        first = system[0]["text"] if isinstance(system, list) and system else str(system or "")
        turns = self.sub if first.startswith(SUB_SYSTEM[:20]) else self.main
        return Turn(content=turns.pop(0), thinking=THINKING)


class _Clock:
    """Each reading a few seconds after the last: the calls of a busy session."""

    def __init__(self):
        self.t = START.timestamp()

    def __call__(self) -> float:
        self.t += 4.0
        return self.t


class Recorded(BaseModel):
    """One run as the agent saw it: its messages, its calls and, per call, when it was made."""

    model: str
    messages: list[dict]
    calls: list[dict]  # usage dicts, as the API reports them
    times: list[float]
    compacted_before: int | None = None  # the call before which the history was replaced
    continued_at: int | None = None  # the call that answered the second prompt first
    sub: "Recorded | None" = None
    task_id: str | None = None  # the Task tool_use the sub-agent answered
    unlogged: list[dict] = []  # {"model", "usage"} of the calls no line shows: the compaction's, a side call


def _system(prompt: str, hidden_tokens: int) -> str | list[dict]:
    return [text_block(prompt), text_block(stand_in(hidden_tokens))] if hidden_tokens else prompt


def _usage(call) -> dict:
    return {"input_tokens": call.input_tokens, "cache_creation_input_tokens": call.cache_creation_input_tokens,
            "cache_read_input_tokens": call.cache_read_input_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": call.cache_creation_5m,
                               "ephemeral_1h_input_tokens": call.cache_creation_1h},
            "output_tokens": call.output_tokens, "service_tier": "standard"}


def run_current(model: str, rounds: int = 8, output_chars: int = 2_000, compact_at: int | None = None,
                hidden_tokens: int = 0) -> Recorded:
    """Run the task on the emulated ``model``; ``output_chars`` sizes each tool output, so a caller
    can push the context past the compaction strategies' 60,000-token limit; ``hidden_tokens``
    sizes the system prompt no log shows."""
    clock = _Clock()
    emulator = Emulator(model=model, policy=_Script(rounds), clock=clock)
    client = emulator.client()
    times: list[float] = []
    sub_record: dict = {}

    def shell(args: Command) -> str:
        return _listing(args.command.split()[-1], output_chars)

    def read(args: File) -> str:
        return _listing(args.file_path, output_chars)

    base_tools = [FunctionTool("Bash", "Run a shell command.", Command, shell),
                  FunctionTool("Read", "Read a file.", File, read)]

    def task(args: Question) -> str:
        sub_times: list[float] = []
        hooks = HookRegistry()
        hooks.register(Point.PRE_LLM_CALL, lambda event: sub_times.append(clock.t))
        agent = Agent(client, model=model, system=_system(SUB_SYSTEM, hidden_tokens), tools=base_tools, hooks=hooks,
                      max_steps=4)
        result = agent.run(args.prompt)
        sub_record["sub"] = Recorded(model=model, messages=agent.messages, calls=[_usage(c) for c in agent.calls],
                                     times=sub_times)
        return result.final_text

    compact_at = compact_at if compact_at is not None else rounds  # just before the first answer
    hooks = HookRegistry()
    replaced: list[dict] = []
    unlogged: list[dict] = []
    system = _system(SYSTEM, hidden_tokens)

    def before_call(event) -> None:
        times.append(clock.t)
        if len(event.agent.calls) == compact_at:
            # Claude Code's compaction is a call of its own (the history, then a request for a
            # summary: it reads the history from cache); its log shows only the summary
            answer = client.messages.create(model=model, max_tokens=4_000, system=system,
                                            tools=event.agent.tool_definitions,
                                            messages=[*event.agent.messages, user(SUMMARIZE)],
                                            cache_control={"type": "ephemeral"})
            unlogged.append({"model": model, "usage": answer.usage.model_dump()})
            replaced.extend(event.agent.messages)
            event.agent.replace_history([user(SUMMARY)])

    hooks.register(Point.PRE_LLM_CALL, before_call)
    side = client.messages.create(model=SIDE_MODEL, max_tokens=50, messages=[user(f"A title for: {PROMPT}")])
    unlogged.append({"model": SIDE_MODEL, "usage": side.usage.model_dump()})
    agent = Agent(client, model=model, system=system, tools=[*base_tools, FunctionTool("Task", "Ask a sub-agent.",
                                                                                        Question, task)],
                  hooks=hooks, max_steps=rounds + 4)
    first = agent.run(PROMPT)
    if first.status != "done":
        raise RuntimeError(f"the generating run did not finish: {first.error or first.status}")
    continued_at = len(agent.calls)
    agent.run(CONTINUED)
    # every turn in order: those the compaction replaced, then the rest after the summary
    messages = [*replaced, *agent.messages[1:]] if replaced else agent.messages
    task_id = next(b["id"] for m in messages if m["role"] == "assistant" for b in m["content"] if b.get("name") == "Task")
    return Recorded(model=model, messages=messages, calls=[_usage(c) for c in agent.calls], times=times,
                    compacted_before=compact_at if replaced else None, continued_at=continued_at,
                    sub=sub_record.get("sub"), task_id=task_id, unlogged=unlogged)


# -- writing the run out as Claude Code does -------------------------------------------------------

VERSION = "2.1.332"
SESSION = "0f5e3c1a-current-model-run"


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _jsonl(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def _placeholder(usage: dict, line: int) -> dict:
    """A call's usage as its ``line``-th line writes it: the output count streaming had reached
    when the line was written (1, then a little more), not what the call wrote in the end."""
    return {**usage, "output_tokens": min(usage["output_tokens"], 1 + 12 * line)}


def _turns(run: Recorded):
    """(message, the call that produced it or None for user messages, its index) in order."""
    k = 0
    for message in run.messages:
        if message["role"] == "assistant":
            yield message, k
            k += 1
        else:
            yield message, None


def _session_lines(run: Recorded, *, sidechain: bool, agent_id: str | None = None) -> list[dict]:
    lines: list[dict] = []
    parent: str | None = None
    common = {"isSidechain": sidechain, "userType": "external", "cwd": "/home/learner/billing", "sessionId": SESSION,
              "version": VERSION, "gitBranch": "main", **({"agentId": agent_id} if agent_id else {})}

    def add(kind: str, at: float, **fields) -> None:
        nonlocal parent
        uuid = f"{agent_id or 'main'}-{len(lines):04d}"
        lines.append({"parentUuid": parent, **common, "type": kind, "uuid": uuid, "timestamp": _stamp(at), **fields})
        parent = uuid

    at = run.times[0] if run.times else START.timestamp()
    for message, k in _turns(run):
        if k is None:  # a user turn: the prompt, a continue, or tool results
            blocks = message["content"] if isinstance(message["content"], list) else [text(message["content"])]
            if all(b.get("type") == "text" for b in blocks):
                add("user", at, message={"role": "user", "content": "\n\n".join(b["text"] for b in blocks)})
            else:
                for block in blocks:
                    add("user", at, message={"role": "user", "content": [block]},
                        toolUseResult={"stdout": block.get("content", ""), "stderr": "", "interrupted": False})
                if not sidechain:
                    lines.append({"type": "file-history-snapshot", "messageId": f"snap-{len(lines)}",
                                  "snapshot": {"trackedFileBackups": {}, "timestamp": _stamp(at)},
                                  "isSnapshotUpdate": False})
            continue
        at = run.times[k]
        if k == run.compacted_before and not sidechain:
            add("system", at, subtype="compact_boundary", content="Conversation compacted", level="info",
                compactMetadata={"trigger": "auto", "preTokens": sum(
                    run.calls[k - 1][f] for f in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))})
            add("user", at, isCompactSummary=True, isVisibleInTranscriptOnly=True,
                message={"role": "user", "content": SUMMARY})
        for j, block in enumerate(message["content"]):  # one line per content block, same id
            add("assistant", at, requestId=f"req_{k:04d}", message={
                "model": run.model, "id": f"msg_{agent_id or 'main'}_{k:04d}", "type": "message", "role": "assistant",
                "content": [block], "stop_reason": None, "stop_sequence": None, "usage": _placeholder(run.calls[k], j)})
            if block.get("type") == "tool_use" and not sidechain:
                lines.append({"type": "progress", "data": {"type": "hook_progress", "hookEvent": "PreToolUse"},
                              "toolUseID": block["id"], "timestamp": _stamp(at)})
    return lines


def _stream_lines(run: Recorded, calls: int, parent: str | None = None) -> list[dict]:
    """The first ``calls`` calls of ``run`` as stream-json lines; the sub-agent's inline after its Task."""
    lines: list[dict] = []
    k_seen = 0
    for index, (message, k) in enumerate(_turns(run)):
        if k is None:
            if index == 0 and parent is None:
                continue  # a headless log has no prompt line
            if k_seen >= calls:
                break
            blocks = message["content"] if isinstance(message["content"], list) else [text(message["content"])]
            lines.append({"type": "user", "message": {"role": "user", "content": blocks}, "parent_tool_use_id": parent,
                          "session_id": SESSION, "uuid": f"u-{parent or 'main'}-{index}"})
            continue
        if k >= calls:
            break
        k_seen = k + 1
        if k == run.compacted_before and parent is None:
            lines.append({"type": "system", "subtype": "compact_boundary", "session_id": SESSION, "uuid": f"cb-{k}",
                          "compact_metadata": {"trigger": "auto", "pre_tokens": 0}})
            lines.append({"type": "user", "message": {"role": "user", "content": [text(SUMMARY)]},
                          "parent_tool_use_id": None, "session_id": SESSION, "uuid": f"s-{k}", "isSynthetic": True})
        for j, block in enumerate(message["content"]):
            lines.append({"type": "assistant", "message": {
                "model": run.model, "id": f"msg_{parent or 'main'}_{k:04d}", "type": "message", "role": "assistant",
                "content": [block], "stop_reason": None, "usage": _placeholder(run.calls[k], j)},
                "parent_tool_use_id": parent, "session_id": SESSION, "uuid": f"a-{parent or 'main'}-{k}-{len(lines)}"})
            if block.get("name") == "Task" and run.sub is not None and parent is None:
                lines += _stream_lines(run.sub, len(run.sub.calls), parent=block["id"])
    return lines


_TOTALS = {"input_tokens": "inputTokens", "output_tokens": "outputTokens", "cache_read_input_tokens": "cacheReadInputTokens",
           "cache_creation_input_tokens": "cacheCreationInputTokens"}


def _result(run: Recorded, calls: int) -> dict:
    """The stream's last line: what Claude Code adds up over the process (``usage``: the main
    thread's calls; ``modelUsage``: every call, per model, priced; ``total_cost_usd``: their sum)."""
    main = run.calls[:calls]
    every = [(run.model, u) for u in main] + [(run.model, u) for u in (run.sub.calls if run.sub else [])]
    every += [(c["model"], c["usage"]) for c in run.unlogged if c["model"] != run.model or run.compacted_before is None
              or run.compacted_before < calls]
    per_model: dict[str, dict] = {}
    for model, usage in every:
        totals = per_model.setdefault(model, {**{v: 0 for v in _TOTALS.values()}, "webSearchRequests": 0, "costUSD": 0.0})
        for field, name in _TOTALS.items():
            totals[name] += usage.get(field) or 0
        totals["costUSD"] += CallRecord.from_usage(usage, model).cost
    usage = {field: sum(u.get(field) or 0 for u in main) for field in _TOTALS}
    usage["cache_creation"] = {f"ephemeral_{t}_input_tokens": sum((u.get("cache_creation") or {}).get(
        f"ephemeral_{t}_input_tokens") or 0 for u in main) for t in ("5m", "1h")}
    return {"type": "result", "subtype": "success", "is_error": False, "num_turns": calls, "session_id": SESSION,
            "total_cost_usd": round(sum(t["costUSD"] for t in per_model.values()), 8), "usage": usage,
            "modelUsage": per_model}


def write_current(directory: str | Path, model: str = "claude-sonnet-5-5", **run_options) -> dict[str, Path]:
    """Run the task on ``model`` and write its logs under ``directory``: {"session", "subagent",
    "stream"} -> path. ``run_options`` go to ``run_current`` (rounds, output_chars, compact_at, hidden_tokens)."""
    directory = Path(directory)
    run = run_current(model, **run_options)
    project = directory / "projects" / f"-home-learner-billing-{model}"
    session = [{"type": "queue-operation", "operation": "enqueue", "timestamp": _stamp(run.times[0]),
                "sessionId": SESSION, "content": PROMPT},
               {"type": "queue-operation", "operation": "dequeue", "timestamp": _stamp(run.times[0]), "sessionId": SESSION},
               *_session_lines(run, sidechain=False)]
    paths = {"session": _jsonl(project / f"{SESSION}.jsonl", session)}
    if run.sub is not None:
        paths["subagent"] = _jsonl(project / SESSION / "subagents" / "agent-a1b2c3d.jsonl",
                                   _session_lines(run.sub, sidechain=True, agent_id="a1b2c3d"))
    calls = run.continued_at or len(run.calls)
    stream = [{"type": "system", "subtype": "init", "cwd": "/home/learner/billing", "session_id": SESSION,
               "tools": ["Task", "Bash", "Read"], "mcp_servers": [], "model": model, "permissionMode": "default",
               "claude_code_version": VERSION, "uuid": "init"},
              *_stream_lines(run, calls), _result(run, calls)]
    paths["stream"] = _jsonl(directory / "headless" / f"{model}.stream.jsonl", stream)
    return paths
