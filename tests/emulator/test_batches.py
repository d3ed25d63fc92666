"""Conformance: Message Batches (``/v1/messages/batches``), each test naming its rule.

Rules from ../shared/API-2026.md §12 (batch-processing page [BP], the API reference [BAPI], the SDK's
``resources/messages/batches.py`` and ``types/messages/``); how the emulator schedules a batch and
models caching inside it is in ``minimal_runtime/emulator/batches.py``. Every test drives the real
SDK's batch helpers and moves the emulator's clock instead of sleeping.
"""

from __future__ import annotations

import json
import threading
from datetime import date, timedelta

import anthropic
import pytest

from minimal_runtime.emulator import Emulator, Turn
from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.provider.models import model_spec

from .helpers import MODEL, SYSTEM_TEXT, FakeClock, breakpoint_on, system

HOUR, DAY = 3600, 86400
CURRENT = "claude-sonnet-5-5"
BINDING = "thinking-binding-controls-2026-08-01"


def make(delay: float = 0.0, model: str = MODEL, **kw) -> tuple[Emulator, FakeClock, anthropic.Anthropic]:
    clock = FakeClock()
    emu = Emulator(model=model, clock=clock, **({"batch_delay": delay} if delay else {}), **kw)
    return emu, clock, emu.client(max_retries=0)


