"""Small recorded runs in each format, made here from a run of the running example.

The course cannot ship other people's logs, so the replay chapter and the importer tests use these:
the pricing comparison, run on the emulator, written out the way each agent writes its logs
(Claude Code session and stream-json, mini-swe-agent, OpenHands), with the emulator's usage as
the "recorded" usage. The Claude Code session also gets a compaction halfway and spreads each
model call over one line per content block, as Claude Code does.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..example import TASK, pricing_agent

START = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
MODEL = "claude-sonnet-4-6"


def _recorded_example() -> tuple[list[dict], list, str]:
    agent, _, _ = pricing_agent(tempfile.mkdtemp(), online=False, model=MODEL)
    agent.run(TASK)
    return agent.messages, agent.calls, agent.system[0]["text"]


def _times(n: int) -> list[datetime]:
    # Ten seconds a call, and one six-minute pause before call 5: the cache expires there.
    return [START + timedelta(seconds=10 * k + (360 if k >= 4 else 0)) for k in range(n)]


def _usage(call) -> dict:
    return {"input_tokens": call.input_tokens, "cache_creation_input_tokens": call.cache_creation_input_tokens,
            "cache_read_input_tokens": call.cache_read_input_tokens, "output_tokens": call.output_tokens}


def write_samples(directory: str | Path) -> dict[str, Path]:
    """Write one log per format into ``directory``; returns {format: path}."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    messages, calls, system = _recorded_example()
    assistants = messages[1::2]
    followups = messages[2::2] + [None]
    times = _times(len(assistants))
    writers = {
        "claude-code": lambda usage: _claude_code_session(directory / "session.jsonl", messages[0], assistants, followups,
                                                          usage, times),
        "claude-code-stream": lambda usage: _stream_json(directory / "stream.jsonl", messages[0], assistants, followups, usage),
        "mini-swe-agent": lambda usage: _mini_swe(directory / "run.traj.json", system, messages[0], assistants, followups,
                                                  usage, times),
        "openhands": lambda usage: _openhands(directory / "output.jsonl", system, messages[0], assistants, followups,
                                              usage, times),
    }
    paths = {fmt: write(calls) for fmt, write in writers.items()}
    # The session's compaction and the logged pause change what the calls really cost: record the
    # usage of the run *as logged*, which is what replaying it with its own layout measures.
    from .calibration import Calibration
    from .driver import replay
    from .formats import load
    for fmt in ("claude-code", "mini-swe-agent"):  # in the emulator's own tokens: no calibration to the first draft
        writers[fmt](replay(load(paths[fmt])[0], "recorded", calibration=Calibration()).calls)
    return paths


def _jsonl(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _claude_code_session(path, task, assistants, followups, calls, times) -> Path:
    lines = [{"type": "progress", "data": {"type": "hook_progress"}, "timestamp": times[0].isoformat()},
             {"type": "user", "message": {"role": "user", "content": task["content"][0]["text"]}, "sessionId": "sample"}]
    for k, (reply, after, call, at) in enumerate(zip(assistants, followups, calls, times)):
        if k == 7:  # a compaction halfway through
            lines.append({"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 4000}})
            lines.append({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
                          "This session is being continued from a previous conversation. Summary: three competitors done."}})
        message_id = f"msg_sample_{k:03d}"
        for block in reply["content"]:  # one line per content block, same id and usage
            lines.append({"type": "assistant", "timestamp": at.isoformat().replace("+00:00", "Z"),
                          "message": {"model": MODEL, "id": message_id, "type": "message", "role": "assistant",
                                      "content": [block], "usage": _usage(call)}})
        for block in (after or {"content": []})["content"]:
            lines.append({"type": "user", "message": {"role": "user", "content": [block]}})
        lines.append({"type": "file-history-snapshot", "snapshot": {}})
    return _jsonl(path, lines)


def _stream_json(path, task, assistants, followups, calls) -> Path:
    lines = [{"type": "system", "subtype": "init", "model": MODEL,
              "tools": ["fetch", "browse", "read_file", "write_file", "message_user"]},
             {"type": "user", "message": {"role": "user", "content": task["content"]}}]
    for k, (reply, after, call) in enumerate(zip(assistants, followups, calls)):
        lines.append({"type": "assistant", "message": {"model": MODEL, "id": f"msg_stream_{k:03d}", "role": "assistant",
                                                       "content": reply["content"], "usage": _usage(call)}})
        if after:
            lines.append({"type": "user", "message": after})
    lines.append({"type": "result", "subtype": "success", "total_cost_usd": round(sum(c.cost for c in calls), 6)})
    return _jsonl(path, lines)


def _tool_calls(reply: dict) -> list[dict]:
    return [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
            for b in reply["content"] if b["type"] == "tool_use"]


def _text(reply: dict) -> str:
    return "\n".join(b["text"] for b in reply["content"] if b["type"] == "text")


def _mini_swe(path, system, task, assistants, followups, calls, times) -> Path:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": task["content"][0]["text"]}]
    for k, (reply, after, call, at) in enumerate(zip(assistants, followups, calls, times)):
        usage = {"prompt_tokens": call.prompt_tokens, "completion_tokens": call.output_tokens,
                 "prompt_cache_hit_tokens": call.cache_read_input_tokens,
                 "prompt_cache_miss_tokens": call.prompt_tokens - call.cache_read_input_tokens}
        messages.append({"role": "assistant", "content": _text(reply), "tool_calls": _tool_calls(reply),
                         "extra": {"response": {"id": f"resp-{k}", "created": int(at.timestamp()), "model": "deepseek-chat",
                                                "usage": usage}}})
        for block in (after or {"content": []})["content"]:
            messages.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": block["content"]})
    messages.append({"role": "exit", "content": ""})
    path.write_text(json.dumps({"info": {"model_stats": {"instance_cost": 0.01, "api_calls": len(calls)}},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1.1",
                                "instance_id": "sample"}), encoding="utf-8")
    return path


def _openhands(path, system, task, assistants, followups, calls, times) -> Path:
    history = [{"id": 0, "source": "agent", "action": "system", "message": system},
               {"id": 1, "source": "user", "action": "message", "message": task["content"][0]["text"]},
               {"id": 2, "source": "environment", "observation": "recall", "content": "Added workspace context"}]
    usages = []
    for k, (reply, after, call, at) in enumerate(zip(assistants, followups, calls, times)):
        response = {"id": f"gen-{k}", "model": "llama-4-maverick",
                    "choices": [{"message": {"content": _text(reply), "tool_calls": _tool_calls(reply)}}]}
        usages.append({"prompt_tokens": call.prompt_tokens, "completion_tokens": call.output_tokens,
                       "cache_read_tokens": 0, "cache_write_tokens": 0, "response_id": f"gen-{k}"})
        for tool in _tool_calls(reply) or [None]:
            meta = {"function_name": tool["function"]["name"], "tool_call_id": tool["id"], "model_response": response} \
                if tool else {"function_name": "finish", "tool_call_id": f"finish-{k}", "model_response": response}
            history.append({"id": len(history), "timestamp": at.isoformat(), "source": "agent", "action": "run",
                            "tool_call_metadata": meta})
        for block in (after or {"content": []})["content"]:
            history.append({"id": len(history), "source": "agent", "observation": "run", "content": block["content"],
                            "tool_call_metadata": {"tool_call_id": block["tool_use_id"]}})
    return _jsonl(path, [{"instance_id": "sample", "history": history, "metrics": {"token_usages": usages}}])
