"""mini-swe-agent's ``.traj.json``: ``{info, messages, trajectory_format, instance_id}``, messages in
the OpenAI chat format (litellm's); each assistant message's ``extra.response`` is the provider's
response as litellm returns it, with its ``usage``. litellm's ``Usage`` keeps ``prompt_tokens``
(everything the model read) and, by provider:

- Anthropic: ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` beside it (litellm's
  ``llms/anthropic/chat/transformation.py`` ``calculate_usage`` adds both into ``prompt_tokens``;
  versions of mid-2025 added only the reads: a ``prompt_tokens`` smaller than reads and writes
  together is read as that);
- DeepSeek: ``prompt_cache_hit_tokens`` (and ``prompt_cache_miss_tokens``): hits, and every other
  prompt token a miss, billed as input (DeepSeek has no write premium);
- OpenAI and OpenAI-compatible endpoints: ``prompt_tokens_details.cached_tokens``: hits only.

``info.model_stats.api_calls`` counts every request; mini-swe-agent keeps only the responses it
could act on in ``messages``, so a run can count more calls than it shows (said, not billed).
"""

from __future__ import annotations

import json

from ..build import Builder, an_object, at_line, blocks, count, dollars
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
        stats = an_object((an_object(data.get("info") or {}, "info")).get("model_stats") or {}, "info.model_stats")
        run.cost_usd = dollars(stats.get("instance_cost"), "info.model_stats.instance_cost")
        run.cost_from = "info.model_stats.instance_cost"
        counted = count(stats.get("api_calls"), "info.model_stats.api_calls")
    build = Builder(run)
    for index, m in enumerate(data.get("messages", []), start=1):
        with at_line(path, index, "message"):  # the message's position: this format has no meaningful lines
            whole_characters(m, path, index)
            _message(path, run, build, index, an_object(m, "message"))
    if counted is not None and counted > len(run.calls):
        run.notes.append(f"the log counts {counted} calls (info.model_stats.api_calls) and shows {len(run.calls)}: "
                         f"mini-swe-agent keeps no response it could not act on (a format error, say), so "
                         f"{counted - len(run.calls)} call(s) are not replayed; their cost is in the log's own "
                         "instance_cost, not in any row")
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
        usage = _usage(u) if u else None
        build.assistant(response.get("id"), content, usage, where, response.get("created"), model=model)
    else:
        build.skip(str(role))


def _usage(u: dict) -> RecordedUsage:
    """A response's usage as litellm reports it, for each provider's way of saying what was cached."""
    prompt = count(u.get("prompt_tokens"), "usage.prompt_tokens") or 0
    output = count(u.get("completion_tokens"), "usage.completion_tokens")
    read = count(u.get("cache_read_input_tokens"), "usage.cache_read_input_tokens")
    write = count(u.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens")
    if read is not None or write is not None:  # Anthropic's split
        read, write = read or 0, write or 0
        if prompt < read + write:  # an older litellm: the writes are not in prompt_tokens
            prompt += write
        return RecordedUsage(prompt_tokens=prompt, cache_read=read, cache_write=write, output_tokens=output)
    hits = count(u.get("prompt_cache_hit_tokens"), "usage.prompt_cache_hit_tokens")
    if hits is None:
        details = u.get("prompt_tokens_details")
        hits = count(details.get("cached_tokens"), "usage.prompt_tokens_details.cached_tokens") \
            if isinstance(details, dict) else None
    return RecordedUsage(prompt_tokens=prompt, cache_read=hits, output_tokens=output)  # hits only: the rest is input