def params(text: str = "hi", model: str = MODEL, **kw) -> dict:
    return {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": text}], **kw}


def item(i: int, **kw) -> dict:
    return {"custom_id": f"req-{i}", "params": params(f"question {i}", **kw)}


def results(client, batch_id: str) -> dict[str, object]:
    return {r.custom_id: r.result for r in client.messages.batches.results(batch_id)}


# -- the objects and the clock ------------------------------------------------------------------------

def test_create_answers_an_in_progress_batch_every_request_processing():
    """§12.2: a new batch is in_progress, every request counted as processing, expires_at 24 h after
    created_at, no results_url or ended_at yet; ids are msgbatch_..."""
    _, _, client = make()
    batch = client.messages.batches.create(requests=[item(i) for i in range(3)])
    assert batch.id.startswith("msgbatch_") and batch.type == "message_batch"
    assert batch.processing_status == "in_progress"
    assert batch.request_counts.model_dump() == {"processing": 3, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    assert batch.expires_at - batch.created_at == timedelta(hours=24)
    assert batch.results_url is None and batch.ended_at is None and batch.cancel_initiated_at is None


def test_a_batch_is_processed_on_the_emulators_clock():
    """§12.2/§12.3: the batch stays in_progress (all requests processing, even those already sent)
    until the delay has passed on the clock, then ends with ended_at and results_url."""
    emu, clock, client = make(delay=600)
    batch = client.messages.batches.create(requests=[item(i) for i in range(25)])
    clock.advance(599)
    polled = client.messages.batches.retrieve(batch.id)
    assert polled.processing_status == "in_progress" and polled.request_counts.processing == 25
    clock.advance(1)
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.request_counts.succeeded == 25
    assert len(emu.calls) == 25  # the three waves, at 0, 200 and 400 s
    assert ended.ended_at - ended.created_at == timedelta(seconds=600)
    assert ended.results_url == f"http://emulator.invalid/v1/messages/batches/{batch.id}/results"


def test_without_a_delay_the_first_poll_sees_the_batch_ended():
    """serve's default: the batch is processed at once; create still answers in_progress [BAPI]."""
    _, _, client = make()
    batch = client.messages.batches.create(requests=[item(0)])
    assert batch.processing_status == "in_progress"
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"


def test_results_are_one_jsonl_line_per_request_with_the_message():
    """§12.1/§12.2: results are JSONL of {custom_id, result}; a succeeded result carries the Message,
    its usage marked service_tier 'batch'."""
    emu, _, client = make()
    batch = client.messages.batches.create(requests=[item(i) for i in range(3)])
    client.messages.batches.retrieve(batch.id)
    got = results(client, batch.id)
    assert sorted(got) == ["req-0", "req-1", "req-2"]
    assert all(r.type == "succeeded" and r.message.type == "message" for r in got.values())
    assert got["req-1"].message.usage.service_tier == "batch"
    raw = emu.handle("GET", f"/v1/messages/batches/{batch.id}/results", b"", {"x-api-key": "k",
                                                                                "anthropic-version": "2023-06-01"})
    assert raw[0] == 200 and [json.loads(line)["custom_id"] for line in raw[2].decode().splitlines()] == list(got)


def test_results_before_the_batch_ends_are_refused_by_the_sdk():
    """§12.1: the SDK retrieves first and fails without a results_url."""
    _, _, client = make(delay=60)
    batch = client.messages.batches.create(requests=[item(0)])
    with pytest.raises(anthropic.AnthropicError, match="No `results_url`"):
        client.messages.batches.results(batch.id)


def test_results_url_points_at_the_http_server_answering():
    """results_url names the server actually answering (here emu.serve()'s loopback address), and
    GET, POST and DELETE all reach the emulator over HTTP."""
    emu, _, _ = make()
    with emu.serve() as base_url:
        client = anthropic.Anthropic(base_url=base_url, api_key="offline", max_retries=0)
        batch = client.messages.batches.create(requests=[item(i) for i in range(2)])
        ended = client.messages.batches.retrieve(batch.id)
        assert ended.results_url == f"{base_url}/v1/messages/batches/{batch.id}/results"
        assert sorted(results(client, batch.id)) == ["req-0", "req-1"]
        newer = client.messages.batches.create(requests=[item(0)])
        assert [b.id for b in client.messages.batches.list(limit=1).data] == [newer.id]  # the query reaches it
        assert client.messages.batches.delete(batch.id).type == "message_batch_deleted"


def test_list_is_newest_first_and_paged():
    """§12.1: most recent first; limit (default 20, 1..1000), after_id and before_id; the page has
    data, has_more, first_id, last_id (the SDK's auto-paging follows last_id)."""
    _, clock, client = make()
    ids = []
    for i in range(5):
        ids.append(client.messages.batches.create(requests=[item(i)]).id)
        clock.advance(1)
    newest_first = ids[::-1]
    page = client.messages.batches.list(limit=2)
    assert [b.id for b in page.data] == newest_first[:2] and page.has_more
    assert (page.first_id, page.last_id) == (newest_first[0], newest_first[1])
    assert [b.id for b in client.messages.batches.list(limit=2)] == newest_first  # every page, in order
    assert [b.id for b in client.messages.batches.list(after_id=ids[2]).data] == newest_first[3:]
    before = client.messages.batches.list(before_id=ids[0], limit=2)
    assert [b.id for b in before.data] == newest_first[2:4] and before.has_more
    assert len(client.messages.batches.list().data) == 5
    with pytest.raises(anthropic.BadRequestError, match="limit"):
        client.messages.batches.list(limit=1001)


def test_the_beta_batch_helpers_reach_the_same_endpoints():
    """§12.1: the beta resource sends ?beta=true and the anthropic-beta header."""
    _, _, client = make()
    batch = client.beta.messages.batches.create(requests=[item(0)], betas=["message-batches-2024-09-24"])
    assert client.beta.messages.batches.retrieve(batch.id).processing_status == "ended"
    assert [r.result.type for r in client.beta.messages.batches.results(batch.id)] == ["succeeded"]


# -- cancel, expiry, retention, delete --------------------------------------------------------------------

def test_cancel_before_the_end_cancels_what_was_not_sent_and_bills_only_what_succeeded():
    """§12.1/§12.2: cancel answers canceling with cancel_initiated_at; requests not yet sent to the
    model are canceled (not billed); the batch then ends."""
    emu, clock, client = make(delay=300)
    batch = client.messages.batches.create(requests=[item(i) for i in range(30)])  # waves at 0, 100, 200 s
    clock.advance(150)
    canceling = client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    assert canceling.request_counts.processing == 30
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.ended_at == canceling.cancel_initiated_at
    assert (ended.request_counts.succeeded, ended.request_counts.canceled) == (20, 10)
    assert [r.type for r in results(client, batch.id).values()] == ["succeeded"] * 20 + ["canceled"] * 10
    assert len(emu.calls) == 20
    with pytest.raises(anthropic.BadRequestError, match="already ended"):
        client.messages.batches.cancel(batch.id)


def test_requests_not_sent_within_24_hours_expire():
    """§12.3: a batch expires if processing is not complete within 24 h; the requests left are expired."""
    emu, clock, client = make(delay=48 * HOUR)
    batch = client.messages.batches.create(requests=[item(i) for i in range(30)])  # waves at 0, 16 h, 32 h
    clock.advance(24 * HOUR - 1)
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    clock.advance(1)
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.ended_at == ended.expires_at
    assert (ended.request_counts.succeeded, ended.request_counts.expired) == (20, 10)
    assert results(client, batch.id)["req-29"].type == "expired"
    assert len(emu.calls) == 20


def test_results_are_kept_29_days_after_creation_then_archived():
    """§12.3: results are kept 29 days after created_at; the batch stays viewable, its results not."""
    _, clock, client = make()
    batch = client.messages.batches.create(requests=[item(0)])
    clock.advance(29 * DAY - 1)
    assert client.messages.batches.retrieve(batch.id).archived_at is None
    assert len(results(client, batch.id)) == 1
    clock.advance(1)
    archived = client.messages.batches.retrieve(batch.id)
    assert archived.archived_at - archived.created_at == timedelta(days=29)
    with pytest.raises(anthropic.NotFoundError, match="29 days"):
        list(client.messages.batches.results(batch.id))


def test_delete_only_after_the_batch_has_ended():
    """§12.1: delete an in-progress batch only after canceling it; a deleted batch is gone."""
    _, _, client = make(delay=60)
    batch = client.messages.batches.create(requests=[item(0)])
    with pytest.raises(anthropic.BadRequestError, match="cancel it first"):
        client.messages.batches.delete(batch.id)
    client.messages.batches.cancel(batch.id)
    assert client.messages.batches.delete(batch.id).model_dump() == {"id": batch.id, "type": "message_batch_deleted"}
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve(batch.id)
    assert client.messages.batches.list().data == []


# -- the envelope's limits (a 4xx at create) ---------------------------------------------------------------

@pytest.mark.parametrize("ident, ok", [("a" * 64, True), ("A-z_09", True), ("a" * 65, False), ("", False),
                                       ("has space", False), ("dot.ted", False), (7, False)])
def test_custom_id_is_1_to_64_letters_digits_underscores_hyphens(ident, ok):
    """§12.2: custom_id matches ^[a-zA-Z0-9_-]{1,64}$."""
    _, _, client = make()
    create = lambda: client.messages.batches.create(requests=[{"custom_id": ident, "params": params()}])  # noqa: E731
    if ok:
        assert create().request_counts.processing == 1
    else:
        with pytest.raises(anthropic.BadRequestError, match="requests.0.custom_id"):
            create()


def test_custom_id_is_unique_within_a_batch():
    """§12.2: unique within the batch (another batch may reuse it)."""
    _, _, client = make()
    with pytest.raises(anthropic.BadRequestError, match="requests.2.custom_id: 'req-0' is also"):
        client.messages.batches.create(requests=[item(0), item(1), item(0)])
    client.messages.batches.create(requests=[item(0)])
    client.messages.batches.create(requests=[item(0)])


def test_between_1_and_100000_requests():
    """§12.3: minItems 1, maxItems 100,000."""
    emu, _, client = make()
    with pytest.raises(anthropic.BadRequestError, match="at least 1"):
        client.messages.batches.create(requests=[])
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    body = lambda n: b'{"requests":[' + b",".join(b'{"custom_id":"r%d","params":{}}' % i for i in range(n)) + b"]}"  # noqa: E731
    status, _, answer = emu.handle("POST", "/v1/messages/batches", body(100_001), headers)
    assert status == 400 and "at most 100,000" in json.loads(answer)["error"]["message"]
    status, _, answer = emu.handle("POST", "/v1/messages/batches", body(100_000), headers)
    assert status == 200 and json.loads(answer)["request_counts"]["processing"] == 100_000


def test_over_256_mb_is_413_and_the_32_mb_messages_limit_does_not_apply(monkeypatch):
    """§12.3/§13: a batch body may be up to 256 MB (the Messages API's is 32 MB); over it, 413
    request_too_large. The 256 MB body is not built: the limit is lowered to show the answer."""
    from minimal_runtime.emulator import batches
    assert batches.MAX_BYTES == 256 * 1024 * 1024
    emu, _, client = make(delay=60)  # the clock stays put: the big request is never sent to the model
    big = "x" * (33 * 1024 * 1024)
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    direct = json.dumps(params(big)).encode()
    assert emu.handle("POST", "/v1/messages", direct, headers)[0] == 413
    body = b'{"requests": [{"custom_id": "big", "params": ' + direct + b"}]}"
    assert emu.handle("POST", "/v1/messages/batches", body, headers)[0] == 200
    monkeypatch.setattr(batches, "MAX_BYTES", 1_000)
    with pytest.raises(anthropic.APIStatusError) as e:
        client.messages.batches.create(requests=[item(i) for i in range(20)])
    assert e.value.status_code == 413 and e.value.body["error"]["type"] == "request_too_large"


# -- each request as a direct call, and what a batch refuses ------------------------------------------------

@pytest.mark.parametrize("extra, field", [
    ({"stream": True}, "stream"),
    ({"speed": "fast"}, "speed"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"thread": {"type": "create"}}, "thread"),
    ({"store": True}, "store"),
    ({"previous_thread_event_id": "evt_1"}, "previous_thread_event_id"),
    ({"cache_hint": {"type": "ephemeral"}}, "cache_hint"),
    ({"context_hint": {"type": "x"}}, "context_hint"),
    ({"research_preview_2026_02": "active"}, "research_preview_2026_02"),
    ({"billing_policy": {"type": "billing_policy", "bill_to": "user_profile"}}, "billing_policy.bill_to"),
    ({"user_profile_id": "uprof_other"}, "user_profile_id"),
])
def test_a_parameter_a_batch_refuses_is_an_errored_result_and_the_others_run(extra, field):
    """§12.3 (BP table) and §11.7: each is a validation error of that request only: errored with an
    invalid_request_error body, not billed; the batch's other requests succeed."""
    emu, _, client = make()
    batch = client.messages.batches.create(requests=[item(0), {"custom_id": "odd", "params": {**params(), **extra}}],
                                           user_profile_id="uprof_mine")
    client.messages.batches.retrieve(batch.id)
    got = results(client, batch.id)
    assert got["req-0"].type == "succeeded"
    assert got["odd"].type == "errored" and got["odd"].error.type == "error"
    assert got["odd"].error.error.type == "invalid_request_error"
    assert got["odd"].error.error.message.startswith(f"{field}:")
    assert len(emu.calls) == 1


def test_the_same_user_profile_as_the_header_and_stream_false_are_accepted():
    """§12.3: only a user_profile_id that conflicts with the header is refused; stream false and speed
    standard are what a batch request is anyway."""
    _, _, client = make()
    batch = client.messages.batches.create(requests=[
        {"custom_id": "a", "params": params(user_profile_id="uprof_mine", stream=False, speed="standard")}],
        user_profile_id="uprof_mine")
    client.messages.batches.retrieve(batch.id)
    assert results(client, batch.id)["a"].type == "succeeded"


@pytest.mark.parametrize("bad", [
    params(model="claude-nonexistent-9"),  # 404 not_found_error
    params(messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure, "}]),  # no prefill on 4.6
    params(messages=[{"role": "user", "content": [{"type": "text", "text": f"p{i}", "cache_control": {"type": "ephemeral"}}
                                                  for i in range(5)]}]),
    params(temperature=0.5),  # refused under anthropic-version 2026-10-21, which the SDK sends
])
def test_an_invalid_request_is_errored_with_the_error_a_direct_call_gets(bad):
    """§12.3: validation is asynchronous; the errored result holds the standard error body, the one
    the same request sent directly is answered with (request ids aside)."""
    _, _, client = make()
    with pytest.raises(anthropic.APIStatusError) as direct:  # what the SDK no longer takes as an argument goes as is
        client.messages.create(**{k: v for k, v in bad.items() if k != "temperature"},
                               extra_body={k: v for k, v in bad.items() if k == "temperature"})
    batch = client.messages.batches.create(requests=[{"custom_id": "bad", "params": bad}, item(1)])
    client.messages.batches.retrieve(batch.id)
    got = results(client, batch.id)
    errored = got["bad"].error.model_dump(exclude_none=True)
    assert {**errored, "request_id": None} == {**direct.value.body, "request_id": None}
    assert got["req-1"].type == "succeeded"


def test_a_thinking_block_that_fails_the_prefix_check_is_dropped_in_a_batch_unless_error_is_asked():
    """§1.2/§12.3: a batch request that leaves prefix_mismatch_behavior unset never fails; where the
    check is enforced the failing blocks are dropped. With an explicit "error" it is errored."""
    def reply(request):
        return Turn(content=[{"type": "text", "text": "answer"}], thinking="thinking")
    emu, _, client = make(model=CURRENT, policy=reply, account_created=date(2026, 11, 30))
    first = client.messages.create(model=CURRENT, max_tokens=512, messages=[{"role": "user", "content": "Question 0"}])
    edited = [{"role": "user", "content": "Question 0, reworded"},
              {"role": "assistant", "content": [b.to_dict() for b in first.content]},
              {"role": "user", "content": "Question 1"}]
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        client.messages.create(model=CURRENT, max_tokens=512, messages=edited)
    strict = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    batch = client.beta.messages.batches.create(betas=[BINDING], requests=[
        {"custom_id": "unset", "params": {"model": CURRENT, "max_tokens": 512, "messages": edited}},
        {"custom_id": "strict", "params": {"model": CURRENT, "max_tokens": 512, "messages": edited, "thinking": strict}}])
    client.beta.messages.batches.retrieve(batch.id)
    got = {r.custom_id: r.result for r in client.beta.messages.batches.results(batch.id)}
    assert got["unset"].type == "succeeded"
    assert [(t.type, t.path) for t in got["unset"].message.input_transformations] == [("thinking_dropped",
                                                                                         "messages.1.content.0")]
    assert got["strict"].type == "errored" and "bound to a different conversation" in got["strict"].error.error.message


# -- pricing -------------------------------------------------------------------------------------------------

def test_a_batch_of_100_requests_costs_half_the_direct_bill():
    """§12.4: "All usage is charged at 50% of the standard API prices": the same 100 requests, the
    same tokens, half the dollars."""
    requests = [item(i) for i in range(100)]
    direct, _, client = make()
    for r in requests:
        client.messages.create(**r["params"])
    batched, _, client = make()
    batch = client.messages.batches.create(requests=requests)
    client.messages.batches.retrieve(batch.id)
    assert len(batched.calls) == len(direct.calls) == 100
    assert sum(c.prompt_tokens + c.output_tokens for c in batched.calls) == \
        sum(c.prompt_tokens + c.output_tokens for c in direct.calls)
    direct_bill, batch_bill = sum(c.cost for c in direct.calls), sum(c.cost for c in batched.calls)
    print(f"100 requests: direct ${direct_bill:.6f}, batch ${batch_bill:.6f} ({batch_bill / direct_bill:.2f}x)")
    assert batch_bill == pytest.approx(direct_bill / 2)
    assert all(c.batch for c in batched.calls) and not any(c.batch for c in direct.calls)


def test_the_batch_discount_stacks_with_the_cache_multipliers():
    """§12.4: the discounts stack: a batch cache read costs 0.05x base input, a 5-minute write
    0.625x, a 1-hour write 1x (on a model whose read is 0.1x); output half price."""
    base = model_spec(MODEL).price(0).input
    million = 1_000_000

    def cost(**tokens) -> float:
        return CallRecord.from_usage({"input_tokens": 0, "service_tier": "batch", **tokens}, MODEL).cost
    assert cost(cache_read_input_tokens=million) == pytest.approx(0.05 * base)
    assert cost(cache_creation_input_tokens=million) == pytest.approx(0.625 * base)
    assert cost(cache_creation_input_tokens=million,
                cache_creation={"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": million}) == pytest.approx(base)
    assert cost(output_tokens=million) == pytest.approx(model_spec(MODEL).price(0).output / 2)
    assert CallRecord.from_usage({"input_tokens": million, "service_tier": "standard"}, MODEL).cost == pytest.approx(base)


# -- caching inside a batch (best effort, modelled in waves) ----------------------------------------------

def cached_item(i: int, ttl: str | None = None) -> dict:
    block = breakpoint_on({"type": "text", "text": SYSTEM_TEXT}, ttl)
    return {"custom_id": f"c{i}", "params": {**params(f"question {i}"), "system": [block]}}


@pytest.mark.parametrize("n, written, read", [(100, 10, 90), (20, 10, 10), (5, 5, 0)])
def test_requests_of_one_wave_do_not_read_each_others_writes(n, written, read):
    """§12.5: hits are best effort, requests being processed concurrently. Modelled: waves of 10
    concurrent requests; a wave reads what earlier waves wrote (SIMULATED: see batches.py)."""
    from minimal_runtime.emulator import batches
    assert batches.CONCURRENCY == 10
    emu, _, client = make()
    batch = client.messages.batches.create(requests=[cached_item(i) for i in range(n)])
    client.messages.batches.retrieve(batch.id)
    assert sum(c.cache_creation_input_tokens > 0 for c in emu.calls) == written
    assert sum(c.cache_read_input_tokens > 0 for c in emu.calls) == read


def test_waves_spread_over_an_hour_read_a_1h_entry_but_not_a_5m_one():
    """§12.5: batches can take longer than 5 minutes, so the docs advise the 1-hour TTL. Two waves 30
    minutes apart: the second reads the first's 1-hour entry, and misses its 5-minute one."""
    shares = {}
    for ttl in (None, "1h"):
        emu, clock, client = make(delay=HOUR)
        batch = client.messages.batches.create(requests=[cached_item(i, ttl) for i in range(20)])
        clock.advance(HOUR)
        client.messages.batches.retrieve(batch.id)
        shares[ttl or "5m"] = sum(c.cache_read_input_tokens > 0 for c in emu.calls)
    assert shares == {"5m": 0, "1h": 10}


def test_a_direct_call_after_the_batch_reads_what_the_batch_wrote():
    """The batch runs on the same cache as direct calls (the account's), at its own times; a direct
    call after the batch has ended (as a poll says: it is processed beside direct calls) reads it."""
    emu, clock, client = make(delay=60)
    batch = client.messages.batches.create(requests=[cached_item(0)])
    clock.advance(120)  # the batch ran at 0 s; its 5-minute entry is alive at 120 s
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    answer = client.messages.create(**{**params("another question"), "system": system()})
    assert answer.usage.cache_read_input_tokens > 0 and answer.usage.service_tier == "standard"


def test_a_policy_that_calls_the_emulator_during_a_batch_does_not_resend_the_wave():
    """A policy may itself call the emulator (a sub-agent, a knowledge manager): that call is a
    direct one, and the wave being sent is not sent again from inside it."""
    emu = Emulator(model=MODEL, clock=FakeClock())
    inner = emu.client(max_retries=0)

    def policy(request):
        if request["messages"][0]["content"] == "outer":
            inner.messages.create(**params("inner"))
        return "ok"
    emu.policy = policy
    client = emu.client(max_retries=0)
    batch = client.messages.batches.create(requests=[{"custom_id": f"o{i}", "params": params("outer")} for i in range(3)])
    client.messages.batches.retrieve(batch.id)
    assert [r.type for r in results(client, batch.id).values()] == ["succeeded"] * 3
    assert [c.batch for c in emu.calls] == [False, True] * 3  # the inner call ends first


def test_once_every_batch_has_ended_a_direct_call_reads_the_clock_as_before():
    """The chapters run on a clock that steps at every reading: batches that have ended must not
    change what a direct call reads."""
    class Counting(FakeClock):
        reads = 0

        def __call__(self) -> float:
            self.reads += 1
            return self.t

    def reads_of_one_call(emu: Emulator, clock: Counting) -> int:
        before = clock.reads
        emu.client(max_retries=0).messages.create(**params())
        return clock.reads - before
    plain, used = Counting(), Counting()
    emu = Emulator(model=MODEL, clock=used)
    batch = emu.client().messages.batches.create(requests=[item(0)])
    assert emu.client().messages.batches.retrieve(batch.id).processing_status == "ended"
    assert reads_of_one_call(emu, used) == reads_of_one_call(Emulator(model=MODEL, clock=plain), plain)


EXTENDED = "output-300k-2026-03-24"


def test_the_300k_output_beta_raises_max_tokens_in_a_batch_only_and_on_the_models_it_names():
    """§12 "Extended output" (BP; API-2026 §7): with output-300k-2026-03-24, a batch request may ask for
    up to 300,000 output tokens on the models the sources list; without the beta, or on another model,
    the item is errored at the model's own cap; sent directly, the beta changes nothing (400)."""
    emu, _, client = make()
    asks = {"big": params(model=CURRENT, max_tokens=300_000), "over": params(model=CURRENT, max_tokens=300_001),
            "old": params(model="claude-haiku-4-5", max_tokens=100_000)}
    requests = [{"custom_id": k, "params": p} for k, p in asks.items()]
    with_beta = client.beta.messages.batches.create(requests=requests, betas=[EXTENDED])
    client.beta.messages.batches.retrieve(with_beta.id, betas=[EXTENDED])
    got = {r.custom_id: r.result for r in client.beta.messages.batches.results(with_beta.id, betas=[EXTENDED])}
    assert got["big"].type == "succeeded"
    assert got["over"].type == "errored" and "300001 > 300000" in got["over"].error.error.message
    assert got["old"].type == "errored" and "100000 > 64000" in got["old"].error.error.message
    plain = client.messages.batches.create(requests=requests[:1])
    client.messages.batches.retrieve(plain.id)
    refused = results(client, plain.id)["big"]
    assert refused.type == "errored" and "300000 > 128000" in refused.error.error.message
    with pytest.raises(anthropic.BadRequestError, match="in a Message Batch only"):
        client.beta.messages.create(betas=[EXTENDED], stream=True, **params(model=CURRENT, max_tokens=300_000))
    assert len(emu.calls) == 1


def test_a_batch_is_processed_beside_the_other_clients_requests_never_inside_them():
    """Issue 52 item 4: a batch's requests run on the emulator's own batch processor, not inside the
    next request any client makes nor under a lock it waits on. Here the batch's first request is held
    up in its policy; meanwhile another client's call and the model listing are answered, and a poll
    says in_progress without waiting for it; let go, the batch ends."""
    entered, leave = threading.Event(), threading.Event()

    def policy(request):
        if request["messages"][0]["content"].startswith("question"):
            entered.set()
            leave.wait(10)
        return "ok"
    emu, clock, client = make(delay=60, policy=policy)
    batch = client.messages.batches.create(requests=[item(i) for i in range(3)])
    try:
        assert entered.wait(10), "the batch was not processed until another request came"
        assert client.messages.create(**params("a direct call")).content[0].text == "ok"
        assert client.models.list().data
        clock.advance(30)
        assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    finally:
        leave.set()
    clock.advance(30)
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.request_counts.succeeded == 3
    assert [c.batch for c in emu.calls] == [False, True, True, True]


def test_a_direct_call_that_waits_for_a_batch_it_created_gets_its_results():
    """The processor yields to direct calls, but not for ever: a policy that submits a batch and
    polls it from inside a direct call (which the processor would otherwise wait for) gets it ended."""
    emu = Emulator(model=MODEL, clock=FakeClock())
    inner = emu.client(max_retries=0)
    seen = []

    def policy(request):
        if request["messages"][0]["content"] == "outer":
            batch = inner.messages.batches.create(requests=[item(i) for i in range(2)])
            seen.append(inner.messages.batches.retrieve(batch.id).processing_status)
        return "ok"
    emu.policy = policy
    worker = threading.Thread(target=lambda: emu.client(max_retries=0).messages.create(**params("outer")), daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive() and seen == ["ended"]
