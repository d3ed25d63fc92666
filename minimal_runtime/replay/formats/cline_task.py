"""Cline's task folders: ``tasks/<id>/api_conversation_history.json`` and ``ui_messages.json``.

The shapes, as Cline's own source defines them (``src/shared/messages/content.ts``,
``src/shared/ExtensionMessage.ts``; read from its public repository, nothing copied):

- ``api_conversation_history.json``: a JSON array of the messages Cline sent and received, in the
  Messages API's own format (``role``, ``content`` as a string or typed blocks), each possibly with
  Cline's additions: ``ts`` (milliseconds), ``id``, ``modelInfo`` (``modelId``, ``providerId``,
  ``mode``), ``metrics`` (``tokens``: ``prompt`` with cached included, ``completion``, ``cached``;
  ``cost``). Older Cline calls its tools in XML inside the text, newer Cline in ``tool_use`` blocks;
  both replay (an XML call is text, and its result comes back as the next user message's text);
- ``ui_messages.json``: what the chat panel showed, a JSON array of ``{ts, type: "say"|"ask",
  say, text, conversationHistoryIndex, modelInfo, ...}``. One ``say: "api_req_started"`` per model
  request; its ``text`` is JSON with the request's usage once it finished: ``tokensIn`` (uncached
  input, for Anthropic), ``tokensOut``, ``cacheWrites``, ``cacheReads``, ``cost``, and a
  ``cancelReason`` where it did not. Its ``conversationHistoryIndex`` is
  ``apiConversationHistory.length - 1`` when it was said (``src/core/task/index.ts``), which is
  before the request's own user message joins the history: the request answered by the assistant
  message at history index ``i`` says ``i - 2`` (-1 for the first, then 1, 3, ...).

The usage and the cost therefore sit in the UI file, beside the conversation: both are read. A
history without its UI file replays with the emulator's estimates, and says so. ``cost`` is summed
into the run's own cost, the independent figure the replay's bill is printed beside.

A UI file kept without its history (people share the one the panel shows) is read on its own: each
request is a call with its usage and cost, what the panel showed of its answer is the answer, and
the conversation between the requests, which only the history holds, is a placeholder the
calibration sizes to each request's logged prompt. Its bill is the log's; its strategies' rows
compare placeholders, and the run says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...emulator.tokens import estimate_tokens, stand_in
from ..build import BadNumber, Builder, at_line, blocks, count, dollars, seconds, usage_of
from ..recorded import RecordedRun, TrajectoryError
from ..source import Source

NAME = "a Cline task's api_conversation_history.json"
HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
PART_OF_A_TASK = f"part of a Cline task folder: read with the {HISTORY} beside it"


def recognise(source: Source) -> bool:
    return is_history(source.head) or is_part(source.head)


def read(source: Source) -> list[RecordedRun]:
    if is_part(source.head):
        if isinstance(source.head, list) and not source.path.with_name(HISTORY).is_file():
            return [_ui_alone(source.path, source.head)]
        raise TrajectoryError(str(source.path), None, PART_OF_A_TASK)
    return [_task(source.path, source.head)]


def is_history(document) -> bool:
    """A JSON array of Messages API messages: Cline's conversation file (by its content, any name)."""
    return isinstance(document, list) and bool(document) and all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m for m in document)


def is_part(document) -> bool:
    """The task's UI log or its metadata: read beside the history, never alone."""
    return isinstance(document, list) and bool(document) and all(
        isinstance(m, dict) and m.get("type") in ("say", "ask") and "ts" in m for m in document) or \
        isinstance(document, dict) and bool({"files_in_context", "model_usage"} & set(document))


def _requests(path: Path) -> tuple[dict[int, dict], list[dict]]:
    """The finished requests of the UI file beside ``path``: ({conversationHistoryIndex: usage},
    [usage of those without an index, in order]). An unreadable UI file is the task's fault, said
    with its own path."""
    ui = path.with_name(UI)
    if not ui.is_file():
        return {}, []
    try:
        messages = json.loads(ui.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise TrajectoryError(str(ui), getattr(e, "lineno", None), f"not the UI log of a Cline task: {e}") from None
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) and m.get("type") in ("say", "ask")
                                                          for m in messages)):
        raise TrajectoryError(str(ui), None, "not the UI log of a Cline task (an array of say/ask messages)")
    indexed: dict[int, dict] = {}
    unindexed: list[dict] = []
    for k, m in enumerate(messages, start=1):
        if m.get("say") != "api_req_started":
            continue
        usage = _request(ui, k, m)
        index = m.get("conversationHistoryIndex")
        if isinstance(index, int) and not isinstance(index, bool):
            indexed[index] = usage
        else:
            unindexed.append(usage)
    return indexed, unindexed


def _request(ui: Path, k: int, m: dict) -> dict:
    """The usage, cost, time, model and cancel reason of the ``api_req_started`` UI message ``k``."""
    where = f"ui message {k} (api_req_started)"
    try:
        info = json.loads(m.get("text") or "{}")
        if not isinstance(info, dict):
            raise ValueError("not an object")
        usage = {name: count(info.get(name), f"{where}.{name}") for name in ("tokensIn", "tokensOut", "cacheWrites",
                                                                              "cacheReads")}
        usage["cost"] = dollars(info.get("cost"), f"{where}.cost")
    except BadNumber as e:
        raise TrajectoryError(str(ui), None, str(e)) from None
    except (ValueError, TypeError) as e:
        raise TrajectoryError(str(ui), None, f"ui message {k}: an api_req_started whose text is not its usage "
                              f"({e})") from None
    usage["at"] = seconds(m.get("ts"))
    model = (m.get("modelInfo") or {}).get("modelId") if isinstance(m.get("modelInfo"), dict) else None
    usage["model"] = model if isinstance(model, str) else None
    usage["cancelled"] = info.get("cancelReason")
    return usage


