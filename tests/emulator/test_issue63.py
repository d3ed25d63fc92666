"""Issue 63: documents, citations, search results, Anthropic-defined tools and structured outputs,
through the real SDK on the in-process emulator. Pages:

[BASH] https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool ("Pricing")
[TE]   https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool ("Pricing")
[SO]   https://platform.claude.com/docs/en/build-with-claude/structured-outputs
[CIT]  https://platform.claude.com/docs/en/build-with-claude/citations
[SR]   https://platform.claude.com/docs/en/build-with-claude/search-results
[PDF]  https://platform.claude.com/docs/en/build-with-claude/pdf-support
[FILES] https://platform.claude.com/docs/en/build-with-claude/files
"""

from __future__ import annotations

import re

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.provider.models import MODELS

HI = [{"role": "user", "content": "List the files."}]


def client(model="claude-sonnet-4-6", **kw):
    return Emulator(model=model, **kw).client(max_retries=0)


def counted(c, model, **kw):
    return c.messages.count_tokens(model=model, messages=kw.pop("messages", HI), **kw).input_tokens


@pytest.mark.parametrize("model, bash", [("claude-opus-4-7", 325), ("claude-opus-4-8", 325), ("claude-opus-5", 325),
                                         ("claude-opus-4-6", 244), ("claude-sonnet-4-6", 244), ("claude-haiku-4-5", 244)])
def test_the_bash_tool_adds_the_tokens_its_page_gives_on_each_model(model, bash):
    c = client(model)
    tool_prompt = MODELS[model].tool_prompt[0]
    bare = counted(c, model)
    assert counted(c, model, tools=[{"type": "bash_20250124", "name": "bash"}]) - bare == tool_prompt + bash  # [BASH]
    if model.split("-")[2] == "4":  # text_editor_20250429 is Claude 4's [TE]
        both = counted(c, model, tools=[{"type": "bash_20250124", "name": "bash"},
                                        {"type": "text_editor_20250429", "name": "str_replace_based_edit_tool"}])
        assert both - bare == tool_prompt + bash + 700


def _props(n: int, union: bool = False) -> dict:
    kind = {"type": ["string", "null"]} if union else {"type": "string"}
    return {f"p{k}": dict(kind) for k in range(n)}


def _object(optional: int = 0, unions: int = 0) -> dict:
    """An object schema with ``optional`` optional string properties and ``unions`` required union-typed ones."""
    union = {f"u{k}": {"anyOf": [{"type": "string"}, {"type": "integer"}]} for k in range(unions)}
    return {"type": "object", "properties": {**_props(optional), **union}, "required": list(union),
            "additionalProperties": False}


def _ask(c, tool_schema=None, format_schema=None):
    kw = {}
    if tool_schema is not None:
        kw["tools"] = [{"name": "lookup", "description": "look up", "strict": True, "input_schema": tool_schema}]
    if format_schema is not None:
        kw["output_config"] = {"format": {"type": "json_schema", "schema": format_schema}}
    return c.messages.create(model="claude-sonnet-4-6", max_tokens=200, messages=HI, **kw)


@pytest.mark.parametrize("tool, fmt, says", [
    (None, _object(optional=25), "too many optional parameters (25)"),
    (_object(optional=5), _object(optional=20), "too many optional parameters (25)"),
    (_object(unions=17), None, "too many parameters with union types (17"),
    (_object(unions=9), _object(unions=8), "too many parameters with union types (17"),
    ({"type": "object", "properties": {"rows": {"type": "array", "items": _object(optional=25)}}, "required": ["rows"],
      "additionalProperties": False}, None, "too many optional parameters (25)"),  # in array items too
])
def test_strict_schemas_over_the_complexity_limits_together_are_refused(tool, fmt, says):
    """[SO "Schema complexity limits"]: 24 optional and 16 union-typed parameters across every strict
    schema of the request, the tools and the output format together."""
    c = client()
    with pytest.raises(anthropic.BadRequestError, match=re.escape(says)):
        _ask(c, tool, fmt)


def test_strict_schemas_at_the_complexity_limits_are_answered():
    c = client()
    _ask(c, _object(optional=4, unions=8), _object(optional=20, unions=8))
    c.messages.create(model="claude-sonnet-4-6", max_tokens=200, messages=HI, tools=[  # a tool not strict: not counted
        {"name": "loose", "description": "not strict", "input_schema": {"type": "object", "properties": _props(30)}}])
