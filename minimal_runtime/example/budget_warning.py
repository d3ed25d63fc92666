"""Chapter 05's experiment: a long run warned before its compaction, or not (the chapter and
``make experiment CHAPTER=05`` run this same harness).

The reader is ``LongRunPolicy`` (SIMULATED: it saves the key figures it has read every
``note_every`` pages counted from its last save, or at once when the budget warning is in its
batch). The harness compacts once the provider-reported prompt reaches the budget: the whole
history becomes one new user message that points at ``notes/``, so after it a figure survives only
in a file. A figure read before the compaction and in neither a file nor the new context is lost.
"""

from __future__ import annotations

import re
import tempfile

from ..core.context import turn_scoped_layout
from ..core.hooks import HookRegistry, Point
from ..core.messages import tool_uses, user
from ..features.budget import BudgetMonitor
from ..provider.models import TASK_BUDGET_BETA
from .agents import pricing_agent
from .policy import LongRunPolicy

TASK = "Read the reference manual and keep its key figures."


def facts_in(text: str) -> set[int]:
    """Pages whose key figure appears in ``text``."""
    return set(int(n) for n in re.findall(r"Key figure for section (\d+)", text))


def survival(seen: dict) -> tuple[set[int], set[int], set[int]]:
    """The figures read before the compaction: (in files, only in the new context, lost)."""
    in_files = seen["in_files"] & seen["read"]
    only_in_context = (seen["in_context"] & seen["read"]) - in_files
    lost = seen["read"] - in_files - only_in_context
    assert len(in_files) + len(only_in_context) + len(lost) == len(seen["read"])  # every figure accounted for
    return in_files, only_in_context, lost


def task_budget_layout(total: int):
    """The runtime's layout, plus the provider's task budget (``output_config.task_budget``) on every request."""
    def layout(parts):
        request = turn_scoped_layout(parts)
        request["betas"] = [*request["betas"], TASK_BUDGET_BETA]
        request["output_config"] = {"task_budget": {"type": "tokens", "total": total}}
        return request
    return layout


class Watched(LongRunPolicy):
    """The simulated reader, recording the task budget's countdown as the model is shown it (the
    budget-countdown marker is for the model only: no response field carries it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.countdown = []

    def __call__(self, request):
        self.countdown.append(request.get("task_budget_remaining"))
        return super().__call__(request)


def warning_run(*, threshold: float | None = None, with_warning: bool = True, budget: int = 50_000,
                task_budget: int = 50_000, turns: int = 20, page_chars: int = 16_000, note_every: int = 3,
                seed: int = 0, monitor=BudgetMonitor, model: str = "claude-sonnet-5-5", online: bool | None = None,
                workdir=None, **agent_kwargs) -> dict:
    """One long run, compacted at ``budget``: warned at ``threshold`` of it by ``monitor`` (a
    ``BudgetMonitor`` class: the learner's, in the chapter; its default threshold where None), or
    only measured. ``online``: the model answers instead of the simulated reader. Returns the
    agent, the monitor, which calls carried the warning, what the compaction saw (``seen``), the
    result and the task budget's countdown."""
    from pathlib import Path
    workdir = Path(workdir or tempfile.mkdtemp(prefix="warning-"))
    hooks, seen = HookRegistry(), {}
    watch = monitor(budget=budget, **({} if threshold is None else {"threshold": threshold}))
    watch.install(hooks)
    if not with_warning:  # keep measuring, never warn
        hooks = HookRegistry()
        hooks.register(Point.POST_LLM_CALL, watch.record)

    def compact(event):  # at the budget: the whole history becomes one new user message
        agent = event.agent
        if "compacted_at" in seen or watch.last_prompt_tokens < budget:
            return
        pages = [int(m.group(1)) for message in agent.messages if message["role"] == "assistant"
                 for c in tool_uses(message) if c["name"] == "fetch"
                 for m in [re.search(r"page/(\d+)", c["input"].get("url", ""))] if m]
        agent.replace_history([user(TASK + " [Earlier turns were compacted: the figures saved so far are in notes/.]")])
        notes = "".join(p.read_text() for p in (workdir / "workspace" / "notes").glob("*.md"))
        seen.update(compacted_at=len(agent.calls) + 1, read=set(pages), in_files=facts_in(notes),
                    in_context=facts_in(str(agent.messages)))

    hooks.register(Point.PRE_LLM_CALL, compact)
    warned = []
    hooks.register(Point.POST_LLM_CALL, lambda e: warned.append("<!-- budget -->" in str(e.request["messages"][-1])))
    policy = Watched(turns, page_chars, note_every, seed=seed)
    agent_kwargs.setdefault("max_steps", turns + 2)
    agent, _, _ = pricing_agent(workdir, policy=policy, model=model, online=online, hooks=hooks,
                                layout=task_budget_layout(task_budget), **agent_kwargs)
    result = agent.run(TASK)
    return {"agent": agent, "monitor": watch, "warned": warned, "seen": seen, "result": result,
            "countdown": policy.countdown}
