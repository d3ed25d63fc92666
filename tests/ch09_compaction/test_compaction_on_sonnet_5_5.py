"""Chapter 09: a client-side compaction that keeps the last tool calls, on a model that binds its
thinking (Sonnet 5.5, a new account: the emulator enforces the prefix check). What the API
accepts is the emulator's to say, not the test's."""

from __future__ import annotations

import copy

import pytest

from minimal_runtime.core.hooks import HookRegistry
from minimal_runtime.example import scratch_dir
from minimal_runtime.example.compaction import LongReader, TailCompaction, reader_agent, task_text

MODEL = "claude-sonnet-5-5"


def reader_run(rewrite, pages: int, limit: int, model: str = MODEL):
    reader = LongReader(pages, [pages // 2])
    compaction = TailCompaction(rewrite, limit, keep_last=3)
    work = scratch_dir()
    agent, _, _ = reader_agent(work, reader, chars=4000, model=model, hooks=HookRegistry().install(compaction),
                               max_steps=2 * pages + 40)
    return agent, agent.run(task_text(pages, reader.planted)), compaction


@pytest.fixture(scope="module")
def recorded_history():
    """A real history from the emulator: 6 pages read, thinking blocks signed and bound. Made once;
    the tests get copies of it (``history``), so no test sees what another test's call did to it."""
    agent, result, _ = reader_run(lambda task, messages, summary, keep: messages, pages=6, limit=10**9)
    assert result.status == "done", f"the reader's run stopped before the exercise was called: {result.error}"
    return agent.messages


@pytest.fixture
def history(recorded_history):
    return copy.deepcopy(recorded_history)


def kinds(message):
    return [b["type"] for b in message["content"]] if isinstance(message["content"], list) else ["text"]


def text_of(message) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def without_thinking(message):
    if isinstance(message["content"], str):
        return message
    return {**message, "content": [b for b in message["content"] if b["type"] not in ("thinking", "redacted_thinking")]}


def test_the_task_then_the_summary_come_first_in_one_user_message(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "SUMMARY OF EARLIER WORK", 3)
    assert out and out[0]["role"] == "user", "the new history starts with one user message (task, then summary)"
    text = text_of(out[0])
    assert "Read the pages." in text and "SUMMARY OF EARLIER WORK" in text, \
        f"the first message should hold the task verbatim and the summary: {text[:300]!r}"
    assert text.index("Read the pages.") < text.index("SUMMARY OF EARLIER WORK"), "the task comes first, then the summary"


def test_the_last_tool_calls_are_kept_whole_and_nothing_older(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "summary", 3)
    uses = [b["id"] for m in history if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    kept_uses = [b["id"] for m in out if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    kept_results = [b["tool_use_id"] for m in out if isinstance(m["content"], list) for b in m["content"]
                    if b["type"] == "tool_result"]
    assert kept_uses == uses[-3:], \
        f"keep_last=3: the last 3 tool calls ({uses[-3:]}) are kept and no older one; kept {kept_uses}"
    assert kept_results == uses[-3:], f"every kept call keeps its result, in order; results kept: {kept_results}"
    roles = [m["role"] for m in out]
    assert roles == ["user", "assistant"] * (len(out) // 2) + ["user"] * (len(out) % 2), \
        f"roles must alternate, user first: {roles}"


def test_the_kept_turns_are_as_they_were_without_their_thinking(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "summary", 3)
    made_a_call = [i for i, m in enumerate(history) if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    expected = [without_thinking(m) for m in history[made_a_call[-3]:]]
    assert not any(b["type"] in ("thinking", "redacted_thinking") for m in out for b in m["content"]
                   if isinstance(m["content"], list)), \
        "a kept turn still carries a thinking block: it was bound to the history this replaces, so remove it"
    assert out[1:] == expected, \
        ("after the first message come the messages from the assistant turn of the 3rd-last tool call to the end, "
         "each as it was but for its thinking blocks")


def test_keep_last_0_keeps_the_task_and_the_summary_only(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "summary", 0)
    assert len(out) == 1 and out[0]["role"] == "user", \
        f"keep_last=0 keeps no turn: the first message alone, not {len(out)} messages"
    assert "Read the pages." in text_of(out[0]) and "summary" in text_of(out[0]), "the one message holds the task and the summary"


def test_the_history_given_is_left_as_it_was(impl, history):
    before = copy.deepcopy(history)
    impl.compact_keeping_tail("Read the pages.", history, "summary", 3)
    changed = [i for i, (a, b) in enumerate(zip(history, before)) if a != b]
    assert history == before, \
        f"compact_keeping_tail changed the history it was given (messages {changed[:5]}): build new messages, never edit these"


def test_a_run_compacted_this_way_finishes_on_sonnet_5_5(impl):
    agent, result, compaction = reader_run(impl.compact_keeping_tail, pages=30, limit=12_000)
    assert result.status == "done", f"the run stopped after {compaction.rewrites} rewrite(s); the API said: {result.error}"
    assert compaction.rewrites >= 2, f"the run should have been compacted at least twice, not {compaction.rewrites} times"
    peak = max(c.prompt_tokens for c in agent.calls)
    assert peak < 12_000 * 2, f"the largest prompt was {peak:,} tokens: the rewrite should shrink the history below 24,000"


def test_fewer_tool_calls_than_keep_last_keeps_every_turn(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "summary", 1_000)
    assert out[1:] == [without_thinking(m) for m in history[1:]], \
        "fewer tool calls than keep_last: every message after the task is kept, each without its thinking blocks"


def test_keep_last_counts_tool_calls_not_turns(impl):
    def call(i, ids):
        return [{"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": f"s{i}"},
                                                  *({"type": "tool_use", "id": t, "name": "fetch", "input": {}} for t in ids)]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": t, "content": "page"} for t in ids]}]
    history = [{"role": "user", "content": "Read the pages."}, *call(1, ["a"]), *call(2, ["b", "c"]), *call(3, ["d"])]
    out = impl.compact_keeping_tail("Read the pages.", history, "summary", 3)
    assert out[1:] == [without_thinking(m) for m in history[3:]], \
        ("keep_last=3 over calls a | b, c | d (one turn made two): the 3rd-last call is b, so the kept turns start at the "
         "assistant turn that made b and c; count tool_use blocks, not assistant turns")
