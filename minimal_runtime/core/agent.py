"""The agent loop: durable history, an ephemeral batch per call, hooks around every step.

    messages   the durable history, append-only; only a completed turn is ever appended
    ephemeral  the batch for the next call; drained by the call, whatever happens to it

A step is five named parts: assemble the call (``messages + batch``, laid out by ``layout``: by
default the one the model's facts call for, see ``context.layout_for``), send it, record what it
cost, run the tools the model asked for, and decide whether the run goes on. The assistant turn
and its tool results are appended to the history together, with the system entries the call carried
after the history (on the current models: its tool changes and its turn-scoped batch).

Where the batch ends up depends on the layout. On ``tail_layout`` it lives in the call's copy of
the request only: never in ``messages``, never in the store. On ``turn_scoped_layout`` the provider
keeps it on the wire, so it joins ``messages`` with its turn and is written to the store like any
other turn (cleared, it costs no tokens, but its text is on disk). A production fork should inject
only what it would be content to keep in its run record: no secrets, nothing a user must not see.

A run ends on a final answer, at the step limit, on a reply the model could not finish (``truncated``:
it hit ``max_tokens``; ``refused``), or on an error the SDK's own retries did not get past. In every
case the history holds exactly the completed turns, and the store holds the same, so a run killed
between two steps resumes where it was. A step killed while its tools ran is repeated on resume,
tools included: tools with side effects should be idempotent (or check the workspace first).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from typing import Any, Callable, Iterable, Literal

import anthropic
from pydantic import BaseModel

from ..provider.cost import CallRecord
from ..provider.models import model_spec
from .config import AgentConfig
from .context import CallParts, CallPlan, EphemeralQueue, Injection, first_edit, layout_for, without_thinking
from .hooks import CallEvent, EndEvent, ErrorEvent, HookEvent, HookRegistry, Point, ToolCallEvent, ToolResultEvent
from .messages import assistant_message, dumps, printable, text_block, text_of, tool_uses, user
from .protocols import Layout, Store, Tool, Tools
from .steering import SteerTooLarge
from .store import EventLog, MemoryStore, RunState, load
from .tools import ToolBox, ToolOffer

log = logging.getLogger(__name__)

# The SDK refuses a non-streaming call that could take over ten minutes at its assumed 128,000
# output tokens an hour: ``max_tokens`` above about 21,333. Such a call streams (the SDK's own helper).
STREAM_ABOVE = 21_333


class RunResult(BaseModel):
    status: Literal["done", "max_steps", "truncated", "refused", "error"]
    final_text: str = ""
    steps: int = 0
    error: str | None = None  # what stopped the run, and what to do next


class Agent:
    def __init__(
        self,
        client: anthropic.Anthropic,
        *,
        model: str,
        system: str | list[dict] = "",
        max_steps: int = 50,
        tools: Iterable[Tool] = (),
        toolbox: Tools | None = None,
        hooks: HookRegistry | None = None,
        store: Store | None = None,
        layout: Layout | None = None,
        ephemeral: EphemeralQueue | None = None,
        offloader: Callable[[dict, dict], dict] | None = None,  # (tool_use, result) -> the result the history keeps
        **settings: Any,  # the rest of AgentConfig, and its request options (thinking=..., betas=...)
    ):
        self.client = client
        self.config = AgentConfig.of(model=model, system=system, max_steps=max_steps, **settings)
        self.system = [text_block(system)] if isinstance(system, str) and system else list(system or [])
        self.toolbox: Tools = toolbox if toolbox is not None else ToolBox(tools)
        self.hooks = hooks or HookRegistry()
        self.store: Store = store if store is not None else MemoryStore()
        self.offloader = offloader
        self.spec = model_spec(model)
        chosen, why = layout_for(self.spec)
        self.layout, self.layout_reason = (layout, "chosen by the caller") if layout is not None else (chosen, why)

        self.ephemeral = ephemeral if ephemeral is not None else EphemeralQueue()
        self._unsent: list[Injection] = []  # the notes of a call whose turn has not landed
        self.last_request: dict | None = None
        self.active = False
        self._lock = threading.Lock()
        self._previous_len: int | None = None
        saved = load(self.store.events(), getattr(self.store, "where", EventLog.where))  # where: a file, in errors
        self._steering: list[str] = saved.pending_steers  # accepted before a crash: applied on resume
        self.messages: list[dict] = saved.messages
        self.calls: list[CallRecord] = saved.calls
        self.state = RunState(saved.state)  # what hooks keep across crashes
        self._start = saved.start  # what the record's run sends besides its history
        self.edits: list[str] = []  # what check_append_only found
        self._run_start = saved.run_start
        self.last_batch: list = []  # the injections the last call carried
        self.offer = ToolOffer(self.toolbox, self.spec.tool_changes, self.messages)  # what the model may call
        self.tool_definitions = self.offer.definitions

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def max_steps(self) -> int:
        return self.config.max_steps

    @property
    def steps(self) -> int:
        """Calls made in the current run (since its task), across resumes: what ``max_steps`` caps."""
        return len(self.calls) - self._run_start

    @property
    def name(self) -> str:
        return self.config.name

    # -- the two ways in from outside -------------------------------------------------------------

    def inject_ephemeral(self, source: str, text: str) -> None:
        """Add to the next call's batch. Shown to the model on that call only; whether it is kept
        afterwards is the layout's (see the module docstring)."""
        self.ephemeral.inject(source, text)

    def steer(self, text: str) -> bool:
        """Queue a user message for the durable history, applied before the next call. Returns
        False when no run is active (the caller answers 409); raises ``SteerTooLarge`` for a message
        that could never be sent with the history (it is never stored: it would break every call)."""
        text = printable(text)
        window = self.spec.context_window
        if window is not None:
            # About four characters a token: generous for prose, and this only has to catch the absurd.
            needed = (self.calls[-1].prompt_tokens if self.calls else 0) + len(text) // 4
            if needed > window:
                raise SteerTooLarge(f"a steer of {len(text):,} characters would not fit the {window:,}-token window")
        with self._lock:
            if not self.active:
                return False
            self.store.write({"type": "steer", "text": text})  # durable first: an accepted steer survives a crash
            self._steering.append(text)
            return True

    def configure(self, **changes: Any) -> None:
        """Change settings and request options between runs (``max_tokens=``, ``thinking=`` ...),
        checked against the model's facts as at construction."""
        if changes.keys() & {"model", "system"}:
            raise ValueError("the model and the system prompt are the record's: make a new Agent on the same store "
                             "and run(new_segment=True)")
        with self._lock:
            if self.active:
                raise RuntimeError("a run is active: change the settings between runs")
            self.config = AgentConfig.of(**{**self.config.keywords(), **changes})

    # -- the loop ---------------------------------------------------------------------------------

    def run(self, task: str | None = None, *, new_segment: bool = False) -> RunResult:
        """Run until a final answer or ``max_steps``. With ``task``, it starts a new user message;
        without, it resumes the history as it stands (after a crash, say). A record started with
        another model, system prompt or tools is refused, unless ``new_segment``: this agent's go on
        from here, and the history's thinking (bound to the old ones) is dropped once."""
        with self._lock:
            self.active = True
        try:
            result = self._begin(new_segment) or self._run(task)
        except OSError as e:  # the run record could not be written: what is on disk is still whole
            result = self._unwritable(e)
        finally:
            with self._lock:
                self.active = False
            try:  # accepted but never applied (the cap, an error): kept for the next run
                self._apply_steering()
            except OSError:  # still accepted in the store: applied by the next run
                pass
        return self._end(result)

    def _begin(self, new_segment: bool) -> RunResult | None:
        """The start event: what this run sends besides its history, written when it is new."""
        start = {"model": self.model, "system": _digest(self.system), "tools": _digest(self.toolbox.definitions),
                 "options": {"max_tokens": self.config.max_tokens, **self.config.request.model_dump(exclude_none=True)}}
        if start == self._start:
            return None
        changed = [k for k in ("model", "system", "tools") if self._start and self._start.get(k) != start[k]]
        if changed and self.messages:
            what = " and ".join("system prompt" if k == "system" else k for k in changed)
            if not new_segment:
                return RunResult(status="error", error=(
                    f"the run record was started with another {what}: run(new_segment=True) goes on with this "
                    "agent's as a new segment (the history's thinking is dropped), or restore the old one"))
            self.replace_history([without_thinking(m) for m in self.messages])  # bound to the old prefix
        elif self._start:
            log.warning("the request options differ from the run record's; recorded as a new start")
        self.store.write({"type": "start", **start})
        self._start = start
        return None

    def _run(self, task: str | None) -> RunResult:
        if task is not None:
            self._append("task", [user(task)])
            self._run_start = len(self.calls)
            self._hook(HookEvent(Point.START, self))
        else:
            self._apply_steering()
            if self.messages and self.messages[-1]["role"] == "assistant":  # finished already: nothing to resume
                return RunResult(status="done", final_text=text_of(self.messages[-1]))
        while self.steps < self.max_steps:
            outcome = self._step()
            # A steer that arrived during the final step is answered, not dropped.
            if outcome is not None and not (outcome.status == "done" and self._steering):
                return outcome.model_copy(update={"steps": self.steps})
        # At the cap there is no final text: the last message is the tool results not yet answered.
        return RunResult(status="max_steps", steps=self.steps)

    def _step(self) -> RunResult | None:
        """One call: assemble it, send it, record it, then take the reply (run its tools, decide)."""
        self._apply_steering()
        self._hook(HookEvent(Point.PRE_LLM_CALL, self))
        # An unfinished call's notes go first, unless a hook has just written a note of the same source.
        self.ephemeral.requeue(self._unsent)
        batch = self._unsent = self.ephemeral.drain()  # unsent until the turn of this call lands
        plan = None
        try:
            plan = self._assemble(batch)
            response = self._send(plan)
        except BaseException as e:
            if plan is None or not isinstance(e, Exception):
                raise  # a failing layout is a bug to see; KeyboardInterrupt and the like are the process's
            # The SDK has retried what is retryable (429, 529, 5xx), or the client refused to send:
            # the run stops cleanly, with every completed turn in the history, and can be resumed.
            self._hook(ErrorEvent(Point.ERROR, self, e))
            return RunResult(status="error", error=_describe(e))
        record = self._record(plan, response, batch)
        return self._take(plan, response, record)

    def _take(self, plan: CallPlan, response: Any, record: CallRecord) -> RunResult | None:
        """What the reply adds to the history (its tools run first), and whether the run goes on (None)."""
        reply = assistant_message(response.content)
        unfinished = _unfinished(response.stop_reason, self.config.max_tokens, text_of(reply))
        if unfinished or not reply["content"]:
            # Nothing to build on: the call is recorded (it was paid for), the history unchanged, and
            # the call's own system entries go (nothing is bound to them).
            self._append("turn", [], record)
            return unfinished or RunResult(status="done")
        # The call's own system entries (its turn-scoped batch, its tool changes) are on the wire for
        # good once an answer follows them: they join the history with the turn.
        entries = plan.entries
        for entry in entries:
            self.offer.announced(entry["content"])
        calls = tool_uses(reply)
        if not calls:
            self._append("turn", [*entries, reply], record)
            return RunResult(status="done", final_text=text_of(reply))
        results = [self._run_tool(call) for call in calls]
        self._append("turn", [*entries, reply, {"role": "user", "content": results}], record)
        finals = [r for c, r in zip(calls, results) if self.toolbox.is_final(c, r)]
        if finals:  # a final tool (a structured report, say) ends the run with its output as the result
            return RunResult(status="done", final_text=finals[0]["content"])
        return None

    def _assemble(self, batch: list[Injection]) -> CallPlan:
        parts = CallParts(system=self.system, tools=self.tool_definitions, durable=self.messages, batch=batch,
                          prefill_ok=self.spec.supports_prefill, previous_durable_len=self._previous_len,
                          tool_choice=self.config.tool_choice, tool_changes=self.offer.changes())
        plan = CallPlan.of(self.layout(parts))
        for key, value in self.config.request.model_dump(exclude_none=True, exclude={"betas"}).items():
            plan.request.setdefault(key, value)  # a layout's own wins (one that asks to drop blocks, say)
        plan.betas = [*plan.betas, *(b for b in self.config.request.betas if b not in plan.betas)]
        if self.config.check_append_only and self.last_request is not None:
            edit = first_edit(self.last_request, plan.sent())
            if edit:
                log.warning("request %d is not append-only: %s", len(self.calls) + 1, edit)
                self.edits.append(edit)
        return plan

    def _send(self, plan: CallPlan) -> Any:
        """The SDK's Message for ``plan``: a beta call when it has betas, streamed when ``max_tokens``
        is more than the SDK allows a plain call."""
        api = self.client.beta.messages if plan.betas else self.client.messages
        keywords = dict(model=self.model, max_tokens=self.config.max_tokens, **plan.sent())
        if self.config.max_tokens <= STREAM_ABOVE:
            return api.create(**keywords)
        with api.stream(**keywords) as stream:
            return stream.get_final_message()

    def _record(self, plan: CallPlan, response: Any, batch: list[Injection]) -> CallRecord:
        self._previous_len = len(self.messages)
        record = CallRecord.from_usage(response.usage, self.model)
        # Paid for, whatever happens before its turn is written (not synced: the turn will be).
        self.store.write({"type": "billed", "call": record.model_dump()}, sync=False)
        self.calls.append(record)  # in memory now, for hooks; in the store with its turn
        self.last_request, self.last_batch = plan.sent(), batch
        self._hook(CallEvent(Point.POST_LLM_CALL, self, self.last_request, response, batch))
        return record

    def _run_tool(self, call: dict) -> dict:
        self._hook(ToolCallEvent(Point.PRE_TOOL_CALL, self, call))
        result = self.toolbox.call(call)
        # The raw output, whatever the history keeps.
        self.store.write({"type": "tool_output", "tool_use_id": call["id"], "raw": result["content"]})
        if self.offloader is not None:  # large outputs: a file, and head, tail and path in the history
            result = self.offloader(call, result)
        if isinstance(result.get("content"), str):  # undecodable bytes: the model reads U+FFFD, the store keeps them
            result = {**result, "content": _capped(printable(result["content"]), self.config.max_tool_output)}
        self._hook(ToolResultEvent(Point.POST_TOOL_CALL, self, call, result))
        return result

    def _hook(self, event: HookEvent) -> None:
        event.queue = self.ephemeral  # a failing hook's notes are cut back from it
        self.hooks.run(event.point, event)

    def _apply_steering(self) -> None:
        with self._lock:
            pending, self._steering = self._steering, []
        for k, text in enumerate(pending):
            try:
                self._append("steered", [user(text)])
            except OSError:  # not applied: still pending, here and in the store
                with self._lock:
                    self._steering = pending[k:] + self._steering
                raise

    def replace_history(self, messages: list[dict]) -> None:
        """Compaction: the one sanctioned way to rewrite the history (recorded in the store)."""
        self.store.write({"type": "compaction", "messages": messages})
        self.messages = list(messages)
        self._previous_len = None  # the old prefix is gone: nothing to mark

    def _append(self, kind: str, turn: list[dict], call: CallRecord | None = None) -> None:
        """Append one completed turn (and the call that made it) to the history, and to the store
        first (``kind``: a new ``task``, a ``turn`` the model made, a ``steered`` user message)."""
        landed = kind == "turn" and bool(turn)  # the model's turn: its call's notes are delivered
        self._write({"type": kind, "messages": turn, **({"call": call.model_dump()} if call else {})}, landed)
        self.messages.extend(turn)
        if landed:
            self._unsent = []

    def _write(self, event: dict, notes_landed: bool = False) -> None:
        """One event, with the state hooks set since the last one, unless some notes are still
        unsent: a value and the notes its step made land together (a note given once is not lost)."""
        state = self.state.unwritten if notes_landed or not self._unsent else {}
        self.store.write({**event, "state": state} if state else event)
        if state:
            self.state.unwritten = {}

    def _end(self, result: RunResult) -> RunResult:
        """Every run ends here, whatever its status: END hooks see the result, then the record."""
        self._hook(EndEvent(Point.END, self, result))
        try:
            self._write({"type": "status", "status": result.status})
        except OSError as e:
            return self._unwritable(e)
        return result

    def _unwritable(self, error: OSError) -> RunResult:
        return RunResult(status="error", steps=self.steps, error=f"the run record could not be written: {error}")


