"""The agent loop: durable history, an ephemeral batch per call, hooks around every step.

    messages   the durable history, append-only; only a completed turn is ever appended
    ephemeral  the batch for the next call; drained by the call, whatever happens to it

A step makes one model call with ``messages + batch`` (laid out by ``layout``), runs the tools the
model asked for, and appends the assistant turn and its tool results to the history together. A
run ends on a final answer, at the step limit, or on an API error that the SDK's own retries did
not get past; in every case the history holds exactly the completed turns, and the store holds the
same, so a run killed between two steps resumes where it was. A step killed while its tools ran is
repeated on resume, tools included: tools with side effects should be idempotent (or check the
workspace first).

The loop records (the last request, one ``CallRecord`` per call); showing a call is done outside it
(``minimal_runtime.view``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Iterable, Literal

import anthropic
from pydantic import BaseModel, ConfigDict, Field

from ..provider.cost import CallRecord
from ..provider.models import model_spec
from .context import CallParts, EphemeralQueue, tail_layout
from .hooks import HookEvent, HookRegistry, Point
from .messages import assistant_message, text_block, text_of, tool_uses, user
from .protocols import Layout, Store, Tool, Tools
from .store import MemoryStore
from .tools import ToolBox

log = logging.getLogger(__name__)


class AgentConfig(BaseModel):
    """An agent's settings: plain values, validated. Collaborators (client, tools, hooks, store,
    layout) are arguments of ``Agent`` instead."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="the model id sent with every request; its facts come from the model table")
    system: str | list[dict] = Field(default="", description="the system prompt: built once, resent byte-identical")
    max_steps: int = Field(default=50, description="model calls allowed for one user message (one run)")
    max_tokens: int = Field(default=4096, description="the per-call output cap sent to the API")
    tool_choice: dict | None = Field(default=None, description="sent as is; changing it mid-run invalidates the "
                                                                "messages cache, so it is a setting, not a lever")
    name: str = Field(default="agent", description="the agent's role name, for logs and for hooks that "
                                                   "tell agents apart")


class RunResult(BaseModel):
    status: Literal["done", "max_steps", "error"]
    final_text: str = ""
    steps: int = 0
    error: str | None = None


