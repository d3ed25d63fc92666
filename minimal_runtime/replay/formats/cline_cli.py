"""Cline CLI 3.x sessions: ``data/sessions/<id>/<id>.messages.json``, one JSON document
``{version, sessionId, origin: {source: "cli", version, ...}, messages: [...]}``; each message is
``{id, role, content, ts, modelInfo: {id, provider}, metrics}``, ``content`` in the Messages API's
own blocks (``thinking``, ``text``, ``tool_use``; ``tool_result`` in user messages).

``metrics`` carries the request's usage and cost on the assistant message it produced. Its field
names are read as ``inputTokens`` (uncached), ``outputTokens``, ``cacheReadTokens``,
``cacheWriteTokens``, ``cost``, and as the older ``ClineMessageMetricsInfo`` of
``src/shared/messages`` (``tokens: {prompt, completion, cached}``, ``prompt`` including the cached
part, no writes). [UNCERTAIN] no public source of the 3.x ``metrics`` names was found; the issue
filed against this module says they equal ``serve``'s per-call figures, so ``inputTokens`` is read
as the uncached part, as the Messages API reports it.
"""

from __future__ import annotations

from ..build import Builder, an_object, at_line, blocks, count, dollars, seconds, usage_of
from ..recorded import RecordedRun, RecordedUsage
from ..source import Source

NAME = "a Cline CLI 3 session's <id>.messages.json"


def recognise(source: Source) -> bool:
    d = source.head
    return isinstance(d, dict) and isinstance(d.get("messages"), list) and \
        isinstance(d.get("origin"), dict) and "sessionId" in d


def read(source: Source) -> list[RecordedRun]:
    path, d = source.path, source.head
    run = RecordedRun(source="cline-cli", path=str(path))
    build = Builder(run)
    costs = []
    for index, m in enumerate(d["messages"], start=1):
        with at_line(path, index, "message"):  # the message's position in the array
            m = an_object(m, "message")
            content = blocks(m.get("content"))
            if m.get("role") != "assistant":
                build.user(content, index)
                continue
            model = (m.get("modelInfo") or {}).get("id") or (m.get("modelInfo") or {}).get("modelId")
            model = model if isinstance(model, str) else None
            usage, cost = _metrics(m.get("metrics"))
            costs.append(cost)
            build.assistant(m.get("id"), content, usage, index, seconds(m.get("ts")), model=model, cost=cost)
    if costs and None not in costs:
        run.cost_usd, run.cost_from = sum(costs), "cost (its messages' metrics.cost, summed)"
    return [run]


def _metrics(metrics) -> tuple[RecordedUsage | None, float | None]:
    if not isinstance(metrics, dict):
        return None, None
    cost = dollars(metrics.get("cost"), "metrics.cost")
    tokens = metrics.get("tokens")
    if isinstance(tokens, dict):  # ClineMessageMetricsInfo: prompt includes the cached part; writes not said
        prompt, cached = count(tokens.get("prompt"), "metrics.tokens.prompt") or 0, \
            count(tokens.get("cached"), "metrics.tokens.cached") or 0
        return RecordedUsage(prompt_tokens=prompt, cache_read=cached,
                             output_tokens=count(tokens.get("completion"), "metrics.tokens.completion")), cost
    return usage_of(count(metrics.get("inputTokens"), "metrics.inputTokens"),
                    count(metrics.get("cacheReadTokens"), "metrics.cacheReadTokens") or 0,
                    count(metrics.get("cacheWriteTokens"), "metrics.cacheWriteTokens") or 0,
                    count(metrics.get("outputTokens"), "metrics.outputTokens")), cost
