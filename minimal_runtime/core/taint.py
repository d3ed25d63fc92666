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
- a result block that carries text the operator did not write, wherever it is (a reply's blocks, a
  tool result's content): judged by what the block is, not by a short list. Every block type that
  ends in ``result`` taints unless ``OPERATORS`` names it with its reason; ``OUTSIDE`` lists the
  ones known to bring outside text in (web search and fetch, an MCP connector, code execution's
  output, search results a tool returned). A type the SDK adds later taints until it is judged:
  ``tests/runtime/test_taint.py`` fails when the installed SDK names one that is in neither list.

The mark lives in ``agent.state`` under ``KEY`` (what tainted the run first), so it survives a crash
with the turn that set it.

[MCSM] https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
"""

from __future__ import annotations

from typing import Any

KEY = "tainted"

# What each brings in [server tools: https://platform.claude.com/docs/en/agents-and-tools/tool-use/server-tools;
# MCP connector: .../mcp-connector; code execution: .../code-execution-tool; search results: .../search-results]
OUTSIDE = {
    "web_search_tool_result": "a web search the server ran: pages' titles and encrypted text",
    "web_search_result": "one page a web search found",
    "web_fetch_tool_result": "a page the server fetched",
    "mcp_tool_result": "an MCP server's output: whatever that server read or was told",
    "code_execution_tool_result": "code execution's output: stdout of code that may have read a file or the web",
    "code_execution_result": "code execution's stdout and stderr",
    "encrypted_code_execution_result": "code execution's output, encrypted: the model reads it, the client cannot",
    "bash_code_execution_tool_result": "a shell command's output (a curl, a cat of a downloaded file)",
    "bash_code_execution_result": "a shell command's stdout and stderr",
    "text_editor_code_execution_tool_result": "a file in the container, viewed or edited: an upload or a download",
    "text_editor_code_execution_view_result": "a container file's content",
    "text_editor_code_execution_str_replace_result": "lines of a container file",
    "search_result": "a search result a tool returned (its source's text, cited)",
}
OPERATORS = {
    "tool_result": "a client tool's result: the operator's own code ran; it taints when its tool is marked "
                   "reads_outside, or through the outside blocks it holds (a search_result)",
    "tool_search_tool_result": "the names of tools the operator defined (deferred), nothing else",
    "tool_search_tool_search_result": "the operator's tool references a tool search found",
    "text_editor_code_execution_create_result": "says only whether a file was created or updated: no text",
    "advisor_tool_result": "another model's advice on this conversation: it read nothing the run had not "
                           "(a run that read outside text is already tainted)",
    "advisor_result": "the advice's text (as advisor_tool_result)",
    "advisor_redacted_result": "the advice, encrypted (as advisor_tool_result)",
}

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


def outside(content: Any) -> str | None:
    """The first block in ``content`` (a reply's blocks, a tool result's content; looked into at every
    depth) that brings text the operator did not write, by its type, or None."""
    if isinstance(content, list):
        return next((found for block in content if (found := outside(block))), None)
    if not isinstance(content, dict):
        return None
    kind = content.get("type")
    if isinstance(kind, str) and kind.endswith("result") and kind not in OPERATORS:
        return kind  # in OUTSIDE, or a result type not judged yet: outside until it is
    return outside(content.get("content"))
