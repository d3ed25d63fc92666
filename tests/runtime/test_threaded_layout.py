"""The third generation (API-2026.md §11): ``threaded_layout`` sends the turn-scoped request on a
message thread, through the emulator that holds threads. A call sends only what the server does not
hold; the history, the store and the bill are those of the same run without a thread; a lost thread
is replayed once, whole, and the record says so."""

from __future__ import annotations

import io
import json
import re
import tempfile
from pathlib import Path

import anthropic

from minimal_runtime.core.agent import Agent
from minimal_runtime.core.context import layout_for, threaded_layout, turn_scoped_layout, unmarked
from minimal_runtime.core.hooks import Point
from minimal_runtime.core.messages import user
from minimal_runtime.core.store import RunStore
from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.policies import Turn, text, tool_use
from minimal_runtime.example.policy import LongRunPolicy
from minimal_runtime.example.work import exchanges
from minimal_runtime.features.drift import revaried_layout
from minimal_runtime.provider.models import model_spec
from minimal_runtime.serve import started
from tests.emulator.helpers import FakeClock
from tests.support import CURRENT_MODEL, long_agent, pricing_agent, progress_hooks

TASK = "Read the reference manual, page by page, and keep notes."


def recorded(emulator: Emulator) -> list[tuple[dict, int, str | None]]:
    """Every exchange with ``emulator`` from now on: (request body, status, error code)."""
    log, handle = [], emulator.handle

    def record(method, path, body, headers=None):
        status, out, payload = handle(method, path, body, headers)
        answer = json.loads(payload) if payload[:1] == b"{" else {}
        log.append((json.loads(body) if body else {}, status,
                    ((answer.get("error") or {}).get("details") or {}).get("error_code")))
        return status, out, payload
    emulator.handle = record
    return log


def kinds(log) -> list[str]:
    return [(r.get("thread") or {}).get("type", "none") + (f" {status}" if status != 200 else "") for r, status, _ in log]


def run(tmp: Path, layout, turns: int = 30, hooks=None, **kw):
    agent, emulator = long_agent_on(tmp, layout, turns, hooks, **kw)
    log = recorded(emulator)
    result = agent.run(TASK)
    assert result.status == "done", result.error
    return agent, emulator, log


def long_agent_on(tmp: Path, layout, turns, hooks=None, **kw):
    """The long run on Sonnet 5.5 (a progress note on every call), in a fresh folder under ``tmp``."""
    return long_agent(Path(tempfile.mkdtemp(dir=tmp)), turns, model=CURRENT_MODEL, hooks=hooks or progress_hooks(),
                      layout=layout, **kw)


def bill(agent: Agent) -> list[dict]:
    return [c.model_dump() for c in agent.calls]


def test_a_call_on_a_thread_sends_only_what_the_server_does_not_hold_and_is_billed_the_same(tmp_path):
    """Call 1 creates the thread with the whole request; every later call continues it with the new
    messages only (its tool results, then its turn-scoped batch), no system and no tools. The
    history, the store and every call's usage are those of the same run on ``turn_scoped_layout``."""
    agent, _, log = run(tmp_path, threaded_layout)
    plain, _, plain_log = run(tmp_path, turn_scoped_layout)
    assert kinds(log) == ["create"] + ["continue"] * 30 and kinds(plain_log) == ["none"] * 31
    assert log[0][0]["messages"] == plain_log[0][0]["messages"] and "system" in log[0][0]
    for request, *_ in log[1:]:
        assert "system" not in request and "tools" not in request
        assert [m["role"] for m in request["messages"]] == ["user", "system"]  # the tool results, the batch entry
    assert agent.messages == plain.messages and bill(agent) == bill(plain)
    assert agent.store.load().messages == plain.store.load().messages
    sizes = [len(json.dumps(r)) for r, *_ in log[1:]]
    assert max(sizes) < 2 * min(sizes)  # flat, while the plain requests grow with the history
    assert len(json.dumps(plain_log[-1][0])) > 10 * max(sizes)
    records = agent.store.load().threads
    assert [t["type"] for t in records] == ["create"] + ["continue"] * 30
    assert all(t["previous_message_id"] == before["id"] for before, t in zip(records, records[1:]))


