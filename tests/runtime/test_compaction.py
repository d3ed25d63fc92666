"""Compaction (features.compaction, compaction_rungs, server_compaction): what each strategy keeps,
and whether the current models accept it."""

from __future__ import annotations

import inspect

import anthropic
import pytest

from minimal_runtime.core.context import turn_scoped_layout
from minimal_runtime.core.hooks import HookRegistry
from minimal_runtime.core.messages import user
from minimal_runtime.emulator import Emulator, Turn
from minimal_runtime.example import scratch_dir
from minimal_runtime.example.compaction import LongReader, code_for, reader_agent, task_text
from minimal_runtime.features.compaction import (SUMMARY_HEAD, CompactionNotice, ManusLadder, SimpleCompaction,
                                                 ThinkingLedger, drop_block)
from minimal_runtime.features.recall import Keeper, Produced, appendix, compact_call, grouped_texts, restorable, texts_of
from minimal_runtime.features.compaction_rungs import CreateroleRungs, RetryOnOverflow, trim
from minimal_runtime.features.server_compaction import OnDemandCompaction, ServerClearing, ServerCompaction

CURRENT = "claude-sonnet-5-5"
PLANTED = [3, 20]


def run(strategy, *, pages=40, offload=None, model=CURRENT, thinking="strip", limit=8_000, also=lambda feature: ()):
    """The long reader under one strategy; returns (agent, result, reader, keeper, produced, ledger, feature)."""
    reader = LongReader(pages, PLANTED)
    work = scratch_dir()
    keeper = Keeper(work / "workspace")
    hooks, layout, feature = HookRegistry(), None, None
    strip = thinking == "strip"
    if strategy == "ladder":
        feature = ManusLadder(keeper, limit, strip_thinking=strip, handoff=True)
    elif strategy == "simple":
        feature = SimpleCompaction(keeper, limit)
    elif strategy == "rungs":
        feature = CreateroleRungs(keeper, limit * 2, strip_thinking=strip)
        layout = feature.layout(turn_scoped_layout)
    elif strategy == "clearing":
        feature = ServerClearing(trigger=limit, keep=3)
        layout = feature.layout(turn_scoped_layout)
    elif strategy == "server":
        feature = ServerCompaction(trigger=50_000)
        layout = feature.layout(turn_scoped_layout)
    elif strategy == "on demand":
        feature = OnDemandCompaction(trigger=limit)
        layout = feature.layout(turn_scoped_layout)
    if thinking == "drop_block":
        layout = drop_block(layout or turn_scoped_layout)
    produced, ledger = Produced(keeper), ThinkingLedger()
    hooks.install(produced, ledger, *([feature] if feature else []), *also(feature))
    agent, _, _ = reader_agent(work, reader, chars=8000, model=model, layout=layout, hooks=hooks, offload=offload)
    result = agent.run(task_text(pages, PLANTED))
    return agent, result, reader, keeper, produced, ledger, feature


@pytest.fixture(scope="module")
def read_run():
    """``run`` for tests that only read the run: each setting's run made once in this module, where four tests
    each ran the default 40-page ladder and simple runs again and two the 120-page server run (the runs are
    deterministic: a test reads what its own run would give)."""
    made = {}

    def shared(*args, **kwargs):
        call = inspect.signature(run).bind(*args, **kwargs)
        call.apply_defaults()
        key = tuple(call.arguments.items())
        if key not in made:
            made[key] = run(*args, **kwargs)
        return made[key]
    return shared


@pytest.mark.parametrize("strategy", ["ladder", "simple", "rungs", "on demand"])
def test_every_client_side_strategy_keeps_its_window_small_and_everything_it_dropped_restorable(strategy, read_run):
    agent, result, reader, keeper, produced, _, _ = read_run(strategy)
    assert result.status == "done", result.error
    assert max(c.prompt_tokens for c in agent.calls) < 25_000  # the no-compaction run reaches ~90,000
    back, dropped = restorable(produced.contents, reader.last_seen, keeper)
    assert dropped > 20
    if strategy == "on demand":  # the server's summary names the URLs and paths; nothing was saved client-side
        assert back < dropped
    else:
        assert back == dropped


