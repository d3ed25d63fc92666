"""The agent loop: durable history, a turn-scoped batch of notes per call, hooks around every step.

    messages    the durable history, append-only; only a completed turn is ever appended
    turn_queue  the notes for the next call (its batch), written by hooks: turn-scoped, the model
                reads each on its own call only (on the current models it stays in the record)

A run starts (``_begin``: what it sends besides its history, in the store), makes steps until it
ends, and ends in one place (``_end``: the END hooks see its ``RunResult``, then the store). A step
is named parts, in order: ``_prepare`` (steers, the PRE_LLM_CALL hooks, the batch), ``_assemble``
(``messages + batch``, laid out by ``layout``: by default the one the model's facts call for, see
``context.layout_for``), ``_send``, ``_record`` (what it cost), ``_take`` (the reply and its tools'
results into the history, with the entries the call carried after it) and ``_outcome``.

Where the batch ends up depends on the layout. On ``tail_layout`` it lives in the call's copy of
the request only: never in ``messages``, never in the store. On ``turn_scoped_layout`` the provider
keeps it on the wire, so it joins ``messages`` with its turn and is written to the store like any
other turn (cleared, it costs no tokens, but its text is on disk). Its untrusted part
(``inject_untrusted``: text from outside, or from an agent that read it) never rides in a system
message: it is text of the user turn, kept, and read on every later call. ``threaded_layout`` is the
same request on a message thread: the call sends only what the server does not hold, and ``thread``
(``core/thread.py``) says which response it continues and replays the whole history once when the
thread is lost; the history and the store are the same either way. A production fork should inject
only what it would be content to keep in its run record: no secrets, nothing a user must not see.
A call that does not finish (cut at ``max_tokens``, refused, failed) leaves its notes unsent: they
go back on the queue for the next call. What a hook keeps in ``state`` is written with the turn
that delivers its step's notes, so after a crash a hook that gives a note once gives it again,
exactly once. A note injected from outside a hook lives in memory until then (a steer is durable).

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
from dataclasses import replace
from typing import Any, Callable, Iterable, Literal

import anthropic
from pydantic import BaseModel

from ..provider.cost import CallRecord
from ..provider.models import model_spec
from .config import AgentConfig
from .context import CallParts, CallPlan, TurnScopedQueue, Injection, first_edit, layout_for, without_thinking
from .hooks import CallEvent, EndEvent, ErrorEvent, HookEvent, HookRegistry, Point, ToolCallEvent, ToolResultEvent
from .messages import assistant_message, dumps, printable, text_block, text_of, tool_uses, user
from .protocols import Layout, Store, Tool, Tools
from .steering import SteerTooLarge
from .store import EventLog, MemoryStore, RunState, load
from .thread import Thread
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
        turn_queue: TurnScopedQueue | None = None,
        offloader: Callable[[dict, dict], dict] | None = None,  # (tool_use, result) -> the result the history keeps
        **settings: Any,  # the rest of AgentConfig, and its request options (thinking=..., betas=...)
    ):
        # the model, and what every request sends besides the history
        self.client = client
        self.config = AgentConfig.of(model=model, system=system, max_steps=max_steps, **settings)
        self.spec = model_spec(model)
        self.system = [text_block(system)] if isinstance(system, str) and system else list(system or [])
        chosen, why = layout_for(self.spec)
        self.layout, self.layout_reason = (layout, "chosen by the caller") if layout is not None else (chosen, why)
        # the record: the history, the calls, what hooks keep; read back from the store
        self.store: Store = store if store is not None else MemoryStore()
        saved = load(self.store.events(), getattr(self.store, "where", EventLog.where))  # where: a file, in errors
        self.messages: list[dict] = saved.messages
        self.calls: list[CallRecord] = saved.calls
        # Paid for before a crash, never in the history (the turn was not written): the run's bill is
        # ``calls`` and these; ``calls`` alone is what the history holds (and what ``max_steps`` counts).
        self.lost_calls: list[CallRecord] = saved.lost_calls
        self.state = RunState(saved.state)
        self._start, self._run_start = saved.start, saved.run_start  # what the run sends; where its steps count from
        self._unfinished = saved.unfinished_task  # a killed run's task: run(task) again resumes it
        self.thread = Thread(resumed=bool(saved.threads))  # on threaded_layout: the response the next call continues
        if not getattr(client, "_supports_message_threads", False):  # the SDK's own flag: not Bedrock, Vertex [PY]
            self.thread.off = f"{type(client).__name__} does not take message threads"
        # the tools: a fixed list, what the model is told it may call, what the history keeps of an output
        self.toolbox: Tools = toolbox if toolbox is not None else ToolBox(tools)
        self.offer = ToolOffer(self.toolbox, self.spec.tool_changes, self.messages)
        self.tool_definitions = self.offer.definitions
        self.offloader = offloader
        # the hooks, and the notes they queue for the next call
        self.hooks = hooks or HookRegistry()
        self.turn_queue = turn_queue if turn_queue is not None else TurnScopedQueue()
        self._unsent: list[Injection] = []  # the notes of a call whose turn has not landed
        # the last call, as sent (for hooks, views and the append-only check)
        self.last_request: dict | None = None
        self.last_batch: list[Injection] = []
        self._previous_len: int | None = None  # the history's length at the last call
        self.edits: list[str] = []  # what check_append_only found
        # steering, from another thread
        self._lock = threading.Lock()
        self.active = False
        self._steering: list[str] = saved.pending_steers  # accepted before a crash: applied on resume

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

    def inject_turn_scoped(self, source: str, text: str) -> None:
        """Add a note to the next call's batch. The model reads it on that call only; on the current
        models it is then kept, cleared, in the history and the record (see the module docstring)."""
        self.turn_queue.inject(source, text)

    def inject_untrusted(self, source: str, text: str) -> None:
        """Add to the next call's batch a note that came from outside (a page, a file, a tool's
        output) or from an agent that read it. The layout never puts it in a system message: on the
        current models it is text of the new user turn, after the tool results, and stays in the
        history, read on every later call (``context.outside_notes``)."""
        self.turn_queue.inject(source, text, untrusted=True)

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
        if task is not None and self._unfinished is not None:  # the record ends in a run that was killed
            if user(task) != self._unfinished:  # refused at the door: the killed run stays unfinished
                return self._end(RunResult(status="error", error=(
                    f"the run record ends in an unfinished run of another task ({text_of(self._unfinished)[:60]!r}): "
                    "run() resumes it; a new task can follow once it has ended")), recorded=False)
            log.info("the run record ends in an unfinished run of this task: resumed, not asked again")
            task = None
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
            self._unfinished = user(task)
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
        """One call: its batch, its request, the answer, what the answer adds; None: the run goes on."""
        batch = self._prepare()
        plan = self._assemble(batch)
        try:
            response = self._send(plan)
        except Exception as e:  # the SDK has retried what is retryable (429, 529, 5xx), or the client refused
            if not self.thread.failed(e, plan):
                return self._failed(e)
            plan = self._assemble(batch)  # the thread is lost: the whole history once more, as a new create
            try:
                response = self._send(plan)
            except Exception as e:
                return self._failed(e)
        record = self._record(plan, response, batch)
        return self._take(plan, response, record)

    def _prepare(self) -> list[Injection]:
        """Steers into the history, the PRE_LLM_CALL hooks, then the batch: the notes of a call that
        did not finish first, unless a hook has just written a note of the same source."""
        self._apply_steering()
        self._hook(HookEvent(Point.PRE_LLM_CALL, self))
        self.turn_queue.requeue(self._unsent)
        self._unsent = self.turn_queue.drain()  # unsent until the turn of this call lands
        return self._unsent

    def _assemble(self, batch: list[Injection]) -> CallPlan:
        """The call laid out (``messages + batch``), with the request options; on a thread, a continue
        unless what the thread holds fixed has changed."""
        parts = CallParts(system=self.system, tools=self.tool_definitions, durable=self.messages, batch=batch,
                          prefill_ok=self.spec.supports_prefill, previous_durable_len=self._previous_len,
                          tool_choice=self.config.tool_choice, tool_changes=self.offer.changes(),
                          boundary=self.spec.system_boundary, thread=self.thread.position(self.messages))
        plan = self._laid_out(parts)
        if not self.thread.fits(plan):  # a continue cannot change it: a new create
            plan = self._laid_out(replace(parts, thread=None))
        if self.config.check_append_only and self.last_request is not None:
            edit = first_edit(self.last_request, plan.sent())
            if edit:
                log.warning("request %d is not append-only: %s", len(self.calls) + 1, edit)
                self.edits.append(edit)
        return plan

    def _laid_out(self, parts: CallParts) -> CallPlan:
        """The layout's plan with the request options; a layout's own keyword wins."""
        plan = CallPlan.of(self.layout(parts))
        for key, value in self.config.request.model_dump(exclude_none=True, exclude={"betas"}).items():
            plan.request.setdefault(key, value)
        plan.betas = [*plan.betas, *(b for b in self.config.request.betas if b not in plan.betas)]
        return plan

    def _send(self, plan: CallPlan) -> Any:
        """The SDK's Message for ``plan``: a beta call when it has betas, streamed when ``max_tokens``
        is more than the SDK allows a plain call."""
        api = self.client.beta.messages if plan.betas else self.client.messages
        keywords = dict(model=self.model, max_tokens=self.config.max_tokens, **plan.wire())
        if self.config.max_tokens <= STREAM_ABOVE:
            return api.create(**keywords)
        with api.stream(**keywords) as stream:
            return stream.get_final_message()

    def _failed(self, error: Exception) -> RunResult:
        """The run stops cleanly, every completed turn in the history, and can be resumed."""
        self._hook(ErrorEvent(Point.ERROR, self, error))
        return RunResult(status="error", error=_describe(error))

    def _record(self, plan: CallPlan, response: Any, batch: list[Injection]) -> CallRecord:
        """What the call cost, billed in the store before anything else; then the POST_LLM_CALL hooks."""
        self._previous_len = len(self.messages)
        record = CallRecord.from_usage(response.usage, self.model)
        self.store.write({"type": "billed", "call": record.model_dump()}, sync=False)  # not synced: the turn will be
        self.calls.append(record)  # in memory now, for hooks; in the store with its turn
        self.last_request, self.last_batch = plan.sent(), batch
        self._hook(CallEvent(Point.POST_LLM_CALL, self, self.last_request, response, batch))
        return record

    def _take(self, plan: CallPlan, response: Any, record: CallRecord) -> RunResult | None:
        """The reply and its tools' results into the history, with the entries the call carried after
        the history (its batch, its tool changes, its untrusted notes: on the wire for good once an
        answer follows them)."""
        reply = assistant_message(response.content)
        unfinished = _unfinished(response.stop_reason, self.config.max_tokens, text_of(reply))
        if unfinished or not reply["content"]:  # nothing to build on: the history unchanged, the notes unsent
            self._append("turn", [], record, self.thread.record(plan, response, None))
            return unfinished or RunResult(status="done")
        held = len(self.messages) + len(plan.entries) + 1  # on a thread, the server holds up to the reply
        thread = self.thread.record(plan, response, held)
        calls = tool_uses(reply)
        results = [self._run_tool(call) for call in calls]
        self._append("turn", [*plan.entries, reply, *([{"role": "user", "content": results}] if calls else [])], record,
                     thread)
        for entry in plan.entries:
            self.offer.announced(entry["content"])
        return self._outcome(reply, calls, results)

    def _outcome(self, reply: dict, calls: list[dict], results: list[dict]) -> RunResult | None:
        """Done on a reply without tool calls, or on a final tool's success (its output is the result)."""
        if not calls:
            return RunResult(status="done", final_text=text_of(reply))
        final = next((r for c, r in zip(calls, results) if self.toolbox.is_final(c, r)), None)
        return RunResult(status="done", final_text=final["content"]) if final else None

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
        event.queue = self.turn_queue  # a failing hook's notes are cut back from it
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
        self.thread.lost("the history was rewritten: a new thread", replay=False)

    def _append(self, kind: str, turn: list[dict], call: CallRecord | None = None, thread: dict | None = None) -> None:
        """Append one completed turn (and the call that made it, and how it went on a thread) to the
        history, and to the store first (``kind``: a new ``task``, a ``turn`` the model made, a
        ``steered`` user message)."""
        landed = kind == "turn" and bool(turn)  # the model's turn: its call's notes are delivered
        self._write({"type": kind, "messages": turn, **({"call": call.model_dump()} if call else {}),
                     **({"thread": thread} if thread else {})}, landed)
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

    def _end(self, result: RunResult, recorded: bool = True) -> RunResult:
        """Every run ends here, whatever its status: END hooks see the result, then the record
        (unless the run was refused before it began: the record's last run has not ended)."""
        self._hook(EndEvent(Point.END, self, result))
        if not recorded:
            return result
        try:
            self._write({"type": "status", "status": result.status})
        except OSError as e:
            return self._unwritable(e)
        self._unfinished = None
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
