"""The forkable loop: agent, context (queue and layouts), hooks, tools, messages, store, steering.

Imports nothing of the project but ``minimal_runtime.provider``: copy ``core/`` and ``provider/``
into a package, give it ``from .core import *`` as its ``__init__``, and you have a working agent
(the README's fork section; ``tests/runtime/test_fork.py`` checks it).
"""

from .agent import Agent, RunResult
from .config import AgentConfig, RequestOptions
from .context import CallParts, CallPlan, EphemeralQueue, Injection, layout_for, tail_layout, turn_scoped_layout
from .hooks import (CallEvent, EndEvent, ErrorEvent, HookEvent, HookFailure, HookRegistry, Point, ToolCallEvent,
                    ToolResultEvent)
from .protocols import AgentView, Feature, Hook, Layout, Store, Tool, Tools
from .store import EventLog, MemoryStore, RunStore, StoredRun, StoreLocked, load_run
from .tools import FunctionTool, ToolBox, ToolOffer, ToolOutput

__all__ = ["Agent", "AgentConfig", "RequestOptions", "RunResult", "CallParts", "CallPlan", "EphemeralQueue", "Injection", "layout_for",
           "tail_layout", "turn_scoped_layout", "CallEvent", "EndEvent", "ErrorEvent", "HookEvent", "HookFailure", "HookRegistry",
           "Point", "ToolCallEvent", "ToolResultEvent", "AgentView", "Feature", "Hook", "Layout", "Store", "Tool", "Tools",
           "EventLog", "MemoryStore", "RunStore", "StoredRun", "StoreLocked", "load_run", "FunctionTool", "ToolBox",
           "ToolOffer", "ToolOutput"]
