"""What a run cost, from its log: the output the log really wrote (its per-call counts are streaming
placeholders), a call logged over several lines, the log's own split of cached and uncached tokens, a
cache another process warmed, a log that ends in an interrupt, and numbers that cannot be counts.
Logs are generated here: by the runtime on the emulator (``replay.current``), or line by line in
the shapes of real ones (``test_real_variants``)."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.replay import calibrate, load, replay, table
from minimal_runtime.replay.current import write_current
from tests.replay.test_real_variants import (assistant, final, init, result, third_call_read_nothing, tool_use, usage,
                                             write)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A Sonnet 5.5 run with a sub-agent, a compaction (its summary call in no line) and a side call."""
    return write_current(tmp_path_factory.mktemp("bill"), "claude-sonnet-5-5", rounds=6, output_chars=6_000,
                         hidden_tokens=4_000)


def test_the_output_comes_from_the_result_events_model_usage(generated):
    main, sub = load(generated["stream"])
    totals = json.loads(generated["stream"].read_text().splitlines()[-1])
    own = totals["modelUsage"]["claude-sonnet-5-5"]
    placeholders = sum(c.usage.output_tokens for r in (main, sub) for c in r.calls)
    recovered = sum(c.usage.output for r in (main, sub) for c in r.calls)
    # the main thread's output is the result's usage, to the token; the sub-agent's is estimated
    assert sum(c.usage.output for c in main.calls) == totals["usage"]["output_tokens"] > 3 * placeholders
    assert recovered + main.unlogged["claude-sonnet-5-5"].output_tokens == own["outputTokens"]
    # the compaction's summary call: in modelUsage, in no line: billed from what is left of modelUsage
    assert main.unlogged["claude-sonnet-5-5"].cache_read > 0 and "claude-haiku-4-5" in main.unlogged
    assert main.output_from == "modelUsage" and any("modelUsage" in n for n in main.notes)
    recorded = replay(main, "recorded")
    logged_cost = sum(c.usage.cost("claude-sonnet-5-5") for r in (main, sub) for c in r.calls)
    # the run's own cost: the main thread's replay (the sub-agent is a run of its own) and what no line shows
    assert recorded.cost + replay(sub, "recorded").cost == pytest.approx(totals["total_cost_usd"], rel=0.05)
    assert logged_cost + sum(c.cost for c in recorded.unlogged) == pytest.approx(totals["total_cost_usd"], rel=1e-6)
    assert f"the log's own total_cost_usd: ${totals['total_cost_usd']:.4f}" in table(main, [recorded])


def test_without_totals_each_calls_output_is_estimated_from_what_it_wrote_and_said(generated):
    (session,) = load(generated["session"])
    assert session.output_from == "estimated" and any("estimated" in n for n in session.notes)
    from minimal_runtime.replay.output import written_tokens
    assert all(c.usage.output == max(c.usage.output_tokens, written_tokens(c)) for c in session.calls)
    assert any(written_tokens(c) > c.usage.output_tokens for c in session.calls)  # a placeholder below what it wrote


def test_the_last_line_of_a_call_gives_its_usage(tmp_path):
    """A call logged over three lines, its output count growing 1, 5, then 687: the call wrote 687."""
    grown = [usage(2, 6_000, 12_000, out=n) for n in (1, 5, 687)]
    path = write(tmp_path / "grown.jsonl", [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "Fix it."}},
        *({"type": "assistant", "sessionId": "s", **assistant("msg_1", [block], u)} for block, u in zip(
            [{"type": "text", "text": "Looking."}, tool_use("toolu_1"), tool_use("toolu_2", "Read", file_path="a")], grown)),
        {"type": "user", "sessionId": "s", **result("toolu_1")}, {"type": "user", "sessionId": "s", **result("toolu_2")},
        {"type": "assistant", "sessionId": "s", **assistant("msg_2", [{"type": "text", "text": "Done."}],
                                                          usage(3, 100, 18_000, out=2))}])
    (run,) = load(path)
    assert [c.usage.output_tokens for c in run.calls] == [687, 2] and run.calls[0].usage.output == 687


