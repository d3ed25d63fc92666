"""The memory tool's definition, as the API takes it [MEM].

[MEM] https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool (the memory tool page):
a client-side tool, sent by type and name only (``{"type": "memory_20250818", "name": "memory"}``;
the SDK's ``BetaMemoryTool20250818Param`` types ``name`` as ``Literal["memory"]``), whose commands
(``view``, ``create``, ``str_replace``, ``insert``, ``delete``, ``rename``) the application runs on
files under ``/memories``. "When the memory tool is enabled, Claude automatically checks its memory
directory before starting a task" (the simulated policies do: ``serve/policy.py``).

The rules the emulator holds it to:

- **Models.** The page lists the Claude 4 models from Sonnet 4 and Opus 4 on; every model of the
  table is one of them (the table starts at the 4.5 generation) and takes it. An older model answers
  with the API's own words, quoted from a live 400 on Sonnet 3.7 (github.com/microsoft/vscode issue
  275435, 2025-11): "'claude-3-7-sonnet-20250219' does not support tool types: memory_20250818. Did you
  mean one of ...?" (the list of the versions it does take is left out: we have no table of them). A
  model outside the table that does not name Claude 3 (a local server's) is given the benefit of the
  doubt, as the emulator does for unknown models everywhere.
- **No beta header needed.** At launch the page asked for ``context-management-2025-06-27``; the
  current page asks for none. A request is taken with or without it.
- **Tokens.** No page publishes what the definition adds to the prompt (the bash and text-editor
  tools' pages do, ``tokens.defined_tool_tokens``). ASSUMED: it counts as a client tool's definition
  does, its JSON, nothing more. The page also says the API adds a memory protocol to the system
  prompt when the tool is present; its size is unpublished and is not modelled either.
"""

from __future__ import annotations

from .errors import bad_request

MEMORY_TOOL_TYPE = "memory_20250818"
MEMORY_TOOL_NAME = "memory"
MEMORY_TOOL = {"type": MEMORY_TOOL_TYPE, "name": MEMORY_TOOL_NAME}  # the whole definition a client sends


def is_memory_tool(tool: dict) -> bool:
    return isinstance(tool, dict) and tool.get("type") == MEMORY_TOOL_TYPE


def check_memory_tool(tool: dict, index: int, model: str) -> None:
    """A 400 for a memory tool the API would refuse: another name, or a model before Claude 4 [MEM]."""
    if tool.get("name") != MEMORY_TOOL_NAME:  # the words are ours, in the validation errors' shape
        raise bad_request(f"tools.{index}.{MEMORY_TOOL_TYPE}.name: Input should be '{MEMORY_TOOL_NAME}'")
    if before_claude_4(model):
        raise bad_request(f"'{model}' does not support tool types: {MEMORY_TOOL_TYPE}.")


def before_claude_4(model: str) -> bool:
    """``model`` names a Claude 3 model (claude-3-7-sonnet-20250219, claude-3-5-haiku-latest ...)."""
    return model.startswith("claude-3")


VIEW_MEMORIES = {"command": "view", "path": "/memories"}


def check_memory_first(request: dict) -> dict | None:
    """SIMULATED behaviour, as the page describes the model's: with the memory tool offered (and
    ``tool_choice`` not ``none``), the first thing done on a task is to view ``/memories``. Returns
    that tool_use block, or None once the conversation has viewed it (or no memory tool is offered)."""
    if not any(is_memory_tool(t) for t in request.get("tools") or []):
        return None
    if (request.get("tool_choice") or {}).get("type") == "none":
        return None
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == MEMORY_TOOL_NAME \
                    and (block.get("input") or {}).get("command") == "view":
                return None
    return {"type": "tool_use", "name": MEMORY_TOOL_NAME, "input": dict(VIEW_MEMORIES)}