def _unfinished(stop_reason: str | None, max_tokens: int, text: str) -> RunResult | None:
    """A reply the model did not finish: never executed, never part of the history."""
    if stop_reason in ("max_tokens", "model_context_window_exceeded"):
        limit = f"max_tokens ({max_tokens:,})" if stop_reason == "max_tokens" else "the context window"
        return RunResult(status="truncated", final_text=text, error=(
            f"the reply was cut at {limit}; it was not kept and no tool it asked for ran. Raise max_tokens "
            "(agent.configure(max_tokens=...)) or shorten the history, and call run() to make the call again"))
    if stop_reason == "refusal":
        return RunResult(status="refused", final_text=text, error=(
            "the model declined to go on (stop_reason refusal); the reply was not kept. Change the task or the "
            "history before running again"))
    return None


def _capped(content: str, limit: int) -> str:
    """``content``, or its first ``limit`` characters and a note saying what was cut."""
    if len(content) <= limit:
        return content
    return (f"{content[:limit]}\n[output cut: {len(content):,} characters, the first {limit:,} shown. Ask for a "
            "smaller part (a range, a filter) to see the rest.]")


def _describe(error: Exception) -> str:
    """``BadRequestError 400: prompt is too long: ...``: the API's own message when it sent one."""
    body = getattr(error, "body", None)
    message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    status = getattr(error, "status_code", None)
    return f"{type(error).__name__}{f' {status}' if status else ''}: {message or error}"


def _digest(value: Any) -> str:
    """A short fingerprint of a request part: equal parts, equal digests."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()[:16]