def test_with_offloading_first_even_the_servers_compaction_is_fully_restorable(read_run):
    agent, result, reader, keeper, produced, ledger, feature = read_run("server", pages=120, offload=4000)
    assert result.status == "done" and feature.compactions >= 1
    back, dropped = restorable(produced.contents, reader.last_seen, keeper)
    assert dropped > 100 and back == dropped
    assert not ledger.stripped


@pytest.mark.parametrize("strategy", ["ladder", "simple", "rungs", "clearing", "server", "on demand"])
def test_the_task_is_protected_and_the_system_prompt_never_changes(strategy):
    agent, result, *_ = run(strategy, pages=30)
    assert result.status == "done"
    first = agent.messages[0]
    text = "\n".join(texts_of([first]))
    if strategy in ("server", "on demand", "clearing") and "compaction" in str(first):
        return  # the server's summary stands for the task: what it keeps is the server's
    assert text.startswith(task_text(30, PLANTED))


def test_the_appendix_of_a_summary_names_every_url_and_path_the_compacted_history_did(read_run):
    agent, result, reader, keeper, *_ , feature = read_run("simple", pages=40)
    assert len(feature.log) >= 2
    head = "\n".join(texts_of(agent.messages[:1]))
    assert SUMMARY_HEAD in head
    # every page read and every note written before the last summary is named, in view or in a saved
    # appendix (which may name an earlier one)
    named, todo = set(appendix([head])), [p for p in appendix([head]) if p.startswith(".observations/appendix-")]
    while todo:
        found = appendix([(keeper.root / todo.pop()).read_text()])
        todo += [p for p in found if p.startswith(".observations/appendix-") and p not in named]
        named |= set(found)
    after = "\n".join(texts_of(agent.messages[1:]))
    summarized = [n for n in range(40) if f"notes/page-{n}.md" not in after]
    assert len(summarized) > 20
    for n in summarized:
        assert f"notes/page-{n}.md" in named and f"https://docs.example/page/{n}" in named, n


def test_compact_forms_name_a_path_that_gives_the_content_back_byte_for_byte(tmp_path):
    keeper = Keeper(tmp_path)
    page = "x" * 3000 + "\udcff tail"  # undecodable bytes survive too
    use, result = compact_call({"id": "t1", "name": "fetch", "input": {"url": "https://a.example/p"}},
                               {"type": "tool_result", "tool_use_id": "t1", "content": page}, keeper)
    path = appendix([result["content"]])[-1]
    assert "https://a.example/p" in result["content"] and keeper.holds(path, page)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a.md").write_text("new text")
    write = {"id": "t2", "name": "write_file", "input": {"path": "notes/a.md", "content": "old text"}}
    compacted, _ = compact_call(write, {"type": "tool_result", "tool_use_id": "t2", "content": "Wrote 8"}, keeper)
    saved = appendix([compacted["input"]["content"]])[0]
    assert saved != "notes/a.md" and keeper.holds(saved, "old text")  # the file changed since: a copy was kept
    assert compact_call(compacted, {"type": "tool_result", "tool_use_id": "t2", "content": "Wrote 8"}, keeper)[0] == compacted


def test_the_appendix_keeps_a_page_and_its_saved_copy_on_one_line():
    messages = [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "fetch",
                                                     "input": {"url": "https://d.example/page/1"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                              "content": "[9 characters; the full output is saved at .observations/a.txt; ...]"}]}]
    assert grouped_texts(messages) == ["https://d.example/page/1 [9 characters; the full output is saved at "
                                       ".observations/a.txt; ...]"]


