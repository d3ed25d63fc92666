"""Gemini CLI's saved chats, ``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json``: one JSON
document, the ``ConversationRecord`` of google-gemini/gemini-cli's ``chatRecordingService.ts``:
``{sessionId, projectHash, startTime, lastUpdated, messages}``, each message ``{id, timestamp,
type, content}``: ``user``; ``gemini`` (the model's answer) with ``toolCalls`` (``id``, ``name``,
``args``, ``result``: the function response parts, ``status``), ``thoughts``, ``model`` and
``tokens`` (``TokensSummary``: ``input`` = promptTokenCount, the cached part in it; ``cached`` =
cachedContentTokenCount; ``output``; ``thoughts``; ``tool`` = toolUsePromptTokenCount; ``total``);
``info``, ``error`` and ``warning`` are what the CLI said, never sent.

Each ``gemini`` message is a call: its text and its tool calls, their results the next turn.
Thoughts are billed as output (the Gemini API bills thinking at the output price) and the tool-use
prompt as input [INFERRED: it is prompt the model read, outside ``promptTokenCount``]. Priced at
Gemini's list prices (``gemini.py``) where the model is there.
"""

from __future__ import annotations

import json

from ..build import Builder, an_object, at_line, count, seconds
from ..recorded import RecordedRun, RecordedUsage
from ..source import Source

NAME = "a Gemini CLI saved chat (~/.gemini/tmp/<hash>/chats/session-*.json)"
SAID = ("info", "error", "warning")


def recognise(source: Source) -> bool:
    d = source.head
    return isinstance(d, dict) and isinstance(d.get("messages"), list) and "sessionId" in d and "projectHash" in d


def read(source: Source) -> list[RecordedRun]:
    path, d = source.path, source.head
    run = RecordedRun(source="gemini-cli", path=str(path))
    build = Builder(run)
    for index, m in enumerate(d["messages"], start=1):
        with at_line(path, index, "message"):  # the message's position in the array
            m = an_object(m, "message")
            kind = m.get("type")
            if kind == "user":
                text = _text(m.get("content"))
                build.user([{"type": "text", "text": text}] if text.strip() else [], index)
            elif kind == "gemini":
                _answer(run, build, index, m)
            else:
                build.skip(str(kind) if kind in SAID else f"message/{kind}")
    return [run]


def _answer(run: RecordedRun, build: Builder, index: int, m: dict) -> None:
    text = _text(m.get("content"))
    content = [{"type": "text", "text": text}] if text.strip() else []
    results = []
    for call in m.get("toolCalls") or []:
        call = an_object(call, "toolCalls[]")
        call_id = str(call.get("id") or f"gemini-{index}-{len(content)}")
        args = call.get("args")
        content.append({"type": "tool_use", "id": call_id, "name": str(call.get("name") or "tool"),
                        "input": args if isinstance(args, dict) else {}})
        results.append({"type": "tool_result", "tool_use_id": call_id, "content": _result(call.get("result")),
                        **({"is_error": True} if call.get("status") in ("error", "cancelled") else {})})
    t = m.get("tokens")
    usage = None
    if isinstance(t, dict):
        prompt = (count(t.get("input"), "tokens.input") or 0) + (count(t.get("tool"), "tokens.tool") or 0)
        usage = RecordedUsage(prompt_tokens=prompt, cache_read=count(t.get("cached"), "tokens.cached") or 0,
                              output_tokens=(count(t.get("output"), "tokens.output") or 0)
                              + (count(t.get("thoughts"), "tokens.thoughts") or 0))
    model = m.get("model") if isinstance(m.get("model"), str) else None
    run.model = run.model or model
    build.assistant(str(m.get("id") or index), content, usage, index, seconds(m.get("timestamp")), model=model)
    build.user(results, index)


def _text(content) -> str:
    """A message's content: a string, or the Gemini API's parts (``PartListUnion``)."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    return "\n".join(p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else
                     p if isinstance(p, str) else "" for p in parts)


def _result(result) -> str:
    """A tool call's result: its function responses' output, or the parts as JSON."""
    parts = result if isinstance(result, list) else [result] if result is not None else []
    out = []
    for p in parts:
        response = p.get("functionResponse", {}).get("response") if isinstance(p, dict) else None
        if isinstance(response, dict):
            value = response.get("output", response.get("error", response))
            out.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        else:
            out.append(_text([p]) or json.dumps(p, ensure_ascii=False))
    return "\n".join(out)
