"""pi's (``@mariozechner/pi-coding-agent``) session files, ``~/.pi/agent/sessions/--<cwd>--/*.jsonl``:
a header ``{type: "session", version, id, timestamp, cwd}``, then entries ``{type, id, parentId,
timestamp, ...}`` forming a tree (a branch is a new child of an earlier entry). ``type: "message"``
entries carry ``message``: ``role`` ``user`` / ``assistant`` / ``toolResult``; an assistant's
``content`` is ``text``, ``thinking`` and ``toolCall`` (``id``, ``name``, ``arguments``) blocks, with
``usage`` (``input``, ``output``, ``cacheRead``, ``cacheWrite``, ``cost.total``), ``model`` and
``provider``; a tool result has ``toolCallId`` and ``content``. ``compaction`` entries carry the
summary that replaced the history. The run replayed is the branch that ends at the file's last entry.

An assistant message whose ``stopReason`` is ``error`` or ``aborted`` is a request that failed: pi
never sends it back (pi-ai's ``transform-messages.ts`` skips it, and the results of its tool calls,
when it builds the next request), and its usage is zero or what was billed before it broke. So it is
no call of the replay: its usage, if any, is billed in every row as a call the log does not show.
The run's model is the one the log billed most for (a session may start on a model its provider
bills at $0).
"""

from __future__ import annotations

from ..build import Builder, at_line, blocks, count, dollars, seconds, usage_of
from ..recorded import ModelTotals, RecordedRun
from ..source import Source

NAME = "a pi session .jsonl"


def recognise(source: Source) -> bool:
    d = source.first
    return isinstance(d, dict) and d.get("type") == "session" and "cwd" in d and "id" in d


def read(source: Source) -> list[RecordedRun]:
    path = source.path
    entries: dict[str, tuple[int, dict]] = {}
    last = None
    for number, d in source.lines():
        if d.get("type") == "session":
            continue
        key = str(d.get("id") or number)
        entries[key] = (number, d)
        last = key
    branch = list(entries.values())
    if any("parentId" in d for _, d in branch):  # a tree: the last entry's ancestors, oldest first
        branch, seen = [], set()
        while last is not None and last in entries and last not in seen:
            seen.add(last)
            branch.append(entries[last])
            parent = entries[last][1].get("parentId")
            last = str(parent) if parent is not None else None
        branch.reverse()
    run = RecordedRun(source="pi", path=str(path))
    build = Builder(run)
    costs, failed, dropped = [], 0, set()
    for number, d in branch:
        with at_line(path, number, f"{d.get('type')} entry"):
            if d.get("type") == "compaction":
                build.compaction(str(d.get("summary") or ""))
                continue
            if d.get("type") != "message":
                build.skip(str(d.get("type")))
                continue
            m = d["message"]
            role = m.get("role")
            if role == "toolResult" and m.get("toolCallId") in dropped:
                continue  # the result of a failed request's tool call: never sent either
            if role == "toolResult":
                build.user([{"type": "tool_result", "tool_use_id": m["toolCallId"], "content": _text(m.get("content")),
                             **({"is_error": True} if m.get("isError") else {})}], number)
            elif role == "assistant" and m.get("stopReason") in ("error", "aborted"):
                failed += 1
                dropped |= {b.get("id") for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"}
                _unlogged(run, m)
                costs.append(dollars(((m.get("usage") or {}).get("cost") or {}).get("total"), "usage.cost.total") or 0.0)
            elif role == "assistant":
                content = []
                for b in m.get("content") or []:
                    if b.get("type") == "toolCall":
                        content.append({"type": "tool_use", "id": b["id"], "name": b["name"],
                                        "input": b.get("arguments") or {}})
                    elif b.get("type") == "thinking" and b.get("thinking"):
                        content.append({"type": "thinking", "thinking": b["thinking"], "signature": ""})
                    elif b.get("type") == "text":
                        content.append({"type": "text", "text": b.get("text") or ""})
                u = m.get("usage") or {}
                usage = usage_of(count(u.get("input"), "usage.input"), count(u.get("cacheRead"), "usage.cacheRead") or 0,
                                 count(u.get("cacheWrite"), "usage.cacheWrite") or 0,
                                 count(u.get("output"), "usage.output")) if u else None
                costs.append(dollars((u.get("cost") or {}).get("total"), "usage.cost.total") if u else None)
                model = m.get("model") if isinstance(m.get("model"), str) else None
                build.assistant(d.get("id"), content, usage, number, seconds(m.get("timestamp") or d.get("timestamp")),
                                model=model, cost=costs[-1])
            else:
                build.user(blocks(m.get("content")), number)
    if failed:
        run.notes.append(f"{failed} request(s) failed (stopReason error or aborted): pi does not send them back, "
                         "so the replay does not make them; what the log says they used is billed as calls it "
                         "does not show")
    if len(branch) < len(entries):
        run.notes.append(f"the session branches: the branch that ends at its last entry is replayed "
                         f"({len(branch)} of {len(entries)} entries)")
    if costs and None not in costs:
        run.cost_usd, run.cost_from = sum(costs), "cost (its messages' usage.cost.total, summed)"
    return [run]


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _unlogged(run: RecordedRun, m: dict) -> None:
    """A failed request's usage, where it has any, added to its model's calls the log does not show."""
    u = m.get("usage") or {}
    model = m.get("model") if isinstance(m.get("model"), str) else run.model
    fresh, read, write, out = (count(u.get(k), f"usage.{k}") or 0 for k in ("input", "cacheRead", "cacheWrite", "output"))
    if model and fresh + read + write + out:
        t = run.unlogged.setdefault(model, ModelTotals())
        t.input_tokens, t.cache_read = t.input_tokens + fresh, t.cache_read + read
        t.cache_write, t.output_tokens = t.cache_write + write, t.output_tokens + out
