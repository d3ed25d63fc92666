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
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from .recorded import RecordedCall, RecordedRun, RecordedUsage, TrajectoryError


class _Builder:
    """Turns a stream of user/assistant messages (with line numbers) into a RecordedRun."""

    def __init__(self, run: RecordedRun):
        self.run, self._call_id, self._compaction = run, None, None

    def skip(self, kind: str) -> None:
        self.run.skipped[kind] = self.run.skipped.get(kind, 0) + 1

    def user(self, blocks: list[dict], line: int) -> None:
        for block in blocks:
            if block.get("type") == "tool_result":
                call = self.run.calls[-1] if self.run.calls else None
                asked = {b.get("id") for b in call.assistant["content"] if b.get("type") == "tool_use"} if call else set()
                if block.get("tool_use_id") not in asked:
                    raise TrajectoryError(self.run.path, line, f"tool_result for {block.get('tool_use_id')!r} "
                                          "without its tool_use in the call before it")
                call.results[block["tool_use_id"]] = block
            elif self._compaction is not None:
                self._compaction.append(block)
            elif not self.run.calls:
                self.run.task.append(block)
            else:
                self.run.calls[-1].then_user.append(block)

    def compaction(self, summary: str) -> None:
        self._compaction = [{"type": "text", "text": summary}]

    def assistant(self, call_id: str | None, blocks: list[dict], usage: RecordedUsage | None, line: int,
                  at: float | None = None) -> None:
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") not in self.run.tools:
                self.run.tools.append(block["name"])
        if call_id is not None and call_id == self._call_id:  # one call logged over several lines
            self.run.calls[-1].assistant["content"].extend(blocks)
            return
        if not self.run.task and not self.run.calls:
            raise TrajectoryError(self.run.path, line, "an assistant message before any user message")
        self._call_id = call_id
        self.run.calls.append(RecordedCall(assistant={"role": "assistant", "content": list(blocks)}, usage=usage, at=at,
                                           compacted_before=_text(self._compaction) if self._compaction else None))
        self._compaction = None


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
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _lines(path: Path) -> Iterator[tuple[int, dict]]:
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except json.JSONDecodeError as e:
                kind = "a truncated line" if not raw.endswith("\n") else "invalid JSON"
                raise TrajectoryError(str(path), number, f"{kind}: {e.msg}") from None


# -- Claude Code: session files and headless stream-json ------------------------------------------

def _claude_usage(usage: dict | None) -> RecordedUsage | None:
    if not usage:
        return None
    read, write = usage.get("cache_read_input_tokens") or 0, usage.get("cache_creation_input_tokens") or 0
    return RecordedUsage(prompt_tokens=(usage.get("input_tokens") or 0) + read + write, cache_read=read,
                         cache_write=write, output_tokens=usage.get("output_tokens"))


def claude_code(path: Path, source: str = "claude-code") -> RecordedRun:
    """A session file (``~/.claude/projects/**/*.jsonl``, sub-agent files too) or a ``stream-json`` log."""
    lines = list(_lines(path))
    run = RecordedRun(source=source, path=str(path))
    build = _Builder(run)
    # Sub-agent files are all sidechain; in a main session file, sidechain lines belong to sub-agents.
    conversation = [d for _, d in lines if d.get("type") in ("user", "assistant")]
    all_sidechain = bool(conversation) and all(d.get("isSidechain") for d in conversation)
    for number, d in lines:
        kind = d.get("type")
        if kind == "system" and d.get("subtype") == "init":
            run.model, run.tools = d.get("model"), [t if isinstance(t, str) else t.get("name") for t in d.get("tools", [])]
            run.source = "claude-code-stream"
        elif kind == "system" and d.get("subtype") == "compact_boundary":
            build.skip("compact_boundary")
        elif kind == "result":
            run.cost_usd = d.get("total_cost_usd")
            build.skip("result")
        elif kind not in ("user", "assistant"):
            build.skip(str(kind if kind != "system" else f"system/{d.get('subtype')}"))
        elif d.get("isSidechain") and not all_sidechain:
            build.skip("sidechain")
        elif "message" not in d or not isinstance(d["message"], dict):
            raise TrajectoryError(str(path), number, f"a {kind} line without a message")
        elif kind == "user" and d.get("isCompactSummary"):
            build.compaction(_text(_blocks(d["message"]["content"])))
        elif kind == "user":
            build.user(_blocks(d["message"]["content"]), number)
        else:
            message = d["message"]
            run.model = run.model or message.get("model")
            build.assistant(message.get("id"), _blocks(message.get("content")), _claude_usage(message.get("usage")), number,
                            _seconds(d.get("timestamp")))
    return run


# -- mini-swe-agent --------------------------------------------------------------------------------

def mini_swe_agent(path: Path) -> RecordedRun:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise TrajectoryError(str(path), e.lineno, f"invalid JSON: {e.msg}") from None
    run = RecordedRun(source="mini-swe-agent", path=str(path), cost_usd=data.get("info", {}).get("model_stats", {}).get("instance_cost"))
    build = _Builder(run)
    for index, m in enumerate(data.get("messages", []), start=1):
        where = index  # the message's position: this format has no meaningful lines
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
            usage = RecordedUsage(prompt_tokens=u["prompt_tokens"], cache_read=u.get("prompt_cache_hit_tokens"),
                                  output_tokens=u.get("completion_tokens")) if u else None
            build.assistant(response.get("id"), blocks, usage, where, response.get("created"))
        else:
            build.skip(str(role))
    return run


# -- OpenHands -------------------------------------------------------------------------------------

def openhands(path: Path) -> list[RecordedRun]:
    """``output.jsonl``: one run per line, ``history`` events and ``metrics.token_usages``."""
    runs = []
    for number, d in _lines(path):
        if "history" not in d:
            raise TrajectoryError(str(path), number, "an OpenHands line without a history")
        run = RecordedRun(source="openhands", path=f"{path}#{d.get('instance_id', number)}")
        build = _Builder(run)
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
                usage = RecordedUsage(prompt_tokens=u["prompt_tokens"], cache_read=u.get("cache_read_tokens"),
                                      output_tokens=u.get("completion_tokens")) if u else None
                if build._call_id != response.get("id"):  # one response can carry several tool calls
                    build.assistant(response.get("id"), blocks, usage, number, _seconds(event.get("timestamp")))
            elif event.get("observation") and meta.get("tool_call_id"):
                build.user([{"type": "tool_result", "tool_use_id": meta["tool_call_id"],
                             "content": str(event.get("content", ""))}], number)
            else:
                build.skip(str(event.get("observation") or event.get("action") or "event"))
        if all(c.usage and not c.usage.cache_read for c in run.calls):  # zeros everywhere: no cache data logged
            for c in run.calls:
                if c.usage:
                    c.usage.cache_read = None
        runs.append(run)
    return runs


def load(path: str | Path) -> list[RecordedRun]:
    """Recognise the format and import; a file may hold several runs (OpenHands)."""
    path = Path(path)
    if path.name.endswith(".json"):
        return [mini_swe_agent(path)]
    first = next(_lines(path), (0, {}))[1]
    if "history" in first and "instance_id" in first:
        return openhands(path)
    return [claude_code(path)]
