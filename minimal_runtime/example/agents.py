"""Ready-made agents for the running example, used by the demo, the notebooks and the tests.

Offline (the default) the client is the emulator with a SIMULATED policy; online the policy is
ignored and a real model does the work (see ``minimal_runtime.backend``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..agent import Agent
from ..backend import DEFAULT_MODEL, make_client
from ..emulator import Emulator
from . import SYSTEM
from .policy import LongRunPolicy, SimulatedResearcher
from .tools import Workspace, pricing_tools


class SteppingClock:
    """A deterministic clock for the emulator: each reading is one second after the last."""

    def __init__(self, start: float = 0.0):
        self.t = start

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def pricing_agent(workdir: str | Path, *, policy: Callable | None = None, model: str = DEFAULT_MODEL,
                  online: bool | None = None, clock: Callable[[], float] | None = None,
                  **agent_kwargs: Any) -> tuple[Agent, Emulator | None, list[str]]:
    """The pricing-comparison agent: (agent, the emulator or None online, the user's outbox)."""
    client, emulator = make_client(policy or SimulatedResearcher(), model=model, online=online,
                                   clock=clock or SteppingClock())
    outbox: list[str] = []
    agent = Agent(client, model=model, system=SYSTEM, tools=pricing_tools(Workspace(Path(workdir) / "workspace"), outbox),
                  **agent_kwargs)
    return agent, emulator, outbox


def long_agent(workdir: str | Path, turns: int, *, page_chars: int = 500, **kwargs: Any) -> tuple[Agent, Emulator | None]:
    """A long synthetic run: ``turns`` tool calls over the docs pages, then an answer."""
    kwargs.setdefault("max_steps", turns + 2)
    agent, emulator, _ = pricing_agent(workdir, policy=LongRunPolicy(turns, page_chars), **kwargs)
    return agent, emulator
