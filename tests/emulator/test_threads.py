"""Message threads (API-2026.md §11): the emulator holds the conversation under each response id, and
the SDK's default tool loop (which threads) runs against it, recovers from a lost thread and from a
request the server cannot thread, and is billed as the same loop without threads."""

from __future__ import annotations

import json
import logging
import threading

import anthropic
import pytest
from anthropic import beta_tool

from minimal_runtime.emulator import Emulator, ScriptedPolicy, Turn, text, tool_use
BETA = "message-threads-2026-08-12"  # the beta header of message threads [MT]
from minimal_runtime.serve.policy import ToolThenAnswer
from .helpers import SYSTEM_TEXT, TOOLS, FakeClock

CURRENT = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "What is the weather in Paris and in Rome?"}]
CACHED_SYSTEM = [{"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}]


def emulator(rounds: int = 3, model: str = CURRENT) -> tuple[Emulator, FakeClock, list]:
    """An emulator whose every exchange is recorded as (request body, status, error code)."""
    clock = FakeClock()
    emu = Emulator(model=model, policy=ToolThenAnswer(rounds=rounds), clock=clock)
    log, handle = [], emu.handle

    def recorded(method, path, body, headers=None):
        status, out, payload = handle(method, path, body, headers)
        answer = json.loads(payload) if payload[:1] == b"{" else {}
        log.append((json.loads(body) if body else None, status, ((answer.get("error") or {}).get("details") or {})
                    .get("error_code"), answer.get("usage")))
        return status, out, payload
    emu.handle = recorded
    return emu, clock, log


def weather_tool(on_call=None):
    @beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city's name
        """
        if on_call:
            on_call()
        return f"sunny in {city}"
    return get_weather


def run_tool_runner(emu: Emulator, model: str = CURRENT, **kw) -> list:
    """``client.beta.messages.tool_runner`` as its docstring shows it: iterate until the model stops."""
    tool = weather_tool(kw.pop("on_call", None))
    runner = emu.client().beta.messages.tool_runner(model=model, max_tokens=1024, tools=[tool], messages=ASK, **kw)
    return [message for message in runner]


def threaded(emu_kwargs=None, **kw):
    emu, clock, log = emulator(**(emu_kwargs or {}))
    return run_tool_runner(emu, **kw), emu, clock, log


def kinds(log) -> list[str]:
    return [(r.get("thread") or {}).get("type", "none") + (f" {code}" if code else "") for r, _, code, _ in log]


def test_the_sdk_tool_runner_threads_by_default_and_is_billed_as_without_threads():
    """§11.8: the runner creates a thread, then continues it with only the tool_result and no
    system or tools; every request is answered, and each call's usage equals that of the same loop
    sent in full (thread=False): a thread changes the bytes sent, not the bill (§11.5)."""
    replies, emu, _, log = threaded(system=CACHED_SYSTEM, cache_control={"type": "ephemeral"})
    assert [m.stop_reason for m in replies] == ["tool_use"] * 3 + ["end_turn"]
    assert kinds(log) == ["create", "continue", "continue", "continue"]
    assert all(status == 200 for _, status, _, _ in log)
    for request, *_ in log[1:]:
        assert "system" not in request and "tools" not in request and len(request["messages"]) == 1
    plain, plain_emu, _, plain_log = threaded(system=CACHED_SYSTEM, cache_control={"type": "ephemeral"}, thread=False)
    assert kinds(plain_log) == ["none"] * 4
    assert [usage for *_, usage in log] == [usage for *_, usage in plain_log]
    assert emu.calls == plain_emu.calls
    assert [m.content for m in replies] == [m.content for m in plain]
    assert sum(u["cache_read_input_tokens"] for *_, u in log) > 0


def test_a_continue_inherits_system_and_tools_and_the_policy_reads_the_whole_conversation():
    seen = []

    def policy(request):
        seen.append((len(request["messages"]), [t["name"] for t in request.get("tools") or []], bool(request.get("system"))))
        return Turn(content=[text("ok")])
    emu = Emulator(model=CURRENT, policy=policy, clock=FakeClock())
    client = emu.client()
    first = client.beta.messages.create(model=CURRENT, max_tokens=100, system="be brief", tools=TOOLS, messages=ASK,
                                        thread={"type": "create"}, betas=[BETA])
    client.beta.messages.create(model=CURRENT, max_tokens=100, messages=[{"role": "user", "content": "and Oslo?"}],
                                thread={"type": "continue", "previous_message_id": first.id}, betas=[BETA])
    assert seen == [(1, ["fetch", "write_file"], True), (3, ["fetch", "write_file"], True)]


def create(client, messages, thread, **kw):
    return client.beta.messages.create(model=kw.pop("model", CURRENT), max_tokens=100, messages=messages,
                                       thread=thread, betas=kw.pop("betas", [BETA]), **kw)


def cont(previous_id: str) -> dict:
    return {"type": "continue", "previous_message_id": previous_id}


def error_code(e: anthropic.APIStatusError) -> str | None:
    return (e.body["error"].get("details") or {}).get("error_code")


def test_each_response_is_continued_once_and_unknown_or_expired_ids_are_404():
    """§11.6: thread_already_continued; thread_not_found (404, error.details.error_code) for an
    unknown id and for one 5 minutes past its response, on the emulator's clock."""
    emu, clock, _ = emulator()
    client = emu.client()
    first = create(client, ASK, {"type": "create"}, system="s")
    more = [{"role": "user", "content": "more"}]
    second = create(client, [{"role": "assistant", "content": "noted"}, *more], cont(first.id))
    with pytest.raises(anthropic.BadRequestError) as e:
        create(client, more, cont(first.id))
    assert error_code(e.value) == "thread_already_continued"
    with pytest.raises(anthropic.NotFoundError) as e:
        create(client, more, cont("msg_unknown"))
    assert error_code(e.value) == "thread_not_found" and e.value.body["error"]["type"] == "not_found_error"
    assert "Replay the full conversation" in e.value.body["error"]["message"]
    clock.advance(299)
    third = create(client, [{"role": "assistant", "content": "ok"}, *more], cont(second.id))
    clock.advance(300.5)
    with pytest.raises(anthropic.NotFoundError) as e:
        create(client, [{"role": "assistant", "content": "ok"}, *more], cont(third.id))
    assert error_code(e.value) == "thread_not_found"
    emu.threads.ttl = 10  # serve --thread-ttl 10
    fourth = create(client, ASK, {"type": "create"})
    clock.advance(11)
    with pytest.raises(anthropic.NotFoundError):
        create(client, more, cont(fourth.id))


def test_a_failed_continue_leaves_the_response_continuable():
    emu, _, _ = emulator()
    client = emu.client()
    first = create(client, ASK, {"type": "create"})
    with pytest.raises(anthropic.BadRequestError, match="text content blocks must be non-empty"):
        create(client, [{"role": "user", "content": [{"type": "text", "text": ""}]}], cont(first.id))
    assert create(client, [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}],
                  cont(first.id)).stop_reason
    assert emu.calls[-1].prompt_tokens > emu.calls[0].prompt_tokens  # the whole conversation was answered


def test_one_continue_at_a_time():
    """§11.6: a second continue of the same response while the first is answered is
    thread_continue_in_flight."""
    entered, leave = threading.Event(), threading.Event()

    def slow(request):
        if len(request["messages"]) > 1:
            entered.set()
            leave.wait(10)
        return Turn(content=[text("ok")])
    emu = Emulator(model=CURRENT, policy=slow, clock=FakeClock())
    client = emu.client()
    first = create(client, ASK, {"type": "create"})
    follow = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]
    worker = threading.Thread(target=lambda: create(client, follow, cont(first.id)))
    worker.start()
    try:
        assert entered.wait(10)
        with pytest.raises(anthropic.BadRequestError) as e:
            create(client, follow, cont(first.id))
        assert error_code(e.value) == "thread_continue_in_flight"
    finally:
        leave.set()
        worker.join(10)