def test_on_a_model_that_binds_thinking_rewrites_fail_unless_thinking_is_stripped_or_dropped(read_run):
    """The claims of the chapter's table, on Sonnet 5.5 (a new account: the check is enforced)."""
    _, kept, *_ = run("ladder", thinking="keep")
    assert kept.status == "error" and "bound to a different conversation" in kept.error
    agent, stripped, _, _, _, ledger, _ = read_run("ladder", thinking="strip")
    assert stripped.status == "done" and ledger.stripped and ledger.stripped <= ledger.gone
    agent, dropped, _, _, _, ledger, _ = run("ladder", thinking="drop_block")
    assert dropped.status == "done" and ledger.stripped
    _, masked, *_ = run("rungs", thinking="keep")
    assert masked.status == "error" and "bound to a different conversation" in masked.error
    for strategy in ("simple", "clearing", "server", "on demand"):  # nothing replayed, or the server's own edit
        _, result, _, _, _, ledger, _ = run(strategy, thinking="keep")
        assert result.status == "done" and not ledger.stripped, strategy
        # what a summary (the client's or the server's) replaced, it replaced with its reasoning: gone
        assert bool(ledger.gone) is (strategy != "clearing"), (strategy, len(ledger.gone))


def test_trim_leaves_out_whole_old_exchanges_and_never_the_first_message_or_the_last_exchange():
    messages = [user("the task")]
    for k in range(10):
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "fetch", "input": {}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "y" * 4000}]}]
    kept = trim(messages, 3_000)
    assert kept[0] == messages[0] and kept[-2:] == messages[-2:]
    assert kept[1]["role"] == "assistant" and len(kept) < len(messages)
    assert trim(messages, 10**9) == messages
    assert trim(messages, 1) == [messages[0], *messages[-2:]]


def _overflowing_client(policy=None):
    emulator = Emulator(model="claude-haiku-4-5", policy=policy or (lambda request: Turn(content=[{"type": "text", "text": "ok"}])))
    return RetryOnOverflow(emulator.client(max_retries=0))


def test_overflow_is_retried_twice_first_without_old_exchanges_then_with_the_largest_message_cut():
    client = _overflowing_client()
    old = [{"role": "assistant", "content": [{"type": "text", "text": "z" * 200_000}]}, user("w" * 200_000)]
    messages = [user("task"), *old * 3, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, user("go")]
    answer = client.messages.create(model="claude-haiku-4-5", max_tokens=100, messages=messages)
    assert answer.content[0].text == "ok" and len(client.retries) == 1 and "oldest" in client.retries[0]
    # one message alone over the window: trimming cannot help, the second retry cuts it in proportion
    client = _overflowing_client()
    answer = client.messages.create(model="claude-haiku-4-5", max_tokens=100, messages=[user("v" * 1_000_000)])
    assert answer.content[0].text == "ok" and len(client.retries) == 2 and "truncated" in client.retries[1]


def test_a_third_overflow_and_any_other_error_reach_the_caller_unchanged():
    client = _overflowing_client()
    client.attempts = 0
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        client.messages.create(model="claude-haiku-4-5", max_tokens=100, messages=[user("v" * 1_000_000)])
    with pytest.raises(anthropic.BadRequestError):
        _overflowing_client().messages.create(model="claude-haiku-4-5", max_tokens=100, messages=[])


def _history(results: int, size: int = 4000) -> list[dict]:
    messages = [user("the task")]
    for k in range(results):
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "fetch",
                                                        "input": {"url": f"https://d.example/{k}"}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": f"{k}" * size}]}]
    return messages


