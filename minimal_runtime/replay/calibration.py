"""Replayed tokens in the log's own tokens: a calibration of the emulator's estimate, per log.

The emulator counts four characters a token; the provider's tokenizer reads code, JSON and prose
differently, so an estimated prompt can be a third smaller than the logged one, and the bill with
it. Where a log records usage, the replay maps its token counts onto the log's:

- the messages: a map from prompt positions (estimated tokens) to the log's tokens, built call by
  call from the uncalibrated ``recorded`` replay. Call k's prompt starts with what call k-1 sent
  (all of it, or after a compaction the system and tools): that prefix maps as it did on call k-1,
  so the tokens a call reads from cache are the tokens the calls that wrote them sent, in the
  log's own counts; only what call k added is stretched, to end where the log's call k ended.
  One factor per call over its whole prompt fits the totals as well but not the prefix: a call
  whose new content counts 6 log tokens per estimated one (a file read the stream truncated, an
  attachment the log does not show) would stretch everything before it too, and read from cache
  more than the log's previous prompt held. Every strategy's call k takes call k's map (the same
  point of the same run); past the end of the recorded prompt (a strategy's own additions) the
  call's mean factor, ``factors[k]``, applies;
- what the log does not show at all (the hidden system prompt and, until the log's first
  compaction, the hidden part of its first message) is filler the replay sized in the log's
  tokens already: it is taken as it is;
- cache writes, on a log that reports cache hits only (DeepSeek's ``prompt_cache_hit_tokens``):
  billed as input, as that provider bills a miss;
- output: the replay re-issues the logged answers, so each call's output is the log's: its
  ``output_tokens`` where they are real, recovered where they are streaming placeholders
  (``output.py``: from the log's totals, or estimated from what each call wrote).

A call's tokens are read in prefix order (cache read, then cache write, then uncached input), so
the map is applied to prefix positions. Every
strategy of a log gets the same calibration, so their differences are in the log's own tokens.
The strategies' own limits (a compaction past 60,000 tokens) are in the log's tokens too: the
runtime's features measure the emulator's estimate, so a limit is handed to them as the estimate
that calibrates to it (``Limits``), at the call where the log itself first passed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..provider.cost import CallRecord
from .recorded import RecordedRun


@dataclass(frozen=True)
class Link:
    """Call k's map past the prefix it shares with call k-1: ``shared`` estimated tokens map as on
    call k-1 (to ``at``), then ``slope`` log tokens per estimated token up to ``end``, the recorded
    prompt's size (where it lands on the log's own prompt size)."""

    shared: int
    at: float
    slope: float
    end: int


@dataclass(frozen=True)
class Calibration:
    """Prompt positions ``[start, start + hidden)`` (the hidden system prompt, and until the log's
    first compaction its hidden prompt) are filler sized in the log's tokens already; everything else
    is the log's own content: on a call with no ``links[k]`` (the first, or one the log does not
    chain), ``factors[k]`` log tokens per estimated token (``factor``, the run's, on calls past the
    log's); on the others, call k-1's map over the prefix they share and ``links[k]`` past it."""

    start: int = 0  # estimated tokens of what the log shows of the head: tool definitions, system text
    hidden_system: int = 0
    hidden_prompt: int = 0
    prompt_until: int = 0  # the first call without the hidden prompt (the log's first compaction)
    factor: float = 1.0
    factors: tuple[float, ...] = ()  # per call, where the log says: its mean over the call's content
    outputs: tuple[int | None, ...] = ()  # the log's output tokens per call (None: not logged)
    writes_as_input: bool = False  # the log reports cache hits only (DeepSeek): no write premium to bill
    links: tuple[Link | None, ...] = ()  # per call: how it continues the previous call's map
    source: Any = None  # the uncalibrated ``recorded`` replay this was fit on (driver.Replay): reused, not redone

    @property
    def identity(self) -> bool:
        return self.factor == 1.0 and not any(o is not None for o in self.outputs)

    def hidden(self, k: int) -> int:
        return self.hidden_system + (self.hidden_prompt if k < self.prompt_until else 0)

    def _factor(self, k: int) -> float:
        return self.factors[k] if k < len(self.factors) else self.factor

    def _uniform(self, k: int, tokens: float) -> float:
        """Call k's content at its mean factor, the hidden part as sized."""
        end = self.start + self.hidden(k)
        fixed = min(max(tokens, self.start), end) - self.start
        return fixed + self._factor(k) * (tokens - fixed)

    def position(self, k: int, tokens: int) -> int:
        """Log tokens of the first ``tokens`` estimated tokens of call ``k``'s prompt."""
        if self.links and k >= len(self.links):  # a call past the log's: its last call's map, then the run's factor
            last = len(self.links) - 1
            end = self.links[last].end if self.links[last] else tokens
            return round(self.position(last, min(tokens, end)) + self.factor * max(0, tokens - end))
        while k < len(self.links) and self.links[k] is not None:  # a loop, not recursion: a log has thousands of calls
            link = self.links[k]
            if tokens > link.shared:
                past = min(tokens, link.end) - link.shared
                return round(link.at + link.slope * past + self._factor(k) * max(0, tokens - link.end))
            k -= 1
        return round(self._uniform(k, tokens))

    def estimated(self, k: int, tokens: int) -> int:
        """The estimated prompt size of call ``k`` that calibrates to ``tokens`` (``position``'s
        inverse: the map only grows, so a bisection finds it)."""
        low, high = 0, 1
        while self.position(k, high) < tokens:
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if self.position(k, middle) < tokens else (low, middle)
        return high

    def apply(self, k: int, call: CallRecord) -> CallRecord:
        """Call ``k`` of a replay, in the log's tokens."""
        read = self.position(k, call.cache_read_input_tokens)
        written = self.position(k, call.cache_read_input_tokens + call.cache_creation_input_tokens) - read
        total = self.position(k, call.prompt_tokens)
        one_hour = round(written * call.cache_creation_1h / call.cache_creation_input_tokens) \
            if call.cache_creation_input_tokens else 0
        output = self.outputs[k] if k < len(self.outputs) and self.outputs[k] is not None else call.output_tokens
        if self.writes_as_input:
            written, one_hour = 0, 0
        return call.model_copy(update={
            "input_tokens": total - read - written, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written, "cache_creation_1h": one_hour,
            "cache_creation_5m": written - one_hour, "output_tokens": output})

    def about(self) -> str:
        spread = f" ({min(self.factors):.2f} to {max(self.factors):.2f} by call)" if self.factors else ""
        return (f"replayed tokens calibrated to the log's usage: {self.factor:.2f} log tokens per estimated token "
                f"of the log's content{spread}"
                + ("; the prefix a call shares with the call before keeps that call's tokens" if any(self.links) else "")
                + "; the hidden prompt is sized in the log's tokens; output as the log wrote it"
                + ("; cache writes billed as input (the log reports hits only)" if self.writes_as_input else ""))


@dataclass(frozen=True)
class Limits:
    """A strategy's token limits, given in the log's tokens, as the runtime's features measure them
    (the emulator's estimate). The features take one number for the whole run: it is translated at
    call ``k``, the first the log itself sent past the limit (the point where the limit starts to
    matter), or the run's last call where it never did."""

    calibration: Calibration
    run: RecordedRun

    def _call(self, tokens: int) -> int:
        sizes = [c.usage.prompt_tokens if c.usage else 0 for c in self.run.calls]
        return next((k for k, n in enumerate(sizes) if n >= tokens), max(0, len(sizes) - 1))

    def prompt(self, tokens: int) -> int:
        """A prompt size: past it a compaction fires."""
        return self.calibration.estimated(self._call(tokens), tokens)

    def amount(self, tokens: int, at: int) -> int:
        """An amount of the log's content (``clear_at_least``), at the limit ``at``."""
        k = self._call(at)
        return round(tokens / self.calibration._factor(k))


def fit(run: RecordedRun, uncalibrated: list[CallRecord], layout: Calibration, source: Any = None) -> Calibration:
    """The calibration of ``run`` from its uncalibrated ``recorded`` replay: ``layout`` says where the
    hidden part sits; each call's map ends where the log's call ended (its prompt tokens)."""
    outputs = tuple(c.usage.output if c.usage else None for c in run.calls)
    logged = fixed = content = 0
    factors = []
    for k, (call, ours) in enumerate(zip(run.calls, uncalibrated)):
        if call.usage:
            part = min(max(ours.prompt_tokens, layout.start), layout.start + layout.hidden(k)) - layout.start
            logged, fixed, content = logged + call.usage.prompt_tokens, fixed + part, content + ours.prompt_tokens - part
            own = ours.prompt_tokens - part
            factors.append((call.usage.prompt_tokens - part) / own if call.usage.prompt_tokens > part and own > 0 else None)
        else:
            factors.append(None)
    factor = (logged - fixed) / content if logged > fixed and content > 0 else 1.0
    factors = tuple(f if f is not None else factor for f in factors)
    hits_only = all(c.usage.cache_write is None for c in run.calls if c.usage)
    uniform = Calibration(layout.start, layout.hidden_system, layout.hidden_prompt, layout.prompt_until, factor,
                          factors, outputs, hits_only)
    links: list[Link | None] = []
    for k, (call, ours) in enumerate(zip(run.calls, uncalibrated)):
        link = None
        if k:
            chained = Calibration(**{**uniform.__dict__, "links": tuple(links)})
            # what call k-1 sent and call k sends again: the whole previous prompt, or after the
            # log's compaction (the history replaced by its summary) the system and tools
            shared = layout.start + layout.hidden_system if call.compacted_before else \
                min(uncalibrated[k - 1].prompt_tokens, ours.prompt_tokens)
            at, end = chained.position(k - 1, shared), ours.prompt_tokens
            target = call.usage.prompt_tokens if call.usage else at + factor * (end - shared)
            if end > shared and target > at:  # else the log's call does not continue the last one: call k alone
                link = Link(shared, at, (target - at) / (end - shared), end)
        links.append(link)
    return Calibration(**{**uniform.__dict__, "links": tuple(links), "source": source})
