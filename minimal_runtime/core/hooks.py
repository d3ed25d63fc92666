"""Lifecycle hooks: where the batch gets filled.

Hooks at a point run in registration order, and each appends to the turn-scoped queue, so
registration order is the order the model reads the batch. A hook that raises is logged, recorded
and skipped: a missing note is a far better failure than a dead run. The exceptions are the types
in ``HookRegistry.reraised`` (none by default): a project that wants some failures to stop the run
(a stub not written yet, say) names them there. A hook may carry a condition (``when``) saying
when it applies at all; a condition that raises counts as the hook failing.

A hook's name (in logs and failure records) comes from what it is: a function's name, a method's
``Class.method``, a callable object's class. Features register their own hooks (``install``).

A hook that ran is marked in the run record, and a resumed run does not run it again; one killed while
it ran runs again. Inside a hook, ``hook_run_id()`` names this run of it: its run, its call, its
point (and tool_use id), its place in the registration order. It is the same when a hook killed
mid-run runs again on resume, and differs for every other run of it, so a side effect keyed on it (an
audit line, a message sent) happens once, as a tool's keyed on ``tool_use_id()`` does.
"""

from __future__ import annotations

import inspect
import logging
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from .agent import RunResult
    from .context import TurnScopedQueue, Injection
    from .protocols import AgentView, Feature, Hook

log = logging.getLogger(__name__)

_RUNNING: ContextVar[str | None] = ContextVar("hook_run_id", default=None)


def hook_run_id() -> str | None:
    """This run of the running hook (None outside a hook): the same when a hook killed mid-run runs
    again on resume, another for every other run (see the module docstring)."""
    return _RUNNING.get()


class Point(str, Enum):
    START = "start"                    # once, before the first call on a new user message
    PRE_LLM_CALL = "pre_llm_call"      # before every model call: the place to inject
    POST_LLM_CALL = "post_llm_call"    # after every model call, with the response
    PRE_TOOL_CALL = "pre_tool_call"
    POST_TOOL_CALL = "post_tool_call"
    END = "end"                        # once per run(), whatever its status: the event carries its RunResult
    ERROR = "error"                    # a call failed past the SDK's retries (END follows, with status error)


@dataclass
class HookEvent:
    """What every hook sees: its point and the live agent (read its state, inject into its batch).
    ``queue`` is where this point's injections go: the registry cuts back what a failing hook
    wrote there. The points that carry more have an event of their own, below."""

    point: Point
    agent: "AgentView"
    queue: "TurnScopedQueue | None" = field(default=None, kw_only=True)


@dataclass
class CallEvent(HookEvent):
    """POST_LLM_CALL: the request as sent, the SDK Message, and the injections the call carried."""

    request: dict
    response: Any
    batch: list["Injection"]


@dataclass
class ToolCallEvent(HookEvent):
    """PRE_TOOL_CALL: the tool_use block about to run."""

    tool_call: dict


@dataclass
class ToolResultEvent(ToolCallEvent):
    """POST_TOOL_CALL: the tool_use block and the tool_result block the history keeps."""

    tool_result: dict


@dataclass
class EndEvent(HookEvent):
    """END: how the run ended (``done``, ``max_steps``, ``truncated``, ``refused``, ``error``)."""

    result: "RunResult"


@dataclass
class ErrorEvent(HookEvent):
    """ERROR: what stopped the call (the SDK's retries did not get past it)."""

    error: BaseException


class HookFailure(BaseModel):
    point: Point
    hook: str
    error: str


@dataclass
class _Registration:
    hook: "Hook"
    when: Callable[[HookEvent], bool] | None
    name: str


@dataclass
class HookRegistry:
    reraised: ClassVar[tuple[type[BaseException], ...]] = ()  # failures that stop the run instead of being skipped
    _hooks: dict[Point, list[_Registration]] = field(default_factory=dict)
    failures: list[HookFailure] = field(default_factory=list)

    def register(self, point: Point, hook: "Hook", *, when: Callable[[HookEvent], bool] | None = None,
                 name: str | None = None) -> None:
        if not callable(hook):  # a feature object, most likely: it registers its own hooks
            raise TypeError(f"{type(hook).__name__} is not callable; install a feature with hooks.install(feature)")
        self._hooks.setdefault(Point(point), []).append(_Registration(hook, when, name or hook_name(hook)))

    def install(self, *features: "Feature") -> "HookRegistry":
        """Let each feature register its hooks, in the order given (the order the batch is read)."""
        for feature in features:
            feature.install(self)
        return self

    def run(self, point: Point, event: HookEvent, start: int = 0,
            ran: Callable[[int, list["Injection"]], None] | None = None, run_id: str | None = None) -> None:
        """The point's hooks in order, from the ``start``-th (those before it ran before a kill);
        ``ran(index, notes)`` after each, with the notes it queued (none if it failed). Each hook reads
        ``run_id`` and its index as ``hook_run_id()``."""
        queue = event.queue
        for index, reg in enumerate(self._hooks.get(Point(point), [])):
            if index < start:
                continue
            mark = len(queue) if queue is not None else 0
            running = _RUNNING.set(f"{run_id or point.value}/{index}")
            try:
                if reg.when is None or reg.when(event):
                    reg.hook(event)
            except self.reraised:
                raise
            except Exception as e:  # isolation: log, remember, go on with the next hook
                if queue is not None:
                    queue.truncate(mark)  # a half-written note of a failed hook is not delivered
                log.warning("hook %s failed at %s: %s: %s", reg.name, point.value, type(e).__name__, e)
                self.failures.append(HookFailure(point=point, hook=reg.name, error=f"{type(e).__name__}: {e}"))
            finally:
                _RUNNING.reset(running)
            if ran is not None:
                ran(index, queue.since(mark) if queue is not None else [])

    def names(self, point: Point) -> list[str]:
        return [reg.name for reg in self._hooks.get(Point(point), [])]


def hook_name(hook: Any) -> str:
    if inspect.ismethod(hook):
        return f"{type(hook.__self__).__name__}.{hook.__name__}"
    if inspect.isfunction(hook):
        return hook.__name__
    return type(hook).__name__
