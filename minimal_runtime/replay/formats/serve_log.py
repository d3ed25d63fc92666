"""``serve --log``: every exchange any client had with ``serve`` (``serve/exchange.py`` defines the
line: ``n``, ``time``, ``method``, ``path``, ``request``, ``status``, ``response``, ``usage``, ...).

It is the one file every agent can produce (point it at ``serve``), and it holds exactly what the
API saw: the full requests, the answers, the usage. Each conversation is a run of its own: the
calls whose first message is the same (the key ``serve``'s own report groups them by), in order,
each answer followed by what the next request added (tool results, user text). A thread continue
(``thread: {"type": "continue", "previous_message_id": ...}``) sends only its new messages: the
conversation it continues is the one that answer ended. Other exchanges (token counts, model
lists, batches, refused calls) are counted as skipped. The log's usage is the API's own (the
emulator's, or the upstream's behind ``--upstream``), output included: nothing is recovered.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..build import Builder, at_line, blocks, count, searches_of, seconds, usage_of
from ..recorded import RecordedRun, RecordedUsage
from ..source import Source

NAME = "a serve --log file"
SHAPE = {"n", "method", "path", "status", "response"}


def recognise(source: Source) -> bool:
    return isinstance(source.first, dict) and SHAPE <= set(source.first)


@dataclass
class _Conversation:
    run: RecordedRun
    build: Builder
    history: list = field(default_factory=list)  # the last request's messages and its answer


def read(source: Source) -> list[RecordedRun]:
    path = source.path
    conversations: dict[str, _Conversation] = {}
    ended: dict[str, tuple[_Conversation, dict]] = {}  # answer id: its conversation, and the request it answered
    runs: list[RecordedRun] = []
    skipped: dict[str, int] = {}
    for number, d in source.lines():
        with at_line(path, number, "serve log line"):
            request, response = d.get("request"), d.get("response")
            if d.get("method") != "POST" or d.get("path") != "/v1/messages":
                kind = f"{d.get('method')} {d.get('path')}"
                skipped[kind] = skipped.get(kind, 0) + 1
                continue
            if not isinstance(d.get("status"), int) or d["status"] >= 400 or not isinstance(response, dict) \
                    or response.get("type") != "message" or not isinstance(request, dict):
                skipped["refused or failed call"] = skipped.get("refused or failed call", 0) + 1
                continue
            thread = request.get("thread") if isinstance(request.get("thread"), dict) else {}
            if thread.get("type") == "continue" and thread.get("previous_message_id") in ended:
                conversation, held = ended[thread["previous_message_id"]]
                request = {**held, **{k: v for k, v in request.items() if k not in ("system", "tools")},
                           "messages": [*conversation.history, *request.get("messages", [])]}
            messages = request.get("messages")
            if not isinstance(messages, list) or not messages:
                raise ValueError("a /v1/messages request without messages")
            key = json.dumps(messages[0], sort_keys=True)
            conversation = conversations.get(key)
            if conversation is None or messages[:len(conversation.history)] != conversation.history:
                # a new conversation, or one whose client rewrote what it had sent (a compaction): a run of its own
                run = RecordedRun(source="serve-log", path=f"{path}#{number}")
                conversation = conversations[key] = _Conversation(run, Builder(run, file=str(path)))
                runs.append(run)
            _call(conversation, request, response, messages, number, d)
            ended[response.get("id") or f"line-{number}"] = (conversation, {k: request.get(k) for k in ("system", "tools")
                                                                              if k in request})
    if len(runs) == 1:
        runs[0].path = str(path)
    for run in runs:
        run.skipped.update(skipped)
        _own_cost(run)
    return runs


def _call(conversation: _Conversation, request: dict, response: dict, messages: list, number: int, d: dict) -> None:
    run, build = conversation.run, conversation.build
    system = request.get("system")
    if system and not run.system:
        run.system = system if isinstance(system, str) else "\n\n".join(b.get("text", "") for b in blocks(system))
    for tool in request.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"] not in run.tools:
            run.tools.append(tool["name"])
    for m in messages[len(conversation.history):]:
        if m.get("role") == "assistant":  # a history the client brought, or a prefill: no usage of its own
            build.assistant(None, blocks(m.get("content")), None, number)
        else:
            build.user(blocks(m.get("content")), number)
    model = response.get("model") if isinstance(response.get("model"), str) else d.get("model")
    run.model = run.model or model
    build.assistant(response.get("id"), blocks(response.get("content")), _usage(response.get("usage")), number,
                    seconds(d.get("time")), model=model)
    conversation.history = [*messages, {"role": "assistant", "content": response.get("content")}]


def _usage(u) -> RecordedUsage | None:
    if not isinstance(u, dict):
        return None
    one_hour = count((u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"),
                     "usage.cache_creation.ephemeral_1h_input_tokens") or 0
    return usage_of(count(u.get("input_tokens"), "usage.input_tokens"),
                    count(u.get("cache_read_input_tokens"), "usage.cache_read_input_tokens") or 0,
                    count(u.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens") or 0,
                    count(u.get("output_tokens"), "usage.output_tokens"), one_hour, searches_of(u))


def _own_cost(run: RecordedRun) -> None:
    """What ``serve`` billed these calls (its summary's figure): their usage at the price table's rates."""
    costs = [c.usage.cost(c.model or run.model or "") for c in run.calls if c.usage]
    if costs and None not in costs:
        run.cost_usd, run.cost_from = sum(costs), "cost as serve billed its calls (its summary's figure)"
