"""``serve --log``: every exchange any client had with ``serve`` (``serve/exchange.py`` defines the
line: ``n``, ``time``, ``method``, ``path``, ``request``, ``status``, ``response``, ``usage``, ...).

It is the one file every agent can produce (point it at ``serve``), and it holds exactly what the
API saw: the full requests, the answers, the usage. Each conversation is a run of its own: a call
continues the earlier call whose messages it sends again, as the API reads them (``as_read``: a
``cache_control`` marker is not content, so a client that moves its marker each call, as the
prompt-caching docs' multi-turn pattern does, is still one conversation; a string content is its one
text block; an answer may come back in the client's own form, gptme's thinking as text: ``continues``),
each answer followed by what the next request added (tool results, user text). A call
that continues none starts a run: a new conversation, or one whose client rewrote what it had sent
(a compaction, renumbered ``tool_use`` ids). What such a call brings with it was sent before (and
billed in the run before, where it was): it is the new run's first prompt, never calls of its own,
so every logged call is billed once, in one run. A thread continue
(``thread: {"type": "continue", "previous_message_id": ...}``) sends only its new messages: the
conversation it continues is the one that answer ended. Other exchanges (token counts, model
lists, batches, refused calls) are counted as skipped. The log's usage is the API's own (the
emulator's, or the upstream's behind ``--upstream``), output included: nothing is recovered.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...core.context import without_markers
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
    sent: list = field(default_factory=list)  # the last request's messages and its answer, as the API reads them
    asked: list = field(default_factory=list)  # the last request's messages alone, as the API reads them
    history: list = field(default_factory=list)  # the last request's messages and its answer, as sent


def read(source: Source) -> list[RecordedRun]:
    path = source.path
    conversations: dict[str, list[_Conversation]] = {}  # by the first message as read: those it began
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
            sent = as_read(messages)
            key = json.dumps(sent[0], sort_keys=True)
            continued = [c for c in conversations.get(key, []) if continues(sent, c)]
            conversation = max(reversed(continued), key=lambda c: len(c.sent), default=None)  # the longest, then the latest
            if conversation is None:
                run = RecordedRun(source="serve-log", path=f"{path}#{number}", usage_exact=True)
                conversation = _Conversation(run, Builder(run, file=str(path)))
                conversations.setdefault(key, []).append(conversation)
                runs.append(run)
                if len(messages) > 1:
                    _brought(conversation, messages, number, rewritten=len(conversations[key]) > 1)
                else:
                    conversation.build.user(blocks(messages[0].get("content")), number)
            else:
                _added(conversation, messages, number)
            _call(conversation, request, response, messages, sent, number, d)
            ended[response.get("id") or f"line-{number}"] = (conversation, {k: request.get(k) for k in ("system", "tools")
                                                                              if k in request})
    if len(runs) == 1:
        runs[0].path = str(path)
    for run in runs:
        run.skipped.update(skipped)
        _own_cost(run)
    return runs


def continues(sent: list, conversation: _Conversation) -> bool:
    """``sent`` (a request's messages, as read) continues ``conversation``: it sends its last request's
    messages again, then that request's answer, as logged or in the client's own form (an assistant
    turn in its place: gptme sends thinking back as text, ``<think>...</think>``), as serve's own
    report tells a conversation (``serve/report.py``, ``Conversations``: by the messages sent before)."""
    if sent[:len(conversation.sent)] == conversation.sent:
        return True
    asked = len(conversation.asked)
    return len(sent) > asked and sent[:asked] == conversation.asked and sent[asked].get("role") == "assistant"


def as_read(messages: list) -> list:
    """Messages as the API reads them, to tell whether one call sends another's again: no
    ``cache_control`` (a marker, not content [caching]) and content in one form (a string is
    shorthand for one text block: ``provider/content.py``), both as ``core.context.without_markers``
    compares them; and a null field as absent, no thinking blocks (a client may leave earlier turns'
    thinking out [PT]), no whitespace-only text (the API refuses it in a request: a client drops it
    from the answers it sends back).

    [caching] https://platform.claude.com/docs/en/build-with-claude/prompt-caching
    [PT] https://platform.claude.com/docs/en/build-with-claude/extended-thinking (preserving thinking blocks)"""
    return without_markers(_unread_left_out(messages))


def _unread_left_out(value: Any) -> Any:
    if isinstance(value, list):
        return [_unread_left_out(v) for v in value if not _unread(v)]
    if isinstance(value, dict):
        return {k: _unread_left_out(v) for k, v in value.items() if v is not None}
    return value


def _unread(block: Any) -> bool:
    return isinstance(block, dict) and (block.get("type") in ("thinking", "redacted_thinking") or
                                        block.get("type") == "text" and not str(block.get("text", "")).strip())


def _added(conversation: _Conversation, messages: list, number: int) -> None:
    """What a call added to the conversation it continues: the answer it sends back (the builder has
    the logged one), then tool results and user text, and any assistant turn of the client's own (a
    prefill, history it made up: no usage of its own)."""
    new = messages[len(conversation.sent):]
    if new and new[0].get("role") == "assistant":
        new = new[1:]
    ids = _ids_of_answer(messages[len(conversation.asked)], conversation.history[-1])
    for m in new:
        if m.get("role") == "assistant":
            conversation.build.assistant(None, blocks(m.get("content")), None, number)
        else:
            conversation.build.user([{**b, "tool_use_id": ids.get(b.get("tool_use_id"), b.get("tool_use_id"))}
                                     if b.get("type") == "tool_result" else b for b in blocks(m.get("content"))], number)


def _ids_of_answer(sent: Any, logged: dict) -> dict[str, str]:
    """The logged answer's ``tool_use`` ids under the ids the client sent it back with, in order, where they
    differ: open-interpreter 0.4.3 sends every answer back with ids of its own (``toolu_1``, ``toolu_2``, ...)
    and its results under those, so a result names the call by the client's id."""
    def tool_ids(message: Any) -> list:
        content = message.get("content") if isinstance(message, dict) else None
        return [b.get("id") for b in blocks(content) if b.get("type") == "tool_use"]
    ours, theirs = tool_ids(sent), tool_ids(logged)
    return {o: t for o, t in zip(ours, theirs) if o != t} if len(ours) == len(theirs) else {}


def _brought(conversation: _Conversation, messages: list, number: int, rewritten: bool) -> None:
    """A run's first call that brings a history: the history is the call's prompt, its first message
    (as text: a run starts from one user message), not calls of its own. Where the client rewrote a
    conversation of this log, those calls were billed in the run before; either way no call is billed
    that the log does not show."""
    conversation.build.user([{"type": "text", "text": "\n\n".join(_as_text(m) for m in messages)}], number)
    conversation.build.note(
        f"line {number}: the client rewrote the history it had sent (an earlier call's messages are not sent again "
        f"as they were): a run of its own from this call, the {len(messages)} messages it carried sent as its first "
        f"prompt's text; their calls are billed in the run before, once" if rewritten else
        f"line {number}: the conversation's first call brought {len(messages)} messages of history: they are its "
        f"first prompt's text, not calls (the log shows none)")


def _as_text(message: dict) -> str:
    """A message as text, every block kept in words: what it weighs in a prompt, roughly (calibration scales it)."""
    return f"{message.get('role')}: " + "\n".join(
        b["text"] if b.get("type") == "text" else json.dumps(b, ensure_ascii=False, sort_keys=True)
        for b in blocks(message.get("content")))


def _call(conversation: _Conversation, request: dict, response: dict, messages: list, sent: list, number: int,
          d: dict) -> None:
    run, build = conversation.run, conversation.build
    system = request.get("system")
    if system and not run.system:
        run.system = system if isinstance(system, str) else "\n\n".join(b.get("text", "") for b in blocks(system))
    for tool in request.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"] not in run.tools:
            run.tools.append(tool["name"])
    model = response.get("model") if isinstance(response.get("model"), str) else d.get("model")
    run.model = run.model or model
    build.assistant(response.get("id"), blocks(response.get("content")), _usage(response.get("usage")), number,
                    seconds(d.get("time")), model=model)
    answer = {"role": "assistant", "content": response.get("content")}
    conversation.sent, conversation.asked = [*sent, *as_read([answer])], sent
    conversation.history = [*messages, answer]


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
    """What ``serve`` billed this run's calls (the sum of their lines; its summary adds up every run's): their
    usage at the price table's rates."""
    costs = [c.usage.cost(c.model or run.model or "") for c in run.calls if c.usage]
    if costs and None not in costs:
        run.cost_usd, run.cost_from = sum(costs), "cost of this run's calls, as serve billed them (the sum of their lines)"
