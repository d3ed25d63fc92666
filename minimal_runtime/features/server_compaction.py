"""The provider's own clearing and compaction: the server edits its copy, the client only appends.

Preserved thinking checks what the client *sent*; when the server clears or summarizes its own copy
of the request, nothing the client sent was edited, so none of these fails the check on a current
model ([PT]: context editing and compaction "don't count as an edit"). What each costs is the
cache: the server's copy changes where it clears, and the cached prefix ends there.

- ``ServerClearing``: ``clear_tool_uses_20250919`` (beta ``context-management-2025-06-27``): past
  ``trigger`` input tokens the oldest tool results become a placeholder, all but the last ``keep``.
  With ``clear_at_least`` the server clears only when it can clear that many tokens at once, so the
  cache is invalidated in big, rare steps instead of on every call.
- ``ServerCompaction``: ``compact_20260112`` (beta ``compact-2026-01-12``): past ``trigger`` the
  server summarizes into a ``compaction`` block at the start of its answer and goes on from it. The
  block is sent back; what came before it is ignored, so the client drops it from its history.
- ``OnDemandCompaction``: ``compaction: {"type": "summarize"}`` (beta ``compact-2026-09-04``), asked
  by the client when it decides: one call returns only the block, which replaces everything it
  summarized, first in ``messages``, on every later request.
"""

from __future__ import annotations

from typing import Any

from ..core.context import CallParts
from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.messages import user
from ..core.protocols import Layout
from ..provider.cost import CallRecord
from ..provider.models import COMPACT_ON_DEMAND_BETA, COMPACT_THRESHOLD_BETA, CONTEXT_EDITING_BETA
from .compaction import Compaction, context_tokens, estimate

CONTINUE = "The conversation so far is summarized above. I continue the task from there."


def _with(request: dict[str, Any], beta: str, **fields: Any) -> dict[str, Any]:
    request.update(fields)
    request["betas"] = [*request.get("betas", []), beta]
    return request


class ServerClearing:
    def __init__(self, trigger: int = 100_000, keep: int = 3, clear_at_least: int | None = None):
        edit: dict[str, Any] = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": trigger},
                                "keep": {"type": "tool_uses", "value": keep}}
        if clear_at_least:
            edit["clear_at_least"] = {"type": "input_tokens", "value": clear_at_least}
        self.edit = edit
        self.cleared: list[int] = []  # per call: tool uses cleared by the server

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_LLM_CALL, self.count)

    def count(self, event: HookEvent) -> None:
        applied = getattr(event.response, "context_management", None)
        edits = getattr(applied, "applied_edits", None) or []
        self.cleared.append(sum(getattr(e, "cleared_tool_uses", 0) or 0 for e in edits))

    def layout(self, inner: Layout) -> Layout:
        def cleared(parts: CallParts) -> dict[str, Any]:
            return _with(inner(parts), CONTEXT_EDITING_BETA, context_management={"edits": [self.edit]})
        return cleared


class ServerCompaction:
    def __init__(self, trigger: int = 150_000, instructions: str | None = None):
        self.edit: dict[str, Any] = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}
        if instructions:
            self.edit["instructions"] = instructions
        self.log: list[Compaction] = []  # each time the client's copy dropped what the server compacted

    @property
    def compactions(self) -> int:
        return len(self.log)

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.drop_before_block)

    def drop_before_block(self, event: HookEvent) -> None:
        """The server ignores what precedes the newest compaction block: stop sending it."""
        messages = event.agent.messages
        newest = max((i for i, m in enumerate(messages) if _has_block(m)), default=0)
        if newest > 0:
            event.agent.replace_history(messages[newest:])
            self.log.append(Compaction(len(event.agent.calls), "server", estimate(messages), estimate(messages[newest:])))

    def layout(self, inner: Layout) -> Layout:
        def compacting(parts: CallParts) -> dict[str, Any]:
            return _with(inner(parts), COMPACT_THRESHOLD_BETA, context_management={"edits": [self.edit]})
        return compacting


class OnDemandCompaction:
    """PRE_LLM_CALL: past ``trigger`` tokens, one extra call asks the server for a summary of the
    whole history; the history becomes that block and a line to go on from it. The extra calls'
    cost is in ``spent`` (they are not the agent's turns)."""

    def __init__(self, trigger: int, instructions: str | None = None, max_tokens: int = 16_000):
        self.trigger, self.instructions, self.max_tokens = trigger, instructions, max_tokens
        self.spent: list[CallRecord] = []
        self.failed: list[str] = []  # stop reasons of summaries that did not come back
        self.log: list[Compaction] = []

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.before_call)

    def before_call(self, event: HookEvent) -> None:
        agent = event.agent
        if context_tokens(agent) < self.trigger:
            return
        request = agent.layout(CallParts(system=agent.system, tools=agent.tool_definitions, durable=agent.messages,
                                         prefill_ok=agent.spec.supports_prefill))
        ask: dict[str, Any] = {"type": "summarize"}
        if self.instructions:
            ask["instructions"] = self.instructions
        request.pop("context_management", None)
        response = agent.client.beta.messages.create(model=agent.model, max_tokens=self.max_tokens,
                                                     **_with(request, COMPACT_ON_DEMAND_BETA, compaction=ask))
        self.spent.append(CallRecord.from_usage(response.usage, agent.model))
        block = next((b for b in response.content if b.type == "compaction"), None)
        if block is None or not block.content:
            self.failed.append(str(response.stop_reason))  # no summary: go on uncompacted [COD]
            return
        compacted = [{"role": "assistant", "content": [block.model_dump(exclude_none=True)]}, user(CONTINUE)]
        self.log.append(Compaction(len(agent.calls), "server summary", estimate(agent.messages), estimate(compacted)))
        agent.replace_history(compacted)

    def layout(self, inner: Layout) -> Layout:
        def with_block(parts: CallParts) -> dict[str, Any]:
            request = inner(parts)
            if parts.durable and _has_block(parts.durable[0]):  # the block needs its beta on every request
                request["betas"] = [*request.get("betas", []), COMPACT_ON_DEMAND_BETA]
            return request
        return with_block


def _has_block(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "compaction" for b in content)
