"""A headless log of a resumed session (``claude -p --resume ID``): Claude Code (2.1.332, seen in
``make interop``'s logs) ends it with ``modelUsage`` and ``total_cost_usd`` counting the session since
it began, the earlier processes' calls included, and ``model_usage_since_last_result`` counting this
log's own. Read as the log's totals, the earlier calls become "calls the log does not show" and are
billed again: turn 2 of a two-turn run came to $0.1206 for 3 calls that cost $0.0225."""

from __future__ import annotations

from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import own_cost_line
from tests.replay.test_real_variants import assistant, init, result, tool_use, usage, write

MODEL = "claude-sonnet-4-6"


def model_usage(fresh: int, read: int, write_: int, out: int) -> dict:
    cost = CallRecord(model=MODEL, input_tokens=fresh, cache_creation_input_tokens=write_, cache_creation_5m=write_,
                      cache_read_input_tokens=read, output_tokens=out).cost
    return {"inputTokens": fresh, "outputTokens": out, "cacheReadInputTokens": read, "cacheCreationInputTokens": write_,
            "costUSD": cost, "contextWindow": 200_000}


def resumed_log(tmp_path):
    calls = [usage(0, 241, 22_192, out=4), usage(0, 59, 22_251, out=4), usage(0, 100, 22_351, out=4)]
    own = model_usage(0, sum(u["cache_read_input_tokens"] for u in calls),
                      sum(u["cache_creation_input_tokens"] for u in calls), 106)
    earlier = model_usage(0, 44_120, 22_192, 105)  # the first process of the session
    session = {k: own[k] + earlier[k] for k in ("inputTokens", "outputTokens", "cacheReadInputTokens",
                                                 "cacheCreationInputTokens", "costUSD")}
    lines = [{**init(), "model": MODEL, "claude_code_version": "2.1.332"},
             assistant("msg_1", [tool_use("toolu_1")], calls[0]), result("toolu_1", "a.py"),
             assistant("msg_2", [tool_use("toolu_2", "Read", file_path="a.py")], calls[1]), result("toolu_2", "x = 1"),
             assistant("msg_3", [{"type": "text", "text": "Done: a.py sets x."}], calls[2]),
             {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3,
              "total_cost_usd": session["costUSD"],
              "usage": {"input_tokens": 0, "cache_creation_input_tokens": own["cacheCreationInputTokens"],
                        "cache_read_input_tokens": own["cacheReadInputTokens"], "output_tokens": 106},
              "modelUsage": {MODEL: {**own, **session}},
              "model_usage_since_last_result": {MODEL: own}}]
    for line in lines:
        if line.get("type") == "assistant":
            line["message"]["model"] = MODEL
    return write(tmp_path / "turn-2.stream.jsonl", lines), own["costUSD"], session["costUSD"]


def test_a_resumed_session_bills_its_own_calls_not_the_earlier_processes(tmp_path):
    path, own_cost, session_cost = resumed_log(tmp_path)
    (run,) = load(path)
    assert run.unlogged == {}, "the earlier process's calls read as calls this log does not show"
    recorded = replay(run, "recorded")
    assert abs(recorded.cost / own_cost - 1) < 0.02, (recorded.cost, own_cost, session_cost)
    line = own_cost_line(run, [recorded])
    assert f"${own_cost:.4f}" in line and f"${session_cost:.4f}" in line and "resumed" in line