def test_a_thread_expired_mid_run_is_replayed_once_with_the_same_history_and_bill(tmp_path):
    """The emulator's clock jumps past the 5 minutes a thread lives, mid-run: the next continue is a
    404 ``thread_not_found``, the agent sends the whole history once as a new create, and goes on
    continuing that one. The history is the unthreaded run's, and so is the bill (the jump expired the
    prompt cache as well: both runs pay the same write); the record names the one replay and why."""
    def expire_at_call_12(emulator):
        hooks = progress_hooks()
        hooks.register(Point.PRE_LLM_CALL, lambda e: emulator.clock.advance(400) if len(e.agent.calls) == 12 else None)
        return hooks

    clock, plain_clock = FakeClock(), FakeClock()
    agent, emulator = long_agent_on(tmp_path, threaded_layout, 30, hooks=None, clock=clock)
    agent.hooks = expire_at_call_12(emulator)
    plain, plain_emulator = long_agent_on(tmp_path, turn_scoped_layout, 30, clock=plain_clock)
    plain.hooks = expire_at_call_12(plain_emulator)
    log = recorded(emulator)
    assert agent.run(TASK).status == plain.run(TASK).status == "done"
    assert kinds(log) == ["create"] + ["continue"] * 11 + ["continue 404", "create"] + ["continue"] * 18
    assert log[12][2] == "thread_not_found"
    replay = unmarked(log[13][0]["messages"])  # the whole history as it stood (task, 12 turns), then the call's entry
    assert replay[:-1] == plain.messages[:1 + 12 * 3] and replay[-1]["clear_at"] == "next_user_message"
    assert agent.messages == plain.messages
    assert bill(agent) == bill(plain)
    assert agent.calls[12].cache_read_input_tokens < agent.calls[11].cache_read_input_tokens  # the cache expired too
    records = agent.store.load().threads
    assert [t["type"] for t in records].count("replay") == 1
    assert records[12] == {"type": "replay", "why": "thread_not_found", "id": records[12]["id"]}
    assert records[13]["previous_message_id"] == records[12]["id"]


def test_an_idle_thread_is_replayed_on_the_agents_own_clock_without_a_404(tmp_path):
    """With the agent's clock on the emulator's, a thread idle past its 5 minutes is not continued at
    all: the agent creates anew (no 404 spent) and says why."""
    clock = FakeClock()
    agent, emulator = long_agent_on(tmp_path, threaded_layout, 12, clock=clock)
    agent.thread.clock = clock
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: clock.advance(301) if len(e.agent.calls) == 5 else None)
    log = recorded(emulator)
    assert agent.run(TASK).status == "done"
    assert kinds(log) == ["create"] + ["continue"] * 4 + ["create"] + ["continue"] * 7
    assert agent.store.load().threads[5]["why"].startswith("expired: idle 301 s")


def test_a_resumed_run_replays_its_history_once_as_a_new_create(tmp_path):
    """A new agent on a stored run holds no thread: its first call sends the whole history as a
    create (a replay, "resumed"), the later ones continue it."""
    store = RunStore(tmp_path / "run")
    agent, emulator = long_agent_on(tmp_path, threaded_layout, 20, store=store, max_steps=8)
    log = recorded(emulator)
    assert agent.run(TASK).status == "max_steps"
    store.close()
    again = Agent(agent.client, model=CURRENT_MODEL, system=agent.system, toolbox=agent.toolbox, layout=threaded_layout,
                  store=RunStore(tmp_path / "run"), hooks=progress_hooks(), max_steps=30)
    assert again.run().status == "done"
    assert kinds(log) == ["create"] + ["continue"] * 7 + ["create"] + ["continue"] * 12
    assert len(log[8][0]["messages"]) == len(agent.messages) + 1  # the whole history and the call's batch entry
    records = again.store.load().threads
    assert records[8]["type"] == "replay" and records[8]["why"].startswith("resumed")
    assert [t["type"] for t in records].count("replay") == 1


def test_an_answer_lost_on_the_way_back_is_replayed_after_thread_already_continued(tmp_path):
    """The server stores a continue's answer but the answer never arrives (a 500 on the way back);
    the SDK retries the same continue, which the API refuses (each response is continued once):
    the agent replays, once, and the history is the one an undisturbed run has."""
    agent, emulator = long_agent_on(tmp_path, threaded_layout, 12)
    plain, _, _ = run(tmp_path, threaded_layout, 12)
    handle, seen = emulator.handle, []

    def lose_the_sixth_answer(method, path, body, headers=None):
        out = handle(method, path, body, headers)
        seen.append(1)
        if len(seen) == 6:  # processed, held, billed: but the client gets a 500
            return 500, {"content-type": "application/json", "retry-after-ms": "1"}, json.dumps(
                {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}).encode()
        return out
    emulator.handle = lose_the_sixth_answer
    log = recorded(emulator)
    assert agent.run(TASK).status == "done"
    assert kinds(log)[4:8] == ["continue", "continue 500", "continue 400", "create"]
    assert log[6][2] == "thread_already_continued"
    assert agent.messages == plain.messages
    assert [t["type"] for t in agent.store.load().threads].count("replay") == 1


