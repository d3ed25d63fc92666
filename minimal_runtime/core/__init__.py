"""The forkable loop: agent, config, context (the note queue and the layouts), thread, hooks,
tools, messages, store. (Steering over HTTP is an add-on beside it: ``minimal_runtime.steering``.)

Imports nothing but its sibling ``provider/``, ``anthropic`` and ``pydantic``: the two folders make
a package of their own (``python -m minimal_runtime fork DEST`` writes one).
"""

from .agent import Agent, RunResult, SteerTooLarge
from .config import AgentConfig, RequestOptions
from .context import (CallParts, CallPlan, TurnScopedQueue, Injection, ThreadAt, layout_for, tail_layout, threaded_layout,
                      turn_scoped_layout)
from .hooks import (CallEvent, EndEvent, ErrorEvent, HookEvent, HookFailure, HookRegistry, Point, ToolCallEvent,
                    ToolResultEvent, hook_run_id)
from .protocols import AgentView, Feature, Hook, Layout, Store, Tool, Tools
from .store import (StoreBase, MemoryStore, RunState, RunStore, StoredRun, StoredStep, StoreFailure, StoreLocked,
                    load_run)
from .thread import Thread
from .tools import FunctionTool, ToolBox, ToolOffer, ToolOutput, tool_use_id

__all__ = ["Agent", "AgentConfig", "RequestOptions", "RunResult", "CallParts", "CallPlan", "TurnScopedQueue",
           "Injection", "ThreadAt", "Thread", "layout_for", "tail_layout", "threaded_layout", "turn_scoped_layout",
           "CallEvent", "EndEvent", "ErrorEvent", "HookEvent", "HookFailure", "HookRegistry", "Point", "ToolCallEvent",
           "ToolResultEvent", "AgentView", "Feature", "Hook", "Layout", "Store", "Tool", "Tools", "SteerTooLarge",
           "StoreBase", "MemoryStore", "RunState", "RunStore", "StoredRun", "StoreLocked", "load_run",
           "FunctionTool", "ToolBox", "ToolOffer", "ToolOutput", "tool_use_id", "hook_run_id", "StoreFailure", "StoredStep"]
