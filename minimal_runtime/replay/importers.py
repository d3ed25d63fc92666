"""Importers: Claude Code sessions and stream-json logs, mini-swe-agent trajectories, OpenHands runs.

Each format becomes a ``RecordedRun``: the task, then one ``RecordedCall`` per model call (its
assistant message, the tool results that answered it, any user text that followed, the usage the
provider reported), with compactions marked where they happened. Lines that are not conversation
(progress, snapshots, hook summaries, ...) are skipped and counted. Malformed input (a truncated
line, invalid JSON, a tool_result without its tool_use) raises ``TrajectoryError`` naming the file
and the line.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from . import cline
from .output import estimate, recover
from .recorded import ACCEPTED, ModelTotals, RecordedCall, RecordedRun, RecordedUsage, TrajectoryError


class _Builder:
    """Turns a stream of user/assistant messages (with line numbers) into a RecordedRun.

    Tool results are paired with the previous call's tool uses in order: by id where ids are
    unique, by position where a log has redacted them all to one placeholder. Repeated ids are
    renamed so the replayed history stays valid, and the run carries a note saying so."""

    def __init__(self, run: RecordedRun, prompt_may_be_missing: bool = False):
        self.run, self._compaction = run, None
        self._call_key: tuple[str | None, int | None] = (None, None)
        self._pending: list[tuple[str, str]] = []  # the last call's unanswered tool uses: (logged id, our id)
        self._ids: set[str] = set()
        self._prompt_may_be_missing = prompt_may_be_missing
        self.totals: ModelTotals | None = None  # a stream's result event's ``usage``: the main thread's calls
        self.segments: dict[str, ModelTotals] = {}  # the result events' ``model_usage_since_last_result``, added up

    def skip(self, kind: str) -> None:
        self.run.skipped[kind] = self.run.skipped.get(kind, 0) + 1

    def note(self, text: str) -> None:
        if text not in self.run.notes:
            self.run.notes.append(text)

    def user(self, blocks: list[dict], line: int) -> None:
        for block in _sendable(blocks):
            if block.get("type") == "tool_result":
                logged = block.get("tool_use_id")
                match = next((k for k, (was, _) in enumerate(self._pending) if was == logged), None)
                if match is None:
                    raise TrajectoryError(self.run.path, line, f"tool_result for {logged!r} "
                                          "without its tool_use in the call before it")
                ours = self._pending.pop(match)[1]
                self.run.calls[-1].results[ours] = {**block, "tool_use_id": ours}
            elif self._compaction is not None:
                self._compaction.append(block)
            elif not self.run.calls:
                self.run.task.append(block)
            else:
                self.run.calls[-1].then_user.append(block)

    def compaction(self, summary: str) -> None:
        self._compaction = [{"type": "text", "text": summary}]

    def _unique(self, block: dict) -> dict:
        logged = block.get("id") or "tool_use"
        ours, k = logged, 1
        while ours in self._ids:
            ours, k = f"{logged}~{k}", k + 1
        if ours != logged:
            self.note("tool-use ids repeat in this log (redacted?): results were paired with their calls by position")
        self._ids.add(ours)
        self._pending.append((logged, ours))
        return {**block, "id": ours}

    def assistant(self, call_id: str | None, blocks: list[dict], usage: RecordedUsage | None, line: int,
                  at: float | None = None) -> None:
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") not in self.run.tools:
                self.run.tools.append(block["name"])
        blocks = [self._unique(b) if b.get("type") == "tool_use" else b for b in _sendable(blocks)]
        # One call is logged over several lines that repeat its message id and its prompt size (the
        # output count grows line by line: the last line's is the call's); a log with redacted ids
        # repeats the id across calls, and the prompt size tells those calls apart.
        key = (call_id, usage.prompt_tokens if usage else None)
        if call_id is not None and key == self._call_key:
            self.run.calls[-1].assistant["content"].extend(blocks)
            self.run.calls[-1].usage = usage
            return
        if call_id is not None and call_id == self._call_key[0]:
            self.note("message ids repeat in this log (redacted?): calls were told apart by their prompt size")
        if not self.run.task and not self.run.calls:
            if not self._prompt_may_be_missing:
                raise TrajectoryError(self.run.path, line, "an assistant message before any user message")
            self.run.task.append({"type": "text", "text": "[the prompt of this run is not in its log]"})
            self.run.prompt_missing = True
            self.note("the log has no prompt line (headless stream-json): a placeholder of the size the first "
                      "call implies stands in for it")
        self._call_key = key
        self._pending = [p for p in self._pending if p[1] in {b.get("id") for b in blocks}]
        self.run.calls.append(RecordedCall(assistant={"role": "assistant", "content": list(blocks)}, usage=usage, at=at,
                                           compacted_before=_text(self._compaction) if self._compaction else None))
        self._compaction = None


def _sendable(blocks: list[dict]) -> list[dict]:
    """Without the whitespace-only text blocks a model may answer with: the API refuses them in a
    request, so an agent drops them before it sends its history back, and so does the replay."""
    return [b for b in blocks if b.get("type") != "text" or b.get("text", "").strip()]


def _text(blocks: list[dict]) -> str:
    return "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")


def _seconds(timestamp: str | None) -> float | None:
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _blocks(content: Any) -> list[dict]:
    """A message's content as blocks; anything that is not text or a list of typed blocks is refused."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks = list(content or []) if isinstance(content, list) or content is None else None
    if blocks is None or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
        raise ValueError(f"content that is neither text nor a list of blocks: {str(content)[:60]!r}")
    for b in blocks:
        if b["type"] == "tool_use" and not (isinstance(b.get("id"), str) and isinstance(b.get("name"), str)
                                             and isinstance(b.get("input", {}), dict)):
            raise ValueError("a tool_use block without a string id and name and an object input")
        if b["type"] == "tool_result" and not isinstance(b.get("tool_use_id"), str):
            raise ValueError("a tool_result block without a tool_use_id")
        if b["type"] == "text" and not isinstance(b.get("text"), str):
            raise ValueError("a text block without text")
    return blocks


