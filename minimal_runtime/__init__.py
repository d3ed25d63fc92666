"""A minimal runtime for long-horizon agents, built chapter by chapter.

The interfaces live here, in one place. Everything that crosses a boundary is either a Messages
API dict (messages, content blocks, tool definitions) or a pydantic model.

    Layout  how one call's request is laid out from the durable history and the ephemeral batch
    Hook    a function run at a lifecycle point; it reads the run and may inject into the batch
    Tool    something the model can call; validated input in, text out
    Policy  what the offline emulator's model answers (a simulation, never a property of Claude)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .context import CallParts
    from .emulator.policies import Turn
    from .hooks import HookEvent
    from .tools import ToolOutput


class Layout(Protocol):
    """Turns one call's parts into the request's ``system``, ``tools`` and ``messages`` (and any
    other ``messages.create`` keyword). The durable history it is given must not be modified."""

    def __call__(self, parts: "CallParts") -> dict[str, Any]: ...


class Hook(Protocol):
    """Runs at a lifecycle point. Injects with ``event.agent.inject_ephemeral(source, text)``.
    A hook that raises is logged and skipped; it never ends the run."""

    def __call__(self, event: "HookEvent") -> None: ...


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str

    def definition(self) -> dict[str, Any]:
        """The Messages API tool definition: name, description, input_schema."""
        ...

    def run(self, raw_input: dict[str, Any]) -> "ToolOutput":
        """Validate the input and act. Errors come back as an error output, never raised."""
        ...


class Policy(Protocol):
    """The emulated model's behaviour: from the request (read-only) to the answer's content. It
    runs after the emulator has done all the accounting and cannot change it."""

    def __call__(self, request: dict[str, Any]) -> "Turn": ...