def test_a_change_of_the_request_options_starts_a_new_thread(tmp_path):
    """A continue cannot change what the thread was created with (the API refuses a changed
    ``output_config``; the SDK, ``system`` and ``tools``): after ``configure`` changes an option
    between runs, the next call replays the history as a create carrying it, and the record says
    which option changed."""
    agent, _, log = run(tmp_path, threaded_layout, 12)
    agent.configure(output_config={"effort": "low"})
    assert agent.run("Now summarise your notes.").status == "done"
    assert kinds(log) == ["create"] + ["continue"] * 12 + ["create"]
    assert log[-1][0]["output_config"] == {"effort": "low"} and "system" in log[-1][0]
    record = agent.store.load().threads[-1]
    assert record == {"type": "replay", "why": "the request changed: output_config", "id": record["id"]}


def test_compaction_starts_a_new_thread_of_the_rewritten_history(tmp_path):
    """A rewrite of the history (compaction) cannot be sent on the old thread: the next call creates
    a new one with the rewritten history, then continues it."""
    def compact_at_call_8(e):
        if len(e.agent.calls) == 8:
            e.agent.replace_history([user(f"{TASK}\n\nSummary: pages 0 to 7 read, nothing saved yet.")])
    hooks = progress_hooks()
    hooks.register(Point.PRE_LLM_CALL, compact_at_call_8)
    agent, _, log = run(tmp_path, threaded_layout, 12, hooks=hooks, max_steps=30)  # the policy starts its count again
    plain_hooks = progress_hooks()
    plain_hooks.register(Point.PRE_LLM_CALL, compact_at_call_8)
    plain, _, _ = run(tmp_path, turn_scoped_layout, 12, hooks=plain_hooks, max_steps=30)
    assert kinds(log)[7:10] == ["continue", "create", "continue"] and len(log[8][0]["messages"]) == 2
    assert agent.messages == plain.messages and bill(agent) == bill(plain)
    record = agent.store.load().threads[8]
    assert record["type"] == "create" and record["why"].startswith("the history was rewritten")


def test_a_layout_that_rewrites_its_copy_of_the_history_cannot_hide_the_edit_behind_a_thread(tmp_path):
    """A thread holds what was sent. A wrapper that hands the layout a rewritten copy (every old tool
    result re-framed on every call) gets a create each call, so the server sees the edit: on Sonnet
    5.5 the second request is refused, as it is without a thread."""
    outcomes, logs = {}, {}
    for layout in (threaded_layout, turn_scoped_layout):
        agent, emulator = long_agent_on(tmp_path, revaried_layout(layout), 10)
        logs[layout] = recorded(emulator)
        result = agent.run(TASK)
        outcomes[layout] = (result.status, result.error, len(agent.calls))
    assert kinds(logs[threaded_layout]) == ["create"] * 3 + ["create 400"]  # never a continue
    assert kinds(logs[turn_scoped_layout]) == ["none"] * 3 + ["none 400"]
    assert outcomes[threaded_layout] == outcomes[turn_scoped_layout] and outcomes[threaded_layout][0] == "error"
    assert "thinking" in outcomes[threaded_layout][1]


