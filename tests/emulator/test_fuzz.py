"""Robustness: thousands of mutated requests each get an answer with a status, never an exception,
a dropped connection or a 500 of our own making (issue: the 2026 emulator, "robust to bad requests")."""

from __future__ import annotations

import copy
import json
import random

from minimal_runtime.emulator import Emulator, Turn

from .helpers import SYSTEM_TEXT, TOOLS, FakeClock

BETAS = ("mid-conversation-system-clear-at-2026-08-21,inline-tools-2026-09-15,thinking-binding-controls-2026-08-01,"
         "compact-2026-01-12,compact-2026-09-04,context-management-2025-06-27,task-budgets-2026-03-13,"
         "mid-conversation-output-config-2026-07-01")


def seeds(emu: Emulator) -> list[dict]:
    """Valid requests of many shapes, including a real signed thinking block."""
    client = emu.client()
    answer = client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=[{"role": "user", "content": "q"}])
    thinking_turn = {"role": "assistant", "content": [b.to_dict() for b in answer.content]}
    base = {"model": "claude-sonnet-5-5", "max_tokens": 128, "system": [{"type": "text", "text": SYSTEM_TEXT[:400]}],
            "tools": TOOLS}
    tool_turn = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {"url": "u"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "page",
                                               "cache_control": {"type": "ephemeral"}}]}]
    return [
        {**base, "messages": [{"role": "user", "content": "hello"}]},
        {**base, "messages": [{"role": "user", "content": "q"}, thinking_turn, {"role": "user", "content": "q2"},
                              {"role": "system", "content": [{"type": "text", "text": "note"}], "clear_at": "next_user_message"}]},
        {**base, "messages": [{"role": "user", "content": "go"}, *tool_turn,
                              {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "fetch"}}]}],
         "cache_control": {"type": "ephemeral"}, "diagnostics": {"previous_message_id": None}},
        {**base, "messages": [{"role": "user", "content": "go"}, *tool_turn],
         "context_management": {"edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 0}}]}},
        {**base, "messages": [{"role": "user", "content": "go"}, *tool_turn], "compaction": {"type": "summarize"}},
        {**base, "messages": [{"role": "user", "content": "go"}], "output_config": {"task_budget": {"type": "tokens", "total": 30000}},
         "thinking": {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}},
        {**base, "model": "claude-haiku-4-5", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "prefill"}],
         "stream": True},
    ]


WEIRD = [None, 0, -1, 10**12, 1.5, True, "", "x", [], {}, [None], [{}], {"type": None}, {"type": "text"},
         "claude-sonnet-5-5", {"role": "user"}, [{"type": "text", "text": ""}], "\ud800", {"cache_control": "yes"}]


def mutate(value, rng: random.Random, depth: int = 0):
    """One random structural change somewhere in ``value``."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        roll = rng.random()
        if roll < 0.25:
            return {k: v for k, v in value.items() if k != key}
        if roll < 0.5:
            return {**value, key: rng.choice(WEIRD)}
        if roll < 0.6:
            return {**value, rng.choice(["extra", "cache_control", "clear_at", "type", "role", "citations"]): rng.choice(WEIRD)}
        return {**value, key: mutate(value[key], rng, depth + 1)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        roll = rng.random()
        if roll < 0.2:
            return value[:i] + value[i + 1:]
        if roll < 0.35:
            return value[:i] + [copy.deepcopy(value[i])] + value[i:]
        if roll < 0.45:
            return value[:i] + [rng.choice(WEIRD)] + value[i:]
        if roll < 0.55:
            return list(reversed(value))
        return value[:i] + [mutate(value[i], rng, depth + 1)] + value[i + 1:]
    return rng.choice(WEIRD)


def test_thousands_of_mutated_requests_all_answer_with_a_status():
    emu = Emulator(model="claude-sonnet-5-5", policy=lambda r: Turn(content=[{"type": "text", "text": "ok"}]), clock=FakeClock())
    rng = random.Random(2026)
    statuses: dict[int, int] = {}
    ours = []
    for k in range(3000):
        request = seeds(emu)[k % 7] if k < 7 else mutate(rng.choice(seeds_cache), rng)
        if k < 7:
            seeds_cache.append(request)
        for _ in range(rng.randrange(0, 3)):
            request = mutate(request, rng)
        body = json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")
        path = "/v1/messages/count_tokens" if k % 5 == 0 else "/v1/messages"
        status, headers, payload = emu.handle("POST", path, body, {"anthropic-beta": BETAS, "content-type": "application/json",
                                                            "anthropic-version": "2026-10-21", "x-api-key": "k"})
        statuses[status] = statuses.get(status, 0) + 1
        if status >= 500:
            ours.append((status, payload[:300], body[:300]))
        else:
            json.loads(payload) if headers["content-type"] == "application/json" else payload.decode()
    assert not ours, ours[:3]
    assert statuses.get(400, 0) > 1000 and statuses.get(200, 0) > 100, statuses


seeds_cache: list[dict] = []