def test_fixed_fields_system_and_tools_on_a_continue():
    """§11.3: output_config must stay as created (thread_fingerprint_mismatch, naming the field);
    tools and system are the thread's, except Claude Code's billing-header-only system."""
    emu, _, _ = emulator()
    client = emu.client()
    first = create(client, ASK, {"type": "create"}, output_config={"effort": "high"}, system="s")
    more = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]
    with pytest.raises(anthropic.BadRequestError) as e:
        create(client, more, cont(first.id), output_config={"effort": "low"})
    assert error_code(e.value) == "thread_fingerprint_mismatch" and "differing field(s): output_config" in str(e.value)
    with pytest.raises(anthropic.BadRequestError, match="leave tools out"):
        create(client, more, cont(first.id), output_config={"effort": "high"}, tools=TOOLS)
    with pytest.raises(anthropic.BadRequestError, match="leave system out"):
        create(client, more, cont(first.id), output_config={"effort": "high"}, system="another")
    billing = [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.285.a1b; cc_entrypoint=cli;"}]
    assert create(client, more, cont(first.id), output_config={"effort": "high"}, system=billing).id


def test_thread_needs_its_beta_and_count_tokens_takes_none():
    emu, _, _ = emulator()
    client = emu.client()
    with pytest.raises(anthropic.BadRequestError, match="thread: Extra inputs are not permitted"):
        create(client, ASK, {"type": "create"}, betas=[])
    with pytest.raises(anthropic.BadRequestError, match="thread: Extra inputs are not permitted"):
        client.messages.count_tokens(model=CURRENT, messages=ASK, extra_body={"thread": {"type": "create"}})


def test_a_fourth_block_marker_is_thread_unsupported_request_and_the_runner_goes_on_unthreaded(caplog):
    """§11.5: with thread set, 3 block markers at most, in the API's words; the SDK runner's
    continue_unthreaded then resends the turn, and every later one, without a thread."""
    marked = [{"type": "text", "text": f"rule {i}. " * 200, "cache_control": {"type": "ephemeral"}} for i in range(4)]
    caplog.set_level(logging.INFO, logger="anthropic")
    replies, _, _, log = threaded(system=marked)
    assert kinds(log) == ["create thread_unsupported_request", "none", "none", "none", "none"]
    request, status, _, _ = log[0]
    assert status == 400 and replies[-1].stop_reason == "end_turn"
    assert "cannot thread this request; continuing without a thread: unsupported=cache_control" in caplog.text
    emu, _, _ = emulator()
    with pytest.raises(anthropic.BadRequestError) as e:
        create(emu.client(), ASK, {"type": "create"}, system=marked)
    assert str(e.value.body["error"]["message"]).startswith(
        "thread: a maximum of 3 blocks with cache_control may be provided when thread is set -- the fourth marker "
        "slot is reserved for the marker the server places on the conversation last cache-eligible block. Found 4.")
    assert e.value.body["error"]["details"] == {"error_code": "thread_unsupported_request", "unsupported": ["cache_control"]}


def test_held_messages_drop_their_markers_so_a_marker_per_turn_never_adds_up():
    """A client that marks each continue's new message (Claude Code marks one) stays within the
    limit however long the thread: the held turns keep no markers [INFERRED, see threads.py]."""
    emu, _, log = emulator()
    client = emu.client()
    marked = lambda s: [{"role": "user", "content": [{"type": "text", "text": s, "cache_control": {"type": "ephemeral"}}]}]  # noqa: E731
    answer = create(client, marked("start"), {"type": "create"}, system=CACHED_SYSTEM)
    for k in range(5):
        answer = create(client, [{"role": "assistant", "content": "ok"}, *marked(f"turn {k}")], cont(answer.id))
    assert all(status == 200 for _, status, _, _ in log)
    assert emu.calls[-1].prompt_tokens > emu.calls[0].prompt_tokens  # the held system and turns were read


def test_the_python_sdk_replays_after_an_expired_thread():
    """§11.8: the runner's continue gets thread_not_found once the thread is 5 minutes old; it
    resends the whole history under a new thread and goes on threading."""
    emu, clock, log = emulator()
    replies = run_tool_runner(emu, on_call=lambda: clock.advance(301) if len(log) == 2 else None)
    assert kinds(log) == ["create", "continue", "continue thread_not_found", "create", "continue"]
    replay = log[3][0]
    assert len(replay["messages"]) == 5 and "tools" in replay and replies[-1].stop_reason == "end_turn"


def test_a_continue_with_no_messages_resumes_a_paused_turn():
    """§11.2: after stop_reason pause_turn (or compaction) the server holds the unfinished turn:
    messages: [] resumes it. After an ordinary answer it is a prefill, refused on 5.x."""
    emu = Emulator(model=CURRENT, clock=FakeClock(), policy=ScriptedPolicy([
        Turn(content=[text("searching")], stop_reason="pause_turn"), Turn(content=[text("found it")])]))
    client = emu.client()
    paused = create(client, ASK, {"type": "create"})
    assert paused.stop_reason == "pause_turn"
    resumed = create(client, [], cont(paused.id))
    assert resumed.content[-1].text == "found it"
    with pytest.raises(anthropic.BadRequestError, match="does not support assistant message prefill"):
        create(client, [], cont(resumed.id))


def test_the_prefix_check_covers_the_held_conversation():
    """§11.7: a thread's reasoning is bound to the whole conversation the server holds, so the
    full history sent without a thread, as a replay sends it, passes the check unchanged; with an
    earlier turn edited it fails, as any request would."""
    emu, _, _ = emulator()
    client = emu.client()
    history = list(ASK)
    answer = create(client, history, {"type": "create"})
    for k in range(2):
        history.append({"role": "assistant", "content": [b.to_dict() for b in answer.content]})
        step = [{"role": "user", "content": f"step {k}"}]
        history += step
        answer = create(client, step, cont(answer.id))
    history.append({"role": "assistant", "content": [b.to_dict() for b in answer.content]})
    history.append({"role": "user", "content": "done?"})
    assert create(client, history, {"type": "create"}).id
    edited = [*history[:2], {"role": "user", "content": "step 0 (edited)"}, *history[3:]]
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        create(client, edited, {"type": "create"})


def test_a_model_without_threads_answers_thread_unsupported_request():
    emu, _, _ = emulator(model="claude-fable-5-2")
    with pytest.raises(anthropic.BadRequestError) as e:
        create(emu.client(), ASK, {"type": "create"}, model="claude-fable-5-2")
    assert error_code(e.value) == "thread_unsupported_request"


def test_tool_use_then_thread_delta_shape_is_what_the_ts_capture_shows():
    """The TS capture (API-2026.md §11.8): the second request is exactly {model, max_tokens,
    messages: [tool_result message], thread: continue, stream: false}; such a body is answered."""
    emu = Emulator(model=CURRENT, clock=FakeClock(), policy=ScriptedPolicy([
        Turn(content=[tool_use("fetch", {"url": "u"}, id="toolu_1")]), Turn(content=[text("done")])]))
    client = emu.client()
    first = create(client, ASK, {"type": "create"}, tools=TOOLS)
    delta = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "page"}]}]
    second = client.beta.messages.create(model=CURRENT, max_tokens=100, messages=delta, thread=cont(first.id),
                                         stream=False, betas=[BETA])
    assert second.content[-1].text == "done"


