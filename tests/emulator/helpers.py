"""Small builders for conformance tests: a fake clock and prompts big enough to cache."""

from __future__ import annotations

from minimal_runtime.emulator import Emulator

MODEL = "claude-sonnet-4-6"  # minimum cacheable prefix: 1,024 tokens
SYSTEM_TEXT = "You are a careful research agent. " * 160  # ~1,360 tokens: cacheable on its own
TOOLS = [
    {"name": "fetch", "description": "Fetch a URL and return its text.",
     "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}},
    {"name": "write_file", "description": "Write a file in the workspace.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}},
]


class FakeClock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def breakpoint_on(block: dict, ttl: str | None = None) -> dict:
    cc = {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}
    return {**block, "cache_control": cc}


def system(cached: bool = True) -> list[dict]:
    block = {"type": "text", "text": SYSTEM_TEXT}
    return [breakpoint_on(block) if cached else block]


def conversation(turns: int, observation_chars: int = 500) -> list[dict]:
    """A tool-using history: user task, then ``turns`` (tool_use, tool_result) exchanges."""
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "Compare four pricing pages."}]}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i:04d}", "name": "fetch", "input": {"url": f"https://example.test/{i}"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i:04d}", "content": f"page {i} " + "x" * observation_chars}]})
    return messages


def with_breakpoint_on_last(messages: list[dict]) -> list[dict]:
    """A copy with a breakpoint on the last block of the last message (the last durable block)."""
    out = [dict(m) for m in messages]
    last = dict(out[-1])
    blocks = list(last["content"])
    blocks[-1] = breakpoint_on(blocks[-1])
    last["content"] = blocks
    out[-1] = last
    return out


def add_batch(messages: list[dict], note: str) -> list[dict]:
    """The per-call batch as extra blocks at the end of the final user turn (a copy)."""
    out = list(messages)
    last = dict(out[-1])
    last["content"] = list(last["content"]) + [{"type": "text", "text": f"<!-- note -->\n{note}"}]
    out[-1] = last
    return out


def make(policy=None, model: str = MODEL, clock: FakeClock | None = None) -> tuple[Emulator, FakeClock]:
    clock = clock or FakeClock()
    return Emulator(model=model, policy=policy, clock=clock), clock
