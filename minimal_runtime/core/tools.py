"""Tools: a fixed list for the whole run, with availability masked, never edited.

Tool definitions sit at the very front of the prompt, so changing the list invalidates every cached
token after it. Instead the list stays fixed and a tool that should not be used now is *masked*: a
call to it is refused with an error result (the model learns from it, and it stays in the history
like every other failed call). On a model that takes tool changes the model is also *told*: a
masked tool is withdrawn with ``tool_removal`` and offered again with ``tool_addition``, appended
to the history (``ToolOffer``). ``tool_choice`` can forbid tools too (``none``), and force one only
on models that accept it (Fable/Mythos 5.1 and 5.2, Opus 5.5 and Sonnet 5.5 answer it with a 400:
``AgentConfig`` refuses it first); a change to it invalidates the messages cache, so it is a
deliberate, occasional lever.

A tool's result is stored in the run record as soon as it completes, so a resumed run never runs a
completed tool again; but a tool killed while it ran (the process died mid-call) runs again on
resume. A tool with side effects makes that harmless by keying them on ``tool_use_id()``: the id
of the tool_use block it answers, the same on both runs (write to a file named by it, or check the
workspace first).

What a tool returns reaches the model as it is, unless the tool is marked ``reads_outside``: then
its result taints the run and loses the characters no one sees (``core.visible``). An unmarked
tool is trusted as the operator's own code.
"""

from __future__ import annotations

import inspect
import threading
from contextvars import ContextVar
from typing import Any, Callable, Iterable

from anthropic import beta_tool
from anthropic.lib.tools import BetaFunctionTool
from pydantic import BaseModel, ValidationError, validate_call

from .messages import tool_result_block
from .protocols import Tool, Tools


_ANSWERING: ContextVar[str | None] = ContextVar("tool_use_id", default=None)


def tool_use_id() -> str | None:
    """The id of the tool_use block the running tool answers (None outside a tool): the same when a
    tool killed mid-run runs again on resume, so a side effect keyed on it happens once."""
    return _ANSWERING.get()


class ToolOutput(BaseModel):
    content: str
    is_error: bool = False


WHAT_A_TOOL_IS = ("a tool is a plain function (typed parameters, a docstring: what anthropic.beta_tool takes), a "
                  "function decorated with anthropic.beta_tool, a FunctionTool(name, description, InputModel, fn), or "
                  "an object with name, description, definition() and run(input) (the Tool protocol)")


class FunctionTool:
    """A tool from a function taking one pydantic model, the model its input schema (or taking the
    input as sent, with a JSON schema instead of a model). From a plain function: ``FunctionTool.of``.
    A ``final`` tool ends the run when it succeeds; its output is the run's result (a structured
    report, say). A tool that ``reads_outside`` (a fetch, a browser, a web search) taints the run
    with its first result (``core.taint``), and its results lose the characters no one sees
    (``core.visible``: tag characters, zero-width and bidi controls) before the model reads them.
    A tool not marked is the operator's own code: its output reaches the model as it is, hidden
    characters and all (mark a tool that passes on what it read). Input the function cannot take (a ``ValidationError``)
    is an error result."""

    def __init__(self, name: str, description: str, input_model: type[BaseModel] | dict[str, Any],
                 fn: Callable[[Any], str], final: bool = False, reads_outside: bool = False):
        self.name, self.description, self.final, self.reads_outside = name, description, final, reads_outside
        if isinstance(input_model, dict):
            self.input_schema, self.call = input_model, fn
        else:
            self.input_schema = input_model.model_json_schema()
            self.call = lambda raw_input: fn(input_model.model_validate(raw_input))

    @classmethod
    def of(cls, fn: Callable[..., str] | BetaFunctionTool, final: bool = False,
           reads_outside: bool = False) -> "FunctionTool":
        """A tool from a plain function, as the SDK's ``beta_tool`` makes one: its signature is the
        input schema (through pydantic), its docstring the description."""
        made = fn if isinstance(fn, BetaFunctionTool) else beta_tool(fn)
        checked = validate_call(made.func)
        return cls(made.name, made.description, made.input_schema, lambda raw_input: checked(**raw_input), final,
                   reads_outside)

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def run(self, raw_input: dict[str, Any]) -> ToolOutput:
        try:
            content = self.call(raw_input)
        except ValidationError as e:
            problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'input'}: {err['msg']}" for err in e.errors())
            return ToolOutput(content=f"Invalid input for {self.name}: {problems}", is_error=True)
        except Exception as e:  # a failing tool is an observation, not a crash
            return ToolOutput(content=f"{self.name} failed: {type(e).__name__}: {e}", is_error=True)
        if not isinstance(content, str):
            return ToolOutput(content=f"{self.name} returned {type(content).__name__}, not text", is_error=True)
        return ToolOutput(content=content)


