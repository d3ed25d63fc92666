"""Replaying a recorded run through the runtime under different context strategies.

The emulated model re-issues the recorded assistant turns in order, and the tools answer with the
recorded observations, so every strategy replays the same run: same calls, same results. Only what
the runtime does around them changes (layout, batch, offloading), and the emulator prices each.

What a replay cannot know, and how it approximates it:
- the provider's tokenizer: the emulator estimates four characters a token;
- the hidden system prompt and tool definitions (Claude Code sends tens of thousands of tokens the
  session file does not contain): the first call's recorded prompt size minus our estimate of what
  the log does show is added to the system prompt as opaque filler, so the stable prefix has about
  the right size;
- tool schemas: only names are logged; each tool gets a generic schema;
- time: the emulator's clock follows the logged time of each call, so a long pause expires the
  cache in the replay as it did in the run.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..core.agent import Agent
from ..core.context import tail_layout
from ..core.hooks import HookRegistry, Point
from ..core.messages import text_block, user
from ..core.protocols import Layout
from ..emulator import Emulator
from ..emulator.policies import Turn
from ..example.layouts import automatic_caching_layout, batch_after_system_layout
from ..features.filesystem import Offloader
from ..provider.cost import CallRecord
from ..provider.models import model_spec
from .recorded import RecordedRun


@dataclass
class Strategy:
    """A way to run the same calls. New strategies (compaction, ...) plug in here, not in the driver."""

    name: str
    about: str
    layout: Callable[[], Layout]  # a fresh layout per replay: some keep state
    batch: bool = True  # inject a per-call progress note, as a runtime with hooks would
    offload_threshold: int | None = None


STRATEGIES = {s.name: s for s in [
    Strategy("recorded", "the history as logged, automatic caching, nothing injected", lambda: automatic_caching_layout,
             batch=False),
    Strategy("tail", "breakpoint on the last durable block, a per-call batch after it", lambda: tail_layout),
    Strategy("early", "the same batch, inserted right after the system prompt", lambda: batch_after_system_layout),
    Strategy("offload", "tail, with tool results over 4,000 characters offloaded to files", lambda: tail_layout,
             offload_threshold=4000),
]}


class _ReplayPolicy:
    """The recorded assistant turns, in order: a model that says exactly what it said then."""

    def __init__(self, run: RecordedRun):
        self.turns, self.next = [c.assistant["content"] for c in run.calls], 0

    def __call__(self, request: dict) -> Turn:
        content = self.turns[self.next] if self.next < len(self.turns) else [text_block("(end of the recording)")]
        self.next += 1
        return Turn(content=content or [text_block("(empty turn)")], stop_reason=None)


class _RecordedClock:
    """The emulator's clock during a replay: the time each call was made, as logged, so cache
    entries expire as they did (a pause of more than five minutes costs a re-write). Where the log
    has no times, each call is one second after the last."""

    def __init__(self, run: RecordedRun):
        times = [c.at for c in run.calls]
        self.times = times if all(t is not None for t in times) else [float(k) for k in range(len(times))]
        self.now = self.times[0] if self.times else 0.0

    def at(self, k: int) -> None:
        if k < len(self.times):
            self.now = self.times[k]

    def __call__(self) -> float:
        return self.now


def _tool_definitions(run: RecordedRun) -> list[dict]:
    """Only tool names are logged: each gets a generic schema."""
    return [{"name": n, "description": "(a recorded tool; its schema is not in the log)", "input_schema": {"type": "object"}}
            for n in run.tools]


class RecordedTools:
    """The recorded run's tools: generic definitions for the logged names, and each call answered
    with its recorded observation. The calls of the recording's last turn are final: a replay ends
    where the recording ended, without one call past it."""

    def __init__(self, run: RecordedRun):
        self.results = {i: r for c in run.calls for i, r in c.results.items()}
        self.definitions = _tool_definitions(run)
        self.masked: set[str] = set()
        last = run.calls[-1].assistant["content"] if run.calls else []
        self._last_ids = {b.get("id") for b in last if b.get("type") == "tool_use"}

    def is_final(self, tool_use: dict, result: dict) -> bool:
        return tool_use.get("id") in self._last_ids

    def mask(self, *names: str) -> None:
        self.masked |= set(names)

    def unmask(self, *names: str) -> None:
        self.masked -= set(names)

    def call(self, tool_use: dict) -> dict:
        recorded = self.results.get(tool_use["id"])
        if recorded is None:
            return {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "(no result was recorded)",
                    "is_error": True}
        content = recorded.get("content", "")
        block = {"type": "tool_result", "tool_use_id": tool_use["id"],
                 "content": content if isinstance(content, (str, list)) else str(content)}
        if recorded.get("is_error"):
            block["is_error"] = True
        return block


@dataclass
class Replay:
    strategy: str
    model: str
    calls: list[CallRecord]
    seconds: float
    hidden_tokens: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def cache_read_share(self) -> float:
        return sum(c.cache_read_input_tokens for c in self.calls) / max(1, self.prompt_tokens)

    @property
    def cost(self) -> float:
        return sum(c.cost for c in self.calls)


def replay_model(run: RecordedRun, model: str | None = None) -> str:
    """The model to replay and price as: the one asked for, else the log's. A model that is not in
    the table is replayed as the table says of unknown models (its cost is unknown, NaN)."""
    return model_spec(model or run.model or "unknown").id


def _text(blocks: list[dict]) -> str:
    return "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text") or "(continue)"


def replay(run: RecordedRun, strategy: Strategy | str = "tail", *, model: str | None = None,
           progress: Callable[[int, int], None] | None = None) -> Replay:
    strategy = STRATEGIES[strategy] if isinstance(strategy, str) else strategy
    model = replay_model(run, model)
    clock = _RecordedClock(run)
    emulator = Emulator(model=model, policy=_ReplayPolicy(run), clock=clock)
    client = emulator.client()
    workdir = Path(tempfile.mkdtemp(prefix="replay-"))
    hidden = _hidden_tokens(run, client, model)
    header = "\n\n[hidden prompt and tool definitions, approximated]\n"
    system = run.system + (header + "." * max(0, 4 * hidden - len(header)) if hidden else "")
    hooks = HookRegistry()
    agent = Agent(client, model=model, system=system, layout=strategy.layout(), hooks=hooks, toolbox=RecordedTools(run),
                  max_steps=len(run.calls) + 1, max_tokens=21_000,  # above ~21K the SDK insists on streaming
                  offloader=Offloader(workdir, strategy.offload_threshold) if strategy.offload_threshold else None)

    def before_call(event) -> None:
        k = len(event.agent.calls)
        clock.at(k)
        if k < len(run.calls) and run.calls[k].compacted_before:  # the log's compaction, reproduced
            event.agent.replace_history([user(run.calls[k].compacted_before)])
        if strategy.batch:
            event.agent.inject_ephemeral("progress", f"I have made {k} calls so far.")

    def after_call(event) -> None:
        k = len(event.agent.calls) - 1
        if progress:
            progress(k + 1, len(run.calls))
        if k < len(run.calls) and run.calls[k].then_user and any(b.get("type") == "tool_use" for b in run.calls[k].assistant["content"]):
            event.agent.steer(_text(run.calls[k].then_user))  # user text that arrived between two calls

    hooks.register(Point.PRE_LLM_CALL, before_call)
    hooks.register(Point.POST_LLM_CALL, after_call)
    start, task = time.perf_counter(), _text(run.task)
    notes = []
    while len(agent.calls) < len(run.calls):
        before = len(agent.calls)
        result = agent.run(task)
        if result.status == "error":
            notes.append(f"stopped at call {len(agent.calls) + 1}: {result.error}")
            break
        if len(agent.calls) in (before, len(run.calls)):
            break
        task = _text(run.calls[len(agent.calls) - 1].then_user)
    return Replay(strategy.name, model, agent.calls, time.perf_counter() - start, hidden, notes)


def _hidden_tokens(run: RecordedRun, client, model: str) -> int:
    """First call's recorded prompt minus our estimate of what the log shows of it."""
    first = next((c.usage for c in run.calls[:1] if c.usage), None)
    if first is None:
        return 0
    tools = _tool_definitions(run)
    shown = client.messages.count_tokens(model=model, system=run.system or "-", messages=[user(_text(run.task))],
                                         **({"tools": tools} if tools else {})).input_tokens
    return max(0, first.prompt_tokens - shown)

