"""Conformance: the memory tool's definition (``memory_20250818``), through the real SDK.

Rules from https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool (``emulator/memory_tool.py``
quotes them): taken on every model of the table (Claude 4 on) with or without the beta header it asked
for at launch; refused on an older model with the API's words; its definition counted as a client tool's
(an assumption: no published overhead); the simulated policies view ``/memories`` first.
"""

from __future__ import annotations

import warnings

import anthropic
import pytest
from anthropic.tools import BetaLocalFilesystemMemoryTool

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.memory_tool import MEMORY_TOOL
from minimal_runtime.emulator.prompt import render_block
from minimal_runtime.emulator.tokens import defined_tool_tokens, estimate_tokens
from minimal_runtime.provider.models import CONTEXT_EDITING_BETA, MODELS
from minimal_runtime.serve import ToolThenAnswer, started

ASK = [{"role": "user", "content": "Pick up where you left off."}]


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("beta", [True, False])
def test_every_model_of_the_table_takes_the_memory_tool_with_or_without_the_beta_header(model, beta):
    client = Emulator(model=model).client(max_retries=0)
    extra = {"betas": [CONTEXT_EDITING_BETA]} if beta else {}
    answer = client.beta.messages.create(model=model, max_tokens=64, messages=ASK, tools=[MEMORY_TOOL], **extra)
    (use,) = [b for b in answer.content if b.type == "tool_use"]  # the simulated model views its memory first
    assert (use.name, use.input) == ("memory", {"command": "view", "path": "/memories"})


def test_the_non_beta_client_and_the_sdk_helpers_definition_are_taken(tmp_path):
    """``client.messages.create`` types the tool too (``MemoryTool20250818Param``); the SDK's own
    helper sends ``to_dict()``, the same two fields."""
    client = Emulator(model="claude-sonnet-5-5").client(max_retries=0)
    helper = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    assert helper.to_dict() == MEMORY_TOOL
    answer = client.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=ASK, tools=[helper.to_dict()])
    assert answer.stop_reason == "tool_use"


def test_a_claude_3_model_refuses_it_in_the_apis_words():
    """The live 400 on Sonnet 3.7 (github.com/microsoft/vscode issue 275435)."""
    model = "claude-3-7-sonnet-20250219"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a model outside the table: the emulator warns once
        client = Emulator(model=model).client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as e:
        client.beta.messages.create(model=model, max_tokens=64, messages=ASK, tools=[MEMORY_TOOL])
    assert e.value.body["error"]["message"].startswith(
        "'claude-3-7-sonnet-20250219' does not support tool types: memory_20250818.")
    client.messages.create(model=model, max_tokens=64, messages=ASK)  # the model itself is served


def test_another_name_is_refused():
    client = Emulator(model="claude-sonnet-5-5").client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="name: Input should be 'memory'"):
        client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=ASK,
                                    tools=[{"type": "memory_20250818", "name": "notes"}])


def test_its_definition_counts_as_its_json_as_a_client_tools_does():
    """ASSUMED (no published overhead): the definition adds what its rendered JSON counts, as a custom
    tool's does; no documented figure replaces it (as the bash and text-editor tools' do)."""
    client = Emulator(model="claude-sonnet-5-5").client(max_retries=0)
    custom = {"name": "note", "description": "Take a note.", "input_schema": {"type": "object", "properties": {}}}

    def count(tools):
        return client.beta.messages.count_tokens(model="claude-sonnet-5-5", messages=ASK, tools=tools).input_tokens
    assert defined_tool_tokens(MEMORY_TOOL, "claude-sonnet-5-5") is None
    assert count([custom, MEMORY_TOOL]) - count([custom]) == estimate_tokens(render_block(MEMORY_TOOL)) > 0
    assert count([MEMORY_TOOL, custom]) - count([MEMORY_TOOL]) == estimate_tokens(render_block(custom))


def test_serves_default_policy_views_memory_first_then_goes_on():
    """SIMULATED: the first call of a task views /memories; the rounds then use the other tools."""
    read = {"name": "read_file", "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=2))) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        messages, called = list(ASK), []
        for _ in range(4):
            answer = client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=messages,
                                                 tools=[MEMORY_TOOL, read])
            uses = [b for b in answer.content if b.type == "tool_use"]
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
            if not uses:
                break
            called.append((uses[0].name, uses[0].input.get("command")))
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                                          "content": "4.0K\t/memories"}]})
    assert called == [("memory", "view"), ("read_file", None)]


def test_the_sdks_tool_runner_runs_the_memory_tool_against_the_emulator(tmp_path):
    """The SDK's own loop (``tool_runner``) with the SDK's own memory tool: the simulated model views
    /memories first, the runner answers with the directory listing, the model then replies."""
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "progress.md").write_text("Next: page 3\n")
    client = Emulator(model="claude-sonnet-5-5").client(max_retries=0)
    runner = client.beta.messages.tool_runner(model="claude-sonnet-5-5", max_tokens=64, messages=ASK,
                                              tools=[BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))])
    answers = list(runner)
    assert [b.input for b in answers[0].content if b.type == "tool_use"] == [{"command": "view", "path": "/memories"}]
    assert answers[-1].stop_reason == "end_turn" and len(answers) == 2
