"""OpenHands' ``output.jsonl``: one run per line, a ``history`` of action and observation events and
``metrics.token_usages`` (per response: prompt tokens, cache reads and writes; zeros everywhere where
the provider reported none).

And OpenHands' event stream as it saves or exports a conversation: a JSON list of the same events
(``openhands/events/serialization/event.py`` ``event_to_dict``: ``id``, ``timestamp``, ``source``,
``action`` or ``observation``, ``args`` / ``content``, ``tool_call_metadata``), each action carrying
``llm_metrics`` (``openhands/llm/metrics.py`` ``Metrics.get``): ``accumulated_cost`` and the
``token_usages`` so far, one per response (``response_id``, ``prompt_tokens``, ``completion_tokens``,
``cache_read_tokens``, ``cache_write_tokens``)."""

from __future__ import annotations

import json

from ..build import Builder, at_line, count, dollars, seconds
from ..recorded import RecordedRun, RecordedUsage, TrajectoryError
from ..source import Source

NAME = "an OpenHands output.jsonl or event-stream list"


def recognise(source: Source) -> bool:
    d = source.first
    return isinstance(d, dict) and "history" in d and "instance_id" in d or is_event_stream(source.head)


def is_event_stream(document) -> bool:
    """A JSON list of OpenHands events: each an object with an id, a source, and an action or observation."""
    return isinstance(document, list) and bool(document) and all(
        isinstance(e, dict) and "id" in e and "source" in e and ("action" in e or "observation" in e) for e in document)


def read(source: Source) -> list[RecordedRun]:
    if is_event_stream(source.head):
        return [_event_stream(source.path, source.head)]
    path, runs = source.path, []
    for number, d in source.lines():
        if "history" not in d:
            raise TrajectoryError(str(path), number, "an OpenHands line without a history")
        run = RecordedRun(source="openhands", path=f"{path}#{d.get('instance_id', number)}")
        with at_line(path, number, "OpenHands line"):
            _history(run, Builder(run, file=str(path)), number, d)
        _no_zeros(run)
        runs.append(run)
    return runs


def _event_stream(path, events: list[dict]) -> RecordedRun:
    """One conversation's events; its usage from the actions' ``llm_metrics`` (each carries every
    response so far: the union is taken), its own cost the last ``accumulated_cost``."""
    run = RecordedRun(source="openhands", path=str(path))
    usages: dict = {}
    cost = None
    with at_line(path, None, "event"):
        for event in events:
            metrics = event.get("llm_metrics")
            if isinstance(metrics, dict):
                for u in metrics.get("token_usages") or []:
                    usages[u.get("response_id")] = u
                cost = dollars(metrics.get("accumulated_cost"), "llm_metrics.accumulated_cost") \
                    if metrics.get("accumulated_cost") is not None else cost
        _history(run, Builder(run, file=str(path)), None, {"history": events,
                                                           "metrics": {"token_usages": list(usages.values())}})
    run.cost_usd, run.cost_from = cost, "llm_metrics.accumulated_cost (its last event's)"
    _no_zeros(run)
    return run


def _no_zeros(run: RecordedRun) -> None:
    """Zeros everywhere: the provider reported no cache figures, not a cache that never hit."""
    if all(c.usage and not c.usage.cache_read and not c.usage.cache_write for c in run.calls):
        for c in run.calls:
            if c.usage:
                c.usage.cache_read = c.usage.cache_write = None


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
                                  cache_write=count(u.get("cache_write_tokens"), "token_usages.cache_write_tokens"),
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
