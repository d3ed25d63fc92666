"""Each format's ``recorded`` row prices the log as the log priced itself (issue 62 items 2-4, 9-12,
14): within 5% of the log's own cost wherever the log carries one, each departure said."""

from __future__ import annotations

import json


import pytest

from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import rows, table
from tests.replay.cli_logs import MODEL, write_cline_cli, write_mini_swe_agent, write_opencode, write_pi


@pytest.mark.parametrize("usage_style", ["anthropic", "openai", "deepseek"])
def test_mini_swe_agent_recorded_bills_what_the_log_billed_its_misses_included(tmp_path, usage_style):
    (run,) = load(write_mini_swe_agent(tmp_path, usage_style, miss_every=3))
    assert all(c.usage.cache_read is not None for c in run.calls)  # each provider's cache figures read
    if usage_style == "anthropic":
        assert sum(c.usage.cache_write for c in run.calls) > 0
    recorded = replay(run, "recorded")
    assert recorded.cost == pytest.approx(run.cost_usd, rel=0.05)
    assert any("the log missed the cache" in n for n in recorded.notes)


def test_a_mini_swe_agent_trajectory_that_counts_more_calls_than_it_shows_says_so(tmp_path):
    (run,) = load(write_mini_swe_agent(tmp_path, "deepseek", dropped=3))
    shown = len(run.calls)
    assert any(f"counts {shown + 3} calls (info.model_stats.api_calls) and shows {shown}" in n for n in run.notes)
    assert f"counts {shown + 3} calls" in table(run, [replay(run, "recorded")])


def test_recorded_does_not_say_it_departs_where_it_billed_the_log_s_own_split(tmp_path):
    path = write_mini_swe_agent(tmp_path, "anthropic", miss_every=3)
    (run,) = load(path)
    text = table(run, [replay(run, "recorded")])
    assert "the log missed the cache" in text and "recorded departs" not in text


def _pi_lines(tmp_path, rounds=5):
    path = write_pi(tmp_path, rounds=rounds)
    return path, [json.loads(x) for x in path.read_text().splitlines()]


def _write(path, lines):
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def test_a_pi_session_whose_first_call_is_a_free_model_s_is_billed_as_the_model_it_paid_for(tmp_path):
    """A real $30.33 session began with a $0 gpt-5.1-codex call (a subscription's): the run's model was
    taken from it, nothing priced it, and every row was NaN (issue 62 item 3)."""
    path, lines = _pi_lines(tmp_path, rounds=12)  # the free call a small part of the run, as in the real one
    first = next(d["message"] for d in lines if d.get("message", {}).get("role") == "assistant")
    first.update(model="gpt-5.1-codex", provider="openai-codex")
    first["usage"]["cost"]["total"] = 0
    (run,) = load(_write(path, lines))
    assert run.model == "claude-sonnet-4-6"
    logged = rows(run, [])[0]
    assert logged["cost"] == logged["cost"] and logged["cost"] is not None
    recorded = replay(run, "recorded")  # the free call billed as the run's model: the +1.9% of the real one
    assert recorded.cost == pytest.approx(run.cost_usd, rel=0.05)


def _cline_cli_first_call_as(path, model, cost):
    d = json.loads(path.read_text())
    first = next(m for m in d["messages"] if m["role"] == "assistant")
    first["modelInfo"]["id"], first["metrics"]["cost"] = model, cost
    path.write_text(json.dumps(d))


def _opencode_first_call_as(path, model, cost):
    d = json.loads(path.read_text())
    first = next(m for m in d["messages"] if m["info"]["role"] == "assistant")
    first["info"].update(modelID=model, cost=cost)
    next(p for p in first["parts"] if p["type"] == "step-finish")["cost"] = cost
    path.write_text(json.dumps(d))


@pytest.mark.parametrize("first_model, first_cost", [("gpt-5.1-codex", 0.0), ("claude-haiku-4-5", 0.0004)])
@pytest.mark.parametrize("write, first_call_as", [(write_cline_cli, _cline_cli_first_call_as),
                                                  (write_opencode, _opencode_first_call_as)],
                         ids=["cline-cli", "opencode"])
def test_a_run_whose_first_call_is_a_cheap_or_unpriced_model_s_is_billed_as_the_model_it_paid_for(
        tmp_path, write, first_call_as, first_model, first_cost):
    """Every format takes the run's model as pi does (``build.billed_model``): Cline CLI and opencode
    took the first call's, so a run opened by a free or a cheap model's call was priced as that model
    (NaN where nothing prices it, a tenth of the bill on Haiku)."""
    path = write(tmp_path, rounds=12)
    first_call_as(path, first_model, first_cost)
    (run,) = load(path)
    assert run.model == MODEL and run.calls[0].model == first_model
    logged = rows(run, [])[0]
    assert logged["cost"] == pytest.approx(run.cost_usd, rel=0.05)
    assert replay(run, "recorded").cost == pytest.approx(run.cost_usd, rel=0.05)


