"""A recorded agent run in the runtime's own terms: Messages API dicts and what the log measured."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field


class TrajectoryError(ValueError):
    """Input that is malformed or not a trajectory, naming the file and, where there is one, the
    line (1-based) where it went wrong."""

    def __init__(self, path: str, line: int | None, problem: str):
        super().__init__(f"{path}:{line}: {problem}" if line else f"{path}: {problem}")
        self.path, self.line, self.problem = path, line, problem


class RecordedUsage(BaseModel):
    """What the provider reported for one call, as far as the log says."""

    prompt_tokens: int  # everything the model read: cached or not
    cache_read: int | None = None  # None: the log does not say
    cache_write: int | None = None
    cache_write_1h: int = 0  # the part of cache_write written with the 1-hour TTL (billed at 2x input)
    output_tokens: int | None = None  # as the log wrote it (Claude Code: a streaming placeholder)
    output_recovered: int | None = None  # what the call wrote, where the log's count is a placeholder (output.py)
    web_search_requests: int = 0  # usage.server_tool_use.web_search_requests: billed per search [pricing]

    @property
    def output(self) -> int | None:
        """The call's output as billed: recovered where the log's own count is a placeholder."""
        return self.output_recovered if self.output_recovered is not None else self.output_tokens

    @property
    def cache_read_share(self) -> float | None:
        return None if self.cache_read is None or not self.prompt_tokens else self.cache_read / self.prompt_tokens

    def cost(self, model: str, at: float | None = None) -> float | None:
        """Dollars as ``model`` is billed (``pricing.py``: the table's prices, a retired model's multiple,
        DeepSeek's list of the call's time ``at``), when something prices it and the log has cache
        figures. Cache writes are priced by their TTL, as the log breaks them down (5-minute when it does not)."""
        from ..provider.cost import CallRecord
        from .pricing import priced
        how = priced(model)
        if self.cache_read is None or how is None:
            return None
        write = self.cache_write or 0
        cost = how.cost(CallRecord(model=how.model, input_tokens=self.prompt_tokens - self.cache_read - write,
                                   cache_creation_input_tokens=write, cache_creation_5m=write - self.cache_write_1h,
                                   cache_creation_1h=self.cache_write_1h, cache_read_input_tokens=self.cache_read,
                                   output_tokens=self.output or 0, web_search_requests=self.web_search_requests), at)
        return None if math.isnan(cost) else cost


class ModelTotals(BaseModel):
    """One model's tokens over a run, as a log adds them up (Claude Code's ``modelUsage``), or the
    part of them no call in the log shows."""

    input_tokens: int = 0  # uncached
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # the log's own price for them, where it says (never billed from)

    def cost(self, model: str) -> float:
        """Dollars as ``model`` is billed (``pricing.py``; writes at the 5-minute rate: totals have no TTL
        split, and no time, so DeepSeek's are at its newest list); NaN where nothing prices it."""
        from ..provider.cost import CallRecord
        from .pricing import priced
        how = priced(model)
        if how is None:
            return math.nan
        return how.cost(CallRecord(model=how.model, input_tokens=self.input_tokens, cache_creation_input_tokens=self.cache_write,
                                   cache_creation_5m=self.cache_write, cache_read_input_tokens=self.cache_read,
                                   output_tokens=self.output_tokens))


class RecordedCall(BaseModel):
    """One model call: what the model answered, and what came back before its next call."""

    assistant: dict  # {"role": "assistant", "content": [...]}
    results: dict[str, dict] = Field(default_factory=dict)  # tool_use id -> its tool_result block
    then_user: list[dict] = Field(default_factory=list)  # text blocks the user (or harness) added after it
    usage: RecordedUsage | None = None
    compacted_before: str | None = None  # a compaction summary that replaced the history before this call
    at: float | None = None  # when the call was made, seconds since the epoch, if the log says
    model: str | None = None  # the call's own model, where the log names it per call (a session may switch)
    cost: float | None = None  # what the log says this call cost, where it says (the run's model is the one billed most)


class RecordedRun(BaseModel):
    source: str  # the format's name: claude-code, claude-code-stream, mini-swe-agent, openhands, cline, ...
    path: str
    model: str | None = None
    system: str = ""
    tools: list[str] = Field(default_factory=list)  # tool names seen in the log
    task: list[dict] = Field(default_factory=list)  # the first user message's blocks
    calls: list[RecordedCall] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)  # line or event kinds that are not conversation
    notes: list[str] = Field(default_factory=list)  # what the import had to assume, for the report
    prompt_missing: bool = False  # the log has no prompt line (headless): ``task`` is a placeholder
    cost_usd: float | None = None  # what the log says its calls cost, when it says: never billed from
    cost_from: str = "total_cost_usd"  # where in the log ``cost_usd`` comes from, as the report names it
    session_cost_usd: float | None = None  # a resumed session's total since it began, where it differs (Claude Code)
    model_usage: dict[str, ModelTotals] = Field(default_factory=dict)  # the log's totals per model, where it has them
    unlogged: dict[str, ModelTotals] = Field(default_factory=dict)  # per model: calls the log counts but does not show
    output_from: str | None = None  # where the output came from, where not the log's per-call counts (output.py)
    # each call's usage is the API's own for the very request the replay re-sends (serve --log): ``recorded`` bills
    # every call with the log's split, however small the difference from the replay's own cache
    usage_exact: bool = False

    @property
    def compactions(self) -> int:
        return sum(c.compacted_before is not None for c in self.calls)