def _big_results(tmp_path, warm: int = 0):
    """A headless log whose call 3 left its two big tool results uncached (20,000 tokens after its
    last breakpoint) and wrote them on call 4; with ``warm``, call 4 read that many more than the run
    had ever sent (another process had written them)."""
    big = "row of a large table, " * 2_500  # ~13,750 tokens each, in the emulator's estimate
    lines = [init(),
             assistant("msg_1", [tool_use("toolu_1")], usage(2, 6_000, 12_000)), result("toolu_1", "a.py"),
             assistant("msg_2", [tool_use("toolu_2"), tool_use("toolu_3", "Read", file_path="a")], usage(3, 300, 18_000)),
             result("toolu_2", big), result("toolu_3", big),
             assistant("msg_3", [tool_use("toolu_4")], usage(20_000, 100, 18_300)), result("toolu_4", "ok"),
             assistant("msg_4", [{"type": "text", "text": "Done."}],
                       usage(3, 20_150 - warm, 18_400 + warm)),
             final()]
    (run,) = load(write(tmp_path / "big.stream.jsonl", lines))
    return run


def test_recorded_leaves_uncached_what_the_log_left_uncached(tmp_path):
    run = _big_results(tmp_path)
    recorded = replay(run, "recorded")
    third, fourth = recorded.calls[2], recorded.calls[3]
    assert third.input_tokens == pytest.approx(20_000, rel=0.15) and third.cache_creation_input_tokens < 5_000
    assert fourth.cache_creation_input_tokens == pytest.approx(20_150, rel=0.15)
    assert recorded.cost == pytest.approx(sum(c.usage.cost(recorded.model) for c in run.calls), rel=0.02)


def test_a_cache_warmed_elsewhere_is_a_departure_priced_as_the_log_priced_it(tmp_path):
    run = _big_results(tmp_path, warm=15_000)  # call 4 read 33,400: the run had sent at most 38,400... then more
    run.calls[3].usage.cache_read += 10_000  # now 43,400 read, beyond the 38,400 call 3 sent
    run.calls[3].usage.prompt_tokens += 10_000
    recorded, tail = replay(run, "recorded"), replay(run, "tail")
    note = next(n for n in recorded.notes if "another process warmed" in n)
    assert "call(s) 4 (read 43,400, the run had sent at most 38,400)" in note
    assert recorded.calls[3].cache_read_input_tokens == 43_400  # as the log read it
    assert tail.calls[3].cache_read_input_tokens < 40_000 and any("another process warmed" in n for n in tail.notes)


def test_a_session_that_ends_in_an_interrupted_tool_use_replays(tmp_path):
    """The user stopped the last tool call: its result says so and a user line follows it, which no
    call answers. The replay stops where the log stops (it raised IndexError)."""
    s = {"type": "user", "sessionId": "s"}
    path = write(tmp_path / "interrupted.jsonl", [
        {**s, "message": {"role": "user", "content": "Clean up."}},
        {"type": "assistant", "sessionId": "s", **assistant("msg_1", [tool_use("toolu_1")], usage(3, 20_000, 0))},
        {**s, **result("toolu_1", "a.py")},
        {"type": "assistant", "sessionId": "s", **assistant("msg_2", [tool_use("toolu_2", command="rm -rf a")],
                                                          usage(3, 300, 20_000))},
        {**s, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                                                       "content": "The user doesn't want to proceed with this tool use."}]}},
        {**s, "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]}},
        {"type": "progress", "data": {"type": "hook_progress", "hookEvent": "Stop"}}])
    (run,) = load(path)
    calibration = calibrate(run)
    for name in ("recorded", "tail", "offload", "ladder"):
        replayed = replay(run, name, calibration=calibration)
        assert replayed.finished and len(replayed.calls) == 2, (name, replayed.stopped)


def _numbers(tmp_path, name: str, change) -> str:
    from minimal_runtime.__main__ import main
    lines = [init(), assistant("msg_1", [tool_use("toolu_1")], usage(2, 6_000, 12_000)), result("toolu_1", "a.py"),
             assistant("msg_2", [{"type": "text", "text": "Done."}], usage(3, 300, 18_000)), final()]
    change(lines)
    path = write(tmp_path / f"{name}.stream.jsonl", lines)
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(path), "--strategy", "recorded", "--plot", "none"])
    message = str(stopped.value.code)
    assert "\n" not in message and message.startswith(f"cannot import: {path}:"), message
    return message