def test_a_pi_request_that_failed_is_not_replayed_and_its_prompt_not_counted(tmp_path):
    """pi keeps a failed request (stopReason error, zero usage) in its session and never sends it back:
    replayed as a call, it added its whole prompt to recorded's count (item 14: 57.53M against 56.38M)."""
    path, lines = _pi_lines(tmp_path)
    (clean,) = load(path)
    k = next(i for i, d in enumerate(lines) if d.get("message", {}).get("role") == "assistant")
    answer = lines[k]
    failed = {"type": "message", "id": "failed-1", "parentId": answer["parentId"], "message": {
        "role": "assistant", "content": [{"type": "toolCall", "id": "call_broken", "name": "Bash", "arguments": {}}],
        "model": "claude-sonnet-4-6", "provider": "anthropic", "stopReason": "error",
        "errorMessage": "overloaded_error", "timestamp": answer["message"]["timestamp"] - 1,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0}}}}
    result = {"type": "message", "id": "failed-1-result", "parentId": "failed-1", "message": {
        "role": "toolResult", "toolCallId": "call_broken", "toolName": "Bash",
        "content": [{"type": "text", "text": "aborted"}], "isError": True}}
    answer["parentId"] = "failed-1-result"
    lines[k:k] = [failed, result]
    (run,) = load(_write(path, lines))
    assert len(run.calls) == len(clean.calls)
    assert any("1 request(s) failed" in n for n in run.notes)
    logged = sum(c.usage.prompt_tokens for c in run.calls)
    assert replay(run, "recorded").prompt_tokens == pytest.approx(logged, rel=0.005)


# $ per MTok as Anthropic's pricing page listed them: input, 5-minute write, 1-hour write, hit, output
CLAUDE_3 = {"claude-3-sonnet-20240229": (3, 3.75, 6, 0.30, 15), "claude-3-opus-20240229": (15, 18.75, 30, 1.50, 75),
            "claude-3-5-sonnet-20241022": (3, 3.75, 6, 0.30, 15), "claude-3-haiku-20240307": (0.25, 0.30, 0.50, 0.03, 1.25)}


@pytest.mark.parametrize("model", sorted(CLAUDE_3))
def test_a_retired_claude_3_model_is_billed_at_its_listed_prices(tmp_path, model, capsys):
    from minimal_runtime.__main__ import main
    from minimal_runtime.replay.report import usage_bill
    from tests.replay.test_bill import old_session
    path, run, calls = old_session(tmp_path, model)
    fresh, write_5m, _, hit, out = CLAUDE_3[model]
    expected = sum(u["input_tokens"] * fresh + u["cache_creation_input_tokens"] * write_5m
                   + u["cache_read_input_tokens"] * hit + u["output_tokens"] * out for u in calls) / 1e6
    assert usage_bill(run) == pytest.approx(expected)
    recorded = replay(run, "recorded")
    assert recorded.cost == pytest.approx(expected, rel=0.02)
    main(["replay", str(path), "--strategy", "recorded", "--plot", "none"])
    captured = capsys.readouterr()
    assert "not in the price table" not in captured.err and f"{model} is retired from the API" in captured.out


def test_a_stream_json_log_without_model_usage_has_its_output_solved_from_its_total(tmp_path):
    """An older Claude Code stream-json log: placeholder output counts, no modelUsage, no result usage,
    every prompt figure known and total_cost_usd: estimated, recorded came to -7.5% (issue 62 item 4)."""
    from tests.replay.test_real_variants import assistant, init, result, tool_use, usage, write
    calls = [usage(10, 20_000, 0, out=3), usage(10, 1_000, 20_000, out=3), usage(10, 1_000, 21_000, out=3)]
    output = [2_400, 900, 3_100]  # what the calls really wrote: the log's counts are placeholders
    true = sum(u["input_tokens"] * 3 + u["cache_creation_input_tokens"] * 3.75 + u["cache_read_input_tokens"] * 0.3
               + out * 15 for u, out in zip(calls, output)) / 1e6  # Sonnet 4.5's prices per MTok
    lines = [init()]
    for k, u in enumerate(calls, start=1):
        text = {"type": "text", "text": "word " * (200 * k)}
        lines += [assistant(f"msg_{k}", [text, tool_use(f"toolu_{k}")] if k < 3 else [text], u)]
        lines += [result(f"toolu_{k}", "x = 1\n" * 200)] if k < 3 else []
    lines.append({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "total_cost_usd": true})
    (run,) = load(write(tmp_path / "older.stream.jsonl", lines))
    assert sum(c.usage.output for c in run.calls) == sum(output)
    assert any("solved from the log's own total_cost_usd" in n for n in run.notes)
    assert replay(run, "recorded").cost == pytest.approx(true, rel=0.01)


def test_server_compact_rows_that_replayed_nothing_are_n_a_and_summed_nowhere(tmp_path, capsys):
    """On a model without server-side compaction the strategy stops at call 1: its row printed cost
    0.000, and the folder added it up as '68 runs 0 calls $0.000' (issue 62 item 11)."""
    from minimal_runtime.__main__ import main
    path = write_pi(tmp_path / "logs", model="claude-sonnet-4-5", rounds=2)
    (run,) = load(path)
    nothing = replay(run, "server-compact")
    assert not nothing.calls and nothing.stopped
    (row,) = [r for r in rows(run, [nothing]) if r["strategy"] == "server-compact"]
    assert row["cost"] is None
    line = next(x for x in table(run, [nothing]).splitlines() if x.startswith("server-compact"))
    assert line.split()[5] == "n/a"
    main(["replay", str(tmp_path / "logs"), "--strategy", "recorded", "--strategy", "server-compact", "--jobs", "1"])
    folder = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("server-compact"))
    assert folder.split()[1:6] == ["0", "0", "0", "n/a", "n/a"] and "1 replayed nothing" in folder


@pytest.mark.filterwarnings("ignore:model 'unknown' is not in the model table")  # the log names no model
def test_a_log_with_no_usage_says_its_shares_are_the_replay_s_own(tmp_path):
    """No usage and no model: the rows showed a 50.6% cache-read share nothing recorded (item 10)."""
    from tests.replay.cli_logs import write_codex
    (run,) = load(write_codex(tmp_path, rounds=2))
    assert not any(c.usage for c in run.calls) and run.model is None
    text = table(run, [replay(run, "recorded")])
    assert "the log records no usage: every row's tokens, cache reads and cost are the replay's own estimates" in text
    assert "give --model" in text
