"""Logs of the coding-agent CLIs, made at test time: the runtime's agent on the emulator does the
course's small coding task (``replay.current.run_current``), and the run is written in the shape
each CLI's own source gives its files (the format modules say where each is defined). Every text is
ours; nothing is copied from a CLI's log. Each writer returns (path, the usage per call it wrote)."""

from __future__ import annotations

import json
from pathlib import Path

from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.replay.current import run_current

MODEL = "claude-sonnet-4-6"


def _run(model: str, rounds: int):
    return run_current(model, rounds=rounds, compact_at=10**6)


def _blocks(message: dict) -> list[dict]:
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _cost(usage: dict, model: str) -> float:
    return CallRecord.from_usage(usage, model).cost


def write_cline_cli(directory: Path, model: str = MODEL, rounds: int = 5) -> Path:
    """``data/sessions/<id>/<id>.messages.json`` of the Cline CLI 3."""
    run, k, messages = _run(model, rounds), 0, []
    for index, message in enumerate(run.messages):
        entry = {"id": f"msg_{index}", "role": message["role"], "content": _blocks(message), "ts": 1_796_000_000_000 + index}
        if message["role"] == "assistant":
            u = run.calls[k]
            entry.update(modelInfo={"id": model, "provider": "anthropic"},
                         metrics={"inputTokens": u["input_tokens"], "outputTokens": u["output_tokens"],
                                  "cacheReadTokens": u["cache_read_input_tokens"],
                                  "cacheWriteTokens": u["cache_creation_input_tokens"], "cost": _cost(u, model)})
            k += 1
        messages.append(entry)
    session = "1796000000000_ab12c"
    path = Path(directory) / "sessions" / session / f"{session}.messages.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "updated_at": "2026-12-01T09:00:00.000Z", "agent": "lead",
                                "sessionId": session, "origin": {"source": "cli", "mode": "user", "sessionId": session,
                                                                 "version": "3.0.65"}, "messages": messages}, indent=2))
    return path


def write_opencode(directory: Path, model: str = MODEL, rounds: int = 5, steps_per_message: int = 1) -> Path:
    """``opencode export <session>``: each model request a step of an assistant message (with
    ``steps_per_message`` > 1, several requests share one message, as opencode's loop does)."""
    run = _run(model, rounds)
    messages, k, assistant = [], 0, None
    results = {b["tool_use_id"]: b for m in run.messages if m["role"] == "user" for b in _blocks(m)
               if b.get("type") == "tool_result"}
    for index, message in enumerate(run.messages):
        if message["role"] == "user":
            texts = [b for b in _blocks(message) if b.get("type") == "text"]
            if texts or assistant is None or k % steps_per_message == 0:
                assistant = None
            if texts:
                messages.append({"info": {"id": f"msg_u{index}", "role": "user", "time": {"created": 1_796_000_000_000}},
                                 "parts": [{"type": "text", "text": b["text"]} for b in texts]})
            continue
        u = run.calls[k]
        tokens = {"input": u["input_tokens"], "output": u["output_tokens"], "reasoning": 0,
                  "cache": {"read": u["cache_read_input_tokens"], "write": u["cache_creation_input_tokens"]}}
        parts = [{"type": "step-start"}]
        for b in _blocks(message):
            if b.get("type") == "text":
                parts.append({"type": "text", "text": b["text"]})
            elif b.get("type") == "tool_use":
                result = results[b["id"]]["content"]
                parts.append({"type": "tool", "callID": b["id"], "tool": b["name"],
                              "state": {"status": "completed", "input": b["input"],
                                        "output": result if isinstance(result, str) else json.dumps(result)}})
        parts.append({"type": "step-finish", "tokens": tokens, "cost": _cost(u, model)})
        if assistant is None:
            assistant = {"info": {"id": f"msg_a{index}", "role": "assistant", "modelID": model, "providerID": "anthropic",
                                  "time": {"created": 1_796_000_000_000 + index}, "cost": 0.0, "tokens": tokens},
                         "parts": []}
            messages.append(assistant)
        assistant["parts"] += parts
        assistant["info"]["cost"] += _cost(u, model)
        k += 1
    path = Path(directory) / "session-export.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"info": {"id": "ses_1", "title": "billing", "version": "1.18.33"}, "messages": messages},
                               indent=2))
    return path


