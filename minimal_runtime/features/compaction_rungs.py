"""createrole's four rungs (seed 004): compression decided by the server at assembly, never by the model.

1. **Mask at assembly**: each time a request is assembled, tool results older than the two most
   recent become placeholders. The durable history keeps the originals (createrole's database);
   only the request's copy is masked. Their placeholders carry no path, their own stated gap; ours
   name the saved file (``compaction.compact_call``).
2. **Trim before send**: over ``budget`` tokens, the oldest tool exchanges are left out of the
   copy; the task and a summary (the first message) are protected. createrole's summary comes from
   an asynchronous summary model, with every URL and path extracted verbatim into an appendix;
   here a mechanical summary stands in for the model, and the appendix is the same as the
   ladder's. Without it, what was left out leaves no trace: a reader that knows only what it sees
   starts the task again.
3. **Compact mid-turn**: at 90% of the budget, by the more conservative of the estimate and the
   last measured prompt, only the newest result stays in full.
4. **Retry on overflow** (``RetryOnOverflow``, between the runtime and the SDK): when the API says
   the prompt is too long, retry at most twice: first without the oldest exchanges, then with the
   single largest message truncated in proportion.

All four edit the copy of history that is sent, on every call as the masking boundary moves: a
2025 design. On a model that binds thinking to its prefix each call would be a 400, so the copy is
sent without thinking (``strip_thinking``, the default) or with ``drop_block``; the reasoning of
earlier turns is lost either way.
"""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import anthropic

from ..core.context import CallParts
from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.protocols import Layout
from .compaction import task_of, answered_calls, estimate, mechanical_summary, strip_thinking, summary_message
from .recall import Keeper, compact_call


class CreateroleRungs:
    """Rungs 1-3, as a layout around another (``layout(inner)``) and a hook that remembers the
    last measured prompt (``install``)."""

    def __init__(self, keeper: Keeper, budget: int, *, keep_results: int = 2, mid_turn: float = 0.9,
                 strip_thinking: bool = True):
        self.keeper, self.budget, self.keep_results, self.mid_turn = keeper, budget, keep_results, mid_turn
        self.strip = strip_thinking
        self.measured = 0
        self.trimmed = self.mid_turn_calls = 0  # calls where rung 2 / rung 3 acted
        self._compact: dict[str, tuple[dict, dict]] = {}  # tool_use id -> its compact form, made once

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_LLM_CALL, self.measure)

    def measure(self, event: HookEvent) -> None:
        self.measured = event.agent.calls[-1].prompt_tokens

    def layout(self, inner: Layout) -> Layout:
        def assemble(parts: CallParts) -> dict[str, Any]:
            return inner(replace(parts, durable=self.assemble(parts.durable), previous_durable_len=None))
        return assemble

    def assemble(self, durable: list[dict]) -> list[dict]:
        """The copy of ``durable`` this call sends."""
        messages = self.mask(durable, self.keep_results)
        if max(estimate(messages), self.measured) >= self.mid_turn * self.budget:
            messages = self.mask(messages, 1)
            self.mid_turn_calls += 1
        if estimate(messages) > self.budget:
            messages = self.trim_with_summary(messages)
            self.trimmed += 1
        return strip_thinking(messages) if self.strip else messages

    def trim_with_summary(self, messages: list[dict]) -> list[dict]:
        """Rung 2: the oldest exchanges left out, and the first message become the task, the summary
        of what was left out and its appendix (shown whole up to a quarter of the budget, else saved
        to a file it names). The summary's own size is made room for once."""
        room = self.budget
        for _ in range(2):
            kept = trim(messages, room)
            gone = messages[1:len(messages) - len(kept) + 1]
            if not gone:
                return kept  # only the last exchange is left: nothing to summarize
            head = summary_message(task_of(messages), gone, mechanical_summary(gone), None, self.keeper,
                                   appendix_chars=self.budget)
            if estimate([head, *kept[1:]]) <= self.budget:
                break
            room = self.budget - (estimate([head]) - estimate(messages[:1]))
        return [head, *kept[1:]]

    def mask(self, messages: list[dict], keep: int) -> list[dict]:
        calls = answered_calls(messages)
        older = calls[:max(0, len(calls) - keep)]
        if not older:
            return messages
        out = [{**m, "content": list(m["content"])} if isinstance(m.get("content"), list) else m for m in messages]
        for i, j, ri, rj in older:
            use, result = out[i]["content"][j], out[ri]["content"][rj]
            if use.get("name") == "write_file":
                continue  # a write's result is one line; its input is the model's own words
            if use["id"] not in self._compact:
                self._compact[use["id"]] = compact_call(use, result, self.keeper)
            out[ri]["content"][rj] = self._compact[use["id"]][1]
        return out