def test_a_reply_cut_before_any_content_leaves_its_thread_continuable():
    """A reply cut at max_tokens while the model was still thinking has no content (display omitted
    on 5.x): the held conversation must not end in an empty assistant message, which the API itself
    refuses in a request ("all messages must have non-empty content ..."), or the thread could never
    be continued: the 400 is not thread_not_found, so an SDK does not replay."""
    emu, _, _ = emulator()
    client = emu.client()
    cut = client.beta.messages.create(model=CURRENT, max_tokens=5, messages=ASK, thread={"type": "create"},
                                      betas=[BETA])
    assert cut.stop_reason == "max_tokens" and cut.content == []
    going_on = create(client, [{"role": "user", "content": "go on"}], cont(cut.id))
    assert going_on.stop_reason and emu.calls[-1].prompt_tokens > emu.calls[0].prompt_tokens
    thread = client.beta.messages.thread(model=CURRENT, max_tokens=5)  # the SDK's helper, the same way
    assert thread.send({"role": "user", "content": "hi"}).stop_reason == "max_tokens"
    thread.update(max_tokens=200)
    assert thread.send({"role": "user", "content": "again"}).stop_reason


# -- a thread answers its creator only, and one client cannot push out another's (issue 52 item 5) ---------

GO_ON = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]


