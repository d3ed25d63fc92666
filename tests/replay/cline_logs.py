"""Cline task folders, made at test time: the runtime's agent on the emulator does the course's small
coding task (``replay.current.run_current``), and the run is written out in the shapes Cline's source
gives its task files (``replay/cline.py`` says where they are defined): ``api_conversation_history.json``,
``ui_messages.json`` with one ``api_req_started`` per request, ``task_metadata.json``. Every text is
ours; nothing is copied from a Cline log. ``native_tools=False`` writes the tool calls as older Cline
did, in XML inside the assistant's text, with each result as the next user message's text."""

from __future__ import annotations

import json
from pathlib import Path

from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.replay.current import run_current


def _xml(block: dict) -> dict:
    params = "".join(f"<{k}>{v}</{k}>\n" for k, v in block["input"].items())
    return {"type": "text", "text": f"<{block['name']}>\n{params}</{block['name']}>"}


def _xml_result(block: dict) -> dict:
    return {"type": "text", "text": f"[tool result {block['tool_use_id'][-6:]}] Result:\n{block['content']}"}


def write_cline(directory: Path, model: str = "claude-sonnet-4-6", native_tools: bool = True, rounds: int = 5,
                **options) -> Path:
    """The task folder of one run; returns its ``api_conversation_history.json``."""
    run = run_current(model, rounds=rounds, compact_at=10**6, **options)  # Cline's own condensing is not modelled
    history, ui = [], []
    k = 0
    start = int(run.times[0] * 1000)
    ui.append({"ts": start, "type": "say", "say": "task", "text": run.messages[0]["content"][0]["text"]})
    for index, message in enumerate(run.messages):
        blocks = message["content"] if isinstance(message["content"], list) else [{"type": "text", "text": message["content"]}]
        if not native_tools:
            blocks = [_xml(b) if b.get("type") == "tool_use" else _xml_result(b) if b.get("type") == "tool_result" else b
                      for b in blocks if b.get("type") not in ("thinking", "redacted_thinking")]
        ts = start + 1000 * (4 * k + 2)
        entry = {"role": message["role"], "content": blocks, "ts": ts}
        if message["role"] == "assistant":
            usage = run.calls[k]
            cost = CallRecord.from_usage(usage, model).cost
            ui.append({"ts": ts - 1500, "type": "say", "say": "api_req_started", "conversationHistoryIndex": index - 2,
                       "modelInfo": {"modelId": model, "providerId": "anthropic", "mode": "act"},
                       "text": json.dumps({"request": "[the request Cline built]", "tokensIn": usage["input_tokens"],
                                           "tokensOut": usage["output_tokens"],
                                           "cacheWrites": usage["cache_creation_input_tokens"],
                                           "cacheReads": usage["cache_read_input_tokens"], "cost": cost})})
            ui += [{"ts": ts, "type": "say", "say": "text", "text": b["text"], "conversationHistoryIndex": index - 1}
                   for b in blocks if b.get("type") == "text"]
            entry.update({"modelInfo": {"modelId": model, "providerId": "anthropic", "mode": "act"},
                          "metrics": {"tokens": {"prompt": sum(usage[f] for f in ("input_tokens", "cache_read_input_tokens",
                                                                                  "cache_creation_input_tokens")),
                                                 "completion": usage["output_tokens"],
                                                 "cached": usage["cache_read_input_tokens"]}, "cost": cost}})
            k += 1
        history.append(entry)
    folder = Path(directory) / "tasks" / str(start)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ui_messages.json").write_text(json.dumps(ui), encoding="utf-8")
    (folder / "task_metadata.json").write_text(json.dumps({"files_in_context": [], "model_usage": [
        {"ts": start, "model_id": model, "model_provider_id": "anthropic", "mode": "act"}]}), encoding="utf-8")
    path = folder / "api_conversation_history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    return path