def trim(messages: list[dict], budget: int) -> list[dict]:
    """Leave out the oldest whole exchanges (an assistant turn and the user turn that answers it, with
    their system entries) until the estimate fits ``budget``. The first message (the task, or a
    summary) and the last exchange are never left out."""
    head, rest = messages[:1], messages[1:]
    sizes = [estimate([m]) for m in rest]
    total, start = estimate(head) + sum(sizes), 0
    while total > budget:
        first = next((k for k in range(start, len(rest)) if rest[k].get("role") == "assistant"), None)
        end = next((k for k in range(first + 1, len(rest)) if rest[k].get("role") == "assistant"), None) \
            if first is not None else None
        if end is None:
            break  # only the last exchange is left
        while end > first + 1 and rest[end - 1].get("role") == "system":
            end -= 1  # the next exchange's own system entries go with it
        total -= sum(sizes[start:end])
        start = end
    rest = rest[start:]
    return head + rest


_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


class RetryOnOverflow:
    """Rung 4: a client that stands in for the SDK's (``messages.create``, ``beta.messages.create``)
    and retries a prompt-too-long at most twice: first without the oldest exchanges (to 90% of the
    maximum, by the API's own count), then with the single largest message truncated in proportion.
    Any other error, or a third overflow, goes to the caller as it came."""

    def __init__(self, client: anthropic.Anthropic, attempts: int = 2):
        self.client, self.attempts = client, attempts
        self.retries: list[str] = []  # what each retry did
        self.messages = SimpleNamespace(create=lambda **kw: self._create(client.messages.create, kw))
        self.beta = SimpleNamespace(messages=SimpleNamespace(create=lambda **kw: self._create(client.beta.messages.create, kw)))

    def _create(self, create, request: dict):
        for attempt in range(self.attempts + 1):
            try:
                return create(**request)
            except anthropic.BadRequestError as e:
                found = _TOO_LONG.search(str(getattr(e, "body", None) or e))
                if not found or attempt == self.attempts:
                    raise
                total, maximum = int(found.group(1)), int(found.group(2))
                messages = request["messages"]
                if attempt < self.attempts - 1:
                    target = estimate(messages) * 0.9 * maximum / total
                    request = {**request, "messages": trim(messages, int(target))}
                    self.retries.append(f"left out the oldest exchanges: {len(messages)} -> {len(request['messages'])} messages")
                else:
                    request = {**request, "messages": truncate_largest(messages, 0.9 * maximum / total)}
                    self.retries.append(f"truncated the largest message to {0.9 * maximum / total:.0%} of the prompt's share")


def truncate_largest(messages: list[dict], ratio: float) -> list[dict]:
    """The largest message's text cut so the whole prompt shrinks to ``ratio`` of its size: its
    texts (and tool results) are cut in proportion, each keeping its head and a marker."""
    sizes = [sum(len(s) for s in _strings(m)) for m in messages]
    k = max(range(len(messages)), key=sizes.__getitem__)
    excess = sum(sizes) * (1 - ratio)
    keep = max(0.0, 1 - excess / max(1, sizes[k]))

    def cut(text: str) -> str:
        n = int(len(text) * keep)
        return text if n >= len(text) else text[:n] + f"\n[truncated: {len(text) - n:,} of {len(text):,} characters left out]"

    def shorten(block):
        if isinstance(block, str):
            return cut(block)
        if block.get("type") == "text":
            return {**block, "text": cut(block["text"])}
        if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
            return {**block, "content": cut(block["content"])}
        return block
    message = messages[k]
    content = message["content"]
    content = shorten(content) if isinstance(content, str) else [shorten(b) for b in content]
    return [*messages[:k], {**message, "content": content}, *messages[k + 1:]]


def _strings(message: dict) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text") or (b.get("content") if isinstance(b.get("content"), str) else "") or ""
            for b in content or [] if isinstance(b, dict)]