TOO_DEEP = "JSON nested too deeply to read (thousands of levels): no agent writes that"
PER_CALL = 10**8  # tokens: no model reads or writes this many in one call (windows are ~1M)
PER_RUN = 10**10  # tokens: no run's totals reach this (ten billion; a day of heavy use is a few hundred million)


class BadNumber(ValueError):
    """A count in a log that cannot be one: negative, not a whole number, or absurdly large."""


def count(value: Any, field: str, limit: int = PER_CALL) -> int | None:
    """A token count from a log, or None where the log leaves it out; anything that cannot be a
    count raises ``BadNumber`` naming the field (the line is named by whoever reads the line)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, float) and not value.is_integer():
        raise BadNumber(f"{field} is {str(value)[:40]!r}, not a whole number of tokens")
    if value < 0:
        raise BadNumber(f"{field} is {value:,}: a token count cannot be negative")
    if value > limit:
        raise BadNumber(f"{field} is {value:.3g}: more tokens than any {'call' if limit == PER_CALL else 'run'} "
                        f"has (over {limit:,})")
    return int(value)


def dollars(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
        raise BadNumber(f"{field} is {str(value)[:40]!r}, not an amount of dollars")
    return float(value)


@contextmanager
def _line(path: Path, number: int, kind: str) -> Iterator[None]:
    """Whatever a line's shape breaks while it is read is reported as that line's fault."""
    try:
        yield
    except TrajectoryError:
        raise
    except BadNumber as e:
        raise TrajectoryError(str(path), number, str(e)) from None
    except ValidationError as e:  # one line, not pydantic's dump: the first field it refused
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise TrajectoryError(str(path), number, f"a {kind or 'line'} of an unexpected shape: {where}: {first['msg']}") from None
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise TrajectoryError(str(path), number, f"a {kind or 'line'} of an unexpected shape: {e}") from None
    except RecursionError:
        raise TrajectoryError(str(path), number, TOO_DEEP) from None


def _lines(path: Path) -> Iterator[tuple[int, dict]]:
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as e:
                kind = "a truncated line" if not raw.endswith("\n") else "invalid JSON"
                raise TrajectoryError(str(path), number, f"{kind}: {e.msg}") from None
            except RecursionError:
                raise TrajectoryError(str(path), number, TOO_DEEP) from None
            if not isinstance(value, dict):
                raise TrajectoryError(str(path), number, f"a JSON {type(value).__name__} where a JSON object was expected")
            if "\\ud" in raw.lower():
                _whole_characters(value, path, number)
            yield number, value


def _whole_characters(value: Any, path: Path, number: int) -> None:
    """An escaped surrogate that is not half of a pair is no character: no request can carry it."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise TrajectoryError(str(path), number, "text with a lone UTF-16 surrogate (\\udXXX): not a character "
                              "any request can carry") from None


