"""The one builder every format feeds: messages in order become a ``RecordedRun``.

A format module reads its file and says, message by message, what the model was asked and what it
answered (``Builder.user``, ``Builder.assistant``, ``Builder.compaction``); the builder pairs tool
results with their calls, tells one call logged over several lines from two calls, and counts what
it skipped. The small checks every format needs live here too: a block list, a token count, an
amount of dollars, a timestamp, and ``at_line``, which turns whatever a line's shape breaks into one
``TrajectoryError`` naming the file and the line.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from .recorded import RecordedCall, RecordedRun, RecordedUsage, TrajectoryError

TOO_DEEP = "JSON nested too deeply to read (thousands of levels): no agent writes that"
PER_CALL = 10**8  # tokens: no model reads or writes this many in one call (windows are ~1M)
PER_RUN = 10**10  # tokens: no run's totals reach this (ten billion; a day of heavy use is a few hundred million)


class Builder:
    """Turns a stream of user/assistant messages (with line numbers) into a RecordedRun.

    Tool results are paired with the previous call's tool uses in order: by id where ids are
    unique, by position where a log has redacted them all to one placeholder. Repeated ids are
    renamed so the replayed history stays valid, and the run carries a note saying so."""

    def __init__(self, run: RecordedRun, prompt_may_be_missing: bool = False, file: str | None = None):
        self.run, self._compaction = run, None
        self.file = file or run.path  # what an error names: the file, not the run within it
        self._call_key: tuple[str | None, int | None] = (None, None)
        self._pending: list[tuple[str, str]] = []  # the last call's unanswered tool uses: (logged id, our id)
        self._ids: set[str] = set()
        self._prompt_may_be_missing = prompt_may_be_missing

    @property
    def last_call_id(self) -> str | None:
        """The logged id of the last call (a format whose one response is logged as several events asks)."""
        return self._call_key[0]

    def skip(self, kind: str) -> None:
        self.run.skipped[kind] = self.run.skipped.get(kind, 0) + 1

    def note(self, text: str) -> None:
        if text not in self.run.notes:
            self.run.notes.append(text)

    def user(self, blocks: list[dict], line: int | None) -> None:
        for block in sendable(blocks):
            if block.get("type") == "tool_result":
                logged = block.get("tool_use_id")
                match = next((k for k, (was, _) in enumerate(self._pending) if was == logged), None)
                if match is None:
                    raise TrajectoryError(self.file, line, f"tool_result for {logged!r} "
                                          "without its tool_use in the call before it")
                ours = self._pending.pop(match)[1]
                self.run.calls[-1].results[ours] = {**block, "tool_use_id": ours}
            elif self._compaction is not None:
                self._compaction.append(block)
            elif not self.run.calls:
                self.run.task.append(block)
            else:
                self.run.calls[-1].then_user.append(block)

    def compaction(self, summary: str) -> None:
        self._compaction = [{"type": "text", "text": summary}]

    def _unique(self, block: dict) -> dict:
        logged = block.get("id") or "tool_use"
        ours, k = logged, 1
        while ours in self._ids:
            ours, k = f"{logged}~{k}", k + 1
        if ours != logged:
            self.note("tool-use ids repeat in this log (redacted?): results were paired with their calls by position")
        self._ids.add(ours)
        self._pending.append((logged, ours))
        return {**block, "id": ours}

    def assistant(self, call_id: str | None, blocks: list[dict], usage: RecordedUsage | None, line: int | None,
                  at: float | None = None, model: str | None = None, cost: float | None = None) -> None:
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") not in self.run.tools:
                self.run.tools.append(block["name"])
        blocks = [self._unique(b) if b.get("type") == "tool_use" else b for b in sendable(blocks)]
        # One call is logged over several lines that repeat its message id and its prompt size (the
        # output count grows line by line: the last line's is the call's); a log with redacted ids
        # repeats the id across calls, and the prompt size tells those calls apart.
        key = (call_id, usage.prompt_tokens if usage else None)
        if call_id is not None and key == self._call_key:
            self.run.calls[-1].assistant["content"].extend(blocks)
            self.run.calls[-1].usage = usage
            self.run.calls[-1].cost = cost if cost is not None else self.run.calls[-1].cost
            return
        if call_id is not None and call_id == self._call_key[0]:
            self.note("message ids repeat in this log (redacted?): calls were told apart by their prompt size")
        if not self.run.task and not self.run.calls:
            if not self._prompt_may_be_missing:
                raise TrajectoryError(self.file, line, "an assistant message before any user message")
            self.run.task.append({"type": "text", "text": "[the prompt of this run is not in its log]"})
            self.run.prompt_missing = True
            self.note("the log has no prompt line (headless stream-json): a placeholder of the size the first "
                      "call implies stands in for it")
        self._call_key = key
        self._pending = [p for p in self._pending if p[1] in {b.get("id") for b in blocks}]
        self.run.calls.append(RecordedCall(assistant={"role": "assistant", "content": list(blocks)}, usage=usage, at=at,
                                           model=model, cost=cost,
                                           compacted_before=text_of(self._compaction) if self._compaction else None))
        self._compaction = None


def billed_model(run: RecordedRun) -> str | None:
    """The run's model, taken the same way for every format (``formats.runs`` sets it): the one its
    log billed most for, each call at the cost the log gives it, else its usage at its model's price
    (calls of a model the log priced at $0, a subscription's, or that nothing prices, are not what
    the run cost: a run whose first call was such a model was billed as NaN or $0), else the one most
    calls name; a call that names no model is the format's own ``run.model``'s. The first of equals."""
    models = [c.model or run.model for c in run.calls]
    spent: dict[str, float] = {}
    for model, call in zip(models, run.calls):
        if model:
            cost = call.cost if call.cost is not None else call.usage.cost(model, call.at) if call.usage else None
            spent[model] = spent.get(model, 0.0) + (cost if cost is not None and math.isfinite(cost) else 0.0)
    if any(spent.values()):
        return max(spent, key=lambda m: spent[m])  # max keeps the first of equals
    named = [m for m in models if m]
    return max(dict.fromkeys(named), key=named.count) if named else run.model


def sendable(blocks: list[dict]) -> list[dict]:
    """Without the whitespace-only text blocks a model may answer with: the API refuses them in a
    request, so an agent drops them before it sends its history back, and so does the replay."""
    return [b for b in blocks if b.get("type") != "text" or b.get("text", "").strip()]


def text_of(blocks: list[dict]) -> str:
    return "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")


def seconds(timestamp: Any) -> float | None:
    """An ISO 8601 time, or milliseconds since the epoch (a number), as seconds since the epoch."""
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return timestamp / 1000
    if not timestamp or not isinstance(timestamp, str):
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def blocks(content: Any) -> list[dict]:
    """A message's content as blocks; anything that is not text or a list of typed blocks is refused."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = list(content or []) if isinstance(content, list) or content is None else None
    if out is None or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in out):
        raise ValueError(f"content that is neither text nor a list of blocks: {str(content)[:60]!r}")
    for b in out:
        if b["type"] == "tool_use" and not (isinstance(b.get("id"), str) and isinstance(b.get("name"), str)
                                             and isinstance(b.get("input", {}), dict)):
            raise ValueError("a tool_use block without a string id and name and an object input")
        if b["type"] == "tool_result" and not isinstance(b.get("tool_use_id"), str):
            raise ValueError("a tool_result block without a tool_use_id")
        if b["type"] == "text" and not isinstance(b.get("text"), str):
            raise ValueError("a text block without text")
    return out