def test_a_continue_with_another_credential_gets_the_404_of_a_thread_it_cannot_see():
    """§11.6: a thread is bound to what created it; the granularity is [UNCERTAIN] and the emulator
    binds to the credential (the strictest reading): another key, sent as x-api-key or as a bearer
    token, finds no thread (404 thread_not_found, the SDKs then replay), and the creator's thread is
    left continuable."""
    emu, _, _ = emulator()
    first = create(emu.client(api_key="key-of-a"), ASK, {"type": "create"}, system="held system of a")
    for other in (emu.client(api_key="key-of-b"), emu.client(api_key=None, auth_token="token-of-c"),
                  emu.client(api_key=None, default_headers={"x-api-key": "key-of-d"})):
        with pytest.raises(anthropic.NotFoundError) as e:
            create(other, GO_ON, cont(first.id))
        assert error_code(e.value) == "thread_not_found"
    same = emu.client(api_key=None, default_headers={"x-api-key": "key-of-a"})  # one secret, either header
    assert create(same, GO_ON, cont(first.id)).stop_reason
    assert emu.calls[-1].prompt_tokens > emu.calls[0].prompt_tokens  # answered over the held conversation


def test_another_clients_creates_never_evict_a_live_thread(monkeypatch):
    """The cap is per credential: a client past its own count loses its own oldest responses, never
    another client's live one within its TTL (today's 4,096 are per credential; 3 here, to stay cheap)."""
    from minimal_runtime.emulator import threads
    monkeypatch.setattr(threads, "PER_CREDENTIAL", 3)
    emu, _, _ = emulator()
    a, b = emu.client(api_key="key-of-a"), emu.client(api_key="key-of-b")
    kept = create(a, ASK, {"type": "create"})
    of_b = [create(b, [{"role": "user", "content": f"question {i}"}], {"type": "create"}) for i in range(10)]
    assert create(a, GO_ON, cont(kept.id)).stop_reason
    with pytest.raises(anthropic.NotFoundError):  # b's own oldest went first
        create(b, GO_ON, cont(of_b[0].id))
    assert create(b, GO_ON, cont(of_b[-1].id)).stop_reason