# -- Claude Code: session files and headless stream-json ------------------------------------------

def _claude_usage(usage: dict | None) -> RecordedUsage | None:
    if not usage:
        return None
    if not isinstance(usage, dict):
        raise ValueError("a usage that is not an object")
    read = count(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens") or 0
    write = count(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens") or 0
    fresh = count(usage.get("input_tokens"), "usage.input_tokens") or 0
    one_hour = min(write, count((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"),
                                "usage.cache_creation.ephemeral_1h_input_tokens") or 0)
    return RecordedUsage(prompt_tokens=fresh + read + write, cache_read=read, cache_write=write, cache_write_1h=one_hour,
                         output_tokens=count(usage.get("output_tokens"), "usage.output_tokens"))


def _totals(d: dict, names: tuple[str, str, str, str], where: str) -> ModelTotals:
    """A result event's totals (``usage``: snake_case; ``modelUsage``: camelCase), checked."""
    fresh, read, write, out = (count(d.get(n), f"{where}.{n}", PER_RUN) or 0 for n in names)
    return ModelTotals(input_tokens=fresh, cache_read=read, cache_write=write, output_tokens=out,
                       cost_usd=dollars(d.get("costUSD"), f"{where}.costUSD"))


def _result(run: RecordedRun, build: "_Builder", d: dict) -> None:
    """The stream's last line: the log's own cost (kept apart: never billed from) and its totals.

    Claude Code 2.1.3xx counts the whole session in ``modelUsage`` and ``total_cost_usd``: after
    ``--resume`` the earlier processes' calls too, which this log does not show. Its
    ``model_usage_since_last_result`` counts the calls since the previous result event of this log:
    added up over the log's result events they are the log's own totals (taken as the earlier
    calls would otherwise be billed again as calls the log does not show), and the session's total
    is kept beside them."""
    total = dollars(d.get("total_cost_usd"), "total_cost_usd")
    run.model_usage = _model_totals(d.get("modelUsage"), "modelUsage")
    since = d.get("model_usage_since_last_result")
    if since is not None:
        for name, t in _model_totals(since, "model_usage_since_last_result").items():
            was = build.segments.get(name)
            build.segments[name] = t if was is None else ModelTotals(
                input_tokens=was.input_tokens + t.input_tokens, cache_read=was.cache_read + t.cache_read,
                cache_write=was.cache_write + t.cache_write, output_tokens=was.output_tokens + t.output_tokens,
                cost_usd=None if None in (was.cost_usd, t.cost_usd) else was.cost_usd + t.cost_usd)
        run.model_usage = dict(build.segments)
        run.session_cost_usd = total
        costs = [t.cost_usd for t in build.segments.values()]
        total = None if None in costs else sum(costs)
    run.cost_usd = total
    usage = d.get("usage")
    build.totals = _totals(usage, ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                                   "output_tokens"), "usage") if isinstance(usage, dict) else None
    build.skip("result")


def _model_totals(per_model: Any, where: str) -> dict[str, ModelTotals]:
    per_model = per_model or {}
    if not isinstance(per_model, dict) or not all(isinstance(v, dict) for v in per_model.values()):
        raise ValueError(f"a {where} that is not an object of objects")
    return {name: _totals(t, ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "outputTokens"),
                          f"{where}.{name}") for name, t in per_model.items()}


def claude_code(path: Path, source: str = "claude-code") -> list[RecordedRun]:
    """A session file (``~/.claude/projects/**/*.jsonl``, sub-agent files too) or a headless
    ``stream-json`` log. A stream-json log's sub-agents (lines with a ``parent_tool_use_id``) come
    back as runs of their own after the main one, as a session's sub-agents live in files of their own."""
    lines = list(_lines(path))
    stream = any(d.get("type") == "system" and d.get("subtype") == "init" or "parent_tool_use_id" in d for _, d in lines)
    threads: dict[str | None, list[tuple[int, dict]]] = {}
    for number, d in lines:
        parent = d.get("parent_tool_use_id") if stream else None
        if parent is not None and not isinstance(parent, str):
            raise TrajectoryError(str(path), number, "a parent_tool_use_id that is not a string")
        threads.setdefault(parent, []).append((number, d))
    main, totals = _claude_thread(path, threads.pop(None, []), "claude-code-stream" if stream else source, stream,
                                  str(path))
    subagents = [_claude_thread(path, thread, "claude-code-stream", stream, f"{path}#subagent-{parent}")[0]
                 for parent, thread in threads.items()]
    for run in subagents:
        run.model = run.model or main.model
    if main.model_usage:  # the output the calls wrote, from the log's own totals (output.py)
        recover([main, *subagents], main.model_usage, totals)
    else:
        for run in (main, *subagents):
            estimate(run)
    return [main, *subagents]


def _claude_thread(path: Path, lines: list[tuple[int, dict]], source: str, stream: bool,
                   name: str) -> tuple[RecordedRun, ModelTotals | None]:
    run = RecordedRun(source=source, path=name)
    build = _Builder(run, prompt_may_be_missing=stream)
    # Sub-agent files are all sidechain; in a main session file, sidechain lines belong to sub-agents.
    conversation = [d for _, d in lines if d.get("type") in ("user", "assistant")]
    all_sidechain = bool(conversation) and all(d.get("isSidechain") for d in conversation)
    after_boundary = False
    for number, d in lines:
        with _line(path, number, f"{d.get('type')} line"):
            after_boundary = _claude_line(path, run, build, number, d, all_sidechain, after_boundary)
    unknown = {k: n for k, n in run.skipped.items() if k not in KNOWN_SKIPPED and not k.startswith("system/")}
    if unknown:
        build.note("skipped lines of kinds this importer does not know (they carry no model call): "
                   + ", ".join(f"{n} {k}" for k, n in unknown.items()))
    return run, build.totals


def _claude_line(path: Path, run: RecordedRun, build: _Builder, number: int, d: dict, all_sidechain: bool,
                 after_boundary: bool) -> bool:
    """One line of a Claude Code log; returns whether a compaction summary is expected next."""
    kind = d.get("type")
    if kind == "system" and d.get("subtype") == "init":
        tools = d.get("tools") or []
        if not isinstance(d.get("model"), (str, type(None))) or not isinstance(tools, list):
            raise ValueError("an init line whose model is not a string or whose tools are not a list")
        run.model, run.tools = d.get("model"), [t if isinstance(t, str) else t["name"] for t in tools]
    elif kind == "system" and d.get("subtype") == "compact_boundary":
        build.skip("compact_boundary")
        after_boundary = True
    elif kind == "result":
        _result(run, build, d)
    elif kind not in ("user", "assistant"):
        if kind not in CLAUDE_KINDS and isinstance(d.get("message"), dict) and d["message"].get("role") == "assistant":
            raise ValueError(f"a line of a kind this importer does not know ({kind!r}) that holds a model's answer")
        build.skip(str(kind if kind != "system" else f"system/{d.get('subtype')}"))
    elif d.get("isSidechain") and not all_sidechain:
        build.skip("sidechain")
    elif "message" not in d or not isinstance(d["message"], dict):
        raise TrajectoryError(str(path), number, f"a {kind} line without a message")
    elif kind == "user" and (d.get("isCompactSummary") or after_boundary and d.get("isSynthetic")):
        build.compaction(_text(_blocks(d["message"].get("content"))))  # a session's or a stream's summary
        after_boundary = False
    elif kind == "user":
        build.user(_blocks(d["message"].get("content")), number)
    else:
        message = d["message"]
        if isinstance(message.get("model"), str):
            run.model = run.model or message["model"]
        build.assistant(message.get("id"), _blocks(message.get("content")), _claude_usage(message.get("usage")), number,
                        _seconds(d.get("timestamp")))
    return after_boundary


# -- mini-swe-agent --------------------------------------------------------------------------------

def mini_swe_agent(path: Path) -> RecordedRun:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise TrajectoryError(str(path), e.lineno, f"invalid JSON: {e.msg}") from None
    except RecursionError:
        raise TrajectoryError(str(path), None, TOO_DEEP) from None
    run = RecordedRun(source="mini-swe-agent", path=str(path))
    with _line(path, None, "document"):
        run.cost_usd = dollars(((data.get("info") or {}).get("model_stats") or {}).get("instance_cost"),
                               "info.model_stats.instance_cost")
    build = _Builder(run)
    for index, m in enumerate(data.get("messages", []), start=1):
        with _line(path, index, "message"):  # the message's position: this format has no meaningful lines
            _mini_swe_message(path, run, build, index, m)
    return run


def _mini_swe_message(path: Path, run: RecordedRun, build: _Builder, where: int, m: dict) -> None:
    role = m.get("role")
    if role == "system":
        run.system = m.get("content") or ""
    elif role == "user":
        build.user(_blocks(m.get("content")), where)
    elif role == "tool":
        build.user([{"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": m.get("content") or ""}], where)
    elif role == "assistant":
        blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
        for call in m.get("tool_calls") or []:
            try:
                arguments = json.loads(call["function"].get("arguments") or "{}")
            except json.JSONDecodeError:
                raise TrajectoryError(str(path), where, f"tool call {call.get('id')} has arguments that are not JSON") from None
            blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": arguments})
        response = (m.get("extra") or {}).get("response") or {}
        run.model = run.model or response.get("model")
        u = response.get("usage")
        usage = RecordedUsage(prompt_tokens=count(u.get("prompt_tokens"), "usage.prompt_tokens") or 0,
                              cache_read=count(u.get("prompt_cache_hit_tokens"), "usage.prompt_cache_hit_tokens"),
                              output_tokens=count(u.get("completion_tokens"), "usage.completion_tokens")) if u else None
        build.assistant(response.get("id"), blocks, usage, where, response.get("created"))
    else:
        build.skip(str(role))


# -- OpenHands -------------------------------------------------------------------------------------

def openhands(path: Path) -> list[RecordedRun]:
    """``output.jsonl``: one run per line, ``history`` events and ``metrics.token_usages``."""
    runs = []
    for number, d in _lines(path):
        if "history" not in d:
            raise TrajectoryError(str(path), number, "an OpenHands line without a history")
        run = RecordedRun(source="openhands", path=f"{path}#{d.get('instance_id', number)}")
        build = _Builder(run)
        with _line(path, number, "OpenHands line"):
            _openhands_history(run, build, number, d)
        if all(c.usage and not c.usage.cache_read for c in run.calls):  # zeros everywhere: no cache data logged
            for c in run.calls:
                if c.usage:
                    c.usage.cache_read = None
        runs.append(run)
    return runs


def _openhands_history(run: RecordedRun, build: _Builder, number: int, d: dict) -> None:
    usages = {u.get("response_id"): u for u in (d.get("metrics") or {}).get("token_usages", [])}
    for event in d["history"]:
        meta = event.get("tool_call_metadata") or {}
        if event.get("action") == "system":
            run.system = event.get("message") or event.get("args", {}).get("content", "")
        elif event.get("source") == "user" and event.get("action") == "message":
            build.user([{"type": "text", "text": event.get("message", "")}], number)
        elif event.get("source") == "agent" and event.get("action") and meta:
            response = meta.get("model_response") or {}
            message = (response.get("choices") or [{}])[0].get("message") or {}
            run.model = run.model or response.get("model")
            blocks = [{"type": "text", "text": message["content"]}] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                               "input": json.loads(call["function"].get("arguments") or "{}")})
            u = usages.get(response.get("id"))
            usage = RecordedUsage(prompt_tokens=count(u.get("prompt_tokens"), "token_usages.prompt_tokens") or 0,
                                  cache_read=count(u.get("cache_read_tokens"), "token_usages.cache_read_tokens"),
                                  output_tokens=count(u.get("completion_tokens"), "token_usages.completion_tokens")) if u else None
            if build._call_key[0] != response.get("id"):  # one response can carry several tool calls
                build.assistant(response.get("id"), blocks, usage, number, _seconds(event.get("timestamp")))
        elif event.get("observation") and meta.get("tool_call_id"):
            build.user([{"type": "tool_result", "tool_use_id": meta["tool_call_id"],
                         "content": str(event.get("content", ""))}], number)
        elif event.get("observation") == "recall":  # workspace context, sent to the model as user text
            build.user([{"type": "text", "text": _recalled(event)}], number)
        elif event.get("observation") == "error":  # e.g. a malformed tool call, answered as user text
            build.user([{"type": "text", "text": str(event.get("content") or event.get("message") or "")}], number)
        else:
            build.skip(str(event.get("observation") or event.get("action") or "event"))


