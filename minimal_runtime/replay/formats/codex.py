"""Codex CLI's ``codex exec --json``: one thread event a line (``codex-rs/exec/src/exec_events.rs``
in openai/codex: ``thread.started``, ``turn.started``, ``item.started`` / ``item.updated`` /
``item.completed`` with an ``item`` of a ``type``, ``turn.completed`` with the turn's ``usage``,
``turn.failed``, ``error``).

What it holds, and what it does not:
- the model's words and actions as completed items: ``agent_message`` and ``reasoning`` text, and
  tool calls that carry their own result (``command_execution``: ``command``, ``aggregated_output``,
  ``exit_code``; ``mcp_tool_call``: ``arguments``, ``result``; ``file_change``; ``web_search``).
  Each tool item is replayed as one model call (the text before it in the same call) and its
  result; the turn's last message is its final call. Parallel calls of one response cannot be told
  from sequential ones, so each is a call of its own [INFERRED];
- usage per turn (``input_tokens``, ``cached_input_tokens`` within them [INFERRED: the OpenAI
  Responses API's convention], ``output_tokens``), not per call, so no call carries usage: the
  replay's tokens are the emulator's estimates, and the turns' totals are in a note;
- neither the prompt (it was the command's argument) nor the model (give ``--model`` to price it).
"""

from __future__ import annotations

import json

from ..build import Builder, at_line, count
from ..recorded import RecordedRun
from ..source import Source

NAME = "a Codex CLI `exec --json` log"
TOOLS = {"command_execution", "mcp_tool_call", "file_change", "web_search", "collab_tool_call"}


def recognise(source: Source) -> bool:
    d = source.first
    return isinstance(d, dict) and str(d.get("type", "")).split(".")[0] in ("thread", "turn", "item")


def read(source: Source) -> list[RecordedRun]:
    path = source.path
    run = RecordedRun(source="codex", path=str(path))
    build = Builder(run)
    build.user([{"type": "text", "text": "[the prompt of this run is not in its log: it was codex exec's argument]"}], None)
    run.prompt_missing = True
    texts: list[dict] = []
    turns, fresh, cached, out = 0, 0, 0, 0
    for number, d in source.lines():
        kind = d.get("type")
        with at_line(path, number, f"{kind} event"):
            if kind == "item.completed":
                item = d["item"]
                what = item.get("type")
                if what in ("agent_message", "reasoning", "plan") and item.get("text"):
                    texts.append({"type": "text", "text": item["text"]} if what == "agent_message" else
                                 {"type": "text", "text": f"[{what}] {item['text']}"})
                elif what in TOOLS:
                    call_id = str(item.get("id") or f"item-{number}")
                    use = {"type": "tool_use", "id": call_id, "name": what, "input": _input(item)}
                    build.assistant(f"codex-{number}", [*texts, use], None, number)
                    texts = []
                    build.user([{"type": "tool_result", "tool_use_id": call_id, "content": _output(item),
                                 **({"is_error": True} if item.get("status") in ("failed", "declined") else {})}], number)
                else:
                    build.skip(f"item/{what}")
            elif kind == "turn.completed":
                u = d.get("usage") or {}
                turns += 1
                fresh += count(u.get("input_tokens"), "usage.input_tokens") or 0
                cached += count(u.get("cached_input_tokens"), "usage.cached_input_tokens") or 0
                out += count(u.get("output_tokens"), "usage.output_tokens") or 0
                if texts:  # the turn's answer
                    build.assistant(f"codex-{number}", texts, None, number)
                    texts = []
            elif kind in ("thread.started", "turn.started"):
                continue
            else:
                build.skip(str(kind))
    if texts:
        build.assistant("codex-end", texts, None, None)
    if turns:
        run.notes.append(f"Codex reports usage per turn, not per call: {turns} turn(s), {fresh:,} input tokens "
                         f"({cached:,} of them cached) and {out:,} output; the replay's tokens are the emulator's "
                         "estimates, and the log names no model (give --model to price it)")
    return [run]


def _input(item: dict) -> dict:
    if item.get("type") == "command_execution":
        return {"command": item.get("command", "")}
    if item.get("type") == "mcp_tool_call":
        return {"server": item.get("server"), "tool": item.get("tool"), "arguments": item.get("arguments")}
    if item.get("type") == "file_change":
        return {"changes": item.get("changes") or []}
    return {k: v for k, v in item.items() if k not in ("id", "type", "status")}


def _output(item: dict) -> str:
    if item.get("type") == "command_execution":
        return f"{item.get('aggregated_output', '')}\n[exit code {item.get('exit_code')}]"
    if item.get("type") == "mcp_tool_call":
        return json.dumps(item.get("result") or item.get("error"), ensure_ascii=False)
    return item.get("status") or "done"
