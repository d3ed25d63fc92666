"""The agent loop: durable history, a turn-scoped batch of notes per call, hooks around every step.

    messages    the durable history, append-only; only a completed turn is ever appended
    turn_queue  the notes for the next call (its batch), written by hooks: turn-scoped, the model
                reads each on its own call only (on the current models it stays in the record)
    progress    the step's one record of progress (``store.StoredStep``): what a resume starts from

A run starts (``_begin``: what it sends besides its history, in the store), makes steps until it
ends, and ends in one place (``_end``: its result recorded, the END hooks see it, then its status).
A step (``_step``) is a durable transaction, each boundary in the store before the next begins:

    _prepare_batch        steers into the history, the PRE_LLM_CALL hooks, the notes the step carries
    _call_model           the request laid out (``_lay_out``: ``messages + batch`` by ``layout``, the
                          request options, the thread's continue or create, ``_check_append_only``),
                          recorded as sent, ``_send``, and on a lost thread the whole history once more
    _reply_of             the answer as the step uses it: its bill, is it kept, how it went on a thread
    _store_reply          the reply, its bill and its tool inputs, in the record before anything acts on it
    _count_call           the call's bill into ``calls`` (what hooks count), its request as ``last_request``
    _run_tool             each tool between its hooks, its result stored as it completes
    _land_turn            the turn (the entries the call carried, the reply, the results) into the history
    _outcome              done, or another step

A step's progress is one value, ``progress`` (``store.StoredStep``: the phase it reached, the notes
it carries, the hooks it ran, its reply and tool results): each boundary writes its change to it
with the boundary's event, and only then moves it on. A run killed anywhere resumes from the value
the record holds (``run()``, or ``run(task)`` with the killed run's task): a stored reply is never asked for
again (``_stored_reply``), a stored result never recomputed, a hook that ran never runs again. Only a
tool or a hook killed while it ran runs again: a tool reads its ``tool_use_id()`` and a hook its
``hook_run_id()``, each the same both times, so it can tell.
A call recorded as sent and never answered (in flight at the kill) is sent again and listed in
``unanswered_calls``: possibly billed. ``bill()`` is what the record cost: ``calls``, ``lost_calls``, and
an estimate for each entry of ``unanswered_calls``.

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
A call that does not finish (cut at ``max_tokens``, refused, failed) leaves its notes undelivered:
the step carries them to the next call. A hook's notes join the step with its mark, the state it
set in the same event, and the batch is in the record from the call's sent event on, so after a
kill a note given once is given exactly once. A note injected from outside a hook lives in memory
(``turn_queue``) until its call is recorded as sent (a steer is durable at once).

A run ends on a final answer, at the step limit, before a call that could pass ``max_cost_usd``
(``max_cost``) or once ``max_seconds`` have passed since its task (``max_time``), on a reply the model
could not finish (``truncated``: it hit ``max_tokens``; ``refused``), or on an error the SDK's own
retries did not get past. In every case the history holds exactly the completed turns, and the store
holds the same; ``run()`` goes on from there (after a limit, raise it with ``configure`` first).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Literal

import anthropic
from anthropic.types import Message
from anthropic.types.beta import BetaMessage
from pydantic import BaseModel

from ..provider.cost import Bill, CallRecord, uncached
from ..provider.models import model_spec
from . import taint, visible
from .config import AgentConfig
from .context import CallParts, CallPlan, TurnScopedQueue, Injection, first_edit, layout_for, without_thinking
from .hooks import CallEvent, EndEvent, ErrorEvent, HookEvent, HookRegistry, Point, ToolCallEvent, ToolResultEvent
from .messages import assistant_message, blocks_of, dumps, printable, text_block, text_of, tool_uses, user
from .protocols import Layout, Store, Tool, Tools
from .store import RECORD_FORMAT, UNFINISHED, CurrentRun, StoreBase, MemoryStore, RunState, StoredStep, StoreFailure, load
from .thread import Thread
from .tools import ToolBox, ToolOffer

log = logging.getLogger(__name__)

# The SDK refuses a non-streaming call that could take over ten minutes at its assumed 128,000
# output tokens an hour: ``max_tokens`` above about 21,333. Such a call streams (the SDK's own helper).
STREAM_ABOVE = 21_333


class SteerTooLarge(ValueError):
    """The steer would not fit: over a steering server's cap, or past the model's context window."""


class RunResult(BaseModel):
    status: Literal["done", "max_steps", "max_cost", "max_time", "truncated", "refused", "error"]
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
        clock: Callable[[], float] = time.time,  # wall-clock seconds, for max_seconds (a run may span processes)
        **settings: Any,  # the rest of AgentConfig, and its request options (thinking=..., betas=...)
    ):
        # the model, and what every request sends besides the history
        self.client = client
        self.config = AgentConfig.of(model=model, system=system, max_steps=max_steps, **settings)
        self.spec = model_spec(model)
        chosen, why = layout_for(self.spec)
        self.layout, self.layout_reason = (layout, "chosen by the caller") if layout is not None else (chosen, why)
        # Does the layout keep a call's batch in the history, and so in the record (the turn-scoped layouts),
        # or only in the call's copy (tail_layout)? Seen on the first call with notes; None until then.
        self._keeps_batch: bool | None = None
        # the record: the history, the calls, what hooks keep; read back from the store
        self.store: Store = store if store is not None else MemoryStore()
        saved = load(self.store.events(), getattr(self.store, "where", StoreBase.where))  # where: a file, in errors
        self.messages: list[dict] = saved.messages
        self.calls: list[CallRecord] = saved.calls
        # Paid for before a crash, never in the history (the turn was not written): the run's bill is
        # ``calls`` and these; ``calls`` alone is what the history holds (and what ``max_steps`` counts).
        self.lost_calls: list[CallRecord] = saved.lost_calls
        self.state = RunState(saved.state)
        self._start_event = saved.start  # what a run sends besides its history, as the record last says
        self._event_counts = saved.counts  # events of each type in the record: a hook's run id is counted from them
        # The record's last run: its task until it ends (run(task) resumes a killed one), where its step cap
        # and its time count from (a record of format 1 says no time: from now).
        self.clock, started = clock, saved.current.started_at
        self._current_run = saved.current.model_copy(update={"started_at": clock() if started is None else started})
        # Possibly billed: recorded as sent and never answered (a kill while the call was in flight).
        self.unanswered_calls: list[dict] = saved.unanswered_calls
        # The step's progress as the record holds it (its phase, the notes it carries, the hooks it
        # ran, its reply and results): each boundary moves it on once written; a resume goes on from it.
        self.progress: StoredStep = saved.step
        self._previous_len: int | None = saved.previous_len  # the history's length at the last call
        self.thread = Thread(resumed=bool(saved.threads))  # on threaded_layout: the response the next call continues
        if not getattr(client, "_supports_message_threads", False):  # the SDK's own flag: not Bedrock, Vertex [PY]
            self.thread.off = f"{type(client).__name__} does not take message threads"
        # the tools: a fixed list, what the model is told it may call, what the history keeps of an output
        self.toolbox: Tools = toolbox if toolbox is not None else ToolBox(tools)
        self.offer = ToolOffer(self.toolbox, self.spec.tool_changes, self.messages)
        self.offloader = offloader
        # the hooks, and the notes they queue for the next call
        self.hooks = hooks or HookRegistry()
        self.turn_queue = turn_queue if turn_queue is not None else TurnScopedQueue()  # injected, in no step yet
        # the last call, as sent (for hooks, views and the append-only check)
        self.last_request: dict | None = None
        self.edits: list[str] = []  # what check_append_only found
        # steering, from another thread
        self._lock = threading.Lock()
        self.active = False
        self._pending_steers: list[str] = saved.pending_steers  # accepted, not yet in the history (a crash's too)

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def max_steps(self) -> int:
        return self.config.max_steps

    @property
    def steps(self) -> int:
        """Calls made in the current run (since its task), across resumes: what ``max_steps`` caps."""
        return len(self.calls) - self._current_run.first_call

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def system(self) -> list[dict]:
        """The system prompt as blocks, from ``config.system`` (the one place it lives)."""
        system = self.config.system
        return [text_block(system)] if isinstance(system, str) and system else list(system or [])

    @property
    def tool_definitions(self) -> list[dict]:
        """The tools every request sends (``ToolOffer.definitions``: the one place they live)."""
        return self.offer.definitions

    def bill(self) -> Bill:
        """What the run record cost so far: ``calls``, ``lost_calls``, and for each of
        ``unanswered_calls`` an estimate: the call that answered the same request when it was sent
        again (or, killed before that, the last call before it), its whole prompt priced as uncached
        input and its output as output. With no cache on the server that is the call's price; a
        cache the unanswered call wrote and its resend read makes it err high."""
        estimated = 0.0
        for unanswered in self.unanswered_calls if self.calls else []:  # no call to estimate from: nothing
            near = self.calls[min(unanswered.get("calls", len(self.calls)), len(self.calls) - 1)]
            estimated += uncached(unanswered.get("model") or self.model, near.prompt_tokens, near.output_tokens)
        return Bill(stored=sum(c.cost for c in self.calls), lost=sum(c.cost for c in self.lost_calls),
                    estimated=estimated, unanswered=len(self.unanswered_calls))

    # -- the two ways in from outside -------------------------------------------------------------

    def inject_turn_scoped(self, source: str, text: str) -> None:
        """Add a note to the next call's batch. The model reads it on that call only; on the current
        models it is then kept, cleared, in the history and the record (see the module docstring)."""
        self.turn_queue.inject(source, text)

    def inject_untrusted(self, source: str, text: str) -> None:
        """Add to the next call's batch a note that came from outside (a page, a file, a tool's
        output) or from an agent that read it. The layout never puts it in a system message: on the
        current models it is text of the new user turn, after the tool results, and stays in the
        history, read on every later call (``context.outside_notes``). It taints the run (``taint``),
        and loses the characters no one sees (``visible``: tag characters, zero-width and bidi
        controls), counted in ``state[visible.KEY]``."""
        taint.mark(self.state, f"note {source}")
        self.turn_queue.inject(source, self._visible(text, f"note {source}"), untrusted=True)

    def _visible(self, value: Any, what: str) -> Any:
        """``value`` (outside text) without the characters no one sees (``visible``); how many went,
        and from what, kept in the record with the step (``visible.KEY``)."""
        value, removed = visible.cleaned(value)
        if removed:
            counts = dict(self.state.get(visible.KEY) or {})
            counts[what] = counts.get(what, 0) + removed
            self.state.set(visible.KEY, counts)
            log.warning("%d invisible characters removed from %s before the model reads it", removed, what)
        return value

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
            self._pending_steers.append(text)
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
        if task is not None and self._current_run.task is not None:  # the record ends in a run that was killed
            if user(task) != self._current_run.task:  # refused at the door: the killed run stays unfinished
                return self._end(RunResult(status="error", error=(
                    f"the run record ends in an unfinished run of another task ({text_of(self._current_run.task)[:60]!r}): "
                    "run() resumes it; a new task can follow once it has ended")), recorded=False)
            log.info("the run record ends in an unfinished run of this task: resumed, not asked again")
            task = None
        if self.progress.phase == "ended":  # killed among the END hooks: the rest of them, and the status
            return self._end(RunResult(**self.progress.ended or {}), resumed=True)
        with self._lock:
            self.active = True
        try:
            result = self._begin(new_segment) or self._run(task)
        except OSError as e:  # the run record could not be written: what is on disk is still whole
            result = self._unwritable(e)
        finally:
            with self._lock:
                self.active = False
            # Accepted but never applied (the cap, an error): kept for the next run; one that cannot be
            # written now is still accepted in the store: applied by the next run.
            with suppress(OSError):
                self._apply_steering()
        return self._end(result)

    def _begin(self, new_segment: bool) -> RunResult | None:
        """The start event: what this run sends besides its history, written when it is new."""
        start = {"format": RECORD_FORMAT, "model": self.model, "system": _digest(self.system),
                 "tools": _digest(self.toolbox.definitions),
                 "options": {"max_tokens": self.config.max_tokens, **self.config.request.model_dump(exclude_none=True)}}
        if start == self._start_event:
            return None
        changed = [k for k in ("model", "system", "tools") if self._start_event and self._start_event.get(k) != start[k]]
        if changed and self.messages:
            what = " and ".join("system prompt" if k == "system" else k for k in changed)
            if not new_segment:
                return RunResult(status="error", error=(
                    f"the run record was started with another {what}: run(new_segment=True) goes on with this "
                    "agent's as a new segment (the history's thinking is dropped), or restore the old one"))
            self.replace_history([without_thinking(m) for m in self.messages])  # bound to the old prefix
        elif self._start_event and {**self._start_event, "format": RECORD_FORMAT} != start:
            log.warning("the request options differ from the run record's; recorded as a new start")
        self._write({"type": "start", **start})
        self._start_event = start
        return None

    def _run(self, task: str | None) -> RunResult:
        if task is not None:
            run = CurrentRun(task=user(task), first_call=len(self.calls), started_at=self.clock())
            self._append("task", [run.task], step={"phase": "started"}, at=run.started_at)
            self._current_run = run
            self._hook(HookEvent(Point.START, self))
        else:
            if self.progress.phase == "started":  # killed among the START hooks: the rest run now
                self._hook(HookEvent(Point.START, self))
            if not self.progress.in_flight:  # a killed step's call was sent: a steer goes after its turn, not before
                self._apply_steering()
            if self.messages and self.messages[-1]["role"] == "assistant":  # finished already: nothing to resume
                return RunResult(status="done", final_text=text_of(self.messages[-1]))
        while self.steps < self.max_steps:
            stopped = None if self.progress.in_flight else self._past_a_limit()  # a killed step's call was sent
            if stopped is not None:
                return stopped
            outcome = self._step()
            # A steer that arrived during the final step is answered, not dropped.
            if outcome is not None and not (outcome.status == "done" and self._pending_steers):
                return outcome.model_copy(update={"steps": self.steps})
        # At the cap there is no final text: the last message is the tool results not yet answered.
        return RunResult(status="max_steps", steps=self.steps)

    def _past_a_limit(self) -> RunResult | None:
        """Would the next call pass ``max_cost_usd``, or has the run reached ``max_seconds``? Asked
        before a step begins (no hook has run, nothing is queued or written), with the most the call
        could cost: the bill so far, its prompt priced as uncached input (about four characters a
        token: everything it sends but the notes), and ``max_tokens`` of output."""
        limit, config = self.config.max_cost_usd, self.config
        if limit is not None:
            prompt = len(dumps([self.system, self.tool_definitions, self.messages])) // 4
            spent, most = self.bill().total, uncached(self.model, prompt, config.max_tokens)
            if not spent + most <= limit:  # NaN (an unpriced model) stops too: its cost is unknown
                return RunResult(status="max_cost", steps=self.steps, error=(
                    f"the next call could cost up to ${most:.6f} (about {prompt:,} prompt tokens uncached, "
                    f"{config.max_tokens:,} output tokens): with ${spent:.6f} spent that passes max_cost_usd "
                    f"${limit:g}. Raise it (agent.configure(max_cost_usd=...)) and call run() to go on"))
        if config.max_seconds is not None:
            elapsed = self.clock() - self._current_run.started_at
            if elapsed >= config.max_seconds:
                return RunResult(status="max_time", steps=self.steps, error=(
                    f"{elapsed:,.0f} s since the run's task, max_seconds {config.max_seconds:g}: raise it "
                    "(agent.configure(max_seconds=...)) and call run() to go on"))
        return None

    def _step(self) -> RunResult | None:
        """One call, as a durable transaction: each boundary is in the record (and ``progress``
        moved on) before the next begins. Its jobs, one a name:

            _prepare_batch   steers into the history, the PRE_LLM_CALL hooks, the batch
            _call_model      the request laid out (``_lay_out``), recorded as sent (phase ``sent``), sent
                             (``_send``), its answer as the step uses it (``_reply_of``), and stored
                             before anything acts on it (``_store_reply``: phase ``replied``)
            _stored_reply    or, resumed after a kill, the reply the record holds (not asked for again)
            _visible         a server tool's result (outside text) without the characters no one sees
            _count_call      the call into ``calls``, its request as ``last_request``
            _hook            the POST_LLM_CALL hooks
            _land_turn       an unfinished or empty reply: the history unchanged, the run stopped
            taint.mark       a server tool's result taints the run (outside text)
            _run_tool        each tool between its hooks, its result stored as it completes (or as stored)
            _land_turn       the turn into the history (phase ``landed``)
            _outcome         done, or another step

        A step a kill cut short goes on from its last boundary: a stored reply is not asked for
        again, a stored result not recomputed, a hook that ran does not run again. Returns None
        when the run goes on."""
        if self.progress.phase == "replied":
            reply = self._stored_reply()
        else:
            reply = self._call_model(self._prepare_batch())
            if isinstance(reply, RunResult):
                return reply
        reply.content = [self._visible(b, f"server tool {b['type']}") if taint.outside([b]) else b
                         for b in reply.message["content"]]  # a server tool's result: outside text
        self._count_call(reply)
        self._hook(CallEvent(Point.POST_LLM_CALL, self, self.last_request, reply.response, reply.batch))
        if not reply.kept:  # nothing to build on: the history unchanged, the notes undelivered
            self._land_turn(reply, [])
            stopped = _unfinished_status(reply.response.stop_reason, self.config.max_tokens, text_of(reply.message))
            return stopped or RunResult(status="done")
        calls = tool_uses(reply.message)
        if brought := taint.outside(reply.message["content"]):  # a server tool's result: outside text
            taint.mark(self.state, f"server tool {brought}")
        results = [self._run_tool(call, self.progress.results.get(call["id"])) for call in calls]
        self._land_turn(reply, calls and [{"role": "user", "content": results}])
        return self._outcome(reply.message, calls, results)

    def _prepare_batch(self) -> list[Injection]:
        """Steers into the history, the PRE_LLM_CALL hooks not run yet, then the batch: the notes the
        step carries first, unless one of the same source has just been injected. A call sent before
        a kill is sent again with its batch as the record holds it; its steers go after its turn."""
        if self.progress.phase != "sent":
            self._apply_steering()
        elif self.progress.notes:
            return self.progress.notes
        self._hook(HookEvent(Point.PRE_LLM_CALL, self))
        self.turn_queue.requeue(self.progress.notes)
        return self.turn_queue.drain()

    def _call_model(self, batch: list[Injection]) -> "Reply | RunResult":
        """The call laid out, recorded as sent, sent, and its reply stored; on a lost thread, the
        whole history once more as a new create. A RunResult: the call failed past the SDK's retries."""
        for attempt in (1, 2):
            plan = self._lay_out(batch)
            if batch and self._keeps_batch is None:
                note = batch[0].block()["text"]
                self._keeps_batch = any(b.get("text") == note for e in plan.entries for b in blocks_of(e))
            self._write({"type": "sent"}, step={"phase": "sent", "notes": _dumped(batch),
                                                "sent": {"model": self.model, "calls": len(self.calls)}})
            try:
                response = self._send(plan)
            except Exception as e:  # the SDK has retried what is retryable (429, 529, 5xx), or the client refused
                self._write({"type": "failed", "error": _describe(e)}, step={"phase": "failed"})
                if attempt == 2 or not self.thread.failed(e, plan):  # the run stops cleanly, and can be resumed
                    self._hook(ErrorEvent(Point.ERROR, self, e))
                    return RunResult(status="error", error=_describe(e))
                continue
            reply = self._reply_of(plan, response, batch)
            self._previous_len = len(self.messages)  # where this call's history ends: the next call's second breakpoint
            return self._store_reply(reply)

    def _lay_out(self, batch: list[Injection]) -> CallPlan:
        """The call laid out (``messages + batch``), with the request options; on a thread, a continue
        unless what the thread holds fixed has changed. Checked for append-only against the last."""
        self.thread.expire_if_idle()
        parts = self._parts(batch, tool_changes=self.offer.changes(), thread=self.thread.continued_at(self.messages))
        plan = self._planned(parts)
        why = self.thread.why_not_continued(plan)
        if why is not None:  # a continue cannot change it: a new create, which replays the history
            log.warning("call %d cannot continue its thread (%s): the whole history goes as a new thread",
                        len(self.calls) + 1, why)
            self.thread.lost(why)
            plan = self._planned(replace(parts, thread=None))
        self._check_append_only(plan)
        return plan

    def _parts(self, batch: list[Injection], **more: Any) -> CallParts:
        """What the call is made of (the layout's input): the history, the batch, the system prompt and tools."""
        return CallParts(system=self.system, tools=self.offer.definitions, durable=self.messages, batch=batch,
                         prefill_ok=self.spec.supports_prefill, previous_durable_len=self._previous_len,
                         tool_choice=self.config.tool_choice, boundary=self.spec.system_boundary, **more)

    def _planned(self, parts: CallParts) -> CallPlan:
        """The layout's plan for ``parts`` with the request options (a layout's own keyword wins), and
        without its thread once the agent has stopped threading."""
        plan = CallPlan.of(self.layout(parts))
        for key, value in self.config.request.model_dump(exclude_none=True, exclude={"betas"}).items():
            plan.request.setdefault(key, value)
        plan.betas = [*plan.betas, *(b for b in self.config.request.betas if b not in plan.betas)]
        self.thread.unthread_if_off(plan)
        return plan

    def _check_append_only(self, plan: CallPlan) -> None:
        """Say where this request is not an append-only extension of the last one (``edits``)."""
        if self.config.check_append_only and self.last_request is not None:
            edit = first_edit(self.last_request, plan.sent())
            if edit:
                log.warning("request %d is not append-only: %s", len(self.calls) + 1, edit)
                self.edits.append(edit)

    def _send(self, plan: CallPlan) -> Any:
        """The SDK's Message for ``plan``: a beta call when it has betas, streamed when ``max_tokens``
        is more than the SDK allows a plain call."""
        api = self.client.beta.messages if plan.betas else self.client.messages
        keywords = dict(model=self.model, max_tokens=self.config.max_tokens, **plan.wire())
        if self.config.max_tokens <= STREAM_ABOVE:
            return api.create(**keywords)
        with api.stream(**keywords) as stream:
            return stream.get_final_message()

    def _reply_of(self, plan: CallPlan, response: Any, batch: list[Injection]) -> "Reply":
        """The answer as the step uses it: its bill, whether the history keeps it, and how the call
        went on a thread (which the thread records: the next call continues this response)."""
        reply = Reply(plan, response, CallRecord.from_usage(response.usage, self.model), batch, plan.entries)
        held = len(self.messages) + len(plan.entries) + 1 if reply.kept else None  # on a thread, the server holds it
        reply.thread = self.thread.record(plan, response, held)
        if reply.thread and reply.thread["type"] == "replay":
            log.info("call %d replayed the whole history on a new thread (%s)", len(self.calls) + 1,
                     reply.thread.get("why", "the thread was lost"))
        return reply

    def _store_reply(self, reply: "Reply") -> "Reply":
        """The reply in the record before anything acts on it: what it cost, the message with its
        tool inputs, the entries and the batch the call carried, how it went on a thread. Kept, it
        has delivered the batch."""
        stored = {"call": reply.record.model_dump(), "beta": bool(reply.plan.betas),
                  "response": reply.response.model_dump(mode="json", exclude_unset=True), "entries": reply.plan.entries,
                  **({"thread": reply.thread} if reply.thread else {}),
                  **({"batch": _dumped(reply.batch)} if self._keeps_batch else {})}
        self._write({"type": "reply"}, step={"phase": "replied", "reply": stored, **({"notes": []} if reply.kept else {})})
        return reply

    def _stored_reply(self) -> "Reply":
        """The reply a killed step stored, as it was: the request laid out again from the history and
        the batch it was sent with (a layout is a pure function of them), the response rebuilt."""
        stored = self.progress.reply or {}
        batch = [Injection(**i) for i in stored.get("batch", [])]
        plan = self._planned(self._parts(batch))
        message_type = BetaMessage if stored.get("beta") else Message
        return Reply(plan, message_type.model_validate(stored["response"]), CallRecord(**stored["call"]), batch,
                     stored["entries"], stored.get("thread"))

    def _count_call(self, reply: "Reply") -> None:
        """The call's bill into ``calls`` (the POST_LLM_CALL hooks count calls by it; the record has it
        with the turn) and its request as ``last_request``."""
        self.calls.append(reply.record)
        self.last_request = reply.plan.sent()

    def _land_turn(self, reply: "Reply", results: list[dict]) -> None:
        """The turn into the history: the entries the call carried after the history (its batch, its
        tool changes, its untrusted notes: on the wire for good once an answer follows them), the
        reply, its tools' results. A reply the history does not keep (``results`` and its content
        empty) lands as a turn of no messages: its notes go back on the queue."""
        turn = [*reply.entries, reply.message, *results] if reply.kept else []
        thread = {"thread": reply.thread} if reply.thread else {}
        self._append("turn", turn, step={"phase": "landed"}, call=reply.record.model_dump(), **thread)
        for entry in reply.entries if reply.kept else []:
            self.offer.announced(entry["content"])

    def _outcome(self, reply: dict, calls: list[dict], results: list[dict]) -> RunResult | None:
        """Done on a reply without tool calls, or on a final tool's success (its output is the result)."""
        if not calls:
            return RunResult(status="done", final_text=text_of(reply))
        final = next((r for c, r in zip(calls, results) if self.toolbox.is_final(c, r)), None)
        return RunResult(status="done", final_text=final["content"]) if final else None

    def _run_tool(self, call: dict, stored: dict | None = None) -> dict:
        """One tool between its hooks, its result in the record as soon as it completes. A result a
        killed step stored is used as it is: the tool does not run again (one killed while it ran
        does: ``tools.tool_use_id()`` lets it tell)."""
        if stored is None:
            self._hook(ToolCallEvent(Point.PRE_TOOL_CALL, self, call), call["id"])
            raw = self.toolbox.call(call)
            if taint.reads_outside(self.toolbox, call):
                taint.mark(self.state, f"tool {call.get('name')}")
                raw = {**raw, "content": self._visible(raw["content"], f"tool {call.get('name')}")}
            elif brought := taint.outside(raw.get("content")):  # a search_result the tool returned, say
                taint.mark(self.state, f"tool {call.get('name')} ({brought})")
            result = self.offloader(call, raw) if self.offloader is not None else raw  # large: a file, head and tail
            if isinstance(result.get("content"), str):  # undecodable bytes: the model reads U+FFFD, the store the bytes
                result = {**result, "content": _capped(printable(result["content"]), self.config.max_tool_output)}
            self._write({"type": "tool_output", "tool_use_id": call["id"], "raw": raw["content"]},
                        step={"results": {call["id"]: result}})
        else:
            result = stored
        self._hook(ToolResultEvent(Point.POST_TOOL_CALL, self, call, result), call["id"])
        return result

    def _hook(self, event: HookEvent, tool_use_id: str | None = None) -> None:
        """A point's hooks, each marked in the record once it has run (with the notes it queued and
        the state it set), so a resumed step runs only those that had not; at END, a record that
        cannot be written does not stop the rest."""
        key = event.point.value + (f":{tool_use_id}" if tool_use_id else "")
        event.queue = self.turn_queue  # a failing hook's notes are cut back from it

        def ran(index: int, notes: list[Injection]) -> None:
            if not self._keeps_batch and (notes or event.point is Point.PRE_LLM_CALL):  # notes the record never
                return  # holds: unmarked, the hook runs again after a kill
            fresh = {n.source for n in notes}  # a note of the same source the step carried is replaced
            queued = {"notes": _dumped([*(n for n in self.progress.notes if n.source not in fresh), *notes])}
            try:
                self._write({"type": "hooked"}, sync=False, step={"hooks": {key: index + 1}, **(queued if notes else {})})
                self.turn_queue.remove(notes)  # the step carries them now
            except OSError:
                if event.point is not Point.END:
                    raise
        # The runs, calls sent and endings before it: the same after a kill, different for any other run of the point.
        written = self._event_counts
        run_id = f"task{written.get('task', 0)}.sent{written.get('sent', 0)}.ended{written.get('ended', 0)}/{key}"
        self.hooks.run(event.point, event, start=self.progress.hooks.get(key, 0), ran=ran, run_id=run_id)

    def _apply_steering(self) -> None:
        with self._lock:
            pending, self._pending_steers = self._pending_steers, []
        for k, text in enumerate(pending):
            try:
                self._append("steered", [user(text)])
            except OSError:  # not applied: still pending, here and in the store
                with self._lock:
                    self._pending_steers = pending[k:] + self._pending_steers
                raise

    def replace_history(self, messages: list[dict]) -> None:
        """Compaction: the one sanctioned way to rewrite the history (recorded in the store)."""
        self._write({"type": "compaction", "messages": messages})
        self.messages = list(messages)
        self._previous_len = None  # the old prefix is gone: nothing to mark
        self.thread.lost("the history was rewritten: a new thread", replay=False)

    def _append(self, kind: str, turn: list[dict], step: dict | None = None, **fields: Any) -> None:
        """Append one completed turn to the history, and to the store first (``kind``: a new ``task``,
        a ``turn`` the model made, with the call that made it and how it went on a thread, a
        ``steered`` user message)."""
        self._write({"type": kind, "messages": turn, **fields}, step=step)
        self.messages.extend(turn)

    def _write(self, event: dict, sync: bool = True, step: dict | None = None) -> None:
        """One event, with ``step``, its change to the step's value (``progress`` moves on once it is
        written; on a layout that keeps no batch, without the notes), and the state hooks set since
        the last one, unless the step carries notes the record does not hold: a value and the notes
        its step made land together. Any failure of the store's backend is a ``StoreFailure`` (an
        ``OSError``): the run ends cleanly on it."""
        progress = self.progress.advanced(step) if step else self.progress
        if step:
            event = {**event, "step": step if self._keeps_batch else {k: v for k, v in step.items() if k != "notes"}}
        held = bool(progress.notes) and not self._keeps_batch
        state, self.state.unwritten = ({}, self.state.unwritten) if held else (self.state.unwritten, {})
        try:
            self.store.write({**event, "state": state} if state else event, sync=sync)
            self._event_counts[event["type"]] = self._event_counts.get(event["type"], 0) + 1
            # A reply whose turn will never land is in the bill at once, and leaves ``calls`` (the
            # history's) if it was counted there. (A call in flight at a kill was counted when the
            # record was read: its resend passes it by again, not counted twice.)
            _, lost = self.progress.passed_by(step or {})
            if lost is not None:
                self.lost_calls.append(lost)
                del self.calls[(self.progress.sent or {}).get("calls", len(self.calls)):]
            self.progress = progress
        except Exception as e:
            self.state.unwritten = {**state, **self.state.unwritten}
            if isinstance(e, OSError):
                raise
            raise StoreFailure(f"{type(e).__name__}: {e}") from e  # a backend's own error type (sqlite3's, say)

    def _end(self, result: RunResult, recorded: bool = True, resumed: bool = False) -> RunResult:
        """Every run ends here, whatever its status: its result in the record, the END hooks see it,
        then its status (unless the run was refused before it began: the record's last run has not
        ended). A kill among the END hooks is resumed by the next run(): the rest of them, then the status."""
        if recorded and not resumed:
            try:
                self._write({"type": "ended"}, step={"phase": "ended", "ended": result.model_dump()})
            except OSError as e:
                result = self._unwritable(e)
        self._hook(EndEvent(Point.END, self, result))
        if not recorded:
            return result
        try:
            self._write({"type": "status", "status": result.status}, step={"phase": "idle"})
        except OSError as e:
            return self._unwritable(e)
        self._current_run.task = None
        return result

    def _unwritable(self, error: OSError) -> RunResult:
        return RunResult(status="error", steps=self.steps, error=f"the run record could not be written: {error}")


