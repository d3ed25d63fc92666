"""Taint: once outside text has entered a run, what the model writes may be carrying it.

A page, a fetched file, a search result, a note written by an agent that read them: any of them may
hold an instruction, and a model that read one may restate it in words of its own, in a plan's goal,
a phase title, a delegated objective. No filter tells such a restatement from a fact, so what the
model writes once the run is tainted never rides at operator authority: the features that recite
it (the plan block, an executor's task block) send the model's words as user text, and keep only
their own frame (phase numbers, statuses, rules, the scope line) in the system entry. The rule is
the provider's: untrusted content never goes in a system message [MCSM]; the knowledge manager's
notes follow it already (``Agent.inject_untrusted``).

A run is tainted, for good, by
- a note given with ``inject_untrusted``;
- the result of a tool marked as reading outside content (``reads_outside``: a fetch, a browser, a
  web search; ``FunctionTool(..., reads_outside=True)``, or the attribute on any tool);
- a server tool's result in a reply (web search, web fetch: ``SERVER_READS``).

The mark lives in ``agent.state`` under ``KEY`` (what tainted the run first), so it survives a crash
with the turn that set it.

[MCSM] https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
"""

from __future__ import annotations

from typing import Any

KEY = "tainted"
SERVER_READS = frozenset({"web_search_tool_result", "web_fetch_tool_result"})


def mark(state: Any, why: str) -> None:
    """Taint the run whose ``state`` (a ``RunState``) this is; the first reason is the one kept."""
    if state.get(KEY) is None:
        state.set(KEY, why)


def by(state: Any) -> str | None:
    """What tainted the run (``"tool fetch"``, ``"note notes"``), or None: nothing from outside yet."""
    return None if state is None else state.get(KEY)


def reads_outside(toolbox: Any, tool_use: dict) -> bool:
    """Is the tool this call names marked as reading outside content? A toolbox that wraps another
    (its ``tools`` a toolbox, not the name-to-tool map) is looked through."""
    tools = getattr(toolbox, "tools", None)
    for _ in range(8):  # wrappers of wrappers, never a cycle
        if tools is None or isinstance(tools, dict):
            break
        tools = getattr(tools, "tools", None)
    tool = tools.get(tool_use.get("name")) if isinstance(tools, dict) else None
    return bool(getattr(tool, "reads_outside", False))


def server_reads(content: list[dict]) -> str | None:
    """The first server tool result in a reply's blocks that brought outside text in, or None."""
    return next((b["type"] for b in content if isinstance(b, dict) and b.get("type") in SERVER_READS), None)