class BadNumber(ValueError):
    """A count in a log that cannot be one: negative, not a whole number, or absurdly large."""


class BadShape(ValueError):
    """A part of a line that is not what its format says (a message that is null, say): said as it is."""


JSON_KINDS = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
              list: "a list", dict: "an object"}


def an_object(value: Any, field: str) -> dict:
    """``value``, where it is a JSON object; anything else raises ``BadShape`` naming ``field``."""
    if not isinstance(value, dict):
        raise BadShape(f"{field} is {JSON_KINDS.get(type(value), type(value).__name__)}, not an object")
    return value


def count(value: Any, field: str, limit: int = PER_CALL) -> int | None:
    """A token count from a log, or None where the log leaves it out; anything that cannot be a
    count raises ``BadNumber`` naming the field (the line is named by whoever reads the line)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, float) and not value.is_integer():
        raise BadNumber(f"{field} is {str(value)[:40]!r}, not a whole number of tokens")
    if value < 0:
        raise BadNumber(f"{field} is {value:,}: a token count cannot be negative")
    if value > limit:
        raise BadNumber(f"{field} is {magnitude(value)}: more tokens than any {'call' if limit == PER_CALL else 'run'} "
                        f"has (over {limit:,})")
    return int(value)


def magnitude(value: int | float) -> str:
    """A huge number as a refusal can show it: ``{:.3g}`` turns an int into a float first, and an int
    past a float's range (a JSON count of 10**400 is one) cannot become one."""
    try:
        return f"{value:.3g}"
    except OverflowError:
        return f"a number of {len(str(abs(value)))} digits"


def dollars(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
        raise BadNumber(f"{field} is {str(value)[:40]!r}, not an amount of dollars")
    return float(value)


def usage_of(fresh: int | None, read: int | None, written: int | None, output: int | None,
             written_1h: int = 0, searches: int = 0) -> RecordedUsage:
    """A call's usage from the Messages API's split: uncached input, cache reads, cache writes (and
    the web searches it ran, billed per search)."""
    return RecordedUsage(prompt_tokens=(fresh or 0) + (read or 0) + (written or 0), cache_read=read, cache_write=written,
                         cache_write_1h=min(written or 0, written_1h), output_tokens=output, web_search_requests=searches)


def searches_of(usage: dict) -> int:
    """``usage.server_tool_use.web_search_requests`` of a Messages API usage, 0 where it is absent."""
    server = usage.get("server_tool_use")
    return count((server if isinstance(server, dict) else {}).get("web_search_requests"),
                 "usage.server_tool_use.web_search_requests") or 0


@contextmanager
def at_line(path: Path | str, number: int | None, kind: str) -> Iterator[None]:
    """Whatever a line's shape breaks while it is read is reported as that line's fault."""
    try:
        yield
    except TrajectoryError:
        raise
    except (BadNumber, BadShape) as e:
        raise TrajectoryError(str(path), number, str(e)) from None
    except ValidationError as e:  # one line, not pydantic's dump: the first field it refused
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise TrajectoryError(str(path), number, f"a {kind or 'line'} of an unexpected shape: {where}: {first['msg']}") from None
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise TrajectoryError(str(path), number, f"a {kind or 'line'} of an unexpected shape: {e}") from None
    except RecursionError:
        raise TrajectoryError(str(path), number, TOO_DEEP) from None