class Agent:
    def __init__(
        self,
        client: anthropic.Anthropic,
        *,
        tools: Iterable[Tool] = (),
        toolbox: Tools | None = None,
        hooks: HookRegistry | None = None,
        store: Store | None = None,
        layout: Layout = tail_layout,
        ephemeral: EphemeralQueue | None = None,
        offloader: Callable[[dict, dict], dict] | None = None,  # (tool_use, result) -> the result the history keeps
        **settings: Any,
    ):
        self.client = client
        self.config = AgentConfig(**settings)
        system = self.config.system
        self.system = [text_block(system)] if isinstance(system, str) and system else list(system or [])
        self.toolbox: Tools = toolbox if toolbox is not None else ToolBox(tools)
        self.hooks = hooks or HookRegistry()
        self.store: Store = store if store is not None else MemoryStore()
        self.layout, self.offloader = layout, offloader
        self.spec = model_spec(self.config.model)

        self.ephemeral = ephemeral if ephemeral is not None else EphemeralQueue()
        self.last_request: dict | None = None
        self.active = False
        self._steering: list[str] = []
        self._lock = threading.Lock()
        self._previous_len: int | None = None
        saved = self.store.load()
        self.messages: list[dict] = saved.messages
        self.calls: list[CallRecord] = saved.calls

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def max_steps(self) -> int:
        return self.config.max_steps

    # -- the two ways in from outside -------------------------------------------------------------

    def inject_ephemeral(self, source: str, text: str) -> None:
        """Add to the next call's batch only. It never reaches ``messages`` or the store."""
        self.ephemeral.inject(source, text)

    def steer(self, text: str) -> bool:
        """Queue a user message for the durable history, applied before the next call.
        Returns False when no run is active (the caller answers 409)."""
        with self._lock:
            if not self.active:
                return False
            self._steering.append(text)
            return True

    # -- the loop ---------------------------------------------------------------------------------

    def run(self, task: str | None = None) -> RunResult:
        """Run until a final answer or ``max_steps``. With ``task``, it starts a new user message;
        without, it resumes the history as it stands (after a crash, say)."""
        with self._lock:
            self.active = True
        try:
            if task is not None:
                self._append([user(task)])
                self.hooks.run(Point.START, HookEvent(Point.START, self))
            else:
                self._apply_steering()
                if self.messages and self.messages[-1]["role"] == "assistant":  # finished already: nothing to resume
                    return RunResult(status="done", final_text=text_of(self.messages[-1]))
            for step in range(1, self.max_steps + 1):
                outcome = self._step()
                if isinstance(outcome, RunResult):
                    outcome.steps = step
                    return self._finish(outcome)
            return self._finish(RunResult(status="max_steps", steps=self.max_steps,
                                          final_text=text_of(self.messages[-1]) if self.messages else ""))
        finally:
            with self._lock:
                self.active = False

    def _step(self) -> RunResult | None:
        self._apply_steering()
        self.hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, self))
        batch = self.ephemeral.drain()  # cleared by this call whatever happens to it
        parts = CallParts(system=self.system, tools=self.toolbox.definitions, durable=self.messages, batch=batch,
                          prefill_ok=self.spec.supports_prefill, previous_durable_len=self._previous_len,
                          tool_choice=self.config.tool_choice)
        request = self.layout(parts)
        try:
            response = self.client.messages.create(model=self.model, max_tokens=self.config.max_tokens, **request)
        except anthropic.APIError as e:
            # The SDK has already retried what is retryable (429, 529, 5xx). Stop cleanly: the
            # history holds every completed turn and the run can be resumed.
            self.hooks.run(Point.ERROR, HookEvent(Point.ERROR, self, error=e))
            return RunResult(status="error", error=_describe(e))
        self._previous_len = len(self.messages)

        record = CallRecord.from_usage(response.usage, self.model)
        self.calls.append(record)
        self.store.append_call(record)
        self.last_request = request
        self.hooks.run(Point.POST_LLM_CALL, HookEvent(Point.POST_LLM_CALL, self, request=request, response=response))

        reply = assistant_message(response.content)
        calls = tool_uses(reply)
        if not calls:
            if reply["content"]:
                self._append([reply])
            return RunResult(status="done", final_text=text_of(reply) if reply["content"] else "")
        results = [self._run_tool(call) for call in calls]
        self._append([reply, {"role": "user", "content": results}])
        finals = [r for c, r in zip(calls, results) if self.toolbox.is_final(c, r)]
        if finals:  # a final tool (an executor's report) ends the run with its output as the result
            return RunResult(status="done", final_text=finals[0]["content"])
        return None

    def _run_tool(self, call: dict) -> dict:
        self.hooks.run(Point.PRE_TOOL_CALL, HookEvent(Point.PRE_TOOL_CALL, self, tool_call=call))
        result = self.toolbox.call(call)
        self.store.append_tool_output(call["id"], result["content"])  # the raw output, whatever the history keeps
        if self.offloader is not None:  # large outputs: a file, and head, tail and path in the history
            result = self.offloader(call, result)
        self.hooks.run(Point.POST_TOOL_CALL, HookEvent(Point.POST_TOOL_CALL, self, tool_call=call, tool_result=result))
        return result

    def _apply_steering(self) -> None:
        with self._lock:
            pending, self._steering = self._steering, []
        for text in pending:
            self._append([user(text)])

    def replace_history(self, messages: list[dict]) -> None:
        """Compaction: the one sanctioned way to rewrite the history (recorded in the store)."""
        self.store.append_compaction(messages)
        self.messages = list(messages)
        self._previous_len = None  # the old prefix is gone: nothing to mark

    def _append(self, turn: list[dict]) -> None:
        """Append one completed turn to the history, and to the store first."""
        self.store.append_turn(turn)
        self.messages.extend(turn)

    def _finish(self, result: RunResult) -> RunResult:
        if result.status == "done":
            self.hooks.run(Point.FINISHED, HookEvent(Point.FINISHED, self))
        self.store.set_status(result.status)
        return result


def _describe(error: anthropic.APIError) -> str:
    """``BadRequestError 400: prompt is too long: ...``: the API's own message when it sent one."""
    body = getattr(error, "body", None)
    message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    status = getattr(error, "status_code", None)
    return f"{type(error).__name__}{f' {status}' if status else ''}: {message or error}"