@pytest.mark.parametrize("field,value,said", [
    ("input_tokens", -26, "usage.input_tokens is -26: a token count cannot be negative"),
    ("cache_read_input_tokens", 10**30, "usage.cache_read_input_tokens is 1e+30: more tokens than any call has"),
    ("cache_creation_input_tokens", 10**10, "usage.cache_creation_input_tokens is 1e+10: more tokens than any call"),
    ("output_tokens", 2.5, "usage.output_tokens is '2.5', not a whole number of tokens"),
    ("input_tokens", "12", "usage.input_tokens is '12', not a whole number of tokens"),
])
def test_a_number_that_cannot_be_a_count_is_one_line_naming_file_line_and_field(tmp_path, field, value, said):
    def change(lines):
        lines[1]["message"]["usage"][field] = value
    message = _numbers(tmp_path, f"{field}-{value}", change)
    assert message.split(".jsonl:")[1].startswith(f"2: {said}"), message


def test_the_result_events_totals_are_checked_too(tmp_path):
    def change(lines):
        lines[-1]["modelUsage"] = {"claude-sonnet-4-5-20250929": {"inputTokens": 5, "outputTokens": -3}}
    assert _numbers(tmp_path, "totals", change).endswith(
        ":5: modelUsage.claude-sonnet-4-5-20250929.outputTokens is -3: a token count cannot be negative")


def test_a_lone_surrogate_and_a_shape_pydantic_refuses_are_one_line(tmp_path):
    def surrogate(lines):
        lines[1]["message"]["content"][0]["name"] = "\ud800Bash"
    assert "lone UTF-16 surrogate" in _numbers(tmp_path, "surrogate", surrogate)

    def shape(lines):
        lines[1]["message"]["usage"] = {"input_tokens": 5, "cache_creation": {"ephemeral_1h_input_tokens": "many"}}
    assert "ephemeral_1h_input_tokens is 'many'" in _numbers(tmp_path, "shape", shape)


def test_an_unpriced_model_is_one_line_naming_it_and_how_to_price_it(tmp_path, capsys):
    from minimal_runtime.__main__ import main
    lines = [init(), assistant("msg_1", [{"type": "text", "text": "Done."}], usage(3, 300, 18_000)), final(cost=0.5)]
    lines[0]["model"] = lines[1]["message"]["model"] = "gpt-9-turbo"
    path = write(tmp_path / "unpriced.stream.jsonl", lines)
    main(["replay", str(path), "--strategy", "recorded", "--plot", "none"])
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == ["note: gpt-9-turbo is not in the price table, so its costs are n/a; to price "
                                        "the replay as a known model, give --model (e.g. --model claude-sonnet-4-6)"]
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith(("the log", "recorded"))}
    assert rows["the"].split()[-1] == "n/a" and rows["recorded"].split()[-2] == "n/a"  # not the log's own $0.50
    assert "the log's own total_cost_usd: $0.5000" in out


def test_where_the_logs_own_prices_differ_from_the_tables_the_line_beside_the_bill_says_so(tmp_path):
    """Claude Code prices a model by a table of its own: where its ``costUSD`` for a model's token
    counts is not the model table's price of the same counts, the gap is one of prices, and is said."""
    lines = [init(), assistant("msg_1", [tool_use("toolu_1")], usage(2, 6_000, 12_000)), result("toolu_1", "a.py"),
             assistant("msg_2", [{"type": "text", "text": "Done."}], usage(3, 300, 18_000)), final()]
    fresh, reads, writes, out = 5, 30_000, 6_300, 200
    table_price = (fresh * 3 + writes * 3.75 + reads * 0.30 + out * 15) / 1e6  # Sonnet 4.5's
    theirs = table_price - reads * 0.15 / 1e6  # reads priced at half the table's
    lines[-1].update(total_cost_usd=theirs, modelUsage={"claude-sonnet-4-5-20250929": {
        "inputTokens": fresh, "cacheReadInputTokens": reads, "cacheCreationInputTokens": writes, "outputTokens": out,
        "costUSD": theirs}})
    (run,) = load(write(tmp_path / "priced.stream.jsonl", lines))
    shown = table(run, [replay(run, "recorded")])
    assert (f"the log prices claude-sonnet-4-5-20250929's own token counts at ${theirs:.4f} where the model table "
            f"prices them at ${table_price:.4f}") in shown