KNOWN_SKIPPED = {"summary", "progress", "result", "file-history-snapshot", "compact_boundary", "sidechain"}
CLAUDE_KINDS = {"user", "assistant", "system", "summary", "progress", "result", "file-history-snapshot"}


def _claude_conversation(path: Path) -> bool:
    """A log whose first line is of a kind we do not know (today's ``queue-operation``, tomorrow's
    something else) is still Claude Code's if its conversation lines are: a user or assistant line
    with a message, and a session id."""
    for _, d in _lines(path):
        if d.get("type") in ("user", "assistant") and isinstance(d.get("message"), dict):
            return bool(d.get("sessionId") or d.get("session_id"))
    return False


def _recalled(event: dict) -> str:
    """What a recall observation put in front of the model: its knowledge and instructions."""
    extras = event.get("extras") or {}
    parts = [str(extras.get(k)) for k in ("repo_instructions", "additional_agent_instructions") if extras.get(k)]
    parts += [str(k.get("content", "")) for k in extras.get("microagent_knowledge") or [] if isinstance(k, dict)]
    return "\n\n".join(parts) or str(event.get("content") or "")


def load(path: str | Path) -> list[RecordedRun]:
    """Recognise the format and import; a file may hold several runs (OpenHands, sub-agents).
    Anything else is refused with a ``TrajectoryError`` that says what was recognised."""
    path = Path(path).expanduser()
    if not path.exists():
        raise TrajectoryError(str(path), None, "no such file")
    if path.is_dir():
        raise TrajectoryError(str(path), None, f"a directory; give one file: {ACCEPTED}")
    with open(path, "rb") as f:
        head = f.read(8192)
    if b"\x00" in head:  # before reading it all: a folder may hold archives, images, databases
        raise TrajectoryError(str(path), None, f"not UTF-8 text (binary, or UTF-16?); expected {ACCEPTED}")
    raw = path.read_bytes()
    if not raw.strip():
        raise TrajectoryError(str(path), None, f"an empty file; expected {ACCEPTED}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TrajectoryError(str(path), None, f"not UTF-8 text (binary, or UTF-16?); expected {ACCEPTED}") from None
    runs = _recognise(path, text)
    if not runs or not runs[0].calls:
        what = runs[0].source if runs else "nothing"
        skipped = ", ".join(f"{n} {k}" for k, n in runs[0].skipped.items()) if runs and runs[0].skipped else "no conversation"
        raise TrajectoryError(str(path), None, f"read as {what}, but it holds no model calls ({skipped}); expected {ACCEPTED}")
    return [r for r in runs if r.calls]


def _recognise(path: Path, text: str) -> list[RecordedRun]:
    try:
        document = json.loads(text)  # one JSON document (a .traj.json, or a one-line log)
    except (json.JSONDecodeError, RecursionError):
        document = None  # a line-based log (or a broken or over-deep document: read line by line, it says where)
    first = document
    if document is None and path.suffix == ".json":
        return [mini_swe_agent(path)]  # a broken JSON document: it says where
    if cline.is_history(document):
        return [cline.cline(path, document)]
    if cline.is_ui_log(document) or isinstance(document, dict) and {"files_in_context", "model_usage"} & set(document):
        raise TrajectoryError(str(path), None, cline.PART_OF_A_TASK)
    if document is None:
        first = next(_lines(path), (0, None))[1]
    if not isinstance(first, dict):
        raise TrajectoryError(str(path), 1, f"a JSON {type(first).__name__}, not a trajectory; expected {ACCEPTED}")
    kind = str(first.get("type", ""))
    if isinstance(first.get("messages"), list) and ("trajectory_format" in first or "info" in first):
        return [mini_swe_agent(path)]
    if "history" in first and "instance_id" in first:
        return openhands(path)
    if kind.split(".")[0] in ("thread", "turn", "item"):
        raise TrajectoryError(str(path), 1, f"a Codex `exec --json` log ({kind} events): not supported; expected {ACCEPTED}")
    if kind in CLAUDE_KINDS or _claude_conversation(path):
        return claude_code(path)
    keys = ", ".join(sorted(first)[:6]) or "none"
    raise TrajectoryError(str(path), 1, f"not a trajectory I know (keys: {keys}); expected {ACCEPTED}")
