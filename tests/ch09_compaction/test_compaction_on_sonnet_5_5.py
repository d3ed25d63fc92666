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
def history():
    """A real history from the emulator: 6 pages read, thinking blocks signed and bound."""
    agent, result, _ = reader_run(lambda task, messages, summary, keep: messages, pages=6, limit=10**9)
    assert result.status == "done"
    return agent.messages


def kinds(message):
    return [b["type"] for b in message["content"]] if isinstance(message["content"], list) else ["text"]


def test_the_task_then_the_summary_come_first_in_one_user_message(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "SUMMARY OF EARLIER WORK", 3)
    assert out[0]["role"] == "user"
    text = "\n".join(b.get("text", "") for b in out[0]["content"]) if isinstance(out[0]["content"], list) else out[0]["content"]
    assert text.index("Read the pages.") < text.index("SUMMARY OF EARLIER WORK")


def test_the_last_tool_calls_are_kept_whole_and_nothing_older(impl, history):
    out = impl.compact_keeping_tail("Read the pages.", history, "summary", 3)
    uses = [b["id"] for m in history if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    kept_uses = [b["id"] for m in out if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    kept_results = [b["tool_use_id"] for m in out if isinstance(m["content"], list) for b in m["content"]
                    if b["type"] == "tool_result"]
    assert kept_uses == uses[-3:]
    assert kept_results == uses[-3:]  # every kept call with its result, in order
    assert [m["role"] for m in out] == ["user", "assistant"] * (len(out) // 2) + ["user"] * (len(out) % 2)


def test_the_history_given_is_left_as_it_was(impl, history):
    before = copy.deepcopy(history)
    impl.compact_keeping_tail("Read the pages.", history, "summary", 3)
    assert history == before


def test_a_run_compacted_this_way_finishes_on_sonnet_5_5(impl):
    agent, result, compaction = reader_run(impl.compact_keeping_tail, pages=30, limit=12_000)
    assert compaction.rewrites >= 2
    assert result.status == "done", result.error
    assert max(c.prompt_tokens for c in agent.calls) < 12_000 * 2