def test_saving_a_plot_leaves_pyplots_backend_as_it_was(tmp_path, generated):
    """Chapter 10's last plot was saved without its image: a plot written to a file earlier in the
    notebook (the command's ``--plot``) had switched pyplot to a file-only backend for good."""
    import matplotlib
    from minimal_runtime.replay import plot
    before = matplotlib.get_backend()
    matplotlib.use("svg")  # stands in for the notebook's inline backend: any but Agg
    try:
        (run,) = load(generated["subagent"])
        plot(run, [replay(run, "recorded")], tmp_path / "p.png")
        assert (tmp_path / "p.png").stat().st_size > 10_000 and matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)


def test_recorded_mirrors_a_miss_the_replays_cache_would_not_have_had_and_says_its_size(tmp_path):
    """The log's third call read nothing (its client changed the prefix, or Claude Code microcompacted
    old results): the replay's own cache reads there, so recorded billed it as a hit, under the
    log's own bill (-31% on a public session). Now recorded bills it as the log did, and says what
    the replay's own cache would have billed."""
    from minimal_runtime.replay.report import usage_bill
    path = third_call_read_nothing(tmp_path / "missed.stream.jsonl")
    (run,) = load(path)
    recorded = replay(run, "recorded")
    assert recorded.calls[2].cache_read_input_tokens == 0 and recorded.own_cache[2].cache_read_input_tokens > 18_000
    assert recorded.cost == pytest.approx(usage_bill(run), rel=0.01)
    note = next(n for n in recorded.notes if "the log missed the cache" in n)
    assert "on 1 call(s): 3 (read 0% logged, 99% replayed)" in note and f"${recorded.cost:.4f}" in note


def _with_totals(path, calls, totals, output=400):
    lines = [init()]
    for k, u in enumerate(calls[:-1], start=1):
        lines += [assistant(f"msg_{k}", [tool_use(f"toolu_{k}")], u), result(f"toolu_{k}", "x = 1\n" * 200)]
    lines.append(assistant(f"msg_{len(calls)}", [{"type": "text", "text": "Done."}], calls[-1]))
    fresh, write_, read = totals
    lines.append({"type": "result", "subtype": "success", "is_error": False, "num_turns": len(calls),
                  "total_cost_usd": 0.5, "usage": {"input_tokens": fresh, "cache_creation_input_tokens": write_,
                                                   "cache_read_input_tokens": read, "output_tokens": output},
                  "modelUsage": {"claude-sonnet-4-5-20250929": {
                      "inputTokens": fresh, "outputTokens": output, "cacheReadInputTokens": read,
                      "cacheCreationInputTokens": write_, "costUSD": 0.5}}})
    return write(path, lines)


def test_when_the_calls_split_disagrees_with_model_usage_the_totals_win_and_the_split_is_scaled(tmp_path):
    """The per-event calls read 72% from cache, modelUsage 44%, over the same prompt tokens (a public
    log: the bill was -25% off its own): modelUsage is what the API returned."""
    calls = [usage(10, 20_000, 0), usage(10, 1_000, 20_000), usage(10, 1_000, 21_000), usage(10, 1_000, 22_000)]
    prompts = sum(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] for u in calls)
    read = int(0.44 * prompts)
    (run,) = load(_with_totals(tmp_path / "split.stream.jsonl", calls, (40, prompts - 40 - read, read)))
    assert sum(c.usage.cache_read for c in run.calls) == pytest.approx(read, rel=0.01)
    assert [c.usage.prompt_tokens for c in run.calls] == [20_010, 21_010, 22_010, 23_010]
    assert any("modelUsage (the totals the API returned) says 44.0%: the totals win" in n for n in run.notes)
    assert run.unlogged == {}


