"""Several agents in one sandbox: the rules that only matter when it is shared.

In a shared sandbox the workspace is mutable state that others change too. The hook says how to
coordinate: a shared notes file (``AGENTS.md``) read once per conversation, not every turn, with
only what others could not discover on their own; and a workspace claimed before the first edit.
In a single-agent run none of that is true, and the hook stays silent: injecting it would be noise
the model has to decide to ignore.
"""

from __future__ import annotations

import threading

from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.messages import tool_uses

NOTES_FILE = "AGENTS.md"


class SharedSandbox:
    """Who is in the sandbox, and which workspace each agent has claimed."""

    def __init__(self) -> None:
        self.members: set[str] = set()
        self.claims: dict[str, str] = {}  # agent -> workspace
        self._lock = threading.Lock()

    def join(self, agent: str) -> None:
        with self._lock:
            self.members.add(agent)

    def claim(self, agent: str, workspace: str) -> str:
        with self._lock:
            holder = next((a for a, w in self.claims.items() if w == workspace and a != agent), None)
            if holder:
                raise ValueError(f"{workspace!r} is claimed by {holder}")
            self.claims[agent] = workspace
            return f"{workspace} is yours."

    @property
    def shared(self) -> bool:
        return len(self.members) > 1


def _read_notes_this_conversation(messages: list[dict]) -> bool:
    last_user_task = max((i for i, m in enumerate(messages) if m["role"] == "user"
                          and any(b.get("type") == "text" for b in m["content"])), default=0)
    return any(call["name"] == "read_file" and call["input"].get("path") == NOTES_FILE
               for m in messages[last_user_task:] if m["role"] == "assistant" for call in tool_uses(m))


class Coordination:
    """PRE_LLM_CALL, only while the sandbox is shared: how to work next to the other agents."""

    def __init__(self, sandbox: SharedSandbox, agent_name: str):
        self.sandbox, self.agent_name = sandbox, agent_name

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.remind, when=lambda event: self.sandbox.shared)

    def remind(self, event: HookEvent) -> None:
        others = len(self.sandbox.members) - 1
        read = _read_notes_this_conversation(event.agent.messages)
        claimed = self.sandbox.claims.get(self.agent_name)
        lines = [f"I share this sandbox with {others} other agent{'s' if others > 1 else ''}: files can change under me.",
                 f"{NOTES_FILE} is how we coordinate. " + (
                     "I have read it in this conversation; I don't re-read it every turn." if read else
                     "I read it once now, at the start of this conversation, not every turn."),
                 f"I add to {NOTES_FILE} only what the others could not find out by themselves.",
                 f"I work in my claimed workspace ({claimed})." if claimed else
                 "Before my first edit I claim a workspace of my own."]
        event.agent.inject_turn_scoped("coordination", "\n".join(lines))
