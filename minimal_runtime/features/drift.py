"""Drift: measuring it, and three things that counter it without a hook on every call.

Drift is the goal becoming the oldest thing in the transcript: nothing fails, the agent just
finishes something narrower than what was asked. To measure it, every action is judged against
the plan: does it serve the *current* phase, *another* phase of the goal, or *neither*?

- ``serves`` / ``DriftMeter``: the judgement, call by call, from what the action touches (URLs,
  paths) against what each phase's objective names. Bookkeeping (plan, report, messages) serves.
- ``EventRecitation``: the plan re-injected only when the phase changes or an action drifted,
  instead of on every call (the per-call version costs a block every call; todo recitation cost
  a third of the actions).
- ``ErasedErrors``: the counter-example. It drops each failed turn from the history, as an agent
  that hides its mistakes would; the default keeps them, so the model sees what failed and why.
  On the current models dropping a turn is also an edit of what was sent.
- ``VariedResults``: small structured variation in how tool results are framed, so a context of
  near-identical action/observation pairs is not a pattern to copy. The variation is chosen once,
  when the result is new, and never changes afterwards: re-varying old results edits the prefix
  (``revaried_layout`` does that, to measure what it costs).
"""

from __future__ import annotations

import random
import re
from typing import Callable, Literal

from ..core.context import CallParts
from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.protocols import Layout

Verdict = Literal["phase", "goal", "off"]
BOOKKEEPING = frozenset({"plan", "report", "message_user", "delegate"})


def subjects(objective: str) -> set[str]:
    """What an objective names: URLs (without their query) and workspace paths."""
    urls = {u.split("?")[0].rstrip("/.,") for u in re.findall(r"https?://\S+", objective)}
    paths = set(re.findall(r"\b[\w./-]+\.(?:md|txt|json|csv|py)\b", objective)) - {u.split("//", 1)[1] for u in urls}
    return urls | paths


def targets(tool_use: dict) -> set[str]:
    """What one action touches, in the same terms."""
    values = [v for v in (tool_use.get("input") or {}).values() if isinstance(v, str)]
    return {v.split("?")[0].rstrip("/") for v in values if v.startswith("http")} | \
           {v for v in values if re.fullmatch(r"[\w./-]+\.(?:md|txt|json|csv|py)", v)}


def serves(tool_use: dict, phase: set[str], goal: set[str]) -> Verdict:
    """"phase" if the action touches what the current phase names (or is bookkeeping), "goal" if
    it touches what another phase names, "off" otherwise (an action that touches nothing named
    serves the phase: it cannot be told apart from the work)."""
    touched = targets(tool_use)
    if tool_use.get("name") in BOOKKEEPING or not touched or touched & phase:
        return "phase"
    return "goal" if touched & goal else "off"


class DriftMeter:
    """POST_LLM_CALL: one verdict per call, for the call's tool actions (the worst of them).
    ``objectives`` are the plan's phases in order; ``current(agent)`` says which one is current."""

    def __init__(self, objectives: list[str], current: Callable[[object], int | None], judge=serves):
        self.phases = [subjects(o) for o in objectives]
        self.goal = set().union(*self.phases) if self.phases else set()
        self.current, self.judge = current, judge
        self.verdicts: list[Verdict] = []

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_LLM_CALL, self.record)

    def record(self, event: HookEvent) -> None:
        index = self.current(event.agent)
        phase = self.phases[index] if index is not None and index < len(self.phases) else set()
        verdicts = [self.judge(b.model_dump() if hasattr(b, "model_dump") else b, phase, self.goal)
                    for b in event.response.content if getattr(b, "type", None) == "tool_use"]
        order = ["off", "goal", "phase"]
        self.verdicts.append(min(verdicts, key=order.index) if verdicts else "phase")

    def adherence(self, last: int | None = None) -> float:
        """Share of calls that served the current phase (over the last ``last`` calls)."""
        window = self.verdicts[-last:] if last else self.verdicts
        return sum(v == "phase" for v in window) / max(1, len(window))