@dataclass
class Reply:
    """A model call's answer as a step uses it: stored in the record before anything acts on it."""

    plan: CallPlan  # the call as laid out (what hooks read as its request)
    response: Any  # the SDK's Message
    record: CallRecord  # what it cost
    batch: list[Injection]  # the notes it carried
    entries: list[dict]  # what it carried after the history: joins the history with the turn
    thread: dict | None = None  # how it went on a message thread
    content: list[dict] | None = None  # its blocks as the history keeps them (outside results made visible)

    @property
    def kept(self) -> bool:
        """Does the history keep it? Not a reply the model did not finish, nor an empty one."""
        return self.response.stop_reason not in UNFINISHED and bool(self.response.content)

    @property
    def message(self) -> dict:
        return assistant_message(self.response.content if self.content is None else self.content)


def _unfinished_status(stop_reason: str | None, max_tokens: int, text: str) -> RunResult | None:
    """A reply the model did not finish (``UNFINISHED``): never executed, never part of the history."""
    if stop_reason not in UNFINISHED:
        return None
    if stop_reason == "refusal":
        return RunResult(status="refused", final_text=text, error=(
            "the model declined to go on (stop_reason refusal); the reply was not kept. Change the task or the "
            "history before running again"))
    limit = f"max_tokens ({max_tokens:,})" if stop_reason == "max_tokens" else "the context window"
    return RunResult(status="truncated", final_text=text, error=(
        f"the reply was cut at {limit}; it was not kept and no tool it asked for ran. Raise max_tokens "
        "(agent.configure(max_tokens=...)) or shorten the history, and call run() to make the call again"))


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


def _dumped(notes: list[Injection]) -> list[dict]:
    return [n.model_dump() for n in notes]


def _digest(value: Any) -> str:
    """A short fingerprint of a request part: equal parts, equal digests."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()[:16]
