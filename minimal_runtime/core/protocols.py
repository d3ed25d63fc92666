"""The runtime's interfaces, in one place. Everything that crosses one of them is a Messages API
dict (messages, content blocks, tool definitions) or a pydantic model.

    Layout    how one call is laid out (a ``CallPlan``) from the durable history and the turn-scoped batch
    Hook      a function run at a lifecycle point; it reads the run and may inject into the batch
    Feature   one behaviour (a plan, a budget warning): an object that installs its hooks, each at its point
    Tool      something the model can call; validated input in, text out
    Tools     the run's set of tools: fixed definitions, which calls may run, which ones end the run
    Store     the durable run record
    AgentView what a hook may use of the agent it runs in
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..provider.cost import CallRecord
    from .context import CallParts, CallPlan, TurnScopedQueue
    from .hooks import HookEvent, HookRegistry
    from .store import RunState
    from .tools import ToolOutput


class Layout(Protocol):
    """Turns one call's parts into its plan: the request (``system``, ``tools``, ``messages`` and any
    other ``messages.create`` keyword), its betas, and what the history keeps. A plain dict of
    keywords will do too (``CallPlan.of``). The durable history it is given must not be modified.

    A layout is a pure function of the parts it is given: the agent may call it more than once for
    one call (to lay out a create after a continue it cannot send, to rebuild a resumed call's
    request, to ask whether it keeps the batch), so it keeps no state between calls. A wrapper may
    hand the layout it wraps a copy of the history; an equal copy still continues a thread, a
    rewritten one starts a new thread (logged on the agent's logger)."""

    def __call__(self, parts: "CallParts") -> "CallPlan | dict[str, Any]": ...


class Hook(Protocol):
    """Runs at a lifecycle point. Injects with ``event.agent.inject_turn_scoped(source, text)``.
    A hook that raises is logged and skipped (unless its error type is in ``HookRegistry.reraised``)."""

    def __call__(self, event: "HookEvent") -> None: ...


class Feature(Protocol):
    """One behaviour as one object: ``install`` registers each of its hooks at its point, with
    its condition. Which point a hook belongs to is the feature's knowledge, not its caller's."""

    def install(self, hooks: "HookRegistry") -> None: ...


@runtime_checkable
class Tool(Protocol):
    """A tool. One that reads outside content (a fetch, a browser) says so with a true
    ``reads_outside`` attribute: its results taint the run and lose the characters no one sees
    (``visible``). Without it, the output is the operator's own and reaches the model as it is."""

    name: str
    description: str

    def definition(self) -> dict[str, Any]:
        """The Messages API tool definition: name, description, input_schema."""

    def run(self, raw_input: dict[str, Any]) -> "ToolOutput":
        """Validate the input and act. Errors come back as an error output, never raised. A run
        killed mid-call runs again on resume: ``tools.tool_use_id()`` is the same both times."""


class Tools(Protocol):
    """The run's tools as the agent uses them. ``definitions`` never change during a run: the
    provider caches them first, so a change would invalidate everything after them."""

    definitions: list[dict[str, Any]]
    masked: set[str]

    def call(self, tool_use: dict) -> dict:
        """Run one tool_use block; always returns a tool_result block, never raises."""

    def is_final(self, tool_use: dict, result: dict) -> bool:
        """Does this call, with this result, end the run (a successful final report, say)?"""

    def mask(self, *names: str) -> None: ...

    def unmask(self, *names: str) -> None: ...


class Store(Protocol):
    """The durable run record, as an event log (the kinds: ``store.load``). What is written is what
    the history holds: on the turn-scoped layout, each call's batch too. ``store.StoreBase`` adds
    ``load`` and ``close`` to a backend that implements these two (and ``where``, its name in errors)."""

    def write(self, event: dict[str, Any], sync: bool = True) -> None:
        """Append one event, in order, whole or not at all; with ``sync``, durable before returning."""

    def events(self) -> list[dict[str, Any]]:
        """Every event written, in order."""


class AgentView(Protocol):
    """Exactly what hooks may use of the agent they run in (``HookEvent.agent``)."""

    messages: list[dict]  # the durable history: read it, never edit it
    calls: list["CallRecord"]  # one record per model call, provider-reported usage
    store: Store
    state: "RunState"  # what hooks keep across crashes: ``get(key)``, ``set(key, value)``
    toolbox: Tools  # to mask and unmask tools by phase
    turn_queue: "TurnScopedQueue"  # the next call's batch

    @property
    def max_steps(self) -> int: ...

    @property
    def steps(self) -> int: ...  # calls made in the current run: what ``max_steps`` caps

    @property
    def name(self) -> str: ...  # the agent's role name, for hooks that tell agents apart

    last_request: dict | None  # the last request, whole (on a thread: what the server rebuilt from what it holds)

    def inject_turn_scoped(self, source: str, text: str) -> None: ...

    def inject_untrusted(self, source: str, text: str) -> None: ...

    def steer(self, text: str) -> bool: ...

    def replace_history(self, messages: list[dict]) -> None: ...
