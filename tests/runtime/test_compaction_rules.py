"""Compaction's rules, each stated by a test (issue 27: the compaction module scored by mutation):
the mechanical summary, the one message a summary becomes and its saved appendix, the size
measures, what is left to compact, the handoff note's patience, the gauge and the thinking ledger."""

from __future__ import annotations

from types import SimpleNamespace as NS

from minimal_runtime.core.hooks import CallEvent, HookEvent, HookRegistry, Point
from minimal_runtime.core.messages import user
from minimal_runtime.features.compaction import (APPENDIX_HEAD, HANDOFF_ASK, HANDOFF_PATH, SUMMARY_HEAD, ContextGauge,
                                                 ManusLadder, SimpleCompaction, ThinkingLedger, task_of, answered_calls,
                                                 context_tokens, drop_block, estimate, mechanical_summary,
                                                 strip_thinking, summary_message)
from minimal_runtime.features.recall import Keeper, restorable
from minimal_runtime.provider.models import BINDING_BETA


def said(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def text(t):
    return {"type": "text", "text": t}


def use(k, name="fetch", **args):
    return {"type": "tool_use", "id": f"t{k}", "name": name, "input": args or {"url": f"https://d.example/{k}"}}


def result(k, content="r" * 400):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": content}]}


def test_the_mechanical_summary_counts_tools_by_name_and_quotes_first_lines():
    messages = [user("task"), said(text("  Reading page one.\nmore detail  "), use(1)), result(1),
                said(use(2, "write_file", path="a.md", content="x"), use(3)), result(2), {"role": "assistant", "content": "s"},
                said(text("   "), text("x" * 200))]
    assert mechanical_summary(messages).split("\n") == [
        "Tool calls made: 2 fetch, 1 write_file.", "The last steps:", "- Reading page one.", f"- {'x' * 160}"]
    assert mechanical_summary([user("task")]) == "Tool calls made: nothing.\nThe last steps:"
    assert mechanical_summary([said({"type": "text"}, text("said"))]).endswith("- said")  # a text block without text


def test_the_mechanical_summary_keeps_the_last_twenty_steps():
    messages = [said(text(f"step {k}")) for k in range(25)]
    lines = mechanical_summary(messages).split("\n")
    assert lines[2:] == [f"- step {k}" for k in range(5, 25)]


def test_a_summary_is_one_user_message_task_handoff_summary_appendix(tmp_path):
    compacted = [user("the task"), said(use(1)), result(1, "saved at notes/p1.md")]
    message = summary_message("the task", compacted, "what happened", "  my note  ", Keeper(tmp_path))
    assert message["role"] == "user" and message["content"][0]["text"].split("\n") == [
        "the task", "", SUMMARY_HEAD, f"My handoff note ({HANDOFF_PATH}):", "my note", "what happened", "",
        APPENDIX_HEAD, "- https://d.example/1 notes/p1.md", "", "I continue the task from here."]
    bare = summary_message("t", [], "s", None, Keeper(tmp_path))["content"][0]["text"]
    assert bare.split("\n") == ["t", "", SUMMARY_HEAD, "s", "", APPENDIX_HEAD, "", "I continue the task from here."]


def test_a_long_appendix_is_saved_whole_and_its_newest_lines_shown(tmp_path):
    keeper = Keeper(tmp_path)
    compacted = [user(f"see https://d.example/{k:03d}") for k in range(10)]
    lines = [f"- https://d.example/{k:03d}" for k in range(10)]
    assert {len(line) + 1 for line in lines} == {24}  # each line and its newline

    def shown(n, limit, where=keeper):
        text = summary_message("t", compacted[:n], "s", None, where, appendix_chars=limit)["content"][0]["text"]
        return text.split(APPENDIX_HEAD + "\n")[1].split("\n\n")[0].split("\n")
    saved = keeper.keep("\n".join(lines) + "\n", kind="appendix")
    head = f"- (all 10 lines are saved at {saved}; read_file it to see every one; the newest follow)"
    assert shown(10, 96) == [head, *lines[-4:]]  # the newest lines up to 96 characters: four
    assert shown(10, 119) == [head, *lines[-4:]]  # a fifth would take 120
    assert (tmp_path / saved).read_text() == "\n".join(lines) + "\n"
    assert shown(4, 96, Keeper(tmp_path / "b")) == lines[:4]  # 96 characters in a limit of 96: it fits
    assert shown(4, 95, Keeper(tmp_path / "c"))[0].startswith("- (all 4 lines are saved at ")


def test_the_size_is_four_characters_a_token_and_the_larger_of_estimate_and_measure():
    assert estimate([user("x" * 401)]) == 100 and estimate([]) == 0
    assert context_tokens(NS(messages=[], calls=[])) == 0
    agent = NS(messages=[user("x" * 400)], calls=[])
    assert context_tokens(agent) == 100 and context_tokens(agent, system_tokens=50) == 150
    agent.calls = [NS(prompt_tokens=90), NS(prompt_tokens=120)]
    assert context_tokens(agent) == 120 and context_tokens(agent, system_tokens=50) == 150


def test_thinking_is_stripped_and_everything_else_kept():
    thought = said({"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "redacted_thinking", "data": "d"}, text("ok"))
    messages = [user("u"), thought, {"role": "assistant", "content": "plain"}]
    assert strip_thinking(messages) == [user("u"), said(text("ok")), messages[2]]
    assert thought["content"][0]["type"] == "thinking"  # the original is untouched
    assert strip_thinking([said({"type": "thinking", "thinking": "t", "signature": "s"})]) == [said()]


def test_drop_block_asks_for_dropped_thinking_with_its_beta():
    request = drop_block(lambda parts: {"betas": ["b1"], "messages": []})(None)
    assert request["thinking"] == {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    assert request["betas"] == ["b1", BINDING_BETA]
    assert drop_block(lambda parts: {})(None)["betas"] == [BINDING_BETA]


def test_answered_calls_pair_each_result_with_its_call_and_skip_the_unanswered():
    messages = [user("t"), said(text("x"), use(1), use(2)), {"role": "user", "content": "s"},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2"}, {"type": "tool_result", "tool_use_id": "zz"}]},
                result(1)]
    assert answered_calls(messages) == [(1, 2, 3, 0), (1, 1, 4, 0)]


def test_the_task_is_the_first_message_or_what_precedes_a_summary_s_head():
    assert task_of([user("the task")]) == "the task"
    assert task_of([user(f"the task\n\n{SUMMARY_HEAD}\nsummary")]) == "the task"
    assert task_of([{"role": "user", "content": "a string task"}]) == "a string task"
    assert task_of([]) == ""


def history(n, size=400):
    messages = [user("the task")]
    for k in range(n):
        messages += [said(use(k)), result(k, f"{k}" * size)]
    return messages


def test_what_is_left_to_compact_all_but_the_last_calls_big_enough_and_not_yet_compact(tmp_path):
    ladder = ManusLadder(Keeper(tmp_path), limit=10, keep_last=2, min_chars=300)
    messages = history(5)
    messages[2] = result(0, "short")  # 5 + the input's JSON: under 300 characters
    messages[4] = result(1, "[compacted: fetch u; saved]" + "x" * 400)  # only looks compact: a tool printed it
    assert [c[0] for c in ladder.compactable(messages)] == [3, 5]  # t1, t2; t3 and t4 are the last two
    from minimal_runtime.features.recall import compact_call
    messages[5]["content"][0], messages[6]["content"][0] = compact_call(messages[5]["content"][0],
                                                                        messages[6]["content"][0], ladder.keeper)
    small = ManusLadder(ladder.keeper, limit=10, keep_last=2, min_chars=10)  # the compact form is big enough here ...
    assert [c[0] for c in small.compactable(messages)] == [1, 3]  # ... and yet not compacted again: the runtime wrote it
    assert ManusLadder(Keeper(tmp_path), limit=10, keep_last=0).compactable(history(2)) != []
    assert ManusLadder(Keeper(tmp_path), limit=10, keep_last=9).compactable(history(5)) == []


class Agent:
    def __init__(self, messages, prompt=0):
        self.messages, self.calls, self.injected = list(messages), [NS(prompt_tokens=prompt)], []

    def inject_turn_scoped(self, source, text):
        self.injected.append((source, text))

    def replace_history(self, messages):
        self.messages = list(messages)


def before(feature, agent):
    hooks = HookRegistry().install(feature)
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert hooks.failures == []


def test_simple_compaction_waits_for_its_limit_then_summarizes_everything(tmp_path):
    feature = SimpleCompaction(Keeper(tmp_path), limit=1_000, handoff=False)
    agent = Agent(history(3), prompt=999)
    before(feature, agent)
    assert len(agent.messages) == 7 and feature.log == []
    agent.calls.append(NS(prompt_tokens=1_000))
    before(feature, agent)
    assert len(agent.messages) == 1 and agent.messages[0]["content"][0]["text"].startswith(f"the task\n\n{SUMMARY_HEAD}")
    entry, = feature.log
    assert (entry.call, entry.kind, entry.before, entry.after) == (2, "summary", estimate(history(3)), estimate(agent.messages))


def test_with_handoff_the_note_is_asked_for_once_and_waited_for_three_calls_at_most(tmp_path):
    feature = SimpleCompaction(Keeper(tmp_path), limit=10)  # handoff by default
    agent = Agent(history(2), prompt=100)
    for _ in range(3):
        before(feature, agent)
    assert agent.injected == [("handoff", HANDOFF_ASK)] and len(agent.messages) == 5
    before(feature, agent)  # the third call waited: summarize without the note
    assert len(agent.messages) == 1 and "My handoff note" not in agent.messages[0]["content"][0]["text"]


def test_a_note_written_ends_the_wait_and_is_merged_verbatim(tmp_path):
    feature = SimpleCompaction(Keeper(tmp_path), limit=10)
    agent = Agent(history(2), prompt=100)
    before(feature, agent)
    (tmp_path / "notes").mkdir()
    (tmp_path / HANDOFF_PATH).write_text("Confirmed: Acme is 12 dollars.\n")
    before(feature, agent)
    assert len(agent.messages) == 1
    assert f"My handoff note ({HANDOFF_PATH}):\nConfirmed: Acme is 12 dollars." in agent.messages[0]["content"][0]["text"]


def test_the_gauge_caps_at_a_hundred_percent_and_drops_after_a_compaction():
    gauge, agent = ContextGauge(window=100), Agent([user("t")], prompt=250)
    hooks = HookRegistry().install(gauge)
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    agent.calls.append(NS(prompt_tokens=10))
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert [source for source, _ in agent.injected] == ["context", "context"]
    first, second = [t for _, t in agent.injected]
    assert first.startswith("I have used about 100% of my context window. I just passed 100%")
    assert second == "I have used about 10% of my context window." and gauge.asks == 1


def block(kind, **fields):
    return NS(type=kind, **fields)


def ledger_call(ledger, sent, response_blocks, changes=None):
    ledger.count(CallEvent(Point.POST_LLM_CALL, NS(), request={"messages": sent},
                           response=NS(content=response_blocks, input_transformations=changes), batch=[]))


def test_the_ledger_counts_thinking_produced_and_stripped_while_its_turn_was_sent():
    ledger = ThinkingLedger()
    ledger_call(ledger, [user("t")], [block("thinking", signature="s1"), block("tool_use", id="a")])
    ledger_call(ledger, [user("t")], [block("thinking", signature="s2")])  # no tool use: not tracked by turn
    turn = said({"type": "thinking", "thinking": "x", "signature": "s1"}, use(0) | {"id": "a"})
    ledger_call(ledger, [user("t"), turn], [])
    assert ledger.produced == 2 and ledger.stripped == set() and ledger.gone == {"s2"}  # s2's turn was never sent
    stripped = said(use(0) | {"id": "a"})
    ledger_call(ledger, [user("t"), stripped], [])
    assert ledger.stripped == {"s1"} and ledger.gone == {"s1", "s2"}


def test_a_turn_summarized_away_takes_its_thinking_out_of_the_context_and_a_dropped_block_is_stripped():
    """A summary stands in for a turn's content, not for its reasoning: the block is gone, though
    no turn the model still reads lacks its thinking."""
    ledger = ThinkingLedger()
    ledger_call(ledger, [user("t")], [block("thinking", signature="s1"), block("tool_use", id="a")])
    ledger_call(ledger, [user("summary")], [])
    assert ledger.stripped == set() and ledger.gone == {"s1"}
    sent = [user("t"), said({"type": "thinking", "thinking": "x", "signature": "s9"}, text("y"))]
    ledger_call(ledger, sent, [], changes=[NS(type="thinking_dropped", path="messages.1.content.0"),
                                           NS(type="other", path="messages.0.content.0")])
    assert ledger.stripped == {"s9"}


def test_thinking_before_the_newest_compaction_block_is_gone_and_the_blocks_after_it_are_read():
    """Server compaction: the client sends its whole history, the API ignores what precedes the newest
    compaction block (emulator/compaction.py, [CT]), so the model no longer reads that thinking."""
    ledger = ThinkingLedger()
    ledger_call(ledger, [user("t")], [block("thinking", signature="s1"), block("tool_use", id="a")])
    old = said({"type": "thinking", "thinking": "x", "signature": "s1"}, use(0) | {"id": "a"})
    ledger_call(ledger, [user("t"), old], [block("thinking", signature="s2"), block("tool_use", id="b")])
    new = said({"type": "compaction", "content": "summary"}, {"type": "thinking", "thinking": "y", "signature": "s2"},
               use(1) | {"id": "b"})
    ledger_call(ledger, [user("t"), old, result(0), new], [])
    assert ledger.gone == {"s1"} and ledger.stripped == set()


def test_thinking_the_server_clears_is_stripped_and_gone_oldest_turns_first():
    ledger = ThinkingLedger()
    ledger_call(ledger, [user("t")], [block("thinking", signature="s1"), block("tool_use", id="a")])
    first = said({"type": "thinking", "thinking": "x", "signature": "s1"}, use(0) | {"id": "a"})
    ledger_call(ledger, [user("t"), first], [block("thinking", signature="s2"), block("tool_use", id="b")])
    second = said({"type": "thinking", "thinking": "y", "signature": "s2"}, use(1) | {"id": "b"})
    cleared = NS(applied_edits=[NS(type="clear_thinking_20251015", cleared_thinking_turns=1)])
    ledger.count(CallEvent(Point.POST_LLM_CALL, NS(), request={"messages": [user("t"), first, result(0), second]},
                           response=NS(content=[], input_transformations=None, context_management=cleared), batch=[]))
    assert ledger.gone == {"s1"} and ledger.stripped == {"s1"}


def test_the_gauge_counts_tenths_of_its_window():
    gauge, agent = ContextGauge(window=100), Agent([user("t")], prompt=95)
    gauge.tell(HookEvent(Point.PRE_LLM_CALL, agent))
    assert agent.injected[0][1].startswith("I have used about 90% of my context window.")


def test_the_ladder_compacts_the_oldest_half_first_and_records_what_it_saw(tmp_path):
    ladder = ManusLadder(Keeper(tmp_path), limit=100, keep_last=2)
    agent = Agent(history(8, size=2_000), prompt=0)
    tokens = context_tokens(agent)
    before(ladder, agent)
    compacted = [m["content"][0]["content"].startswith("[compacted") for m in agent.messages[1:] if m["role"] == "user"]
    assert compacted == [True] * 3 + [False] * 5  # half of the 6 compactable, the oldest
    entry, = ladder.log
    assert entry.kind == "compact" and entry.seen == (tokens, 6, None) and entry.before == tokens
    assert entry.after == estimate(agent.messages) < tokens
    assert ladder.last_gain == 1 - entry.after / entry.before and 0 < ladder.last_gain < 1


def test_the_ladder_summarizes_when_compacting_stops_paying_keeping_the_last_calls(tmp_path):
    ladder = ManusLadder(Keeper(tmp_path), limit=100, keep_last=2, min_gain=0.99)
    agent = Agent(history(6, size=2_000), prompt=0)
    before(ladder, agent)  # compacts, and frees less than 99%
    before(ladder, agent)
    assert [e.kind for e in ladder.log] == ["compact", "summary"] and ladder.last_gain is None
    head, *kept = agent.messages
    assert head["content"][0]["text"].startswith(f"the task\n\n{SUMMARY_HEAD}")
    assert [b["id"] for m in kept if m["role"] == "assistant" for b in m["content"]] == ["t4", "t5"]
    assert ladder.log[1].seen[1] == 2  # two calls were still compactable: the decision was diminishing returns


def test_the_ladder_waits_under_its_limit_and_keeps_thinking_only_when_told(tmp_path):
    ladder = ManusLadder(Keeper(tmp_path), limit=10**6)
    agent = Agent(history(6, size=2_000), prompt=0)
    before(ladder, agent)
    assert ladder.log == [] and agent.messages == history(6, size=2_000)
    thought = {"type": "thinking", "thinking": "x", "signature": "s"}
    thinking = history(6, size=2_000)
    thinking[1] = said(thought, use(0))
    for strip, expected in ((True, [use(0)]), (False, [thought, use(0)])):
        agent = Agent(thinking, prompt=0)
        before(ManusLadder(Keeper(tmp_path), limit=100, keep_last=2, strip_thinking=strip), agent)
        assert agent.messages[1]["content"] == expected


def results_of(messages):
    return {b["tool_use_id"]: b["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


def test_a_summary_of_fewer_calls_than_it_keeps_still_saves_every_call_it_drops(tmp_path):
    keeper = Keeper(tmp_path)
    ladder = ManusLadder(keeper, limit=100, keep_last=5)  # three calls, none compactable: summarize them
    agent = Agent(history(3, size=2_000), prompt=0)
    before(ladder, agent)
    assert [e.kind for e in ladder.log] == ["summary"] and len(agent.messages) == 1
    assert restorable({f"t{k}": f"{k}" * 2_000 for k in range(3)}, agent.messages, keeper) == (3, 3)


def test_a_summary_keeps_exactly_keep_last_calls_in_full_and_saves_the_rest(tmp_path):
    keeper = Keeper(tmp_path)
    for n in (2, 6):  # as many calls as it keeps: only the task is summarized
        agent = Agent(history(n, size=2_000), prompt=0)
        before(ManusLadder(keeper, limit=100, keep_last=2, min_chars=10**9), agent)
        head, *kept = agent.messages
        assert [b["id"] for m in kept if m["role"] == "assistant" for b in m["content"]] == [f"t{n - 2}", f"t{n - 1}"]
        assert results_of(kept) == {f"t{k}": f"{k}" * 2_000 for k in (n - 2, n - 1)}  # in full
        dropped = {f"t{k}": f"{k}" * 2_000 for k in range(n - 2)}
        assert restorable(dropped, agent.messages, keeper) == (n - 2, n - 2)


def entry(k):
    return {"role": "system", "content": [{"type": "text", "text": f"batch {k}"}]}


def test_a_kept_turn_keeps_the_system_entries_before_it_up_to_the_task(tmp_path):
    messages = [user("the task")]
    for k in range(4):
        messages += [entry(k), *([entry(f"{k}b")] if k == 2 else []), said(use(k)), result(k, f"{k}" * 2_000)]
    for keep_last, first in ((2, 2), (3, 1), (4, 0)):  # two entries before t2, one before t1, t0 right after the task
        agent = Agent(messages, prompt=0)
        before(ManusLadder(Keeper(tmp_path), limit=100, keep_last=keep_last, min_chars=10**9), agent)
        assert agent.messages[1:] == messages[messages.index(entry(first)):]
        head, = agent.messages[0]["content"]  # the summary alone: no result of a summarized call rides with it
        assert agent.messages[0]["role"] == "user" and SUMMARY_HEAD in head["text"]


def test_the_ladder_acts_at_its_limit_exactly(tmp_path):
    agent = Agent(history(8, size=2_000), prompt=0)
    ladder = ManusLadder(Keeper(tmp_path), limit=context_tokens(agent), keep_last=2)
    before(ladder, agent)
    assert [e.kind for e in ladder.log] == ["compact"]


def test_a_summary_waiting_for_its_note_follows_even_if_the_context_fell_under_the_limit(tmp_path):
    ladder = ManusLadder(Keeper(tmp_path), limit=1_000, keep_last=0, min_chars=10**9, handoff=True)
    agent = Agent(history(2), prompt=5_000)
    before(ladder, agent)  # over the limit by the measure: the note is asked for
    assert agent.injected == [("handoff", HANDOFF_ASK)] and ladder.log == []
    agent.calls.append(NS(prompt_tokens=0))  # the next measure is small; the estimate is under the limit
    assert context_tokens(agent) < 1_000
    (tmp_path / "notes").mkdir()
    (tmp_path / HANDOFF_PATH).write_text("my note")
    before(ladder, agent)
    assert [e.kind for e in ladder.log] == ["summary"] and "my note" in agent.messages[0]["content"][0]["text"]


def test_by_default_the_last_five_calls_stay_in_full_and_two_hundred_characters_are_worth_compacting(tmp_path):
    messages = history(7, size=170)  # 170 characters of result and 30 of input: 200 each
    assert [c[0] for c in ManusLadder(Keeper(tmp_path), limit=10).compactable(messages)] == [1, 3]


def test_after_a_summary_the_kept_turns_lose_their_thinking_by_default_and_keep_it_when_told(tmp_path):
    thought = {"type": "thinking", "thinking": "x", "signature": "s"}
    messages = history(3, size=2_000)
    messages[5] = said(thought, use(2))
    for ladder, expected in ((ManusLadder(Keeper(tmp_path), limit=100, keep_last=1, min_chars=10**9), [use(2)]),
                             (ManusLadder(Keeper(tmp_path), limit=100, keep_last=1, min_chars=10**9, strip_thinking=False),
                              [thought, use(2)])):
        agent = Agent(messages, prompt=0)
        before(ladder, agent)
        assert [e.kind for e in ladder.log] == ["summary"] and agent.messages[1]["content"] == expected


def long_urls(n):
    """n calls whose appendix lines are about 250 characters each: past the default 8,000 at 40."""
    messages = [user("the task")]
    for k in range(n):
        messages += [said(use(k, url=f"https://d.example/{'p' * 200}/{k}")), result(k, "r")]
    return messages


def test_a_ladder_summary_s_long_appendix_is_saved_whole(tmp_path):
    agent = Agent(long_urls(40), prompt=0)
    before(ManusLadder(Keeper(tmp_path), limit=100, keep_last=0, min_chars=10**9), agent)
    text = agent.messages[0]["content"][0]["text"]
    assert len(agent.messages) == 1 and "(all 40 lines are saved at .observations/appendix-" in text
    assert len(list(tmp_path.glob(".observations/appendix-*.txt"))) == 1


def test_without_handoff_a_note_on_disk_is_not_merged(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / HANDOFF_PATH).write_text("an old note")
    for feature in (SimpleCompaction(Keeper(tmp_path), limit=10, handoff=False),
                    ManusLadder(Keeper(tmp_path), limit=10, keep_last=0, min_chars=10**9)):  # the ladder: off by default
        agent = Agent(history(2), prompt=100)
        before(feature, agent)
        assert len(agent.messages) == 1 and "an old note" not in agent.messages[0]["content"][0]["text"]


def test_a_simple_summary_s_long_appendix_is_saved_whole(tmp_path):
    agent = Agent(long_urls(40), prompt=10**6)
    before(SimpleCompaction(Keeper(tmp_path), limit=100, handoff=False), agent)
    assert "(all 40 lines are saved at .observations/appendix-" in agent.messages[0]["content"][0]["text"]


def test_string_messages_stay_strings_through_a_compaction(tmp_path):
    steer = {"role": "user", "content": "a steer in plain text"}
    messages = [{"role": "user", "content": "the task as a string"}, *history(3, size=2_000)[1:], steer]
    agent = Agent(messages, prompt=10**6)
    before(SimpleCompaction(Keeper(tmp_path), limit=100, handoff=False), agent)
    assert agent.messages[0]["content"][0]["text"].startswith(f"the task as a string\n\n{SUMMARY_HEAD}")
    agent = Agent(messages, prompt=0)
    before(ManusLadder(Keeper(tmp_path), limit=100, keep_last=1), agent)  # compacts the oldest call first
    assert agent.messages[0]["content"] == "the task as a string" and agent.messages[-1] == steer


def test_the_ledger_reads_any_history_and_a_response_without_transformations():
    ledger = ThinkingLedger()
    ledger_call(ledger, [user("t")], [block("thinking", signature="s1"), block("tool_use", id="a")])
    ledger.count(CallEvent(Point.POST_LLM_CALL, NS(), request={"messages": [user("t"), {"role": "assistant", "content": "plain"}]},
                           response=NS(content=[]), batch=[]))  # a string turn; no input_transformations field
    assert ledger.produced == 1 and ledger.stripped == set() and ledger.gone == {"s1"}
