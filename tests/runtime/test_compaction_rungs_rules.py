"""createrole's rungs, each stated by a test (issue 27: the compaction_rungs module scored by
mutation): the masking boundary and its thresholds, a compact form made once, writes never masked,
what trim keeps together, and the overflow retries' order, targets and limits."""

from __future__ import annotations

from types import SimpleNamespace as NS

import anthropic
import httpx
import pytest

from minimal_runtime.core.context import CallParts
from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point
from minimal_runtime.core.messages import user
from minimal_runtime.features.compaction import estimate
from minimal_runtime.features.compaction_rungs import CreateroleRungs, RetryOnOverflow, trim, truncate_largest
from minimal_runtime.features.recall import Keeper


def exchange(k, size=400, name="fetch", args=None):
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": name,
                                               "input": args if args is not None else {"url": f"https://d.example/{k}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": f"{k}" * size}]}]


def history(n, size=400):
    return [user("the task")] + [m for k in range(n) for m in exchange(k, size)]


def full(messages):
    return [m["content"][0]["tool_use_id"] for m in messages
            if m["content"][0].get("type") == "tool_result" and not m["content"][0]["content"].startswith("[compacted")]


def test_all_but_the_two_newest_results_are_masked_and_the_setting_moves_the_boundary(tmp_path):
    assert full(CreateroleRungs(Keeper(tmp_path), budget=10**6).assemble(history(5))) == ["t3", "t4"]
    assert full(CreateroleRungs(Keeper(tmp_path), budget=10**6, keep_results=3).assemble(history(5))) == ["t2", "t3", "t4"]
    assert full(CreateroleRungs(Keeper(tmp_path), budget=10**6).assemble(history(2))) == ["t0", "t1"]


def test_mid_turn_starts_at_ninety_percent_of_the_budget_by_the_larger_measure(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=10_000)
    rungs.measured = 8_999
    assert full(rungs.assemble(history(4))) == ["t2", "t3"] and rungs.mid_turn_calls == 0
    rungs.measured = 9_000
    assert full(rungs.assemble(history(4))) == ["t3"] and rungs.mid_turn_calls == 1
    other = CreateroleRungs(Keeper(tmp_path), budget=10_000, mid_turn=0.5)
    other.measured = 5_000
    assert full(other.assemble(history(4))) == ["t3"]


def test_the_estimate_alone_can_start_mid_turn(tmp_path):
    messages = history(4, size=8_000)  # about 8,000 tokens of results
    rungs = CreateroleRungs(Keeper(tmp_path), budget=estimate(CreateroleRungs(Keeper(tmp_path), budget=10**6).assemble(messages)))
    assert full(rungs.assemble(messages)) == ["t3"] and rungs.mid_turn_calls == 1


def test_trimming_starts_only_above_the_budget(tmp_path):
    messages = history(6)
    rungs = CreateroleRungs(Keeper(tmp_path), budget=10**6, mid_turn=10.0)
    masked = rungs.assemble(messages)
    exact = CreateroleRungs(Keeper(tmp_path), budget=estimate(masked), mid_turn=10.0)
    assert exact.assemble(messages) == masked and exact.trimmed == 0
    under = CreateroleRungs(Keeper(tmp_path), budget=estimate(masked) // 2, mid_turn=10.0)
    sent = under.assemble(messages)
    assert under.trimmed == 1 and len(sent) < len(masked)
    assert sent[0]["content"][0]["text"].startswith("the task\n\n[Summary of earlier work")  # the task, then what was left out


def test_a_result_s_compact_form_is_made_once_and_reused(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=10**6)
    first = rungs.assemble(history(4))
    saved = sorted(p.name for p in (tmp_path / ".observations").iterdir() if p.suffix == ".txt")  # copies, not records
    (tmp_path / ".observations" / saved[0]).unlink()  # a second compact_call would write it again
    again = rungs.assemble(history(4))
    assert again == first and sorted(p.name for p in (tmp_path / ".observations").iterdir() if p.suffix == ".txt") == saved[1:]


def test_a_write_s_result_is_never_masked(tmp_path):
    messages = [user("t"), *exchange(0, name="write_file", args={"path": "a.md", "content": "x" * 500}),
                *exchange(1), *exchange(2), *exchange(3)]
    sent = CreateroleRungs(Keeper(tmp_path), budget=10**6).assemble(messages)
    assert sent[2] == messages[2] and sent[1] == messages[1] and full(sent) == ["t0", "t2", "t3"]


def test_thinking_is_stripped_from_the_copy_unless_told_otherwise(tmp_path):
    thought = {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                                {"type": "text", "text": "ok"}]}
    messages = [user("t"), thought, user("go")]
    assert CreateroleRungs(Keeper(tmp_path), budget=10**6).assemble(messages)[1]["content"] == [{"type": "text", "text": "ok"}]
    assert CreateroleRungs(Keeper(tmp_path), budget=10**6, strip_thinking=False).assemble(messages) == messages