def write_pi(directory: Path, model: str = MODEL, rounds: int = 5, branch: bool = False) -> Path:
    """``~/.pi/agent/sessions/--cwd--/<timestamp>_<uuid>.jsonl`` (version 3: a tree of entries);
    ``branch`` adds an abandoned branch off the first answer, which the replay must leave out."""
    run, k, lines = _run(model, rounds), 0, [{"type": "session", "version": 3, "id": "0f5e3c1a",
                                              "timestamp": "2026-12-01T09:00:00.000Z", "cwd": "/home/learner/billing"}]
    parent = None
    for index, message in enumerate(run.messages):
        entries = []
        if message["role"] == "assistant":
            u = run.calls[k]
            content = [{"type": "toolCall", "id": b["id"], "name": b["name"], "arguments": b["input"]}
                       if b.get("type") == "tool_use" else b for b in _blocks(message) if b.get("type") in ("text", "tool_use")]
            entries.append({"role": "assistant", "content": content, "model": model, "provider": "anthropic",
                            "stopReason": "toolUse", "timestamp": 1_796_000_000_000 + index,
                            "usage": {"input": u["input_tokens"], "output": u["output_tokens"],
                                      "cacheRead": u["cache_read_input_tokens"],
                                      "cacheWrite": u["cache_creation_input_tokens"],
                                      "cost": {"total": _cost(u, model)}}})
            k += 1
        else:
            for b in _blocks(message):
                if b.get("type") == "tool_result":
                    content = b["content"] if isinstance(b["content"], str) else json.dumps(b["content"])
                    entries.append({"role": "toolResult", "toolCallId": b["tool_use_id"], "toolName": "tool",
                                    "content": [{"type": "text", "text": content}], "isError": False})
                elif b.get("type") == "text":
                    entries.append({"role": "user", "content": [b]})
        for m in entries:
            key = f"e{len(lines)}"
            lines.append({"type": "message", "id": key, "parentId": parent, "timestamp": "2026-12-01T09:00:01.000Z",
                          "message": m})
            parent = key
        if branch and index == 1:  # an abandoned branch off the first answer
            lines.append({"type": "message", "id": "dead", "parentId": parent, "message": {
                "role": "user", "content": [{"type": "text", "text": "No, try something else."}]}})
    path = Path(directory) / "--home-learner-billing--" / "20261201_090000_0f5e3c1a.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def write_codex(directory: Path, model: str = MODEL, rounds: int = 5) -> Path:
    """``codex exec --json``: thread and turn events, each tool call a completed item with its output."""
    run = _run(model, rounds)
    results = {b["tool_use_id"]: b for m in run.messages if m["role"] == "user" for b in _blocks(m)
               if b.get("type") == "tool_result"}
    lines = [{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}, {"type": "turn.started"}]
    item = 0
    for message in run.messages:
        if message["role"] != "assistant":
            if any(b.get("type") == "text" for b in _blocks(message)) and len(lines) > 2:
                lines.append({"type": "turn.started"})
            continue
        for b in _blocks(message):
            if b.get("type") == "text":
                lines.append({"type": "item.completed", "item": {"id": f"item_{item}", "type": "agent_message",
                                                                 "text": b["text"]}})
            elif b.get("type") == "tool_use":
                output = results[b["id"]]["content"]
                lines.append({"type": "item.completed", "item": {
                    "id": f"item_{item}", "type": "command_execution", "command": json.dumps(b["input"]),
                    "aggregated_output": output if isinstance(output, str) else json.dumps(output),
                    "exit_code": 0, "status": "completed"}})
            item += 1
        if not any(b.get("type") == "tool_use" for b in _blocks(message)):
            lines.append({"type": "turn.completed", "usage": {"input_tokens": 20_000, "cached_input_tokens": 15_000,
                                                              "output_tokens": 900}})
    path = Path(directory) / "codex.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def write_mini_swe_agent(directory: Path, usage_style: str, model: str = MODEL, rounds: int = 5,
                         miss_every: int = 0, dropped: int = 0) -> Path:
    """mini-swe-agent's ``<instance>.traj.json`` (``{info, messages, trajectory_format}``; its
    ``agents/default.py`` and ``run/utils/save.py``): each assistant message keeps litellm's response
    in ``extra.response``, whose ``usage`` is the provider's as litellm reports it: ``usage_style``
    ``anthropic`` (``prompt_tokens`` with reads and writes in it, ``cache_read_input_tokens``,
    ``cache_creation_input_tokens``), ``openai`` (``prompt_tokens_details.cached_tokens``: an
    OpenAI-compatible endpoint, which bills no writes) or
    ``deepseek`` (``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens``). Every
    ``miss_every``-th call missed the cache (what it read counted as written, or uncached where the
    provider bills no writes), priced so in ``info.model_stats.instance_cost``; ``dropped`` calls are
    counted in ``api_calls`` and not shown (text-only responses mini-swe-agent does not keep)."""
    from minimal_runtime.replay import deepseek
    run, k, cost = run_current(model, rounds=rounds, compact_at=10**6, output_chars=6_000), 0, 0.0
    logged_model = "deepseek-chat" if usage_style == "deepseek" else model
    messages = [{"role": "system", "content": "You are a helpful assistant that can interact with a computer."}]
    for index, message in enumerate(run.messages):
        blocks = _blocks(message)
        if message["role"] == "user":
            messages += [{"role": "tool", "tool_call_id": b["tool_use_id"],
                          "content": b["content"] if isinstance(b["content"], str) else json.dumps(b["content"])}
                         for b in blocks if b.get("type") == "tool_result"]
            messages += [{"role": "user", "content": b["text"]} for b in blocks if b.get("type") == "text"]
            continue
        u = dict(run.calls[k])
        if miss_every and k and k % miss_every == 0:  # a miss: nothing read, all of it written again
            u["cache_creation_input_tokens"] += u["cache_read_input_tokens"]
            u["cache_creation"] = {"ephemeral_5m_input_tokens": u["cache_creation_input_tokens"], "ephemeral_1h_input_tokens": 0}
            u["cache_read_input_tokens"] = 0
        read, write, fresh, out = (u["cache_read_input_tokens"], u["cache_creation_input_tokens"], u["input_tokens"],
                                   u["output_tokens"])
        at = run.times[k] if k < len(run.times) else run.times[-1]
        if usage_style == "anthropic":
            usage = {"prompt_tokens": fresh + read + write, "completion_tokens": out, "total_tokens": fresh + read + write + out,
                     "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                     "prompt_tokens_details": {"cached_tokens": read}}
            cost += CallRecord.from_usage(u, model).cost
        elif usage_style == "openai":
            usage = {"prompt_tokens": fresh + read + write, "completion_tokens": out,
                     "total_tokens": fresh + read + write + out, "prompt_tokens_details": {"cached_tokens": read}}
            cost += CallRecord(model=model, input_tokens=fresh + write, cache_read_input_tokens=read,
                               output_tokens=out).cost
        else:
            usage = {"prompt_tokens": fresh + read + write, "completion_tokens": out, "total_tokens": fresh + read + write + out,
                     "prompt_cache_hit_tokens": read, "prompt_cache_miss_tokens": fresh + write}
            cost += deepseek.rates(logged_model, at).dollars(read, fresh + write, out)
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                 for b in blocks if b.get("type") == "tool_use"]
        messages.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {}),
                         "extra": {"response": {"id": f"chatcmpl-{index}", "created": int(at), "model": logged_model,
                                                "object": "chat.completion", "usage": usage}}})
        k += 1
    messages.append({"role": "exit", "content": "Submitted"})
    path = Path(directory) / "instance_1" / "instance_1.traj.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"info": {"exit_status": "Submitted", "submission": "",
                                         "model_stats": {"instance_cost": cost, "api_calls": k + dropped},
                                         "mini_version": "1.17.0", "config": {"model": {"model_name": logged_model}}},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1", "instance_id": "instance_1"},
                               indent=2))
    return path


