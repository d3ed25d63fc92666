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


# -- Continue's Exit tool and mini-swe-agent's submit command (issue 60), shaped from their public source --

def continue_tools() -> list[dict]:
    """Continue CLI's headless tools, as its ``extensions/cli/src/tools/*.ts`` define them (names,
    parameters; descriptions where the policy reads them): ``Exit`` among them."""
    def tool(name, description, required=(), **properties):
        return {"name": name, "description": description, "input_schema": {
            "type": "object", "required": list(required), "properties": {k: {"type": v} for k, v in properties.items()}}}
    return [tool("Read", "Read the contents of a file at the specified path.", ["filepath"], filepath="string"),
            tool("List", "List files in a directory.", ["dirpath"], dirpath="string"),
            tool("Bash", "Executes a terminal command.", ["command"], command="string"),
            tool("Exit", "Exit the current process with status code 1, indicating a failure or error")]


def test_continues_exit_tool_reports_failure_so_its_headless_run_ends_with_an_answer_not_exit_1():
    """Continue's ``cn -p`` ends when the model answers in text; its ``Exit`` tool exits 1. The policy
    called it (its name ends in "exit"), so Continue's default run exited 1 with no answer."""
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages, called = [{"role": "user", "content": "Summarise this repository."}], []
        for _ in range(6):
            answer = client.messages.create(model=MODEL, max_tokens=400, tools=continue_tools(), messages=messages,
                                            system="You are an agent in the Continue CLI.")
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
            uses = [b for b in answer.content if b.type == "tool_use"]
            if not uses:
                break
            called.append(uses[0].name)
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id, "content": "ok"}
                                                         for u in uses]})
    assert "Exit" not in called and len(called) == 2
    assert answer.stop_reason == "end_turn" and "simulated answer" in answer.content[-1].text


SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def mini_task(task: str) -> str:
    """mini-swe-agent 2.x's instance template (``config/mini.yaml``), the sentences the policy reads."""
    return (f"Please solve this issue: {task}\n\nYou can execute bash commands and edit files to implement the "
            "necessary changes.\n\n## Recommended Workflow\n\n1. Analyze the codebase by finding and reading relevant "
            "files\n2. Create a script to reproduce the issue\n3. Edit the source code to resolve the issue\n"
            f"6. Submit your changes and finish your work by issuing the following command: `{SUBMIT}`.\n"
            "   Do not combine it with any other command. <important>After this command, you cannot continue working "
            "on this task.</important>\n")


def submitted(output: str) -> bool:
    """mini-swe-agent's test for the end: the command's output starts with the marker line."""
    lines = output.lstrip().splitlines()
    return bool(lines) and lines[0].strip() == "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def test_mini_swe_agents_tool_loop_ends_by_its_submit_command_after_the_rounds():
    """mini-swe-agent 2.x's default (tool calls through litellm): one ``bash`` tool, a text answer
    is a format error, the run ends when a command prints the submit marker. It never ended."""
    bash = {"name": "bash", "description": "Execute a bash command", "input_schema": {
        "type": "object", "properties": {"command": {"type": "string", "description": "The bash command to execute"}},
        "required": ["command"]}}
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages, commands = [{"role": "user", "content": mini_task("the tests fail")}], []
        for _ in range(8):
            answer = client.messages.create(model=MODEL, max_tokens=400, tools=[bash], messages=messages,
                                            system="You are a helpful assistant that can interact with a computer.")
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
            uses = [b for b in answer.content if b.type == "tool_use"]
            if not uses:
                messages.append({"role": "user", "content": "No tool calls found in the response. Every response MUST "
                                                            "include at least one tool call."})
                commands.append("(text)")
                continue
            commands.append(uses[0].input["command"])
            output = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n" if uses[0].input["command"] == SUBMIT else "ok\n"
            if submitted(output):
                break
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                                          "content": f"<returncode>0</returncode>\n<output>\n{output}</output>"}]})
    assert commands[-1] == SUBMIT and len(commands) == 3, commands


def test_mini_swe_agents_text_based_config_gets_its_submit_command_in_the_fence_it_reads():
    """Its text-based configs offer no tools and read one ```mswea_bash_command block per answer."""
    system = ("You are a helpful assistant that can interact with a computer.\n\nYour response must contain exactly ONE "
              "bash code block with ONE command.\n\n<format_example>\nTHOUGHT: ...\n\n```mswea_bash_command\n"
              "your_command_here\n```\n</format_example>")
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        answer = client.messages.create(model=MODEL, max_tokens=400, system=system,
                                        messages=[{"role": "user", "content": mini_task("the tests fail")}])
    actions = re.findall(r"```mswea_bash_command\s*\n(.*?)\n```", answer.content[-1].text, re.S)
    assert actions == [SUBMIT]


def test_a_terminal_name_whose_description_does_not_report_failure_is_still_terminal():
    policy = ToolThenAnswer(rounds=0)
    request = {"messages": [{"role": "user", "content": "go"}],
               "tools": [{**terminal("submit_and_exit", "summary"), "description": "Submit your work and exit."}]}
    assert policy(request).content[0]["name"] == "submit_and_exit"


