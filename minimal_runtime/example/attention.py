"""Where the goal stands in a request: the one measure chapters 04 and 08 use, and what the
SIMULATED reader of chapter 08 reacts to.

A request states the goal where the goal's own words stand in what the model reads: the system
prompt, every message the model is shown (a turn-scoped entry a later user message cleared is not
shown), the batch. A label such as "The goal of this run: " followed by something else states
nothing, so the measure looks for the words, never for a label.

``goal_distance`` counts the tokens the model reads after the last place the words stand (the
emulator's per-block estimate, as in usage); ``stated`` says whether that is within
``STATED_WITHIN`` tokens of the tail. The figure is exact for the requests it is given: on a real
model the same function measures the requests the runtime sent.
"""

from __future__ import annotations

from ..view.request import rendered
from ..emulator.prompt import as_blocks, render_block
from ..emulator.tokens import STANDARD_IMAGES, block_tokens, estimate_tokens
from ..provider.models import lookup

# "At the tail": within one batch's worth of tokens of the end. A plan block with its map and rules
# is 100-300 tokens; 500 leaves room for a second block after it without counting a page of history.
STATED_WITHIN = 500


def _reading_order(request: dict) -> list[tuple[dict, str]]:
    """The request's blocks as the model reads them, first to last: (block, its rendered text)."""
    shown = [(b, render_block(b)) for b in as_blocks(request.get("system") or [])]
    for message in rendered(request.get("messages", [])):
        shown += [(b, render_block(b, message.get("role", ""))) for b in as_blocks(message["content"])]
    return shown


def goal_distance(request: dict, goal: str) -> int | None:
    """Tokens the model reads after the last place ``goal``'s words stand in ``request`` (0: they end
    the prompt), each block counted as the emulator counts it in usage; None where they stand nowhere."""
    spec = lookup(request["model"]) if isinstance(request.get("model"), str) else None
    limits, tokenizer = (spec.image_limits, spec.tokenizer) if spec is not None else (STANDARD_IMAGES, 1.0)
    after = 0
    for block, text in reversed(_reading_order(request)):
        at = text.rfind(goal)
        if at >= 0:
            rest = len(text) - at - len(goal)
            return after + (estimate_tokens(text[-rest:], tokenizer) if rest else 0)
        after += block_tokens(block, text, limits, tokenizer)
    return None


def stated(request: dict, goal: str) -> bool:
    """Does ``request`` state ``goal`` at its tail: its words within ``STATED_WITHIN`` tokens of the end?"""
    distance = goal_distance(request, goal)
    return distance is not None and distance <= STATED_WITHIN