def write_openhands_events(directory: Path, model: str = MODEL, rounds: int = 5) -> Path:
    """An OpenHands conversation's event stream, as it saves or exports one: a JSON list of events
    (``openhands/events/serialization/event.py``), each model response an action with its
    ``tool_call_metadata.model_response`` and the ``llm_metrics`` so far (``openhands/llm/metrics.py``),
    each tool result an observation naming its ``tool_call_id``."""
    run = _run(model, rounds)
    events, k, usages, cost = [], 0, [], 0.0

    def add(**event) -> None:
        events.append({"id": len(events), "timestamp": f"2026-12-01T09:00:{len(events) % 60:02d}.000000", **event})
    for message in run.messages:
        blocks = _blocks(message)
        if message["role"] == "user":
            for b in blocks:
                if b.get("type") == "tool_result":
                    content = b["content"] if isinstance(b["content"], str) else json.dumps(b["content"])
                    add(source="environment", observation="run", message="Command finished", content=content,
                        extras={"command": "ls", "metadata": {"exit_code": 0}},
                        tool_call_metadata={"function_name": "execute_bash", "tool_call_id": b["tool_use_id"]})
                elif b.get("type") == "text":
                    add(source="user", action="message", message=b["text"], args={"content": b["text"]})
            continue
        u = run.calls[k]
        prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        cost += CallRecord.from_usage(u, model).cost
        usages.append({"model": model, "prompt_tokens": prompt, "completion_tokens": u["output_tokens"],
                       "cache_read_tokens": u["cache_read_input_tokens"],
                       "cache_write_tokens": u["cache_creation_input_tokens"], "context_window": 200_000,
                       "per_turn_token": prompt + u["output_tokens"], "response_id": f"chatcmpl-{k}"})
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                 for b in blocks if b.get("type") == "tool_use"]
        response = {"id": f"chatcmpl-{k}", "model": model, "choices": [{"message": {
            "role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}}]}
        metrics = {"accumulated_cost": cost, "token_usages": list(usages), "costs": []}
        for call in calls or [None]:
            add(source="agent", action="run" if call else "message", message=text,
                args={"command": "ls"} if call else {"content": text}, llm_metrics=metrics,
                tool_call_metadata={"function_name": call["function"]["name"] if call else "", "tool_call_id":
                                    call["id"] if call else f"none-{k}", "model_response": response,
                                    "total_calls_in_response": len(calls)})
        k += 1
    path = Path(directory) / "conversation_events.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(events, indent=2))
    return path


def write_codex_rollout(directory: Path, model: str = MODEL, rounds: int = 5) -> Path:
    """Codex CLI's own session file, ``sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``: ``RolloutLine``s
    ``{timestamp, type, payload}`` (openai/codex ``codex-rs/protocol/src/protocol.rs``): the session's
    meta, a turn context naming the model, the Responses API's items, and a ``token_count`` event after
    each response (OpenAI's usage: ``input_tokens`` with the cached ones in them). The calls are the
    emulated run's; ``model`` is the name written into the turn context."""
    run = _run(MODEL, rounds)
    stamp = "2026-12-01T09:00:00.000Z"
    lines = [{"timestamp": stamp, "type": "session_meta", "payload": {
        "id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "timestamp": stamp, "cwd": "/home/learner/billing",
        "originator": "codex_cli_rs", "cli_version": "0.58.0", "instructions": None}},
        {"timestamp": stamp, "type": "turn_context", "payload": {"cwd": "/home/learner/billing", "model": model,
                                                                  "approval_policy": "on-request", "effort": "medium"}}]
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
             "total_tokens": 0}
    k = 0
    for message in run.messages:
        blocks = _blocks(message)
        if message["role"] == "user":
            for b in blocks:
                if b.get("type") == "tool_result":
                    output = b["content"] if isinstance(b["content"], str) else json.dumps(b["content"])
                    lines.append({"timestamp": stamp, "type": "response_item", "payload": {
                        "type": "function_call_output", "call_id": b["tool_use_id"], "output": output}})
                elif b.get("type") == "text":
                    lines.append({"timestamp": stamp, "type": "response_item", "payload": {
                        "type": "message", "role": "user", "content": [{"type": "input_text", "text": b["text"]}]}})
            continue
        for b in blocks:
            if b.get("type") == "text":
                lines.append({"timestamp": stamp, "type": "response_item", "payload": {
                    "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": b["text"]}]}})
            elif b.get("type") == "tool_use":
                lines.append({"timestamp": stamp, "type": "response_item", "payload": {
                    "type": "function_call", "name": b["name"], "arguments": json.dumps(b["input"]), "call_id": b["id"]}})
        u = run.calls[k]
        prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        last = {"input_tokens": prompt, "cached_input_tokens": u["cache_read_input_tokens"],
                "output_tokens": u["output_tokens"], "reasoning_output_tokens": 0, "total_tokens": prompt + u["output_tokens"]}
        total = {key: total[key] + last[key] for key in total}
        lines.append({"timestamp": stamp, "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": dict(total), "last_token_usage": last, "model_context_window": 272_000},
            "rate_limits": {"primary": {"used_percent": 7.0, "window_minutes": 300}}}})
        k += 1
    path = Path(directory) / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01T09-00-00-0199a213.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def write_gemini_chat(directory: Path, model: str = "gemini-2.5-pro", rounds: int = 5) -> Path:
    """Gemini CLI's saved chat, ``tmp/<project hash>/chats/session-<time>-<id>.json``: a
    ``ConversationRecord`` (google-gemini/gemini-cli ``chatRecordingService.ts``), each answer a
    ``gemini`` message with its ``toolCalls`` (their results as function responses) and ``tokens``
    (``input`` with the ``cached`` part in it). The calls are the emulated run's, named ``model``."""
    run = _run(MODEL, rounds)
    results = {b["tool_use_id"]: b for m in run.messages if m["role"] == "user" for b in _blocks(m)
               if b.get("type") == "tool_result"}
    messages, k = [], 0
    for index, message in enumerate(run.messages):
        stamp = f"2026-12-01T09:{index // 60:02d}:{index % 60:02d}.000Z"
        blocks = _blocks(message)
        if message["role"] == "user":
            messages += [{"id": f"m{index}", "timestamp": stamp, "type": "user", "content": b["text"]}
                         for b in blocks if b.get("type") == "text"]
            continue
        u = run.calls[k]
        prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        calls = []
        for b in blocks:
            if b.get("type") == "tool_use":
                output = results[b["id"]]["content"]
                calls.append({"id": b["id"], "name": b["name"], "args": b["input"], "status": "success",
                              "timestamp": stamp, "result": [{"functionResponse": {
                                  "id": b["id"], "name": b["name"],
                                  "response": {"output": output if isinstance(output, str) else json.dumps(output)}}}]})
        messages.append({"id": f"m{index}", "timestamp": stamp, "type": "gemini",
                         "content": "\n".join(b["text"] for b in blocks if b.get("type") == "text"),
                         **({"toolCalls": calls} if calls else {}), "thoughts": [], "model": model,
                         "tokens": {"input": prompt, "output": u["output_tokens"], "cached": u["cache_read_input_tokens"],
                                    "thoughts": 0, "tool": 0, "total": prompt + u["output_tokens"]}})
        k += 1
    path = Path(directory) / "tmp" / "9f2c1e" / "chats" / "session-2026-12-01T09-00-1a2b3c4d.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"sessionId": "1a2b3c4d-0000-4000-8000-000000000001", "projectHash": "9f2c1e",
                                "startTime": "2026-12-01T09:00:00.000Z", "lastUpdated": "2026-12-01T09:10:00.000Z",
                                "messages": messages}, indent=2))
    return path