def test_totals_with_more_of_one_kind_and_less_of_another_bill_the_kinds_that_are_more(tmp_path):
    """modelUsage holds 150,000 more cache writes than the shown calls and fewer reads: the writes of
    the calls the log does not show were dropped whole (-13.9% on a public log)."""
    calls = [usage(10, 20_000, 0), usage(10, 1_000, 20_000), usage(10, 1_000, 21_000)]
    (run,) = load(_with_totals(tmp_path / "kinds.stream.jsonl", calls, (30, 22_000 + 150_000, 30_000)))
    (name, rest), = run.unlogged.items()
    assert (rest.cache_write, rest.cache_read) == (150_000, 0)
    assert any("fewer" in n and "cache-read" in n and "150,000 cache-write" in n for n in run.notes)


def test_a_session_that_changes_model_midway_is_priced_per_call_as_the_model_that_made_it(tmp_path):
    """Sonnet 4.5, then Opus 4.6 (``/model`` midway): it was all priced as Sonnet 4.5."""
    from minimal_runtime.replay.report import usage_bill
    calls = [usage(10, 20_000, 0), usage(10, 1_000, 20_000), usage(10, 1_000, 21_000), usage(10, 1_000, 22_000)]
    lines = [init()]
    for k, u in enumerate(calls, start=1):
        line = assistant(f"msg_{k}", [tool_use(f"toolu_{k}")] if k < 4 else [{"type": "text", "text": "Done."}], u)
        line["message"]["model"] = "claude-sonnet-4-5-20250929" if k <= 2 else "claude-opus-4-6"
        lines += [line] + ([result(f"toolu_{k}", "x = 1\n" * 200)] if k < 4 else [])
    (run,) = load(write(tmp_path / "switched.stream.jsonl", lines))
    recorded = replay(run, "recorded")
    assert [c.model for c in recorded.calls] == ["claude-sonnet-4-5"] * 2 + ["claude-opus-4-6"] * 2
    assert recorded.cost == pytest.approx(usage_bill(run), rel=0.02)
    sonnet_only = sum(c.usage.cost("claude-sonnet-4-5") for c in run.calls)
    assert usage_bill(run) > 1.1 * sonnet_only  # Opus 4.6 is $5 an input MTok, Sonnet 4.5 $3
    assert any("changes model (claude-sonnet-4-5 -> claude-opus-4-6 at call 3)" in n for n in recorded.notes)



def old_session(tmp_path, model: str):
    """A three-call stream-json session of ``model``: (its path, the run loaded, each call's usage)."""
    calls = [usage(10, 20_000, 0), usage(10, 1_000, 20_000), usage(10, 1_000, 21_000)]
    lines = [{**init(), "model": model}]
    for k, u in enumerate(calls, start=1):
        line = assistant(f"msg_{k}", [tool_use(f"toolu_{k}")] if k < 3 else [{"type": "text", "text": "Done."}], u)
        line["message"]["model"] = model
        lines += [line] + ([result(f"toolu_{k}", "x = 1\n" * 200)] if k < 3 else [])
    path = write(tmp_path / "old.stream.jsonl", lines)
    (run,) = load(path)
    return path, run, calls


@pytest.mark.parametrize("model, stand_in, factor", [("claude-opus-4-1-20250805", "claude-opus-4-5", 3.0),
                                                     ("claude-sonnet-4-20250514", "claude-sonnet-4-5", 1.0)])
def test_a_retired_2025_model_is_billed_at_its_own_prices(tmp_path, model, stand_in, factor, capsys):
    """Opus 4.1 and Sonnet 4 logs were unpriced (n/a): 10 of 34 runs of a public pool."""
    from minimal_runtime.__main__ import main
    from minimal_runtime.replay.report import usage_bill
    path, run, calls = old_session(tmp_path, model)
    recorded = replay(run, "recorded")
    assert recorded.model == stand_in and {p.factor for p in recorded.billed} == {factor}
    assert usage_bill(run) == pytest.approx(factor * sum(c.usage.cost(stand_in) for c in run.calls))
    assert recorded.cost == pytest.approx(usage_bill(run), rel=0.02) and recorded.cost == recorded.cost
    main(["replay", str(path), "--strategy", "recorded", "--plot", "none"])
    captured = capsys.readouterr()
    assert "not in the price table" not in captured.err and f"billed at {factor:g}x its prices" in captured.out


SHOWN = {"inputTokens": 20, "outputTokens": 80, "cacheReadInputTokens": 20_000, "cacheCreationInputTokens": 21_000}


