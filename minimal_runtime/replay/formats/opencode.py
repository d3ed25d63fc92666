"""opencode's (and kilo's, its fork's) ``opencode export <session>`` JSON: ``{info, messages}``,
each message ``{info, parts}`` as opencode's ``MessageV2`` defines them (the SDK's types):

- ``info``: ``role``, ``time.created`` (ms); on an assistant message ``modelID``, ``providerID``,
  ``cost`` and ``tokens`` (``input``, ``output``, ``reasoning``, ``cache: {read, write}``);
- ``parts``: ``text``, ``reasoning``, ``tool`` (``callID``, ``tool``, ``state: {status, input,
  output | error}``: the call and its result in one part), ``step-start`` and ``step-finish``
  (``tokens`` and ``cost`` of one model request), ``patch``, ``file``, ...

One assistant message can hold several steps, each a model request with its own usage: each step is
one call here, its tool parts answered by their own output. A message without steps is one call
priced by its ``info.tokens``. ``tokens.input`` is read as the uncached part (the AI SDK's
``inputTokens`` less the cache, as opencode records it for Anthropic) [INFERRED].
"""

from __future__ import annotations

from ..build import Builder, an_object, at_line, count, dollars, seconds, usage_of
from ..recorded import RecordedRun, RecordedUsage
from ..source import Source

NAME = "an opencode or kilo `export` JSON"


def recognise(source: Source) -> bool:
    d = source.head
    return isinstance(d, dict) and isinstance(d.get("info"), dict) and isinstance(d.get("messages"), list) \
        and all(isinstance(m, dict) and "info" in m and "parts" in m for m in d["messages"][:3])


def read(source: Source) -> list[RecordedRun]:
    path, d = source.path, source.head
    run = RecordedRun(source="opencode", path=str(path))
    build = Builder(run)
    costs = []
    for index, m in enumerate(d["messages"], start=1):
        with at_line(path, index, "message"):
            info, parts = an_object(an_object(m, "message")["info"], "info"), m["parts"]
            if info.get("role") != "assistant":
                build.user([{"type": "text", "text": p["text"]} for p in parts
                            if p.get("type") == "text" and p.get("text") and not p.get("synthetic")], index)
                for p in parts:
                    if p.get("type") not in ("text",):
                        build.skip(f"user part/{p.get('type')}")
                continue
            model = info.get("modelID") if isinstance(info.get("modelID"), str) else None
            steps = _steps(parts)
            at = seconds((info.get("time") or {}).get("created"))
            for k, (step, finish) in enumerate(steps):
                usage = _tokens((finish or {}).get("tokens") if finish else info.get("tokens") if len(steps) == 1 else None)
                costs.append(dollars(finish.get("cost"), "step-finish.cost") if finish else
                             dollars(info.get("cost"), "info.cost") if len(steps) == 1 else None)
                content, results = [], []
                for p in step:
                    kind = p.get("type")
                    if kind == "text" and p.get("text"):
                        content.append({"type": "text", "text": p["text"]})
                    elif kind == "reasoning" and p.get("text"):
                        content.append({"type": "thinking", "thinking": p["text"], "signature": ""})
                    elif kind == "tool":
                        state = p.get("state") or {}
                        content.append({"type": "tool_use", "id": p["callID"], "name": p["tool"],
                                        "input": state.get("input") or {}})
                        result = state.get("output") if state.get("status") == "completed" else state.get("error")
                        results.append({"type": "tool_result", "tool_use_id": p["callID"], "content": str(result or ""),
                                        **({"is_error": True} if state.get("status") == "error" else {})})
                    elif kind not in ("step-start", "step-finish"):
                        build.skip(f"part/{kind}")
                build.assistant(f"{info.get('id')}#{k}", content, usage, index, at, model=model, cost=costs[-1])
                build.user(results, index)
    if costs and None not in costs:
        run.cost_usd, run.cost_from = sum(costs), "cost (its steps' cost, summed)"
    return [run]


def _steps(parts: list[dict]) -> list[tuple[list[dict], dict | None]]:
    """The message's parts cut into model requests at each step-start: (parts, its step-finish)."""
    if not any(p.get("type") == "step-start" for p in parts):
        return [(parts, next((p for p in parts if p.get("type") == "step-finish"), None))]
    steps: list[tuple[list[dict], dict | None]] = []
    for p in parts:
        if p.get("type") == "step-start" or not steps:
            steps.append(([], None))
        if p.get("type") == "step-finish":
            steps[-1] = (steps[-1][0], p)
        else:
            steps[-1][0].append(p)
    return steps


def _tokens(t) -> RecordedUsage | None:
    if not isinstance(t, dict):
        return None
    cache = t.get("cache") or {}
    return usage_of(count(t.get("input"), "tokens.input"), count(cache.get("read"), "tokens.cache.read") or 0,
                    count(cache.get("write"), "tokens.cache.write") or 0,
                    (count(t.get("output"), "tokens.output") or 0) + (count(t.get("reasoning"), "tokens.reasoning") or 0))
