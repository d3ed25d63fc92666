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
