"""What ``serve``'s emulated model answers: a SIMULATION, so that any client's tool loop runs.

The default, ``ToolThenAnswer``, behaves the way an agent's model does in shape, not in sense: on a
new user turn it calls one of the tools the client offers (a read-only looking one first, so that
an agent which executes it does nothing harmful), with an input built from the tool's JSON schema,
for ``rounds`` rounds; then it ends the turn the way the client waits for:

- a tool whose name reads as the end of a task (``TERMINAL``: submit, finish, final answer, attempt
  completion, exit), when one is offered, is called (smolagents' ``final_answer``, Cline's
  ``attempt_completion``): a loop that ends only by a tool ends. Not one whose description says it
  reports a failure (Continue's ``Exit``: "Exit the current process with status code 1, indicating
  a failure or error"): calling it would end the client's run as failed;
- a command the prompt says ends the task (``SUBMIT``: mini-swe-agent's "Submit your changes and
  finish your work by issuing the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`")
  is run as the last command: through the shell tool the client offers, or with no tools as a code
  block in the fence the prompt shows (its text-based configs);
- a client whose tools are code blocks (none in the request's ``tools``; gptme's default "markdown" format)
  gets its rounds as the command block its prompt shows (```shell), then the block that ends its session
  (```complete), where the prompt shows one;
- a client whose tools are JSON in its text (none in the request's ``tools``; langroid's ToolMessage format:
  its prompt names each TOOL and quotes its schema) gets its rounds as instances of that schema, then a text
  answer, which ends its task;
- a forced tool whose input is a list of actions (browser-use's ``AgentOutput``: one-key objects, the key the
  action's name) gets one action, never the empty list: a looking one, then ``done`` once the rounds are done
  or where it is the only action offered (browser-use's last step);
- a format the request asks for is answered in that shape: ``output_config.format`` (a stand-in
  valid against its schema), a JSON schema written into the system prompt (instructor's JSON modes),
  or the field markers of dspy's ``ChatAdapter`` (``[[ ## answer ## ]]`` ... ``[[ ## completed ## ]]``);
- otherwise a line of text that says it is simulated.

With the memory tool offered (``memory_20250818``), the first call of a conversation views ``/memories``,
as the memory tool page says the model does before starting a task (``emulator/memory_tool.py``); the
rounds count it. With no tools offered, or ``tool_choice: none``, it answers at once. ``--script FILE`` answers from a
JSONL of turns (and errors) instead, ``--policy module:callable`` with your own.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ..emulator.errors import ApiError
from ..emulator.memory_tool import check_memory_first
from ..emulator.policies import ScriptedPolicy, Turn
from .faults import scripted_error

# Tools whose names say they only look: tried first, so the simulated call is harmless when run.
LOOKING = ("read", "glob", "grep", "list", "search", "view", "get", "find", "ls")
# Tools whose names say they end the task: called once the rounds are done, never as a round. Matched on
# the name with case and separators dropped; an "exit" only at the end (submit_and_exit, exit), so that
# Claude Code's ExitPlanMode (which ends planning, not the task) is not one; "done" only as the whole name
# (browser-use's action that completes the task).
TERMINAL = re.compile(r"submit|finish|finalanswer|attemptcompletion|taskcomplete|completetask|exit$|^done$")
# A description that says the tool ends the run as failed ("indicating a failure or error", "status code 1").
FAILS = re.compile(r"\b(?:indicat|report|signal)\w*\s+(?:an?\s+)?(?:failure|error)|\b(?:status|exit)\s+code\s+[1-9]"
                   r"|\bnon-?zero\s+(?:status|exit)", re.I)
# A command the prompt says ends the task: a backticked command in a sentence about submitting or finishing.
SUBMIT = re.compile(r"\b(?:submit|finish|complete|end)\b[^`\n]{0,160}?\bcommand\b[^`\n]{0,20}?`([^`\n]+)`", re.I)
SIMULATED = "(simulated answer{said}: this emulated model does not read your task; see serve --policy)"


def is_terminal(tool: dict) -> bool:
    """``tool`` ends the task: its name says so and its description does not say it fails."""
    name = tool.get("name")
    return isinstance(name, str) and bool(TERMINAL.search(re.sub(r"[^a-z0-9]", "", name.lower()))) \
        and not FAILS.search(str(tool.get("description") or ""))


def submit_command(request: dict) -> str | None:
    """The command the system prompt or the task (the first user message) says submits the work."""
    found = SUBMIT.search(_prompt_text(request, first_user=True))
    return found[1].strip() if found else None


def _shell(tools: list[dict]) -> tuple[dict, str] | None:
    """The tool that runs a command, and its field: one whose schema's only required field is a
    string ``command`` or ``cmd`` (mini-swe-agent's ``bash``)."""
    for tool in tools:
        schema = tool.get("input_schema") or {}
        required = schema.get("required") or []
        if len(required) == 1 and required[0] in ("command", "cmd") and \
                ((schema.get("properties") or {}).get(required[0]) or {}).get("type") == "string":
            return tool, required[0]
    return None


class ToolThenAnswer:
    """Call a tool ``rounds`` times per user turn, then end the turn: by a terminal tool when one is
    offered, else in the format the request asks for, else in plain text (SIMULATED)."""

    def __init__(self, rounds: int = 2):
        self.rounds = rounds

    def describe(self) -> str:
        """What it does, as ``serve``'s banner says it."""
        return (f"tool-then-answer ({self.rounds} round{'s' * (self.rounds != 1)}, then a terminal tool it is offered "
                "(submit, finish, final answer, attempt completion, exit; not one that reports a failure), the submit "
                "command the prompt names, a client's code blocks (```shell, then ```complete), JSON tools in its text, "
                "or text in the format "
                "the prompt asks: a JSON schema, dspy's fields)")

    def __call__(self, request: dict[str, Any]) -> Turn:
        # the legacy top-level output_format is accepted "for a transition period" [SO]
        fmt = (request.get("output_config") or {}).get("format") or request.get("output_format") or {}
        tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and "input_schema" in t]
        choice = (request.get("tool_choice") or {}).get("type", "auto")
        done = _tool_rounds_since_user_text(request.get("messages") or [])
        thinking = "Simulated reasoning: choosing the next step."  # shown only where the model thinks
        rounds = [t for t in tools if not is_terminal(t)]
        end = next((t for t in tools if is_terminal(t)), None)
        submit = submit_command(request) if end is None else None
        shell = _shell(rounds) if submit else None
        if end is not None:  # a task that ends by a tool: every answer so far was a step of it, however the
            # client resends them (smolagents writes its tool calls and results back as text: "Observation: ...")
            done = max(done, sum(isinstance(m, dict) and m.get("role") == "assistant" for m in request.get("messages") or []))
        said = f" after {done} tool call{'s' * (done != 1)}" if done else ""
        if tools and choice == "tool":
            return Turn(content=[_use(_pick(tools, request.get("tool_choice") or {}), said, finish=done >= self.rounds)],
                        thinking=thinking)
        if choice != "tool" and (view := check_memory_first(request)) is not None:  # memory first [MEM]
            return Turn(content=[view], thinking=thinking)
        if rounds and choice != "none" and done < self.rounds:
            return Turn(content=[_use(_pick(rounds, {}), said)], thinking=thinking)
        if end is not None and choice != "none":
            return Turn(content=[_use(end, said)], thinking=thinking)
        if shell is not None and choice != "none":  # the client's own way to end: its submit command
            tool, field = shell
            return Turn(content=[{"type": "tool_use", "name": tool["name"], "input": {field: submit}}], thinking=thinking)
        if submit and not tools and (fence := CODE_FENCE.search(_prompt_text(request, first_user=True))):
            return Turn(content=[{"type": "text", "text": f"THOUGHT: {SIMULATED.format(said=said)}\n\n"
                                                          f"```{fence[1]}\n{submit}\n```"}], thinking=thinking)
        if tools and choice == "any":  # a tool must be called: any tool, the rounds done or not
            return Turn(content=[_use(_pick(tools, {}), said)], thinking=thinking)
        if fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            return Turn(content=[{"type": "text", "text": json.dumps(example(fmt["schema"]))}], thinking=thinking)
        if not tools and choice != "none" and (blocks := _code_block_turn(request, self.rounds)) is not None:
            return Turn(content=[{"type": "text", "text": blocks}], thinking=thinking)
        if not tools and choice != "none" and (call := _json_tool_turn(request, self.rounds)) is not None:
            return Turn(content=[{"type": "text", "text": call}], thinking=thinking)
        return Turn(content=[{"type": "text", "text": asked_format(request, SIMULATED.format(said=said))}],
                    thinking=thinking)


