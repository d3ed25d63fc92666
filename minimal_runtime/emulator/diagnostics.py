"""``diagnostics.previous_message_id`` -> ``cache_miss_reason``.

The API keeps a fingerprint of each request and, when a later request names it, says why the
later one could not reuse its cached prefix [https://platform.claude.com/docs/en/build-with-claude/
cache-diagnostics]. Reasons: ``model_changed``, ``tools_changed``, ``system_changed``,
``messages_changed`` (an earlier message differs rather than new ones being appended),
``previous_message_not_found``, and ``unavailable`` (model, system and tools match but another
prompt-affecting parameter such as ``tool_choice`` or ``thinking`` changed). ``null`` when no
divergence cost anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from .prompt import Prompt


@dataclass(frozen=True)
class Fingerprint:
    model: str
    tools: bytes
    system: bytes
    params: bytes
    messages: tuple[bytes, ...]
    cached_prefix: int  # tokens the request read or wrote to cache: what a successor could reuse

    @classmethod
    def of(cls, model: str, prompt: Prompt, cached_prefix: int) -> "Fingerprint":
        return cls(model, prompt.tools_fp, prompt.system_fp, prompt.params_fp, tuple(prompt.message_fps), cached_prefix)


def cache_miss_reason(previous: Fingerprint | None, current: Fingerprint, read: int) -> dict | None:
    if previous is None:
        return {"type": "previous_message_not_found"}
    missed = max(0, previous.cached_prefix - read)
    if current.model != previous.model:
        reason = "model_changed"
    elif current.tools != previous.tools:
        reason = "tools_changed"
    elif current.system != previous.system:
        reason = "system_changed"
    elif current.params != previous.params:
        return {"type": "unavailable"} if missed else None
    elif current.messages[: len(previous.messages) - 1] != previous.messages[:-1]:
        # The previous request's last message may legitimately grow (the final user turn gets
        # more blocks), so only the messages before it must be unchanged.
        reason = "messages_changed"
    else:
        return None
    return {"type": reason, "cache_missed_input_tokens": missed} if missed else None