GPTME_SYSTEM = ("You are gptme, a general-purpose AI assistant.\n\n# Tools\n\n## shell\n\n**Description:** Executes shell "
                "commands.\n\n### Examples\n\n> User: list the current directory\n> Assistant: To list the files, use `ls`:\n"
                "```shell\nls\n```\n\n## complete\n\n**Description:** Signal that the work is done.\n\n### Examples\n\n"
                "> User: Everything done, just complete\n> Assistant: I'll use the complete tool to end the session.\n"
                "```complete\n```\n")


def test_a_client_whose_tools_are_code_blocks_runs_its_rounds_in_them_and_ends_by_its_complete_block():
    """gptme's default "markdown" tool format: no tools in the request, a ```shell block runs a command (its
    output comes back as user text), ```complete ends the session. It got a text answer, and no tool ran."""
    emulator = Emulator(model="claude-sonnet-4-6", policy=ToolThenAnswer(rounds=2))
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages, blocks = [], []
        for task in ("List the files here.", "Now count the lines of a.py."):
            messages.append({"role": "user", "content": task})
            for _ in range(5):
                answer = client.messages.create(model="claude-sonnet-4-6", max_tokens=400, system=GPTME_SYSTEM,
                                                messages=messages)
                text = "".join(b.text for b in answer.content if b.type == "text")
                messages.append({"role": "assistant", "content": text})
                ran = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
                blocks.append(ran[-1][0] if ran else "(text)")
                if blocks[-1] != "shell":
                    break
                messages.append({"role": "user", "content": "<system>Ran command: `ls`\n\n```stdout\na.py\n```</system>"})
    assert blocks == ["shell", "shell", "complete"] * 2, blocks


# langroid 0.69's ToolMessage format for Claude (no OpenAI tools API): its system prompt, shaped from its public source
LANGROID_SYSTEM = """You are a helpful assistant.

=== ALL AVAILABLE TOOLS and THEIR FORMAT INSTRUCTIONS ===
You have access to the following TOOLS to accomplish your task:

TOOL: get_weather
            PURPOSE: To get the weather in a <city>.
            JSON FORMAT: {
    "properties": {"request": {"default": "get_weather", "type": "string"}, "city": {"type": "string"}},
    "required": ["city", "request"], "type": "object"
}

When one of the above TOOLs is applicable, you must express your
request as "TOOL:" followed by the request in the above format."""


def test_a_client_whose_tools_are_json_in_its_text_runs_its_rounds_then_answers_in_text():
    """langroid's default for Claude: no tools in the request; a JSON object whose ``request`` names a tool is a
    call (its result comes back as user text), a text answer ends the task. It got the tool's JSON on every call,
    so each task ran until langroid's turn limit."""
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages, kinds = [], []
        for task in ("What is the weather in Paris?", "And tomorrow?"):
            messages.append({"role": "user", "content": task})
            for _ in range(5):
                answer = client.messages.create(model=MODEL, max_tokens=400, system=LANGROID_SYSTEM, messages=messages)
                text = "".join(b.text for b in answer.content if b.type == "text")
                messages.append({"role": "assistant", "content": text})
                try:
                    call = json.loads(text)
                except ValueError:
                    kinds.append("(text)")
                    break
                kinds.append(call["request"])
                assert isinstance(call["city"], str)
                messages.append({"role": "user", "content": "sunny"})
    assert kinds == ["get_weather", "get_weather", "(text)"] * 2, kinds


def browser_use_output(*actions: str) -> dict:
    """browser-use 0.13's forced tool, shaped from its public source: ``AgentOutput`` whose ``action`` is a list
    of one-key objects, the key the action's name (``done`` completes the task); on its last step only ``done``."""
    def one(name: str, **fields) -> dict:
        inner = {"type": "object", "properties": {k: {"type": v} for k, v in fields.items()}, "required": list(fields)}
        return {"type": "object", "properties": {name: inner}, "required": [name], "additionalProperties": False}
    known = {"done": one("done", text="string", success="boolean"), "navigate": one("navigate", url="string"),
             "read_file": one("read_file", file_name="string"), "click": one("click", index="integer")}
    items = {"anyOf": [known[a] for a in actions]} if len(actions) > 1 else known[actions[0]]
    return {"name": "AgentOutput", "description": "the agent's next actions", "input_schema": {
        "type": "object", "required": ["action"], "properties": {
            "memory": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "action": {"type": "array", "description": "List of actions to execute", "items": items}}}}


def test_a_forced_tool_whose_input_is_a_list_of_actions_gets_one_action_and_done_when_only_done_is_offered():
    """browser-use forces ``AgentOutput`` every step; it got ``"action": []`` (the schema's minimum), which browser-use
    counts a failed step, so its run never ended by ``done``. Now a looking action a step, and ``done`` on its last
    step, where ``done`` is the only action offered."""
    emulator = Emulator(model="claude-sonnet-4-6", policy=ToolThenAnswer(rounds=2))
    choice = {"type": "tool", "name": "AgentOutput"}
    with started(emulator) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        said = []
        for tool in (browser_use_output("done", "navigate", "read_file", "click"), browser_use_output("done")):
            answer = client.messages.create(model="claude-sonnet-4-6", max_tokens=400, tools=[tool], tool_choice=choice,
                                            messages=[{"role": "user", "content": "<agent_history>...</agent_history>"}])
            (use,) = [b for b in answer.content if b.type == "tool_use"]
            validate(use.input, tool["input_schema"])
            said.append([next(iter(a)) for a in use.input["action"]])
    assert said == [["read_file"], ["done"]], said