def _use(tool: dict, said: str, finish: bool = False) -> dict:
    """A call of ``tool`` with an input from its schema; a terminal tool's string fields say the
    answer is simulated (a final answer a person reads). A tool whose input is a list of actions (browser-use's
    forced ``AgentOutput``: each item one of several one-key objects, the key the action's name) gets one action,
    never the empty list its schema allows (the client counts that a failed step): a looking one, or the
    terminal one (``done``) when ``finish`` or when it is the only action offered (browser-use's last step)."""
    value = example(tool["input_schema"])
    if is_terminal(tool) and isinstance(value, dict):
        _say_simulated(value, tool["input_schema"], said)
    found = _action_list(tool["input_schema"])
    if found is not None and isinstance(value, dict):
        field, actions = found
        ends = [a for a in actions if is_terminal(a)]
        steps = [a for a in actions if not is_terminal(a)]
        action = _pick(steps, {}) if steps and not (finish and ends) else ends[0]
        item = example(action["input_schema"])
        if is_terminal(action) and isinstance(item, dict):
            _say_simulated(item, action["input_schema"], said)
        value[field] = [{action["name"]: item}]
    return {"type": "tool_use", "name": tool["name"], "input": value}


def _say_simulated(value: dict, schema: dict, said: str) -> None:
    properties = schema.get("properties") or {}
    for name, v in value.items():
        if isinstance(v, str) and not (properties.get(name) or {}).get("enum") and "const" not in (properties.get(name) or {}):
            value[name] = SIMULATED.format(said=said)