def test_the_rungs_mask_all_but_two_results_and_only_one_past_ninety_percent_by_the_larger_measure(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=100_000)
    full = lambda messages: [m for m in messages if m["content"][0].get("type") == "tool_result"
                             and not m["content"][0]["content"].startswith("[compacted")]
    assert len(full(rungs.assemble(_history(6)))) == 2 and rungs.mid_turn_calls == 0
    rungs.measured = 95_000  # the estimate is small; the last measured prompt is not: the larger one decides
    sent = rungs.assemble(_history(6))
    assert len(full(sent)) == 1 and full(sent)[0]["content"][0]["tool_use_id"] == "t5" and rungs.mid_turn_calls == 1
    history = _history(6)
    rungs.assemble(history)
    assert history == _history(6)  # the durable history is never touched: only the copy sent is masked


def test_the_gauge_speaks_in_tenths_and_asks_for_notes_once_per_new_tenth():
    from minimal_runtime.core.hooks import HookEvent, Point
    from minimal_runtime.features.compaction import ContextGauge, HANDOFF_PATH
    from minimal_runtime.provider.cost import CallRecord

    class View:
        def __init__(self):
            self.messages, self.calls, self.notes = [user("t")], [], []

        def inject_turn_scoped(self, source, text):
            self.notes.append(text)
    gauge, view = ContextGauge(window=1000), View()
    for prompt in (50, 120, 150, 340, 90, 130):
        view.calls.append(CallRecord(model="claude-sonnet-5-5", input_tokens=prompt))
        gauge.tell(HookEvent(Point.PRE_LLM_CALL, view))
    said = view.notes
    assert [n.split("%")[0].split()[-1] for n in said] == ["0", "10", "10", "30", "0", "10"]
    assert [HANDOFF_PATH in n for n in said] == [False, True, False, True, False, True] and gauge.asks == 3


def test_the_rungs_trim_leaves_a_summary_naming_what_it_left_out_so_the_reader_never_starts_over():
    # a budget the 24 pages' masked history passes: rung 2 trims on most calls
    agent, result, reader, _, _, _, rungs = run("rungs", pages=24, limit=1_500)
    fetched = [b["input"]["url"] for m in agent.messages if m["role"] == "assistant"
               for b in m["content"] if b.get("type") == "tool_use" and b["name"] == "fetch"]
    assert rungs.trimmed > 10 and result.status == "done", result.error
    assert len(fetched) == len(set(fetched)) == 24  # no page read twice: the summary's appendix names every note
    assert all(code_for(p) in result.final_text for p in PLANTED)


@pytest.mark.parametrize("strategy", ["ladder", "simple", "server", "on demand"])
def test_the_user_is_told_each_compaction_and_the_model_never_sees_the_notice(strategy, read_run):
    told, notices = [], []

    def notice(feature):
        notices.append(CompactionNotice(feature, tell=told.append))
        return notices

    pages = 120 if strategy == "server" else 40
    agent, result, *_, feature = run(strategy, pages=pages, offload=4000 if strategy == "server" else None, also=notice)
    plain, *_ = read_run(strategy, pages=pages, offload=4000 if strategy == "server" else None)
    assert result.status == "done" and len(feature.log) >= 1
    assert told == notices[0].told and len(told) == len(feature.log)
    assert all(line.startswith("Context compacted before call ") for line in told)
    assert f"({feature.log[0].kind}): about {feature.log[0].before:,} -> " in told[0]
    sent = [e for e in agent.store.events() if e["type"] in ("sent", "turn", "task", "compaction")]
    assert not any("Context compacted" in str(e) for e in sent)  # not in any request, batch or history
    # and so it costs nothing: the same calls, token for token, as the run without it
    assert [c.model_dump() for c in agent.calls] == [c.model_dump() for c in plain.calls]


def test_a_notice_whose_channel_fails_costs_a_logged_hook_failure_and_is_not_repeated():
    attempts = []

    def broken(line):
        attempts.append(line)
        raise OSError("the terminal went away")

    agent, result, *_, feature = run("simple", also=lambda feature: [CompactionNotice(feature, tell=broken)])
    assert result.status == "done" and len(attempts) == len(feature.log) >= 2
