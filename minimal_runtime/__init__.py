"""A minimal runtime for long-horizon agents, built chapter by chapter.

    core/      the forkable loop (agent, context, hooks, tools, messages, store, steering)
    provider/  facts about providers: the sourced per-model table, dollars from usage
    features/  one chapter's idea each, installed as hooks on a core agent
    emulator/  the offline Messages API (the instrument); owns the simulated model's Policy
    replay/    recorded runs replayed under other context strategies
    example/   the course's running example, simulated policies, the demo
    view/      what a notebook shows of a call

This module re-exports the concrete core and its protocols, so a notebook or a fork imports from
one place. Importing it loads the core only: no emulator, no plotting, no example.
"""

from .core import (Agent, AgentConfig, AgentView, CallParts, EphemeralQueue, Feature, FunctionTool, Hook, HookEvent,
                   HookFailure, HookRegistry, Injection, Layout, MemoryStore, Point, RunResult, RunStore, Store, Tool,
                   ToolBox, ToolOutput, Tools, layout_for, tail_layout, turn_scoped_layout)

# The course: an exercise not written yet raises NotImplementedError; in a hook it must stop the run
# and name itself, not hide as a skipped note. (A fork of core/ isolates it like any other failure.)
HookRegistry.reraised = (NotImplementedError,)

__all__ = ["Agent", "AgentConfig", "AgentView", "CallParts", "EphemeralQueue", "Feature", "FunctionTool", "Hook",
           "HookEvent", "HookFailure", "HookRegistry", "Injection", "Layout", "MemoryStore", "Point", "RunResult",
           "RunStore", "Store", "Tool", "ToolBox", "ToolOutput", "Tools", "layout_for", "tail_layout", "turn_scoped_layout"]
