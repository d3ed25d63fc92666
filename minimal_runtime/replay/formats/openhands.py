"""OpenHands' ``output.jsonl``: one run per line, a ``history`` of action and observation events and
``metrics.token_usages`` (per response: prompt tokens, cache reads; zeros everywhere where the
provider reported none)."""

from __future__ import annotations

import json

from ..build import Builder, at_line, count, seconds
from ..recorded import RecordedRun, RecordedUsage, TrajectoryError
from ..source import Source

NAME = "an OpenHands output.jsonl"


def recognise(source: Source) -> bool:
    d = source.first
    return isinstance(d, dict) and "history" in d and "instance_id" in d


def read(source: Source) -> list[RecordedRun]:
    path, runs = source.path, []
    for number, d in source.lines():
        if "history" not in d:
            raise TrajectoryError(str(path), number, "an OpenHands line without a history")
        run = RecordedRun(source="openhands", path=f"{path}#{d.get('instance_id', number)}")
        with at_line(path, number, "OpenHands line"):
            _history(run, Builder(run, file=str(path)), number, d)
        if all(c.usage and not c.usage.cache_read for c in run.calls):  # zeros everywhere: no cache data logged
            for c in run.calls:
                if c.usage:
                    c.usage.cache_read = None
        runs.append(run)
    return runs


def _history(run: RecordedRun, build: Builder, number: int, d: dict) -> None:
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
            content = [{"type": "text", "text": message["content"]}] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                                "input": json.loads(call["function"].get("arguments") or "{}")})
            u = usages.get(response.get("id"))
            usage = RecordedUsage(prompt_tokens=count(u.get("prompt_tokens"), "token_usages.prompt_tokens") or 0,
                                  cache_read=count(u.get("cache_read_tokens"), "token_usages.cache_read_tokens"),
                                  output_tokens=count(u.get("completion_tokens"), "token_usages.completion_tokens")) if u else None
            if build.last_call_id != response.get("id"):  # one response can carry several tool calls
                build.assistant(response.get("id"), content, usage, number, seconds(event.get("timestamp")))
        elif event.get("observation") and meta.get("tool_call_id"):
            build.user([{"type": "tool_result", "tool_use_id": meta["tool_call_id"],
                         "content": str(event.get("content", ""))}], number)
        elif event.get("observation") == "recall":  # workspace context, sent to the model as user text
            build.user([{"type": "text", "text": _recalled(event)}], number)
        elif event.get("observation") == "error":  # e.g. a malformed tool call, answered as user text
            build.user([{"type": "text", "text": str(event.get("content") or event.get("message") or "")}], number)
        else:
            build.skip(str(event.get("observation") or event.get("action") or "event"))


def _recalled(event: dict) -> str:
    """What a recall observation put in front of the model: its knowledge and instructions."""
    extras = event.get("extras") or {}
    parts = [str(extras.get(k)) for k in ("repo_instructions", "additional_agent_instructions") if extras.get(k)]
    parts += [str(k.get("content", "")) for k in extras.get("microagent_knowledge") or [] if isinstance(k, dict)]
    return "\n\n".join(parts) or str(event.get("content") or "")