def test_turn_scoped_entries_and_tool_changes_ride_the_thread(tmp_path):
    """Tool changes (a tool withdrawn and offered again, by phase) and the batch are entries the
    thread keeps; the emulator checks every thinking block against the whole held conversation."""
    def mask_by_phase(e):
        e.agent.toolbox.mask("browse") if (len(e.agent.calls) // 10) % 2 else e.agent.toolbox.unmask("browse")
    hooks, plain_hooks = progress_hooks(), progress_hooks()
    hooks.register(Point.PRE_LLM_CALL, mask_by_phase)
    plain_hooks.register(Point.PRE_LLM_CALL, mask_by_phase)
    agent, _, log = run(tmp_path, threaded_layout, 40, hooks=hooks)
    plain, _, _ = run(tmp_path, turn_scoped_layout, 40, hooks=plain_hooks)
    assert kinds(log) == ["create"] + ["continue"] * 40
    changes = [r for r, *_ in log if any(m["role"] == "system" and "clear_at" not in m for m in r["messages"])]
    assert len(changes) == 4  # browse withdrawn at calls 10 and 30, offered again at 20 and 40
    assert agent.messages == plain.messages and bill(agent) == bill(plain)


def test_a_turn_wider_than_the_lookback_still_reads_the_previous_calls_entry(tmp_path):
    """Twelve tool calls a turn add more blocks than a cache read walks back: the runtime marks the
    previous call's end too. That end is held by the thread, so the continue marks the first block it
    sends instead; the cache reads what it reads without a thread."""
    def twelve_at_a_time(request):
        done = len(exchanges(request["messages"]))
        if done >= 12 * 6:
            return Turn(content=[text("All pages read.")])
        return Turn(content=[text("Reading the next twelve."),
                             *[tool_use("fetch", {"url": f"https://docs.example/page/{done + k}"}) for k in range(12)]])
    calls = {}
    for layout in (threaded_layout, turn_scoped_layout):
        agent, emulator, _ = pricing_agent(Path(tempfile.mkdtemp(dir=tmp_path)), policy=twelve_at_a_time, model=CURRENT_MODEL,
                                           layout=layout, max_steps=10)
        log = recorded(emulator)
        assert agent.run(TASK).status == "done"
        calls[layout] = agent.calls
    assert kinds(log) == ["none"] * 7
    assert [c.model_dump() for c in calls[threaded_layout]] == [c.model_dump() for c in calls[turn_scoped_layout]]
    assert all(c.cache_read_input_tokens > 0 for c in calls[threaded_layout][1:])


def test_a_request_the_server_cannot_thread_goes_on_without_a_thread(tmp_path):
    """``thread_unsupported_request`` (here: a fourth block marker, which a thread does not take):
    the agent resends the call whole without a thread, and stays unthreaded, as the SDK runners do."""
    def four_markers(parts):  # two on tool definitions, besides the layout's two: 4, where a thread takes 3
        plan = threaded_layout(parts)
        tools = plan.request["tools"]
        plan.request["tools"] = [*({**t, "cache_control": {"type": "ephemeral"}} for t in tools[:2]), *tools[2:]]
        return plan
    agent, _, log = run(tmp_path, four_markers, 6)
    assert kinds(log) == ["create 400", "none"] + ["none"] * 6
    assert log[0][2] == "thread_unsupported_request"
    assert agent.thread.off.startswith("thread_unsupported_request") and agent.store.load().threads == []


def test_serves_per_call_line_says_when_the_runtime_continued_and_when_it_replayed(tmp_path):
    """Through ``serve`` over HTTP: the report's lines for the runtime's calls name each continue,
    the 404 of the expired thread, and the one create that replays the history."""
    clock = FakeClock()
    emulator = Emulator(model=CURRENT_MODEL, policy=LongRunPolicy(10), clock=clock)
    out = io.StringIO()
    with started(emulator, out=out) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        agent, _ = long_agent_on(tmp_path, threaded_layout, 10)
        agent.client = client
        agent.hooks.register(Point.PRE_LLM_CALL, lambda e: clock.advance(400) if len(e.agent.calls) == 5 else None)
        assert agent.run(TASK).status == "done"
    lines = out.getvalue().splitlines()
    assert "| thread create" in lines[0] and "| thread continue of" in lines[1]
    assert "404 | refused: not_found_error: No thread state was found" in lines[5]
    assert re.search(r"\| thread create \(replays \d+ messages of an earlier call\)", lines[6]), lines[6]
    assert "| thread continue of" in lines[7]


def test_the_current_models_that_take_threads_get_the_threaded_layout():
    """The model table's fact ([MT]) picks the layout: threaded where a model takes both threads and
    turn-scoped entries; the 2025 and 2026 layouts elsewhere, as before."""
    for model in ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5"):
        assert layout_for(model_spec(model))[0] is threaded_layout
    assert layout_for(model_spec("claude-fable-5-2"))[0] is turn_scoped_layout  # not on the threads page
    assert layout_for(model_spec("claude-sonnet-4-6"))[0].__name__ == "tail_layout"


def test_a_wrapper_that_hands_the_layout_an_equal_copy_still_continues_the_thread(tmp_path, caplog):
    """Issue 50 item 8: a wrapper passing ``list(parts.durable)`` turned threads off silently (every
    call a create, 10.2x the request bytes, the same bill). An equal copy continues; a rewritten one
    starts a new thread, and the agent's logger says so."""
    from dataclasses import replace

    def copying(parts):
        return threaded_layout(replace(parts, durable=list(parts.durable)))
    agent, emulator = long_agent_on(tmp_path, copying, 6)
    log = recorded(emulator)
    assert agent.run(TASK).status == "done"
    assert kinds(log) == ["create"] + ["continue"] * 6
    caplog.clear()
    agent, emulator = long_agent_on(tmp_path, revaried_layout(threaded_layout), 10)
    with caplog.at_level("WARNING", logger="minimal_runtime.core.agent"):
        agent.run(TASK)
    assert "cannot continue its thread (the layout rewrote the history's copy" in caplog.text


def test_a_thread_replay_is_logged_on_the_agents_logger(tmp_path, caplog):
    """Issue 50 item 9: a replay was reported in the run record only."""
    store = RunStore(tmp_path / "run")
    first, _ = long_agent_on(tmp_path, threaded_layout, 4, store=store, max_steps=2)
    assert first.run(TASK).status == "max_steps"
    store.close()
    resumed, _ = long_agent_on(tmp_path, threaded_layout, 4, store=RunStore(tmp_path / "run"), max_steps=8)
    with caplog.at_level("INFO", logger="minimal_runtime.core.agent"):
        resumed.run()
    assert "call 3 replayed the whole history on a new thread (resumed: a new process holds no thread)" in caplog.text
