"""mini-swe-agent's ``.traj.json``: ``{info, messages, trajectory_format, instance_id}``, messages in
the OpenAI chat format (litellm's); each assistant message's ``extra.response`` is the provider's
response, with its ``usage`` (DeepSeek's ``prompt_cache_hit_tokens``: hits only, no writes)."""

from __future__ import annotations

import json

from ..build import Builder, at_line, blocks, count, dollars
from ..recorded import RecordedRun, RecordedUsage, TrajectoryError
from ..source import NOT_ONE, Source, whole_characters

NAME = "a mini-swe-agent .traj.json"


def recognise(source: Source) -> bool:
    d = source.head
    return isinstance(d, dict) and isinstance(d.get("messages"), list) and ("trajectory_format" in d or "info" in d) \
        and all(isinstance(m, dict) and "role" in m for m in d["messages"][:3])  # chat messages (not opencode's)


def read(source: Source) -> list[RecordedRun]:
    path, data = source.path, source.document
    if data is NOT_ONE:
        raise TrajectoryError(str(path), None, "a mini-swe-agent trajectory is one JSON document, not lines")
    run = RecordedRun(source="mini-swe-agent", path=str(path))
    with at_line(path, None, "document"):
        run.cost_usd = dollars(((data.get("info") or {}).get("model_stats") or {}).get("instance_cost"),
                               "info.model_stats.instance_cost")
        run.cost_from = "info.model_stats.instance_cost"
    build = Builder(run)
    for index, m in enumerate(data.get("messages", []), start=1):
        with at_line(path, index, "message"):  # the message's position: this format has no meaningful lines
            whole_characters(m, path, index)
            _message(path, run, build, index, m)
    return [run]


def _message(path, run: RecordedRun, build: Builder, where: int, m: dict) -> None:
    role = m.get("role")
    if role == "system":
        content = m.get("content") or ""
        run.system = content if isinstance(content, str) else "\n\n".join(b.get("text", "") for b in blocks(content))
    elif role == "user":
        build.user(blocks(m.get("content")), where)
    elif role == "tool":
        build.user([{"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": m.get("content") or ""}], where)
    elif role == "assistant":
        content = [{"type": "text", "text": m["content"]}] if m.get("content") else []
        for call in m.get("tool_calls") or []:
            try:
                arguments = json.loads(call["function"].get("arguments") or "{}")
            except json.JSONDecodeError:
                raise TrajectoryError(str(path), where, f"tool call {call.get('id')} has arguments that are not JSON") from None
            content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": arguments})
        response = (m.get("extra") or {}).get("response") or {}
        model = response.get("model") if isinstance(response.get("model"), str) else None
        run.model = run.model or model
        u = response.get("usage")
        usage = RecordedUsage(prompt_tokens=count(u.get("prompt_tokens"), "usage.prompt_tokens") or 0,
                              cache_read=count(u.get("prompt_cache_hit_tokens"), "usage.prompt_cache_hit_tokens"),
                              output_tokens=count(u.get("completion_tokens"), "usage.completion_tokens")) if u else None
        build.assistant(response.get("id"), content, usage, where, response.get("created"), model=model)
    else:
        build.skip(str(role))
