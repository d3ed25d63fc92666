"""Claude Code: session files (``~/.claude/projects/**/*.jsonl``, sub-agent files too) and headless
``claude -p --output-format stream-json`` logs.

One JSON object a line, ``type`` ``user`` / ``assistant`` / ``system`` / ``result`` / ...; one model
call can span several ``assistant`` lines that repeat its ``message.id`` and usage. A headless run
ends in a ``result`` event with the process's totals (``usage``, ``modelUsage``, ``total_cost_usd``).
A file that several runs were appended to (``claude -p ... >> log``, ``tee -a``) holds several
``result`` events: each run up to its result is a run of its own, compared with its own result.
A stream's sub-agents (lines with a ``parent_tool_use_id``) come back as runs of their own after
their main run, as a session's sub-agents live in files of their own.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..build import PER_RUN, Builder, at_line, blocks, count, dollars, searches_of, seconds, text_of, usage_of
from ..output import estimate, recover, solve
from ..recorded import ModelTotals, RecordedRun, RecordedUsage, TrajectoryError
from ..source import Source

NAME = "a Claude Code session .jsonl or headless stream-json log"
JUNK = "line that is no JSON object"
KNOWN_SKIPPED = {"summary", "progress", "result", "file-history-snapshot", "compact_boundary", "sidechain", JUNK}
KINDS = {"user", "assistant", "system", "summary", "progress", "result", "file-history-snapshot"}


def recognise(source: Source) -> bool:
    """A first line of a kind Claude Code writes; or, where it is of a kind we do not know (today's
    ``queue-operation``, tomorrow's something else), conversation lines that are Claude Code's: a
    user or assistant line with a message, and a session id."""
    first = source.first
    if not isinstance(first, dict):
        return False
    if first.get("type") in KINDS:
        return True
    for _, d in source.lines():
        if d.get("type") in ("user", "assistant") and isinstance(d.get("message"), dict):
            return bool(d.get("sessionId") or d.get("session_id"))
    return False


def read(source: Source) -> Iterator[RecordedRun]:
    """Every run of the file: one per ``result`` event (and the lines after the last one), each
    followed by its sub-agents; a session at a time (the next one is read before a session is
    handed on, to know whether the file holds several)."""
    segments = _segments(source)
    held = _session(source, next(segments, []), f"{source.path}#session-1")
    k = 1
    for lines in segments:
        if k == 1:
            held[0].notes.append(_of_several(1))
        yield from held
        k += 1
        held = _session(source, lines, f"{source.path}#session-{k}")
        held[0].notes.append(_of_several(k))
        del lines
    if k == 1:  # the only session: named by the file alone
        for run in held:
            run.path = run.path.replace("#session-1", "", 1)
    yield from held


def _of_several(k: int) -> str:
    return f"session {k} in this file (the runs appended to it are cut at each result event): compared with its own result"


def _segments(source: Source) -> Iterator[list[tuple[int, dict]]]:
    """The file's lines, cut after each ``result`` event."""
    lines: list[tuple[int, dict]] = []
    for number, d in source.lines(objects_only=False):
        if not isinstance(d, dict):  # a stray line ("massive error", a number): skipped and said, the calls kept
            d = {"type": JUNK, "value": str(d)[:40]}
        lines.append((number, d))
        if d.get("type") == "result":
            yield lines
            lines = []
    if lines:
        yield lines


def _session(source: Source, lines: list[tuple[int, dict]], name: str) -> list[RecordedRun]:
    path = source.path
    stream = any(d.get("type") == "system" and d.get("subtype") == "init" or "parent_tool_use_id" in d for _, d in lines)
    threads: dict[str | None, list[tuple[int, dict]]] = {}
    for number, d in lines:
        parent = d.get("parent_tool_use_id") if stream else None
        if parent is not None and not isinstance(parent, str):
            raise TrajectoryError(str(path), number, "a parent_tool_use_id that is not a string")
        threads.setdefault(parent, []).append((number, d))
    main, totals = _thread(path, threads.pop(None, []), "claude-code-stream" if stream else "claude-code", stream, name)
    subagents = [_thread(path, thread, "claude-code-stream", stream, f"{name}#subagent-{parent}")[0]
                 for parent, thread in threads.items()]
    for run in subagents:
        run.model = run.model or main.model
    if main.model_usage:  # the output the calls wrote, from the log's own totals (output.py)
        recover([main, *subagents], main.model_usage, totals)
    else:  # an older log's result has ``usage`` (the main thread's output) but no modelUsage
        estimate(main, totals)
        for run in subagents:
            estimate(run)
        if stream:  # the output is the bill's one unknown: solved from the log's own total where it can be
            solve([main, *subagents], main.cost_usd)
    return [main, *subagents]


def _thread(path, lines: list[tuple[int, dict]], source: str, stream: bool,
            name: str) -> tuple[RecordedRun, ModelTotals | None]:
    run = RecordedRun(source=source, path=name)
    build = Builder(run, prompt_may_be_missing=stream, file=str(path))
    state = _State()
    # Sub-agent files are all sidechain; in a main session file, sidechain lines belong to sub-agents.
    conversation = [d for _, d in lines if d.get("type") in ("user", "assistant")]
    state.all_sidechain = bool(conversation) and all(d.get("isSidechain") for d in conversation)
    for number, d in lines:
        with at_line(path, number, f"{d.get('type')} line"):
            _line(path, run, build, state, number, d)
    unknown = {k: n for k, n in run.skipped.items() if k not in KNOWN_SKIPPED and not k.startswith("system/")}
    if unknown:
        build.note("skipped lines of kinds this importer does not know (they carry no model call): "
                   + ", ".join(f"{n} {k}" for k, n in unknown.items()))
    if state.microcompactions:
        build.note(f"{state.microcompactions} microcompact boundar{'y' if state.microcompactions == 1 else 'ies'} "
                   "(Claude Code cleared old tool results client-side): the replay keeps the history whole, and "
                   "recorded follows the log's own cache reads and misses there")
    return run, state.totals


class _State:
    """What one thread's reading carries from line to line."""

    def __init__(self) -> None:
        self.all_sidechain = False
        self.after_boundary = False  # a compaction summary is expected next
        self.microcompactions = 0
        self.totals: ModelTotals | None = None  # the result event's ``usage``: the main thread's calls
        self.segments: dict[str, ModelTotals] = {}  # ``model_usage_since_last_result``, added up


def _line(path, run: RecordedRun, build: Builder, state: _State, number: int, d: dict) -> None:
    kind = d.get("type")
    if kind == "system" and d.get("subtype") == "init":
        tools = d.get("tools") or []
        if not isinstance(d.get("model"), (str, type(None))) or not isinstance(tools, list):
            raise ValueError("an init line whose model is not a string or whose tools are not a list")
        run.model, run.tools = d.get("model"), [t if isinstance(t, str) else t["name"] for t in tools]
    elif kind == "system" and d.get("subtype") == "compact_boundary":
        build.skip("compact_boundary")
        state.after_boundary = True
    elif kind == "system" and d.get("subtype") == "microcompact_boundary":
        build.skip("system/microcompact_boundary")
        state.microcompactions += 1
    elif kind == "result":
        _result(run, build, state, d)
    elif kind == JUNK:
        build.skip(JUNK)
        if run.skipped[JUNK] == 1:  # the first one named; the count is in the run's skipped lines
            build.note(f"line {number} is not a JSON object ({d['value']!r}; no client writes that): skipped, "
                       "the calls around it kept (so is any other such line)")
    elif kind not in ("user", "assistant"):
        if kind not in KINDS and isinstance(d.get("message"), dict) and d["message"].get("role") == "assistant":
            raise ValueError(f"a line of a kind this importer does not know ({kind!r}) that holds a model's answer")
        build.skip(str(kind if kind != "system" else f"system/{d.get('subtype')}"))
    elif d.get("isSidechain") and not state.all_sidechain:
        build.skip("sidechain")
    elif "message" not in d or not isinstance(d["message"], dict):
        raise TrajectoryError(str(path), number, f"a {kind} line without a message")
    elif kind == "user" and (d.get("isCompactSummary") or state.after_boundary and d.get("isSynthetic")):
        build.compaction(text_of(blocks(d["message"].get("content"))))  # a session's or a stream's summary
        state.after_boundary = False
    elif kind == "user":
        build.user(blocks(d["message"].get("content")), number)
    else:
        message = d["message"]
        model = message.get("model") if isinstance(message.get("model"), str) else None
        if model and model != "<synthetic>":
            run.model = run.model or model
        build.assistant(message.get("id"), blocks(message.get("content")), _usage(message.get("usage")), number,
                        seconds(d.get("timestamp")), model=model if model != "<synthetic>" else None)


def _usage(usage: Any) -> RecordedUsage | None:
    if not usage:
        return None
    if not isinstance(usage, dict):
        raise ValueError("a usage that is not an object")
    one_hour = count((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"),
                     "usage.cache_creation.ephemeral_1h_input_tokens") or 0
    return usage_of(count(usage.get("input_tokens"), "usage.input_tokens") or 0,
                    count(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens") or 0,
                    count(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens") or 0,
                    count(usage.get("output_tokens"), "usage.output_tokens"), one_hour, searches_of(usage))


def totals(d: dict, names: tuple[str, str, str, str], where: str) -> ModelTotals:
    """A result event's totals (``usage``: snake_case; ``modelUsage``: camelCase), checked."""
    fresh, read, write, out = (count(d.get(n), f"{where}.{n}", PER_RUN) or 0 for n in names)
    return ModelTotals(input_tokens=fresh, cache_read=read, cache_write=write, output_tokens=out,
                       cost_usd=dollars(d.get("costUSD"), f"{where}.costUSD"))


def _result(run: RecordedRun, build: Builder, state: _State, d: dict) -> None:
    """A run's last line: the log's own cost (kept apart: never billed from) and its totals.

    Claude Code 2.1.3xx counts the whole session in ``modelUsage`` and ``total_cost_usd``: after
    ``--resume`` the earlier processes' calls too, which this log does not show. Its
    ``model_usage_since_last_result`` counts the calls since the previous result event: those are
    this run's own totals (taken, as the earlier calls would otherwise be billed again as calls the
    log does not show), and the session's total is kept beside them."""
    total = dollars(d.get("total_cost_usd"), "total_cost_usd")
    run.model_usage = _model_totals(d.get("modelUsage"), "modelUsage")
    since = d.get("model_usage_since_last_result")
    if since is not None:
        for name, t in _model_totals(since, "model_usage_since_last_result").items():
            was = state.segments.get(name)
            state.segments[name] = t if was is None else ModelTotals(
                input_tokens=was.input_tokens + t.input_tokens, cache_read=was.cache_read + t.cache_read,
                cache_write=was.cache_write + t.cache_write, output_tokens=was.output_tokens + t.output_tokens,
                cost_usd=None if None in (was.cost_usd, t.cost_usd) else was.cost_usd + t.cost_usd)
        run.model_usage = dict(state.segments)
        run.session_cost_usd = total
        costs = [t.cost_usd for t in state.segments.values()]
        total = None if None in costs else sum(costs)
    run.cost_usd = total
    usage = d.get("usage")
    state.totals = totals(usage, ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                                  "output_tokens"), "usage") if isinstance(usage, dict) else None
    build.skip("result")


def _model_totals(per_model: Any, where: str) -> dict[str, ModelTotals]:
    per_model = per_model or {}
    if not isinstance(per_model, dict) or not all(isinstance(v, dict) for v in per_model.values()):
        raise ValueError(f"a {where} that is not an object of objects")
    return {name: totals(t, ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "outputTokens"),
                         f"{where}.{name}") for name, t in per_model.items()}
