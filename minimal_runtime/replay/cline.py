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
  ``cancelReason`` where it did not. Its ``conversationHistoryIndex`` is the last history message
  sent, so the answer is the assistant message after it.

The usage and the cost therefore sit in the UI file, beside the conversation: both are read. A
history without its UI file replays with the emulator's estimates, and says so. ``cost`` is summed
into the run's own cost, the independent figure the replay's bill is printed beside.
"""

from __future__ import annotations

import json
from pathlib import Path

from .recorded import RecordedRun, RecordedUsage, TrajectoryError

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
PART_OF_A_TASK = f"part of a Cline task folder: read with the {HISTORY} beside it"


def is_history(document) -> bool:
    """A JSON array of Messages API messages: Cline's conversation file (by its content, any name)."""
    return isinstance(document, list) and bool(document) and all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m for m in document)


def is_ui_log(document) -> bool:
    return isinstance(document, list) and bool(document) and all(
        isinstance(m, dict) and m.get("type") in ("say", "ask") and "ts" in m for m in document)


def _requests(path: Path) -> dict[int, dict]:
    """The finished requests of the UI file beside ``path``: {index of the history message it
    answered after: usage}. An unreadable UI file is the task's fault, said with its own path."""
    from .importers import BadNumber, count, dollars
    ui = path.with_name(UI)
    if not ui.is_file():
        return {}
    try:
        messages = json.loads(ui.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise TrajectoryError(str(ui), getattr(e, "lineno", None), f"not the UI log of a Cline task: {e}") from None
    if not is_ui_log(messages):
        raise TrajectoryError(str(ui), None, "not the UI log of a Cline task (an array of say/ask messages)")
    out: dict[int, dict] = {}
    order = 0
    for k, m in enumerate(messages, start=1):
        if m.get("say") != "api_req_started":
            continue
        try:
            info = json.loads(m.get("text") or "{}")
            if not isinstance(info, dict):
                raise ValueError("not an object")
            where = f"ui message {k} (api_req_started)"
            usage = {name: count(info.get(name), f"{where}.{name}") for name in ("tokensIn", "tokensOut", "cacheWrites",
                                                                                  "cacheReads")}
            usage["cost"] = dollars(info.get("cost"), f"{where}.cost")
        except BadNumber as e:
            raise TrajectoryError(str(ui), None, str(e)) from None
        except (ValueError, TypeError) as e:
            raise TrajectoryError(str(ui), None, f"ui message {k}: an api_req_started whose text is not its usage "
                                  f"({e})") from None
        index = m.get("conversationHistoryIndex")
        usage["at"] = m["ts"] / 1000 if isinstance(m.get("ts"), (int, float)) else None
        usage["model"] = (m.get("modelInfo") or {}).get("modelId")
        usage["cancelled"] = info.get("cancelReason")
        out[index if isinstance(index, int) else -1 - order] = usage
        order += 1
    return out


def _model(path: Path, history: list[dict], requests: dict[int, dict]) -> str | None:
    for m in history:
        model = (m.get("modelInfo") or {}).get("modelId")
        if isinstance(model, str):
            return model
    model = next((r["model"] for r in requests.values() if isinstance(r.get("model"), str)), None)
    if model:
        return model
    metadata = path.with_name(METADATA)
    try:  # task_metadata.json's model_usage: [{model_id, ...}], where the other files do not say
        used = json.loads(metadata.read_text(encoding="utf-8")).get("model_usage") or []
        return next((u["model_id"] for u in reversed(used) if isinstance(u, dict) and isinstance(u.get("model_id"), str)),
                    None)
    except (OSError, ValueError, AttributeError):
        return None


def cline(path: Path, history: list[dict]) -> RecordedRun:
    """One Cline task: its conversation, priced by the requests its UI file logged."""
    from .importers import _blocks, _Builder, _line
    requests = _requests(path)
    run = RecordedRun(source="cline", path=str(path), model=_model(path, history, requests))
    build = _Builder(run)
    by_order = [u for i, u in sorted(requests.items()) if i < 0][::-1]
    answered = 0
    for index, m in enumerate(history):
        with _line(path, index + 1, f"{m.get('role')} message"):  # the message's position in the array
            blocks = _blocks(m.get("content"))
            if m["role"] == "user":
                build.user(blocks, index + 1)
                continue
            u = requests.get(index - 1) or (by_order[answered] if answered < len(by_order) else None)
            answered += 1
            usage = None
            if u and not (u["cancelled"] and u["tokensIn"] is None):
                fresh, written, read = u["tokensIn"] or 0, u["cacheWrites"] or 0, u["cacheReads"] or 0
                usage = RecordedUsage(prompt_tokens=fresh + written + read, cache_read=read, cache_write=written,
                                      output_tokens=u["tokensOut"])
            at = m["ts"] / 1000 if isinstance(m.get("ts"), (int, float)) else (u or {}).get("at")
            build.assistant(m.get("id") or f"cline-{index}", blocks, usage, index + 1, at)
    costs = [u["cost"] for u in requests.values() if u["cost"] is not None]
    run.cost_usd = sum(costs) if costs else None
    if not requests:
        run.notes.append(f"no {UI} beside the conversation: no usage to calibrate to, so the replay's tokens "
                         "are the emulator's estimates")
    if any(u["cancelled"] for u in requests.values()):
        run.notes.append("some requests were cancelled or failed (cancelReason in the UI log): billed as far as "
                         "their usage goes")
    return run
