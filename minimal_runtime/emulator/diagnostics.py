"""``diagnostics.previous_message_id`` -> ``cache_miss_reason``.

The API keeps a fingerprint of each request that asks for diagnostics and, when a later request
names one, says where the later request departs from it [https://platform.claude.com/docs/en/
build-with-claude/cache-diagnostics; API-2026.md §8]. Only the earliest divergence is reported:
``model_changed``, ``tools_changed``, ``system_changed``, ``messages_changed`` (an earlier message
was edited rather than appended to), ``unavailable`` (another prompt-affecting parameter such as
``tool_choice``, ``thinking``, ``output_config``, ``context_management`` or the set of betas differs), ``previous_message_not_found`` (the
earlier request did not ask for diagnostics, or is gone). Divergence is found from the request's
structure, whether or not anything was cached; ``cache_missed_input_tokens`` estimates the earlier
request's tokens after the divergence (a magnitude, not a billing number). ``null``: no divergence.

Messages are compared as sent (a cleared turn-scoped message left in place is not a change; a
batch removed from the last user turn is).
"""

from __future__ import annotations

from dataclasses import dataclass

from .binding import canon, digest_of
from .prompt import Prompt


@dataclass(frozen=True)
class Fingerprint:
    model: str
    tools: bytes
    system: bytes
    params: bytes
    settings: bytes  # the set of betas, context_management, output_format: "unavailable" when changed [CD]
    messages: tuple[bytes, ...]  # chained digest through each sent message
    tokens: tuple[int, ...]  # prompt tokens through each message
    head_tokens: tuple[int, int]  # tokens of tools, of tools and system
    total: int

    @classmethod
    def of(cls, model: str, request: dict, prompt: Prompt, betas: set[str] = frozenset()) -> "Fingerprint":
        chain, d = [], b""
        for message in request["messages"]:
            d = digest_of(d, canon(message))
            chain.append(d)
        tokens = tuple(prompt.cum[e] if e >= 0 else 0 for e in prompt.msg_ends)
        tools = len([t for t in request.get("tools") or [] if not t.get("defer_loading")])
        settings = digest_of(canon([sorted(betas), request.get("context_management"), request.get("output_format")]))
        return cls(model, prompt.tools_fp, prompt.system_fp, prompt.params_fp, settings, tuple(chain), tokens,
                   (prompt.prefix_tokens(tools - 1), prompt.prefix_tokens(prompt.head - 1)), prompt.total)


def cache_miss_reason(previous: Fingerprint | None, current: Fingerprint) -> dict | None:
    if previous is None:
        return {"type": "previous_message_not_found"}
    if current.model != previous.model:
        return {"type": "model_changed", "cache_missed_input_tokens": previous.total}
    if current.tools != previous.tools:
        return {"type": "tools_changed", "cache_missed_input_tokens": previous.total}
    if current.system != previous.system:
        return {"type": "system_changed", "cache_missed_input_tokens": previous.total - previous.head_tokens[0]}
    if current.params != previous.params or current.settings != previous.settings:
        return {"type": "unavailable"}
    for k, digest in enumerate(previous.messages):
        if k >= len(current.messages) or current.messages[k] != digest:
            before = previous.tokens[k - 1] if k > 0 else previous.head_tokens[1]
            return {"type": "messages_changed", "cache_missed_input_tokens": max(0, previous.total - before)}
    return None
