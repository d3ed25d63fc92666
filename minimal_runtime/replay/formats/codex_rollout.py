"""Codex CLI's own session files, ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``: one
``RolloutLine`` a line, ``{timestamp, type, payload}`` (``codex-rs/protocol/src/protocol.rs`` in
openai/codex):

- ``session_meta``: the session's ``id``, ``cwd``, ``cli_version``, ``instructions``;
- ``turn_context``: a turn's settings, its ``model`` among them;
- ``response_item``: what was sent and received, as the Responses API's items: ``message``
  (``role`` user, assistant or developer; ``content`` of ``input_text`` / ``output_text`` parts),
  ``reasoning`` (a ``summary`` of ``summary_text`` parts, the rest encrypted), ``function_call``
  (``name``, ``arguments`` as JSON text, ``call_id``), ``function_call_output`` (``call_id``,
  ``output``), ``custom_tool_call`` / ``custom_tool_call_output`` and ``local_shell_call`` alike;
- ``event_msg``: what the UI was told; a ``token_count`` event (``info.last_token_usage``:
  ``input_tokens``, ``cached_input_tokens`` within them, ``output_tokens``, reasoning within them)
  follows each model response, and closes the call whose items came before it;
- ``compacted``: the summary a compaction replaced the history with (``message``).

Usage is OpenAI's: hits only (a cached token is billed at the cached price, the rest as input, no
write premium). The model (``gpt-5-codex``, ...) is not in the price table: the rows are n/a unless
``--model`` prices the replay as one that is.
"""

from __future__ import annotations

import json

from ..build import Builder, at_line, count, seconds
from ..recorded import RecordedRun, RecordedUsage
from ..source import Source

NAME = "a Codex CLI session rollout (~/.codex/sessions/.../rollout-*.jsonl)"
KINDS = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
RESULTS = {"function_call_output", "custom_tool_call_output"}


def recognise(source: Source) -> bool:
    d = source.first
    return isinstance(d, dict) and d.get("type") in KINDS and isinstance(d.get("payload"), dict) and "timestamp" in d


def read(source: Source) -> list[RecordedRun]:
    path = source.path
    run = RecordedRun(source="codex-rollout", path=str(path))
    build = Builder(run)
    pending: list[dict] = []  # the assistant's items since the last call closed
    last_total = None
    at = None

    def close(usage: RecordedUsage | None, number: int | None) -> None:
        nonlocal pending
        if pending:
            build.assistant(f"codex-{number}", pending, usage, number, at, model=run.model)
            pending = []

    for number, d in source.lines():
        kind, p = d.get("type"), d.get("payload")
        with at_line(path, number, f"{kind} line"):
            if not isinstance(p, dict):
                raise ValueError("a payload that is not an object")
            if kind == "session_meta":
                instructions = p.get("instructions") or p.get("base_instructions")
                run.system = instructions if isinstance(instructions, str) else run.system
            elif kind == "turn_context":
                run.model = p["model"] if isinstance(p.get("model"), str) else run.model
            elif kind == "compacted":
                close(None, number)
                build.compaction(str(p.get("message") or ""))
            elif kind == "event_msg" and p.get("type") == "token_count":
                info = p.get("info")
                if not isinstance(info, dict) or info.get("total_token_usage") == last_total:
                    continue  # no figures yet (rate limits only), or the same count said again
                last_total = info.get("total_token_usage")
                u = info.get("last_token_usage") or {}
                at = seconds(d.get("timestamp"))
                close(RecordedUsage(prompt_tokens=count(u.get("input_tokens"), "last_token_usage.input_tokens") or 0,
                                    cache_read=count(u.get("cached_input_tokens"), "last_token_usage.cached_input_tokens") or 0,
                                    output_tokens=count(u.get("output_tokens"), "last_token_usage.output_tokens")), number)
            elif kind == "event_msg":
                build.skip(f"event/{p.get('type')}")
            elif kind == "response_item":
                at = seconds(d.get("timestamp"))
                _item(run, build, pending, close, number, p)
            else:
                build.skip(str(kind))
    close(None, None)
    return [run]


def _item(run: RecordedRun, build: Builder, pending: list[dict], close, number: int, p: dict) -> None:
    what = p.get("type")
    if what == "message" and p.get("role") == "assistant":
        text = _text(p.get("content"))
        pending.extend([{"type": "text", "text": text}] if text.strip() else [])
    elif what == "message":  # user, or developer (instructions the client sends as a message)
        close(None, number)
        text = _text(p.get("content"))
        build.user([{"type": "text", "text": text}] if text.strip() else [], number)
    elif what == "reasoning":
        summary = "\n".join(s.get("text", "") for s in p.get("summary") or [] if isinstance(s, dict))
        pending.extend([{"type": "thinking", "thinking": summary, "signature": ""}] if summary.strip() else [])
    elif what in CALLS:
        raw = p.get(CALLS[what])
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            args = {"input": raw}
        pending.append({"type": "tool_use", "id": str(p.get("call_id") or p.get("id")), "name": p.get("name") or what,
                        "input": args if isinstance(args, dict) else {"input": args}})
    elif what in RESULTS:
        close(None, number)  # a response logged without its token count (an older Codex): a call without usage
        output = p.get("output")
        build.user([{"type": "tool_result", "tool_use_id": str(p.get("call_id")),
                     "content": output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)}], number)
    else:
        build.skip(f"item/{what}")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict)
                     and isinstance(part.get("text"), str))