def two_calls(tmp_path, model: str, model_usage: dict):
    """A session of two calls on ``model`` (the tokens of SHOWN), its result event's totals ``model_usage``."""
    lines = [{**init(), "model": model}]
    for k, u in enumerate([usage(10, 20_000, 0), usage(10, 1_000, 20_000)], start=1):
        line = assistant(f"msg_{k}", [tool_use(f"toolu_{k}")] if k < 2 else [{"type": "text", "text": "Done."}], u)
        line["message"]["model"] = model
        lines += [line] + ([result(f"toolu_{k}", "x = 1\n" * 200)] if k < 2 else [])
    lines.append({"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "total_cost_usd": 1.0,
                  "modelUsage": model_usage})
    (run,) = load(write(tmp_path / "two.stream.jsonl", lines))
    return run


def test_a_retired_models_side_calls_are_billed_at_their_own_models_prices(tmp_path):
    """An Opus 4.1 session (billed at 3x Opus 4.5's prices) whose totals count Haiku 4.5 side calls no
    line shows: those are billed at Haiku 4.5's own prices, not at the retired model's multiple."""
    model = "claude-opus-4-1-20250805"
    side = {"inputTokens": 40_000, "outputTokens": 500, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}
    recorded = replay(two_calls(tmp_path, model, {model: SHOWN, "claude-haiku-4-5-20251001": side}), "recorded")
    (haiku,) = [c for c in recorded.unlogged if c.model == "claude-haiku-4-5"]
    assert haiku.cost == pytest.approx((40_000 * 1 + 500 * 5) / 1e6)  # Haiku 4.5: $1 input, $5 output per MTok
    shown = sum(c.cost for c in recorded.calls)
    assert recorded.cost == pytest.approx(3.0 * shown + haiku.cost)


@pytest.mark.parametrize("model, factor", [("claude-opus-4-1-20250805", 3.0), ("claude-sonnet-4-20250514", 1.0)])
def test_calls_a_2025_log_does_not_show_are_billed_at_their_retired_models_prices(tmp_path, model, factor):
    """A 2025 Claude Code session: Opus 4.1 or Sonnet 4, its totals counting calls of its own model no
    line shows and side calls on Haiku 3.5, Claude Code's side model then. Both are billed as the
    pricing page lists them (Haiku 3.5 at 0.8x Haiku 4.5's prices); they were left out, said to be on
    a model the price table does not know."""
    from minimal_runtime.replay.report import usage_bill
    more = {"inputTokens": 30_000, "outputTokens": 1_000, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}
    side = {"inputTokens": 40_000, "outputTokens": 500, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}
    run = two_calls(tmp_path, model, {model: {k: SHOWN[k] + more[k] for k in SHOWN}, "claude-3-5-haiku-20241022": side})
    recorded = replay(run, "recorded")
    assert not [n for n in recorded.notes if "not billed" in n]
    stand_in = recorded.model
    # the 30,000 input tokens no line shows (without the result's usage, all of the output is the shown calls')
    unshown = 30_000 * (5 if factor == 3.0 else 3) / 1e6  # Opus 4.5's $5, Sonnet 4.5's $3 per MTok
    haiku = 0.8 * (40_000 * 1 + 500 * 5) / 1e6  # Haiku 3.5: 0.8x Haiku 4.5's $1 input, $5 output per MTok
    assert recorded.unlogged_cost == pytest.approx(factor * unshown + haiku)
    assert recorded.cost == pytest.approx(factor * sum(c.cost for c in recorded.calls if c.model == stand_in)
                                          + factor * unshown + haiku)
    assert usage_bill(run) == pytest.approx(factor * sum(c.usage.cost(stand_in) for c in run.calls) + factor * unshown
                                            + haiku)


def test_the_plot_counts_calls_from_1_as_the_table_does(tmp_path, generated):
    """The table's call 1 was the plot's call 0 (a learner read the log's pause at "call 4", the table's 5)."""
    from minimal_runtime.replay import plot
    (run,) = load(generated["subagent"])
    fig = plot(run, [replay(run, "recorded"), replay(run, "tail")], tmp_path / "p.png")
    for ax in fig.axes:
        for line in ax.get_lines():
            assert list(line.get_xdata()) == list(range(1, len(run.calls) + 1))
