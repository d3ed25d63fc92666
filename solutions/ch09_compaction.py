"""Chapter 09: a client-side compaction today's models accept, and the ladder's decision.

``ladder_step`` is the runtime's own. ``compact_keeping_tail`` is put together from the runtime's
pieces (``answered_calls``, ``strip_thinking``): the kept turns go out without their thinking,
because each block was bound to the history this replaces."""

from minimal_runtime.core.messages import user
from minimal_runtime.features.compaction import answered_calls, ladder_step, strip_thinking

__all__ = ["compact_keeping_tail", "ladder_step"]


def compact_keeping_tail(task: str, messages: list[dict], summary: str, keep_last: int) -> list[dict]:
    calls = answered_calls(messages)
    cut = len(messages) if keep_last == 0 else calls[-keep_last][0] if len(calls) >= keep_last else 1
    kept = strip_thinking(messages[max(cut, 1):])  # replayed as they were, a kept block is a 400
    head = user(f"{task}\n\n{summary}")
    if kept and kept[0]["role"] == "user":  # two user turns in a row: one message
        content = kept[0]["content"] if isinstance(kept[0]["content"], list) else [{"type": "text", "text": kept[0]["content"]}]
        head = {"role": "user", "content": [*head["content"], *content]}
        kept = kept[1:]
    return [head, *kept]
