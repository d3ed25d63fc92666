"""The agent's side of its message thread: which response the next call continues, and when none can be.

On ``threaded_layout`` the server holds the conversation under each response's id [MT], and a call
sends only what it does not hold (the sources' keys are in ``provider/models.py``). The history stays
the agent's, whole, in the store: a thread is a copy the server may drop at any time, and the answer
to a lost one is to send the whole history once more as a new create (a *replay*), which the SDKs do
too [PY ``_thread_state.py``]. The next call replays, exactly once for each loss, after:

- a resume: a new agent on a stored run holds no thread (and cannot know whether its last response
  was continued by a call whose answer never came back);
- the API's word on a continue: ``thread_not_found`` (404: expired, or dropped), ``thread_already_continued``
  or ``thread_continue_in_flight`` (matched on ``error.details.error_code``, as the SDK matches them);
- more idle time than a thread lives (5 minutes after its last response [MT]), on this side's clock,
  which started later than the server's: it saves the 404 and never replays a live thread;
- a change of what a continue cannot change: ``system``, ``tools``, or any request option (the SDK
  refuses the first two, the API the fixed ones; a replay is always right);
- a reply the history does not keep (cut at ``max_tokens``, refused, empty): the server holds it.

A rewrite of the history (compaction) starts a new thread too: a create of the new history. On
``thread_unsupported_request`` the agent goes on without a thread for good (the SDK runners' default).
Each threaded call's record says how it went (``record``): ``create``, ``continue`` or ``replay`` with why.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..provider.models import THREAD_TTL_SECONDS, THREADS_BETA
from .context import CallPlan, ThreadAt

LOST = ("thread_not_found", "thread_already_continued", "thread_continue_in_flight")  # a replay recovers [PY]
UNSUPPORTED = "thread_unsupported_request"


class Thread:
    """Where the agent's thread stands. ``resumed``: the agent opened a record that was on a thread."""

    def __init__(self, resumed: bool = False, clock: Callable[[], float] = time.monotonic,
                 ttl: float = THREAD_TTL_SECONDS):
        self.clock, self.ttl = clock, ttl
        self.at: ThreadAt | None = None  # the response the next call continues; None: it creates a thread
        self.head: dict[str, Any] = {}  # what the thread was created with, besides its messages
        self.answered_at = 0.0
        self.why: str | None = "resumed: a new process holds no thread" if resumed else None  # the next create's
        self.replay = resumed  # is the next create a replay of a history a thread held?
        self.off: str | None = None  # why the agent stopped threading

    def expire_if_idle(self) -> None:
        """Lose the thread when it has been idle longer than a thread lives (on this side's clock)."""
        idle = self.clock() - self.answered_at
        if self.at is not None and idle >= self.ttl:
            self.lost(f"expired: idle {idle:.0f} s, past the thread's {self.ttl:.0f}")

    def continued_at(self, history: list[dict]) -> ThreadAt | None:
        """The thread the next call continues, a prefix of ``history`` (None: the call creates one)."""
        return self.at and ThreadAt(self.at.previous_id, self.at.held, history)

    def unthread_if_off(self, plan: CallPlan) -> None:
        """Unthreaded for good: a plan laid out for a thread goes whole, without the threads beta."""
        if self.off is not None and plan.thread is not None:
            plan.thread, plan.betas = None, [b for b in plan.betas if b != THREADS_BETA]

    def why_not_continued(self, plan: CallPlan) -> str | None:
        """Why ``plan`` cannot go on the thread as laid out (None: it can, or it is no continue of
        one): the layout did not continue a live thread, or the call changes what it holds fixed."""
        if plan.thread is None or self.at is None:
            return None
        if plan.thread.previous_id is None:  # the layout would not continue: it was handed a rewritten copy
            return "the layout rewrote the history's copy, which the thread does not hold"
        head = head_of(plan)
        changed = sorted(k for k in {*head, *self.head} if head.get(k) != self.head.get(k))
        return f"the request changed: {', '.join(changed)}" if changed else None

    def lost(self, why: str, replay: bool = True) -> None:
        """The thread cannot be continued: the next call creates one (``replay``: with a history it held)."""
        self.at, self.why, self.replay = None, why, replay

    def failed(self, error: Exception, plan: CallPlan) -> bool:
        """After a refused call: True when sending the call again, as a create or without a thread, recovers."""
        code = _error_code(getattr(error, "body", None))
        if plan.thread is None or code is None:
            return False
        if code == UNSUPPORTED:
            self.off = f"{UNSUPPORTED}: {error}"
            return True
        if code in LOST and plan.thread.previous_id is not None:
            self.lost(code)
            return True
        return False

    def record(self, plan: CallPlan, response: Any, held: int | None) -> dict[str, Any] | None:
        """How a threaded call went, for the run's record; ``held``: the messages the server now holds
        that the history keeps too (None: the history did not keep the reply, so no call continues it)."""
        if plan.thread is None:
            return None
        if plan.thread.previous_id is not None:
            sent = {"type": "continue", "previous_message_id": plan.thread.previous_id}
        else:
            sent = {"type": "replay" if self.replay else "create", **({"why": self.why} if self.why else {})}
            self.head = head_of(plan)
        self.why, self.replay = None, False
        if held is None:
            self.lost("the reply was not kept: the server holds a turn the history does not")
        else:
            self.at, self.answered_at = ThreadAt(response.id, held), self.clock()
        return {**sent, "id": response.id}


def head_of(plan: CallPlan) -> dict[str, Any]:
    """What a thread holds fixed, or a continue cannot change: every keyword but the messages."""
    return {k: v for k, v in plan.sent().items() if k != "messages"}


def _error_code(body: Any) -> str | None:
    """``error.details.error_code`` of an API error's body, where the thread errors name themselves [PY]."""
    for key in ("error", "details", "error_code"):
        body = body.get(key) if isinstance(body, dict) else None
    return body if isinstance(body, str) else None