def _action_list(schema: dict) -> tuple[str, list[dict]] | None:
    """(the field, its actions as tools: name, description, input schema) where ``schema`` has a field that is a
    list of one-key objects (browser-use's ``action``); None otherwise."""
    for field, prop in (schema.get("properties") or {}).items():
        items = prop.get("items") if isinstance(prop, dict) and prop.get("type") == "array" else None
        if not isinstance(items, dict):
            continue
        options = items.get("anyOf") or items.get("oneOf") or [items]
        actions = []
        for option in options:
            keys = list((option.get("properties") or {}) if isinstance(option, dict) else {})
            if len(keys) != 1 or option.get("required", keys) != keys:
                break
            inner = option["properties"][keys[0]]
            actions.append({"name": keys[0], "description": str(inner.get("description") or option.get("description") or ""),
                            "input_schema": inner})
        else:
            if actions:
                return field, actions
    return None


# -- a format asked for in the prompt's words ------------------------------------------------------

DSPY_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)(?:\n\s*\n|\nAll interactions|$)", re.S)
DSPY_FIELD = re.compile(r"^\s*\d+\.\s*`(\w+)`\s*(?:\(([^)\n]*)\))?", re.M)


def asked_format(request: dict, text: str) -> str:
    """``text`` in the shape the prompt asks for: dspy's field markers, each output field filled with
    a value its type parses as; or an instance of a JSON schema the prompt quotes; else ``text``."""
    prompt = _prompt_text(request)
    if (fields := DSPY_OUTPUTS.search(prompt)) and "[[ ## " in prompt:
        names = DSPY_FIELD.findall(fields[1])
        if names:
            return "\n\n".join([*(f"[[ ## {name} ## ]]\n{_dspy_value(kind, text)}" for name, kind in names),
                                 "[[ ## completed ## ]]"])
    if (schema := quoted_schema(prompt)) is not None:
        return json.dumps(example(schema))
    return text


def _dspy_value(kind: str, text: str) -> str:
    """A value dspy's parser reads as ``kind`` (the annotation it printed: str, int, bool, list[str],
    Literal['a', 'b'] ...)."""
    kind = kind.strip()
    if literal := re.match(r"Literal\[\s*(['\"])(.*?)\1", kind):
        return literal[2]
    simple = {"int": "1", "float": "1.0", "bool": "True", "dict": "{}"}
    base = kind.split("[")[0].lower()
    if base in simple:
        return simple[base]
    if base in ("list", "tuple", "set"):
        return "[]"
    return text


def quoted_schema(prompt: str) -> dict | None:
    """The largest JSON object in ``prompt`` that reads as a JSON schema (an object with
    ``properties``), where the prompt speaks of a schema or JSON at all."""
    if not re.search(r"schema|json", prompt, re.I):
        return None
    decoder, best = json.JSONDecoder(), None
    for start in [m.start() for m in re.finditer(r"\{\s*\"", prompt)][:64]:  # bounded: a long prompt has many
        try:
            value, _ = decoder.raw_decode(prompt, start)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("properties"), dict) and (
                best is None or len(json.dumps(value)) > len(json.dumps(best))):
            best = value
    return best


