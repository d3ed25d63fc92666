"""The default policy ends the loops that end by a tool or by a text format (SIMULATED), through
the real SDK against ``serve``: a terminal tool it is offered is called once the rounds are done, a
format the prompt asks for is answered in that shape."""

from __future__ import annotations

import json
import re

import anthropic
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, banner, started

from .test_serve import TOOLS, validate

MODEL = "claude-sonnet-5-5"


def agent(client, tools, task="Fix the failing test.", system=None, limit=8) -> tuple[list, dict]:
    """A loop that ends only when the model calls a tool named in ``ENDS`` (as smolagents' and
    Cline's do: a text answer is a mistake, the loop asks again); the tool calls in order, and the
    last one's input."""
    messages, called, given = [{"role": "user", "content": task}], [], {}
    for _ in range(limit):
        answer = client.messages.create(model=MODEL, max_tokens=400, tools=tools, messages=messages,
                                        **({"system": system} if system else {}))
        uses = [b for b in answer.content if b.type == "tool_use"]
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
        if not uses:
            messages.append({"role": "user", "content": "You must call a tool."})
            called.append("(text)")
            continue
        called.append(uses[0].name)
        given = uses[0].input
        if uses[0].name in ENDS:
            return called, given
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "ok"}]})
    return called, given


ENDS = ("final_answer", "attempt_completion", "submit_and_exit", "finish")


def terminal(name: str, field: str = "answer") -> dict:
    return {"name": name, "description": "end the task with the answer",
            "input_schema": {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}}


@pytest.mark.parametrize("end, field", [("final_answer", "answer"), ("attempt_completion", "result"),
                                        ("submit_and_exit", "summary"), ("finish", "answer")])
def test_a_loop_that_ends_by_a_tool_ends_after_its_rounds(end, field):
    """smolagents' ToolCallingAgent (``final_answer``), Cline (``attempt_completion``, its yolo
    mode's ``submit_and_exit``): the terminal tool is never a round, and is called after them."""
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))
    with started(emulator) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        called, given = agent(client, [terminal(end, field), *TOOLS])
    assert called == ["read_file", "read_file", end]
    assert "simulated answer after 2 tool calls" in given[field]
    assert len(front.lines) == 3


def test_exit_plan_mode_is_not_a_terminal_tool():
    """Claude Code's ExitPlanMode ends planning, not the task: a loop offered it answers in text."""
    policy = ToolThenAnswer(rounds=0)
    turn = policy({"tools": [terminal("ExitPlanMode", "plan")], "messages": [{"role": "user", "content": "go"}]})
    assert turn.content[0]["type"] == "text"


DSPY_SYSTEM = """Your input fields are:
1. `question` (str):
Your output fields are:
1. `reasoning` (str):
2. `answer` (int): the count
3. `confident` (bool):
4. `kind` (Literal['a', 'b']):
All interactions will be structured in the following way, with the appropriate values filled in.

[[ ## question ## ]]
{question}

[[ ## reasoning ## ]]
{reasoning}

[[ ## answer ## ]]
{answer}        # note: the value you produce must be a single int value

[[ ## confident ## ]]
{confident}

[[ ## kind ## ]]
{kind}

[[ ## completed ## ]]
In adhering to this structure, your objective is:
        Answer the question."""


def test_dspy_field_markers_are_answered_with_every_output_field_in_a_value_its_type_parses_as():
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer())
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        answer = client.messages.create(model=MODEL, max_tokens=400, system=DSPY_SYSTEM, messages=[{
            "role": "user", "content": "[[ ## question ## ]]\nHow many?\n\nRespond with the corresponding output fields, "
            "starting with the field `[[ ## reasoning ## ]]`, then `[[ ## answer ## ]]` (must be formatted as a valid "
            "Python int), then ..., and then ending with the marker for `[[ ## completed ## ]]`."}])
    text = next(b.text for b in answer.content if b.type == "text")
    sections = dict(re.findall(r"\[\[ ## (\w+) ## \]\]\n?(.*?)(?=\n\n\[\[ ## |\Z)", text + "\n\n", re.S))
    assert list(sections) == ["reasoning", "answer", "confident", "kind", "completed"], text
    assert "simulated" in sections["reasoning"]
    assert int(sections["answer"]) == 1 and sections["confident"] in ("True", "False") and sections["kind"] == "a"


def test_a_json_schema_in_the_system_prompt_is_answered_with_an_instance_of_it():
    """instructor's JSON modes write the schema into the system prompt and parse the answer's JSON."""
    schema = {"properties": {"name": {"title": "Name", "type": "string"}, "age": {"type": "integer", "minimum": 18},
                             "tags": {"type": "array", "items": {"type": "string"}}},
              "required": ["name", "age", "tags"], "title": "User", "type": "object"}
    system = ("As a genius expert, your task is to understand the content and provide the parsed objects in json that "
              f"match the following json_schema:\n\n{json.dumps(schema, indent=2)}\n\nMake sure to return an instance "
              "of the JSON, not the schema itself")
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer())
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        answer = client.messages.create(model=MODEL, max_tokens=400, system=system,
                                        messages=[{"role": "user", "content": "Jason is 25."}])
    validate(json.loads(next(b.text for b in answer.content if b.type == "text")), schema)


def test_the_banner_says_what_the_default_policy_does_and_that_it_is_simulated():
    line = banner("http://127.0.0.1:1", Emulator(model=MODEL), ToolThenAnswer(rounds=2).describe(), None).splitlines()[0]
    assert "SIMULATED" in line and "2 rounds, then a terminal tool it is offered (submit, finish, final answer" in line
    assert "a JSON schema, dspy's fields" in line


def test_a_loop_that_forces_a_tool_every_call_ends_by_the_terminal_tool_too():
    """smolagents' ToolCallingAgent sends ``tool_choice: any`` on every step: the rounds, then the
    terminal tool, as without the force."""
    policy, tools = ToolThenAnswer(rounds=1), [terminal("final_answer"), *TOOLS]
    request = {"tools": tools, "tool_choice": {"type": "any"}, "messages": [{"role": "user", "content": "go"}]}
    first = policy(request).content[0]
    request["messages"] += [{"role": "assistant", "content": [{**first, "id": "t1"}]},
                            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}]
    assert (first["name"], policy(request).content[0]["name"]) == ("read_file", "final_answer")


def test_a_loop_that_resends_its_steps_as_text_still_ends_by_the_terminal_tool():
    """smolagents' ToolCallingAgent writes each step back as text ("Calling tools: ...",
    "Observation: ..."), not as tool_use and tool_result blocks: its steps are counted all the same."""
    policy, tools = ToolThenAnswer(rounds=2), [*TOOLS, terminal("final_answer")]
    messages = [{"role": "user", "content": [{"type": "text", "text": "New task:\nRead notes.txt."}]}]
    names = []
    for _ in range(3):
        use = policy({"tools": tools, "tool_choice": {"type": "any"}, "messages": messages}).content[0]
        names.append(use["name"])
        messages += [{"role": "assistant", "content": [{"type": "text", "text": f"Calling tools:\n[{use['name']}]"}]},
                     {"role": "user", "content": [{"type": "text", "text": "Observation:\n3 lines"}]}]
    assert names == ["read_file", "read_file", "final_answer"]