class RecitationTrigger:
    """When to re-inject the plan: on the first call, when the current phase changed since the
    last recitation, and right after an action that did not serve the current phase."""

    def __init__(self) -> None:
        self.recited_for: int | None = None
        self.first = True

    def should_recite(self, phase: int | None, last_verdict: Verdict | None) -> bool:
        due = self.first or phase != self.recited_for or last_verdict in ("goal", "off")
        if due:
            self.first, self.recited_for = False, phase
        return due


class EventRecitation:
    """PRE_LLM_CALL: the plan block, only when the trigger says so (``source`` "plan")."""

    def __init__(self, render: Callable[[object], str], current: Callable[[object], int | None], meter: DriftMeter,
                 trigger: RecitationTrigger | None = None):
        self.render, self.current, self.meter = render, current, meter
        self.trigger = trigger or RecitationTrigger()
        self.recitations = 0

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.recite)

    def recite(self, event: HookEvent) -> None:
        last = self.meter.verdicts[-1] if self.meter.verdicts else None
        if self.trigger.should_recite(self.current(event.agent), last):
            self.recitations += 1
            event.agent.inject_turn_scoped("plan", self.render(event.agent))


def _failed(message: dict) -> bool:
    return message["role"] == "user" and any(b.get("type") == "tool_result" and b.get("is_error")
                                             for b in message["content"] if isinstance(b, dict))


class ErasedErrors:
    """The counter-example: PRE_LLM_CALL drops failed turns (an assistant message whose tool
    results include an error, with those results) through ``replace_history``, the one sanctioned
    rewrite. Keep errors instead (install nothing): the model then sees what failed and why.

    ``after_seen=False`` drops a failure before the model's next call, so the model never sees it
    (nothing it was sent changes). ``after_seen=True`` tidies up failures the model already saw
    and reacted to: that rewrites what was sent, an edit on every model, refused on the current
    ones when thinking blocks follow."""

    def __init__(self, after_seen: bool = False) -> None:
        self.after_seen, self.erased = after_seen, 0

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.erase)

    def erase(self, event: HookEvent) -> None:
        messages = event.agent.messages
        newest = len(messages) - 1
        drop = {i for i in range(1, len(messages)) if _failed(messages[i]) and messages[i - 1]["role"] == "assistant"
                and (i == newest) != self.after_seen}
        if drop:
            self.erased += len(drop)
            event.agent.replace_history([m for i, m in enumerate(messages) if i not in drop and i + 1 not in drop])


FRAMINGS = ("{name} returned:\n{out}", "Output of {name}:\n{out}", "[{name}]\n{out}", "Result ({name}):\n{out}")


class VariedResults:
    """A toolbox wrapper: each new tool result is framed with one of a few templates, chosen by a
    seeded draw when it is made. The framing is part of the result from then on, so the history
    stays append-only and cached."""

    def __init__(self, tools, seed: int = 0, framings: tuple[str, ...] = FRAMINGS):
        self.tools, self.rng, self.framings = tools, random.Random(seed), framings
        self.definitions = tools.definitions

    @property
    def masked(self) -> set[str]:
        return self.tools.masked

    def mask(self, *names: str) -> None:
        self.tools.mask(*names)

    def unmask(self, *names: str) -> None:
        self.tools.unmask(*names)

    def is_final(self, tool_use: dict, result: dict) -> bool:
        return self.tools.is_final(tool_use, result)

    def call(self, tool_use: dict) -> dict:
        result = self.tools.call(tool_use)
        if isinstance(result.get("content"), str):
            framing = self.rng.choice(self.framings)
            result = {**result, "content": framing.format(name=tool_use["name"], out=result["content"])}
        return result


def revaried_layout(layout: Layout, seed: int = 0) -> Layout:
    """Variation in the wrong place: every call re-frames *every* earlier tool result with a fresh
    draw, so the prefix the cache holds is never sent again. For measuring what that costs."""
    rng = random.Random(seed)

    def reframe(block: dict) -> dict:
        if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
            return {**block, "content": rng.choice(FRAMINGS).format(name="tool", out=block["content"])}
        return block

    def revaried(parts: CallParts) -> dict:
        durable = [{**m, "content": [reframe(b) for b in m["content"]]} if m["role"] == "user" else m
                   for m in parts.durable]
        return layout(CallParts(**{**parts.__dict__, "durable": durable}))
    return revaried