class ToolBox:
    """The run's tools. ``definitions`` never change; ``mask`` decides what may run now."""

    def __init__(self, tools: Iterable[Tool | Callable[..., str]]):
        self.tools = {t.name: t for t in map(as_tool, tools)}
        self.definitions = [t.definition() for t in self.tools.values()]  # computed once: stable bytes
        self.masked: set[str] = set()
        self._lock = threading.Lock()

    def mask(self, *names: str) -> None:
        with self._lock:
            self.masked |= set(names)

    def unmask(self, *names: str) -> None:
        with self._lock:
            self.masked -= set(names)

    def is_final(self, tool_use: dict, result: dict) -> bool:
        """A final tool ends the run only when it succeeded: a rejected report is a turn like any other."""
        return bool(getattr(self.tools.get(tool_use.get("name")), "final", False)) and not result.get("is_error")

    def call(self, tool_use: dict) -> dict:
        """Run one tool_use block; always returns a tool_result block."""
        name, tool_id = tool_use.get("name"), tool_use["id"]
        tool = self.tools.get(name)
        if tool is None:
            return tool_result_block(tool_id, f"Unknown tool {name!r}. Available: {', '.join(self.tools)}.", True)
        if name in self.masked:
            return tool_result_block(tool_id, f"Tool {name!r} is not available at this point of the task.", True)
        answering = _ANSWERING.set(tool_id)
        try:
            output = tool.run(tool_use.get("input") or {})
        except Exception as e:  # the protocol says return errors; a tool that raises anyway must not end the run
            return tool_result_block(tool_id, f"{name} failed: {type(e).__name__}: {e}", True)
        finally:
            _ANSWERING.reset(answering)
        content = getattr(output, "content", output)
        if not _sendable(content):  # an int or bytes would be a 400 (or a TypeError) on every later call
            return tool_result_block(tool_id, f"{name} returned {type(content).__name__} content, not text", True)
        return tool_result_block(tool_id, content, bool(getattr(output, "is_error", False)))


def as_tool(thing: Any) -> Tool:
    """``thing`` as a tool: a Tool as it is, a plain function (or the SDK's tool of one) through
    ``FunctionTool.of``, anything else a TypeError saying what a tool is."""
    if isinstance(thing, Tool):
        return thing
    if isinstance(thing, BetaFunctionTool) or inspect.isfunction(thing) or inspect.ismethod(thing):
        return FunctionTool.of(thing)
    raise TypeError(f"{thing!r} is not a tool: {WHAT_A_TOOL_IS}")


def _sendable(content: Any) -> bool:
    """What a tool_result may carry: text, or a list of content blocks (text, images ...)."""
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content)


class ToolOffer:
    """Which tools the model is told it may call: the one place tool availability lives.

    ``definitions`` is what every request sends: the toolbox's, with a tool masked before the first
    call sent deferred (it starts withdrawn). ``changes()`` gives the blocks that bring the model's
    offer to the unmasked tools; once the call carrying them is answered, ``announced`` makes them
    the offer. Where the model takes no tool changes (``announces`` False), masking is the
    toolbox's refusal alone and the offer never changes."""

    def __init__(self, toolbox: "Tools", announces: bool, history: list[dict]):
        self.toolbox, self.announces = toolbox, announces
        deferred = set(toolbox.masked) if announces else set()
        self.definitions = [{**d, "defer_loading": True} if d["name"] in deferred else d for d in toolbox.definitions]
        self.offered = {d["name"] for d in self.definitions} - deferred
        for message in history:  # a resumed history: every change it announced
            if message.get("role") == "system" and isinstance(message.get("content"), list):
                self.announced(message["content"])

    def changes(self) -> list[dict]:
        if not self.announces:
            return []
        offer = {d["name"] for d in self.definitions} - set(self.toolbox.masked)
        return ([_change("tool_removal", n) for n in sorted(self.offered - offer)]
                + [_change("tool_addition", n) for n in sorted(offer - self.offered)])

    def announced(self, blocks: list[dict]) -> None:
        for block in blocks:
            name = (block.get("tool") or {}).get("name")
            if block.get("type") == "tool_addition":
                self.offered.add(name)
            elif block.get("type") == "tool_removal":
                self.offered.discard(name)


def _change(kind: str, name: str) -> dict:
    return {"type": kind, "tool": {"type": "tool_reference", "name": name}}
