"""The forkable loop: agent, context (queue and layouts), hooks, tools, messages, store, steering.

Imports nothing of the project but ``minimal_runtime.provider``: copy ``core/`` and ``provider/``
and you have a working agent.
"""

from .agent import Agent, AgentConfig, RunResult
from .context import CallParts, EphemeralQueue, Injection, layout_for, tail_layout, turn_scoped_layout
from .hooks import HookEvent, HookFailure, HookRegistry, Point
from .protocols import AgentView, Feature, Hook, Layout, Store, Tool, Tools
from .store import MemoryStore, RunStore, StoredRun
from .tools import FunctionTool, ToolBox, ToolOutput

__all__ = ["Agent", "AgentConfig", "RunResult", "CallParts", "EphemeralQueue", "Injection", "layout_for",
           "tail_layout", "turn_scoped_layout",
           "HookEvent", "HookFailure", "HookRegistry", "Point", "AgentView", "Feature", "Hook", "Layout", "Store",
           "Tool", "Tools", "MemoryStore", "RunStore", "StoredRun", "FunctionTool", "ToolBox", "ToolOutput"]
