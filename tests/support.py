"""Shared builders for runtime and chapter tests: the running example on the emulator."""

from __future__ import annotations

from pathlib import Path

from minimal_runtime.agent import Agent
from minimal_runtime.emulator import Emulator
from minimal_runtime.example import SYSTEM, TASK, LongRunPolicy, SimulatedResearcher, Workspace, pricing_tools

__all__ = ["TASK", "pricing_agent", "long_agent"]


class Clock:
    def __init__(self, t: float = 0.0):
        self.t = t

    def __call__(self) -> float:
        self.t += 1.0  # every look at the clock moves it a second: runs are deterministic
        return self.t


def pricing_agent(tmp_path: Path, policy=None, model: str = "claude-sonnet-4-6", **kwargs) -> tuple[Agent, Emulator, list[str]]:
    emu = Emulator(model=model, policy=policy or SimulatedResearcher(), clock=Clock())
    outbox: list[str] = []
    agent = Agent(emu.client(), model=model, system=SYSTEM,
                  tools=pricing_tools(Workspace(tmp_path / "workspace"), outbox), **kwargs)
    return agent, emu, outbox


def long_agent(tmp_path: Path, turns: int, model: str = "claude-sonnet-4-6", **kwargs) -> tuple[Agent, Emulator]:
    agent, emu, _ = pricing_agent(tmp_path, LongRunPolicy(turns), model=model, max_steps=turns + 2, **kwargs)
    return agent, emu