def test_the_layout_sends_the_assembled_copy_and_no_previous_length(tmp_path):
    rungs, seen = CreateroleRungs(Keeper(tmp_path), budget=10**6), []
    layout = rungs.layout(lambda parts: seen.append(parts) or {"messages": parts.durable})
    messages = history(4)
    out = layout(CallParts(system=[], tools=[], durable=messages, previous_durable_len=7))
    assert full(out["messages"]) == ["t2", "t3"] and seen[0].previous_durable_len is None and full(messages) == ["t0", "t1", "t2", "t3"]


def test_the_last_measured_prompt_is_remembered_after_each_call(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=10)
    hooks = HookRegistry().install(rungs)
    hooks.run(Point.POST_LLM_CALL, HookEvent(Point.POST_LLM_CALL, NS(calls=[NS(prompt_tokens=5), NS(prompt_tokens=42)])))
    assert rungs.measured == 42 and hooks.failures == []


def test_trim_takes_an_exchange_s_system_entries_with_the_exchange_that_follows():
    system = {"role": "system", "content": [{"type": "text", "text": "s" * 40}]}
    messages = [user("task"), *exchange(0, size=4000), system, *exchange(1, size=40), *exchange(2, size=40)]
    kept = trim(messages, estimate(messages) // 2)
    assert kept == [messages[0], system, *messages[4:]]


def test_trim_stops_at_the_last_exchange_and_keeps_everything_that_fits():
    messages = [user("task"), *exchange(0), *exchange(1)]
    assert trim(messages, 0) == [messages[0], *messages[3:]]
    assert trim(messages, estimate(messages)) == messages
    assert trim([user("only the task")], 0) == [user("only the task")]
    no_assistant = [user("task"), user("more")]
    assert trim(no_assistant, 0) == no_assistant


def test_the_largest_message_is_cut_in_proportion_with_a_marker():
    messages = [user("a" * 100), {"role": "assistant", "content": [{"type": "text", "text": "b" * 800}]}, user("c" * 100)]
    cut = truncate_largest(messages, 0.5)
    # 1,000 characters to 500: the 800-character message keeps 300
    assert cut[1]["content"] == [{"type": "text", "text": "b" * 300 + "\n[truncated: 500 of 800 characters left out]"}]
    assert cut[0] == messages[0] and cut[2] == messages[2] and messages[1]["content"][0]["text"] == "b" * 800


def test_truncation_cuts_text_and_string_results_and_leaves_other_blocks():
    result = {"type": "tool_result", "tool_use_id": "t", "content": "r" * 1000}
    image = {"type": "image", "source": {}}
    blocks = [user([result, image, {"type": "text", "text": "t" * 1000}, {"type": "tool_result", "tool_use_id": "u",
                                                                         "content": [{"type": "text", "text": "inner"}]}])]
    cut = truncate_largest(blocks, 0.5)[0]["content"]
    assert cut[0]["content"] == "r" * 500 + "\n[truncated: 500 of 1,000 characters left out]" and cut[1] == image
    assert cut[2]["text"] == "t" * 500 + "\n[truncated: 500 of 1,000 characters left out]"
    assert cut[3] == blocks[0]["content"][3]
    whole = [{"role": "user", "content": "s" * 10}]
    assert truncate_largest(whole, 1.0) == whole
    assert truncate_largest([{"role": "user", "content": "s" * 10}], 0.0)[0]["content"] == "\n[truncated: 10 of 10 characters left out]"


def too_long(total, maximum):
    request = httpx.Request("POST", "https://api.example/v1/messages")
    message = f"prompt is too long: {total} tokens > {maximum} maximum"
    return anthropic.BadRequestError(message, response=httpx.Response(400, request=request),
                                     body={"type": "error", "error": {"type": "invalid_request_error", "message": message}})


class Client:
    def __init__(self, *outcomes):
        self.outcomes, self.requests = list(outcomes), []
        self.messages = NS(create=self.create)
        self.beta = NS(messages=NS(create=lambda **kw: self.create(beta=True, **kw)))

    def create(self, **request):
        self.requests.append(request)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def test_the_first_retry_trims_to_ninety_percent_of_the_maximum_by_the_api_s_count():
    messages = history(10, size=4000)
    client = Client(too_long(2000, 1000), "answer")
    retry = RetryOnOverflow(client)
    assert retry.messages.create(model="m", messages=messages) == "answer"
    sent = client.requests[1]["messages"]
    assert sent == trim(messages, int(estimate(messages) * 0.9 * 1000 / 2000))
    assert retry.retries == [f"left out the oldest exchanges: 21 -> {len(sent)} messages"]
    assert client.requests[1]["model"] == "m"


def test_the_second_retry_truncates_the_largest_message_and_a_third_overflow_is_raised():
    messages = [user("v" * 10_000)]
    client = Client(too_long(2000, 1000), too_long(2000, 1000), "answer")
    retry = RetryOnOverflow(client)
    assert retry.beta.messages.create(model="m", messages=messages) == "answer"
    assert client.requests[2]["beta"] and client.requests[2]["messages"] == truncate_largest(messages, 0.45)
    assert retry.retries[1] == "truncated the largest message to 45% of the prompt's share"
    failing = RetryOnOverflow(Client(too_long(2, 1), too_long(2, 1), too_long(2, 1)))
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        failing.messages.create(model="m", messages=messages)
    assert len(failing.retries) == 2


def test_another_bad_request_is_never_retried_and_attempts_bound_the_retries():
    other = anthropic.BadRequestError("max_tokens: too large", response=httpx.Response(
        400, request=httpx.Request("POST", "https://api.example/v1/messages")), body=None)
    client = Client(other, "unused")
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        RetryOnOverflow(client).messages.create(model="m", messages=[user("x")])
    assert len(client.requests) == 1
    once = RetryOnOverflow(Client(too_long(2000, 1000), too_long(2000, 1000)), attempts=1)
    with pytest.raises(anthropic.BadRequestError):
        once.messages.create(model="m", messages=[user("v" * 1000)])
    assert len(once.retries) == 1 and once.retries[0].startswith("truncated")  # the last attempt truncates


def test_trim_keeps_a_history_exactly_at_its_budget():
    messages = [user("task"), *exchange(0), *exchange(1), *exchange(2)]
    exact = sum(estimate([m]) for m in messages)  # trim counts message by message
    assert trim(messages, exact) == messages
    assert trim(messages, exact - 1) == [messages[0], *messages[3:]]


def test_what_precedes_the_oldest_exchange_is_left_out_with_it():
    stray = user("s" * 4000)
    messages = [user("task"), stray, *exchange(0, size=40), *exchange(1, size=40)]
    budget = sum(estimate([m]) for m in messages) - estimate([stray])
    assert trim(messages, budget) == [messages[0], *messages[4:]]  # the stray message and exchange 0 together


def test_a_system_entry_right_after_a_turn_goes_with_the_next_exchange():
    turn = {"role": "assistant", "content": [{"type": "text", "text": "t" * 4000}]}
    system = {"role": "system", "content": [{"type": "text", "text": "s" * 40}]}
    messages = [user("task"), turn, system, *exchange(1, size=40), *exchange(2, size=40)]
    budget = sum(estimate([m]) for m in messages) - estimate([turn])
    assert trim(messages, budget) == [messages[0], system, *messages[3:]]


def test_the_largest_message_counts_its_string_tool_results():
    messages = [user("a" * 300), user([{"type": "tool_result", "tool_use_id": "t", "content": "r" * 1000}])]
    cut = truncate_largest(messages, 0.5)
    assert cut[0] == messages[0] and cut[1]["content"][0]["content"].startswith("r" * 350 + "\n[truncated: 650 of 1,000")


def test_before_any_call_is_measured_only_the_estimate_counts(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=1)
    assert rungs.assemble([]) == [] and rungs.mid_turn_calls == 0 and rungs.measured == 0


def test_the_measure_is_the_latest_call_s_prompt(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=10)
    rungs.measure(HookEvent(Point.POST_LLM_CALL, NS(calls=[NS(prompt_tokens=5), NS(prompt_tokens=7), NS(prompt_tokens=42)])))
    assert rungs.measured == 42


def test_the_rungs_count_every_call_they_acted_on(tmp_path):
    rungs = CreateroleRungs(Keeper(tmp_path), budget=100)
    for _ in range(3):
        rungs.assemble(history(6))
    assert rungs.mid_turn_calls == 3 and rungs.trimmed == 3


def test_masking_leaves_string_messages_and_makes_no_copy_of_a_write(tmp_path):
    note = {"role": "user", "content": "a plain string message"}
    messages = [user("t"), *exchange(0, name="write_file", args={"path": "gone.md", "content": "x" * 500}), note,
                *exchange(1), *exchange(2), *exchange(3)]
    sent = CreateroleRungs(Keeper(tmp_path), budget=10**6).assemble(messages)
    assert sent[3] == note and sent[1:3] == messages[1:3]
    saved = sorted(p.name for p in (tmp_path / ".observations").iterdir() if p.suffix == ".txt")  # copies, not records
    assert len(saved) == 1  # the fetch's copy only: a write's result is one line, its input stays


def test_a_message_of_images_has_no_text_to_cut():
    image = {"type": "image", "source": {}}
    messages = [user("a" * 3), user([image, image])]
    assert truncate_largest(messages, 0.5)[1] == messages[1]