BETWEEN = "[the conversation between Cline's requests is kept in api_conversation_history.json, not here]"


def _ui_alone(path: Path, messages: list[dict]) -> RecordedRun:
    """A task's UI file without its history: a call per finished request, answered with what the
    panel showed of it, the conversation between the requests a placeholder."""
    run = RecordedRun(source="cline-ui", path=str(path))
    build = Builder(run)
    task = next((m.get("text") for m in messages if m.get("say") == "task" and isinstance(m.get("text"), str)), None)
    build.user([{"type": "text", "text": task or BETWEEN}], None)
    requests, shown = [], []  # shown: per request, the text the panel showed after it

    for k, m in enumerate(messages, start=1):
        if m.get("say") == "api_req_started":
            requests.append(_request(path, k, m))
            shown.append([])
        elif requests and m.get("type") == "say" and m.get("say") in ("text", "completion_result", "tool") \
                and isinstance(m.get("text"), str) and m["text"].strip():
            shown[-1].append(m["text"])
    costs = []
    usages = [None if u["cancelled"] and u["tokensIn"] is None else
              usage_of(u["tokensIn"], u["cacheReads"] or 0, u["cacheWrites"] or 0, u["tokensOut"]) for u in requests]
    for k, (u, said, usage) in enumerate(zip(requests, shown, usages)):
        answer = "\n\n".join(said) or "[what this request answered is not in ui_messages.json]"
        build.assistant(f"cline-ui-{k}", [{"type": "text", "text": answer}], usage, k + 1, u["at"], model=u["model"])
        if k < len(requests) - 1:
            # the conversation the next request added: as many tokens as its prompt grew past this answer, a
            # stand-in the emulator counts so (no bytes), so the replay's cache sees prompts of the log's size
            after = usages[k + 1]
            grew = after.prompt_tokens - usage.prompt_tokens - estimate_tokens(answer) if usage and after else 0
            build.user([{"type": "text", "text": BETWEEN + (stand_in(grew) if grew > 0 else "")}], k + 1)
        costs.append(u["cost"])
    run.model = next((u["model"] for u in requests if u["model"]), None)
    known = [c for c in costs if c is not None]
    if known:
        run.cost_usd, run.cost_from = sum(known), "cost (its api_req_started costs, summed)"
    run.notes.append(f"only {UI} (no {HISTORY} beside it): each request's usage and cost are the log's own, but the "
                     "conversation between them is not in this file, so placeholders sized to each request's logged "
                     "prompt stand in for it: the log itself and recorded are its bill; the other strategies' rows "
                     "compare placeholders, not the conversation")
    return run


def _model(path: Path, history: list[dict], requests: list[dict]) -> str | None:
    for m in history:
        model = (m.get("modelInfo") or {}).get("modelId")
        if isinstance(model, str):
            return model
    model = next((r["model"] for r in requests if isinstance(r.get("model"), str)), None)
    if model:
        return model
    metadata = path.with_name(METADATA)
    try:  # task_metadata.json's model_usage: [{model_id, ...}], where the other files do not say
        used = json.loads(metadata.read_text(encoding="utf-8")).get("model_usage") or []
        return next((u["model_id"] for u in reversed(used) if isinstance(u, dict) and isinstance(u.get("model_id"), str)),
                    None)
    except (OSError, ValueError, AttributeError):
        return None


def _task(path: Path, history: list[dict]) -> RecordedRun:
    """One Cline task: its conversation, priced by the requests its UI file logged."""
    indexed, unindexed = _requests(path)
    every = [*indexed.values(), *unindexed]
    run = RecordedRun(source="cline", path=str(path), model=_model(path, history, every))
    build = Builder(run)
    answered = 0
    for index, m in enumerate(history):
        with at_line(path, index + 1, f"{m.get('role')} message"):  # the message's position in the array
            content = blocks(m.get("content"))
            if m["role"] == "user":
                build.user(content, index + 1)
                continue
            u = indexed.get(index - 2) if indexed else (unindexed[answered] if answered < len(unindexed) else None)
            answered += 1
            usage = None
            if u and not (u["cancelled"] and u["tokensIn"] is None):
                usage = usage_of(u["tokensIn"], u["cacheReads"] or 0, u["cacheWrites"] or 0, u["tokensOut"])
            model = (m.get("modelInfo") or {}).get("modelId") or (u or {}).get("model")
            at = seconds(m.get("ts")) if isinstance(m.get("ts"), (int, float)) else (u or {}).get("at")
            build.assistant(m.get("id") or f"cline-{index}", content, usage, index + 1, at,
                            model=model if isinstance(model, str) else None)
    costs = [u["cost"] for u in every if u["cost"] is not None]
    run.cost_usd = sum(costs) if costs else None
    if every:
        run.cost_from = "cost (its api_req_started costs, summed)"
    if not every:
        run.notes.append(f"no {UI} beside the conversation: no usage to calibrate to, so the replay's tokens "
                         "are the emulator's estimates")
    if any(u["cancelled"] for u in every):
        run.notes.append("some requests were cancelled or failed (cancelReason in the UI log): billed as far as "
                         "their usage goes")
    return run