CODE_FENCE = re.compile(r"```([\w-]+)\n")  # the fence a text-based client reads its command from
# A client whose tools are code blocks (none in the API's ``tools``: gptme's default "markdown" tool format)
# shows in its prompt a block that runs a command, and may show one that ends the session (gptme's ```complete).
SHELL_BLOCK = re.compile(r"^```(shell|bash)\n", re.M)
FENCE_NAME = re.compile(r"^```([\w-]+)\n", re.M)
LOOK = "ls"  # the command a round runs: it only looks


def _code_block_turn(request: dict, rounds: int) -> str | None:
    """For a client that runs code blocks: a command block for each of ``rounds`` rounds, counted from the
    last answer that ran none (a user turn's start), then the block that ends its session if the prompt
    shows one, else None (an answer in text)."""
    prompt = _prompt_text(request, first_user=True)
    shell = SHELL_BLOCK.search(prompt)
    if shell is None:
        return None
    done = 0
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            if f"```{shell[1]}\n" not in _text_of(message.get("content")):
                break
            done += 1
    said = f" after {done} command{'s' * (done != 1)}" if done else ""
    if done < rounds:
        return f"{SIMULATED.format(said=said)}\n\n```{shell[1]}\n{LOOK}\n```"
    end = next((name for name in FENCE_NAME.findall(prompt)
                if name == "complete" or TERMINAL.search(re.sub(r"[^a-z0-9]", "", name.lower()))), None)
    return f"{SIMULATED.format(said=said)}\n\n```{end}\n```" if end else None


# A client whose tools are JSON objects in its text (none in the API's ``tools``: langroid's ToolMessage format, its
# default for Claude) names each TOOL in its prompt and quotes its schema, where a field (langroid's ``request``)
# holds the tool's name as its default or constant.
TOOL_WORD = re.compile(r"\bTOOL\b")


def _json_tool_turn(request: dict, rounds: int) -> str | None:
    """For a client whose tools are JSON in its text: an instance of the tool's schema for each of ``rounds``
    rounds, counted from the last answer that was no such call (a user turn's start), then an answer in text
    (SIMULATED), which is how such a loop ends; None for a prompt that offers no tool so."""
    prompt = _prompt_text(request)
    schema = quoted_schema(prompt) if TOOL_WORD.search(prompt) else None
    names = {k: v.get("default", v.get("const")) for k, v in ((schema or {}).get("properties") or {}).items()
             if isinstance(v, dict) and isinstance(v.get("default", v.get("const")), str)}
    if not names:
        return None
    done = 0
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            text = _text_of(message.get("content")).strip().removeprefix("TOOL:").strip()
            try:
                call = json.loads(text)
            except ValueError:
                break
            if not isinstance(call, dict) or any(call.get(k) != v for k, v in names.items()):
                break
            done += 1
    if done < rounds:
        return json.dumps(example(schema))
    return SIMULATED.format(said=f" after {done} tool call{'s' * (done != 1)}")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str))


def _prompt_text(request: dict, first_user: bool = False) -> str:
    """The system prompt and the last user message (or the first: where a client states its task's
    rules), as text (where a client writes its format)."""
    parts = []
    system = request.get("system")
    parts += [system] if isinstance(system, str) else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
    messages = request.get("messages") or []
    for message in messages if first_user else reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            parts += [content] if isinstance(content, str) else [
                b.get("text", "") for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]
            break
    return "\n".join(p for p in parts if isinstance(p, str))


def _tool_rounds_since_user_text(messages: list) -> int:
    """How many tool results the conversation has had since the user last wrote something."""
    rounds = 0
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text"}]
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            rounds += 1
        else:
            break
    return rounds


def _pick(tools: list[dict], tool_choice: dict) -> dict:
    if tool_choice.get("type") == "tool":
        return next((t for t in tools if t["name"] == tool_choice.get("name")), tools[0])
    for word in LOOKING:
        for tool in tools:
            if word in tool["name"].lower():
                return tool
    return tools[0]


def example(schema: Any, root: dict | None = None, depth: int = 0) -> Any:
    """A value that validates against ``schema`` (JSON Schema as tools use it: types, enum, const,
    required, anyOf/oneOf/allOf, $ref into $defs, bounds on strings, numbers and arrays)."""
    root = root if root is not None else schema if isinstance(schema, dict) else {}
    if not isinstance(schema, dict) or depth > 32:
        return None
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return example(target, root, depth + 1)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [s for s in schema[key] if not (isinstance(s, dict) and s.get("type") == "null")]
            return example((options or schema[key])[0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict = {}
        for part in schema["allOf"]:
            for k, v in (part if isinstance(part, dict) else {}).items():
                merged[k] = {**merged.get(k, {}), **v} if isinstance(v, dict) and isinstance(merged.get(k), dict) else \
                    [*merged.get(k, []), *v] if isinstance(v, list) and isinstance(merged.get(k), list) else v
        return example({**{k: v for k, v in schema.items() if k != "allOf"}, **merged}, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        properties = schema.get("properties") or {}
        out = {name: example(properties.get(name, {}), root, depth + 1) for name in schema.get("required") or []}
        for name in list(properties)[: max(0, (schema.get("minProperties") or 0) - len(out))]:
            out.setdefault(name, example(properties[name], root, depth + 1))
        return out
    if kind == "array":
        return [example(schema.get("items") or {}, root, depth + 1) for _ in range(schema.get("minItems") or 0)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in schema else 0))
        value = max(low, 1) if schema.get("maximum", 1) >= 1 else low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _string(schema)


_FORMATS = {"uri": "https://example.com/", "url": "https://example.com/", "email": "someone@example.com",
            "date-time": "2026-12-01T00:00:00Z", "date": "2026-12-01", "time": "00:00:00Z",
            "uuid": "00000000-0000-4000-8000-000000000000", "ipv4": "127.0.0.1", "hostname": "example.com"}


def _string(schema: dict) -> str:
    text = _FORMATS.get(schema.get("format", ""), "example")
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    text = text.ljust(low, "x")
    return text[:high] if high is not None else text


# -- the other two ways to say what the model answers ----------------------------------------------

class Script(ScriptedPolicy):
    """A ``--script`` file's lines in order: each call takes the next one. A turn line answers it; an
    error line (``{"error": ...}``) is answered before the call is billed (see ``faults.py``)."""

    def __init__(self, entries: list):
        super().__init__([e for e in entries if isinstance(e, Turn)])
        self._errors_before = [sum(1 for x in entries[:i] if isinstance(x, ApiError)) for i, e in enumerate(entries)
                               if isinstance(e, Turn)]  # for each turn: how many error lines come before it
        self._errors = [e for e in entries if isinstance(e, ApiError)]
        self._taken = 0

    def take_error(self) -> ApiError | None:
        """The next error line, if it comes before the next turn line."""
        with self._lock:
            before_next = self._errors_before[self._next] if self._next < len(self.turns) else len(self._errors)
            if self._taken < before_next:
                self._taken += 1
                return self._errors[self._taken - 1]
            return None


def script(path: str | Path) -> Script:
    """A JSONL file, one turn a line: a string (a text answer), a content block, a list of blocks,
    ``{"content": [...], "stop_reason": ..., "thinking": ...}`` (a ``Turn``), or ``{"error": {"status":
    529, "message": ..., "retry_after": ..., "error_code": ...}}``: the call answered with that error.
    A line that is none of these is refused here, naming it, not answered later as the emulator's 500."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text: {SCRIPT_LINE}") from None
    entries: list = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
            entries.append(scripted_error(value) if isinstance(value, dict) and "error" in value else _turn(value))
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {'not JSON: ' if isinstance(e, json.JSONDecodeError) else ''}{e}") from None
    if not any(isinstance(e, Turn) for e in entries):
        raise ValueError(f"{path}: no turns in the script")
    return Script(entries)


SCRIPT_LINE = ('a line is a string, a content block {"type": ...}, a list of blocks, {"content": [...], '
               '"stop_reason": ...} or {"error": {"status": 529}}')


def _turn(value: Any) -> Turn:
    """One script line as a turn whose blocks each have a type (a serve --log record, say, has none)."""
    try:
        if isinstance(value, dict) and "content" in value and "type" not in value:
            turn = Turn.model_validate(value)
        elif isinstance(value, (str, dict, list)):
            turn = Turn.of(value)
        else:
            raise ValueError(f"a JSON {type(value).__name__} is not a turn: {SCRIPT_LINE}")
    except ValidationError:  # pydantic's message runs over several lines: one line names the shape instead
        raise ValueError(f"not a turn: {SCRIPT_LINE}") from None
    for block in turn.content:
        if not isinstance(block.get("type"), str):
            what = f"an object with keys {', '.join(list(block)[:5])}{', ...' * (len(block) > 5)}" if block else "{}"
            raise ValueError(f"{what} is not a content block (no \"type\"): {SCRIPT_LINE}")
    return turn


def load(spec: str) -> Callable:
    """``module:callable``; a class is instantiated with no arguments."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--policy {spec!r}: expected module:callable, e.g. mypolicies:answer")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target() if isinstance(target, type) else target
