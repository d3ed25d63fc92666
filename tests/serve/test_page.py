"""``serve --ui``'s page, server side: what it is served behind, how it groups and diagnoses calls, a
call's prompt in the regions a notebook's CallView draws, two calls compared down to a block, a
thread's held part, and a ``--log`` read back into the same page. The page in a browser: tests/ui/."""

from __future__ import annotations

import copy
import io
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import anthropic
import httpx
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started
from minimal_runtime.provider.models import UnknownModelWarning
from minimal_runtime.serve.page import Page, read_log, view_main
from minimal_runtime.serve.timeline import Timeline, first_difference
from minimal_runtime.view import CallView

from .test_serve import BREAKPOINT, SYSTEM, TOOLS, tool_loop

ROOT = Path(__file__).resolve().parents[2]
MODEL = "claude-sonnet-5-5"
UNCHECKED = "claude-sonnet-4-6"  # no prefix check of thinking: an edited history is answered, and misses


def create(client, messages, model=MODEL, **extra):
    return client.messages.create(model=model, max_tokens=400, system=SYSTEM, tools=TOOLS, messages=messages,
                                  **{**BREAKPOINT, **extra})


@pytest.fixture
def run(tmp_path):
    """serve --ui --log on loopback with the SDK as the client."""
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer())
    with started(emulator, ui=True, log=str(tmp_path / "calls.jsonl"), out=io.StringIO()) as (url, front):
        yield SimpleNamespace(url=url, front=front, client=anthropic.Anthropic(base_url=url, api_key="dummy"),
                              log=tmp_path / "calls.jsonl", emulator=emulator)


def test_the_page_is_served_only_with_ui_on_the_same_port_behind_the_same_host_check(run):
    page = httpx.get(f"{run.url}/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]  # no inline script, nothing from elsewhere
    assert httpx.get(f"{run.url}/ui/page.js").status_code == 200 == httpx.get(f"{run.url}/ui/page.css").status_code
    assert httpx.get(f"{run.url}/ui", headers={"host": "rebound.example:8765"}).status_code == 403  # DNS rebinding
    assert httpx.post(f"{run.url}/ui/api/calls", json={}).status_code == 405
    assert httpx.get(f"{run.url}/ui/api/call/1").status_code == 404  # no call yet
    assert run.front.lines == [] and run.front.report.calls == []  # the page's own requests are not the run's
    emulator = Emulator(model=MODEL, policy=ToolThenAnswer())
    with started(emulator, out=io.StringIO()) as (url, front):  # without --ui the path is the API's: not found
        assert httpx.get(f"{url}/ui").status_code == 404 and front.page is None


def test_calls_are_grouped_and_diagnosed_as_the_report_does_it(run):
    tool_loop(run.client, UNCHECKED, turns=1)  # three calls of one conversation
    create(run.client, [{"role": "user", "content": "A second task, interleaved."}], UNCHECKED)
    messages = json.loads(run.log.read_text().splitlines()[2])["request"]["messages"]
    edited = copy.deepcopy(messages)  # the first tool result rewritten: a miss the report diagnoses
    edited[2]["content"][0]["content"] = "a shorter result"
    create(run.client, edited + [{"role": "assistant", "content": "Read."}, {"role": "user", "content": "Go on."}],
           UNCHECKED)
    data = httpx.get(f"{run.url}/ui/api/calls").json()
    calls = data["calls"]
    assert [c["conversation"] for c in calls] == [1, 1, 1, 2, 1]
    assert [c["previous"] for c in calls] == [None, 1, 2, None, 3]
    assert [c["label"] for c in data["conversations"]] == ["Read the file and sum it up.", "A second task, interleaved."]
    for call, line in zip(calls, run.front.lines):  # the page's diagnosis is the printed line's
        assert (f"miss: {call['miss']}" in line) if call["miss"] else "miss:" not in line
    assert "messages.2: edited" in calls[-1]["miss"]
    assert httpx.get(f"{run.url}/ui/api/calls?after=3").json()["calls"] == calls[3:]  # the page polls for the new ones


def test_a_call_opens_into_the_regions_the_notebooks_callview_draws(run):
    tool_loop(run.client, turns=1)
    record = run.emulator.calls[-1]
    request = json.loads(run.log.read_text().splitlines()[-1])["request"]
    detail = httpx.get(f"{run.url}/ui/api/call/3").json()
    assert [(b["region"], b["where"]) for b in detail["blocks"]] == [(r, w) for r, w, _, _ in CallView(request, record).rows()]
    assert {"cache read", "cache write"} <= {b["region"] for b in detail["blocks"]}
    assert (detail["read"], detail["write"], detail["input"]) == (record.cache_read_input_tokens,
                                                                  record.cache_creation_input_tokens, record.input_tokens)
    # the blocks' tokens add up to the prompt but for the tool-use system prompt, which the API adds
    # to a request with tools and which is no block of it (issue 48 item 2)
    from minimal_runtime.emulator.prompt import tool_prompt_tokens
    from minimal_runtime.provider.models import lookup
    added = tool_prompt_tokens(request, lookup(request["model"]))
    assert sum(b["tokens"] for b in detail["blocks"]) == pytest.approx(record.prompt_tokens - added, abs=1)
    # a top-level cache_control puts its breakpoint on the last block that can carry one
    assert [b["breakpoint"] for b in detail["blocks"]] == [False] * (len(detail["blocks"]) - 1) + ["automatic"]
    assert detail["prefix"] == "ok (2 thinking sent back)" and detail["stop_reason"] == "end_turn"


def test_turn_scoped_entries_are_marked_and_an_earlier_one_is_cleared():
    timeline = Timeline("test", live=False)
    scoped = {"role": "system", "clear_at": "next_user_message", "content": [{"type": "text", "text": "<!-- plan -->\nstep 2"}]}
    messages = [{"role": "user", "content": "go"}, scoped, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [{"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}}]},
                {**scoped, "content": [{"type": "text", "text": "<!-- plan -->\nstep 3"}]}]
    timeline.add(record(1, {"model": MODEL, "messages": messages}, usage(read=0, write=40, uncached=10)))
    blocks = timeline.detail(1)["blocks"]
    assert [(b["path"], b["turn_scoped"], b["region"]) for b in blocks if b["turn_scoped"]] == [
        ("messages.1.0", True, "cleared"), ("messages.4.0", True, "uncached")]
    assert [b["path"] for b in blocks if b["breakpoint"]] == ["messages.3.0"]


def test_two_calls_compared_point_at_the_first_block_that_differs(run):
    messages, _ = tool_loop(run.client, UNCHECKED, turns=1)
    create(run.client, messages + [{"role": "user", "content": "And now?"}], UNCHECKED)  # #4: append-only
    edited = copy.deepcopy(messages + [{"role": "user", "content": "And now?"}])
    edited[3]["content"][-1]["input"] = {"path": "elsewhere", "lines": 3, "mode": "head"}  # message 3's tool call
    block = f"messages.3.{len(edited[3]['content']) - 1}"
    create(run.client, edited, UNCHECKED)  # #5
    same = httpx.get(f"{run.url}/ui/api/compare/3/4").json()
    assert same["edit"] is None and same["appended"] and same["highlight"] == f"messages.{len(messages) - 1}.0"  # #3's answer
    pair = httpx.get(f"{run.url}/ui/api/compare/5/4").json()  # either order: the earlier call is the first
    assert (pair["a"]["n"], pair["b"]["n"]) == (4, 5)
    assert pair["edit"].startswith("messages.3: edited") and pair["highlight"] == block
    assert block in {b["path"] for b in pair["a"]["blocks"]} & {b["path"] for b in pair["b"]["blocks"]}
    assert httpx.get(f"{run.url}/ui/api/compare/4/99").status_code == 404


@pytest.mark.parametrize("change, path", [
    (lambda r: r.update(system=[{"type": "text", "text": "a"}, {"type": "text", "text": "c"}]), "system.1"),
    (lambda r: r.update(tools=[{"name": "x", "input_schema": {}}, {"name": "z", "input_schema": {}}]), "tools.1"),
    (lambda r: r.update(messages=r["messages"][:1]), "messages.1.0"),  # a message missing: the first not sent
    (lambda r: r["messages"].append({"role": "user", "content": "next"}), "messages.3.0"),  # appended: the first new
])
def test_the_first_difference_is_found_in_each_part_of_the_prompt(change, path):
    from minimal_runtime.core.context import first_edit
    before = {"system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
              "tools": [{"name": "x", "input_schema": {}}, {"name": "y", "input_schema": {}}],
              "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"},
                           {"role": "user", "content": "go"}]}
    after = copy.deepcopy(before)
    change(after)
    assert first_difference(before, after, first_edit(before, after)) == path


def usage(read: int, write: int, uncached: int) -> dict:
    return {"input_tokens": uncached, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "output_tokens": 5}


def record(n: int, request: dict, used: dict | None, response: dict | None = None, status: int = 200) -> dict:
    return {"n": n, "time": f"2026-12-02T10:00:{n:02d}.000Z", "method": "POST", "path": "/v1/messages",
            "request": request, "status": status, "response": response, "model": MODEL, "usage": used, "prefix": None}


def test_a_thread_continue_is_drawn_with_the_part_the_thread_held():
    """A continue sends only the new messages (API-2026 §11.2); the page rebuilds the conversation from
    the call it continues and draws what the thread held as held."""
    timeline = Timeline("test", live=False)
    first = {"model": MODEL, "system": SYSTEM, "tools": TOOLS, "cache_control": {"type": "ephemeral"},
             "thread": {"type": "create"}, "messages": [{"role": "user", "content": [
                 {"type": "text", "text": "Read the file.", "cache_control": {"type": "ephemeral"}}]}]}
    answer = {"id": "msg_1", "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
    timeline.add(record(1, first, usage(0, 1500, 10), answer))
    more = {"model": MODEL, "thread": {"type": "continue", "previous_message_id": "msg_1"},
            "messages": [{"role": "user", "content": "And the next?"}]}
    timeline.add(record(2, more, usage(1500, 20, 5), {"id": "msg_2", "content": []}))
    lost = {**more, "thread": {"type": "continue", "previous_message_id": "msg_unknown"}}
    timeline.add(record(3, lost, None, {"type": "error", "error": {"type": "not_found_error", "message": "no thread"}}, 404))
    calls = timeline.since()["calls"]
    assert [(c["conversation"], c["previous"], c["held"], c["thread"]) for c in calls] == [
        (1, None, 0, "create"), (1, 1, 2, "continue"), (2, None, None, "continue")]
    assert calls[1]["miss"] is None  # judged as the whole conversation: it read what #1 wrote
    blocks = timeline.detail(2)["blocks"]
    assert [b["path"] for b in blocks if not b["held"]] == ["messages.2.0"]  # tools, system, two messages held
    assert [b["path"] for b in blocks if b["held"]][-2:] == ["messages.0.0", "messages.1.0"]
    assert not any(b["breakpoint"] for b in blocks[:-1])  # held without the markers of the turn that sent them
    assert timeline.detail(3)["blocks"][0]["region"] == "refused"


def test_a_create_that_replays_a_lost_thread_says_so_on_the_page_as_on_its_line(tmp_path):
    """The SDK's tool runner replays its history as a create when its thread is gone (API-2026 §11.8):
    the opened call names the replay in the words of serve's line (``report.thread_note``), live and
    from the log read back; a first create stays a plain create."""
    from .test_threads_and_faults import SYSTEM as LONG, run_tool_runner

    emulator, log = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=3)), tmp_path / "calls.jsonl"
    with started(emulator, ui=True, log=str(log), out=io.StringIO()) as (url, front):
        run_tool_runner(url, system=LONG, cache_control={"type": "ephemeral"})
        emulator.threads.ttl = 0  # every held response is gone: the next runner's first continue is lost
        run_tool_runner(url, system=LONG, cache_control={"type": "ephemeral"})
        opened = [httpx.get(f"{url}/ui/api/call/{n}").json() for n in (1, 5, 6, 7)]
    assert front.lines[6].endswith("| thread create (replays 2 messages of an earlier call)"), front.lines[6]
    assert [c["thread"] for c in opened] == ["create", "create", "continue",
                                             "create (replays 2 messages of an earlier call)"]
    assert read_log(log).detail(7)["thread"] == opened[3]["thread"]


def test_a_proxied_call_shows_what_the_emulator_predicted_next_to_the_upstream_usage():
    timeline = Timeline("test", live=False)
    timeline.add({**record(1, {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}, usage(900, 100, 10)),
                  "predicted_usage": usage(0, 1000, 10), "upstream": "https://upstream.example"})
    assert timeline.detail(1)["predicted"] == {"input": 10, "write": 1000, "read": 0}
    assert timeline.since()["calls"][0]["read"] == 900  # the figures are the upstream's


def test_a_batch_is_one_entry_in_the_totals_once_at_the_batch_price_as_the_report_counts_it(run):
    """A Message Batch's results (downloaded twice) are in the page's data once, as one entry per batch
    with its count and cost at the batch price, not as calls; the calls and the batches add up to the
    report's own totals, and a ``--log`` read back gives the same (a one-result batch's log keeps its
    results as JSON, a longer one's as text)."""
    tool_loop(run.client, turns=1)  # three calls
    ask = {"model": MODEL, "max_tokens": 100, "system": SYSTEM, "messages": [{"role": "user", "content": "Sum it up."}]}
    three = run.client.messages.batches.create(requests=[{"custom_id": f"r{k}", "params": ask} for k in range(3)])
    one = run.client.messages.batches.create(requests=[{"custom_id": "only", "params": ask}])
    for batch in (three, one, three):
        assert run.client.messages.batches.retrieve(batch.id).processing_status == "ended"
        assert all(r.result.type == "succeeded" for r in run.client.messages.batches.results(batch.id))
    data = httpx.get(f"{run.url}/ui/api/calls").json()
    assert len(data["calls"]) == 3 and [c["calls"] for c in data["conversations"]] == [3]  # a batch is not a call
    first_read = [k + 1 for k, line in enumerate(run.front.lines) if "/results 200" in line]
    assert [(b["id"], b["results"], b["tally"], b["succeeded"], b["n"]) for b in data["batches"]] == [
        (three.id, 3, "3 succeeded", 3, first_read[0]), (one.id, 1, "1 succeeded", 1, first_read[1])]
    report = run.front.report.calls  # the summary's records: the calls, then each batch's results once
    billed = [*data["calls"], *data["batches"]]
    assert sum(b["cost"] for b in billed) == pytest.approx(sum(r.cost for r in report), rel=1e-12)
    assert sum(b["plain"] for b in billed) == pytest.approx(sum(r.cost_without_cache for r in report), rel=1e-12)
    assert sum(b["input"] + b["write"] + b["read"] for b in billed) == sum(r.prompt_tokens for r in report)
    in_batches = report[3:]
    assert all(r.batch for r in in_batches) and len(in_batches) == 4
    assert sum(b["cost"] for b in data["batches"]) == pytest.approx(
        0.5 * sum(r.model_copy(update={"batch": False}).cost for r in in_batches), rel=1e-12)
    logged = [r for r in map(json.loads, run.log.read_text().splitlines()) if r["path"].endswith("/results")]
    assert isinstance(logged[0]["response_text"], str) and isinstance(logged[1]["response"], dict)
    assert read_log(run.log).since()["batches"] == data["batches"]


def test_a_long_run_keeps_each_message_once(run):
    tool_loop(run.client, turns=4)
    calls = run.front.timeline.calls
    assert len(calls) == 12
    assert all(c.request["messages"][0] is calls[0].request["messages"][0] for c in calls)
    assert all(c.request["tools"] is calls[0].request["tools"] for c in calls)


def test_a_log_read_back_renders_the_page_the_run_showed(run):
    tool_loop(run.client, turns=2)
    create(run.client, [{"role": "user", "content": "Another task."}])
    live = httpx.get(f"{run.url}/ui/api/calls").json()
    with run.log.open("a") as log:
        log.write('{"n": 8, "method": "POST", "path": "/v1/mess')  # a run killed mid-write
    after = read_log(run.log).since()
    assert after["calls"] == live["calls"] and after["conversations"] == live["conversations"]
    assert after["live"] is False and after["skipped"] == ["line 8: not JSON (Unterminated string starting at)"]


def test_view_serves_a_log_until_stopped_and_says_what_it_cannot_read(run, tmp_path):
    tool_loop(run.client, turns=1)
    with pytest.raises(SystemExit, match="view: cannot read .*missing.jsonl"):
        view_main(SimpleNamespace(log=str(tmp_path / "missing.jsonl"), host="127.0.0.1", port=0))
    command = [sys.executable, "-m", "minimal_runtime", "view", str(run.log), "--port", "0"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        banner = process.stdout.readline()
        assert banner.startswith("view: 3 calls of ") and banner.rstrip().endswith("/ui (Ctrl-C to stop)")
        url = banner.split(" at ")[1].split()[0]
        assert httpx.get(url).status_code == 200
        assert len(httpx.get(url.replace("/ui", "/ui/api/calls")).json()["calls"]) == 3
        assert httpx.post(url.replace("/ui", "/v1/messages"), json={}).status_code == 405  # a page, not an API
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


def test_an_unpriced_model_and_a_refused_call_are_still_valid_json():
    timeline = Timeline("test", live=False)
    name = f"my-local-model-{uuid.uuid4().hex}"  # the warning is once per name in a process: a name never seen
    with pytest.warns(UnknownModelWarning):  # priced as unknown: its cost is null on the page, not NaN
        timeline.add({**record(1, {"model": name, "messages": [{"role": "user", "content": "hi"}]},
                               usage(0, 0, 10)), "model": name})
        status, _, body = Page(timeline).handle("GET", "/ui/api/calls", b"")
    timeline.add(record(2, {"messages": "not a list"}, None, None, 400))
    assert status == 200 and json.loads(body)["calls"][0]["cost"] is None
    calls = json.loads(Page(timeline).handle("GET", "/ui/api/calls", b"")[2])["calls"]
    assert calls[1]["error"].startswith("HTTP 400")
    assert Page(timeline).handle("GET", "/ui/api/call/2", b"")[0] == 200


def test_a_conversation_is_named_by_its_task_not_the_reminders_a_client_puts_before_it():
    timeline = Timeline("test", live=False)
    first = {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nAs you answer...</system-reminder>"},
                                         {"type": "text", "text": "Look at notes.txt and tell me what is there."}]}
    timeline.add(record(1, {"model": MODEL, "messages": [first]}, usage(0, 0, 10)))
    assert timeline.since()["conversations"][0]["label"] == "Look at notes.txt and tell me what is there."


def test_a_threaded_run_is_drawn_as_the_same_run_sent_whole(tmp_path):
    """The SDK's tool runner threads by default (API-2026 §11.8): each continue sends only the new
    messages. The page rebuilds each call's conversation from the one it continues; it must be the
    conversation the same runner sends whole with ``thread=False``, placed in the same regions."""
    from anthropic import beta_tool

    @beta_tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: the file's path
        """
        return f"the contents of {path}: " + "words " * 60

    pages = {}
    for threaded in (True, False):
        emulator = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=5))
        with started(emulator, ui=True, out=io.StringIO()) as (url, front):
            client = anthropic.Anthropic(base_url=url, api_key="dummy")
            runner = client.beta.messages.tool_runner(
                model=MODEL, max_tokens=400, system=SYSTEM[0]["text"], cache_control={"type": "ephemeral"},
                tools=[read_file], messages=[{"role": "user", "content": "Read the files."}],
                **({} if threaded else {"thread": False}))
            assert list(runner)[-1].stop_reason == "end_turn"
            pages[threaded] = front.timeline
    threaded, whole = pages[True], pages[False]
    assert [c.thread for c in threaded.calls] == ["create"] + ["continue"] * 5 and {c.thread for c in whole.calls} == {None}
    assert [c.held for c in threaded.calls] == [0, 2, 4, 6, 8, 10] and [c.sent for c in threaded.calls][1:] == [1] * 5
    assert [c.request["messages"] for c in threaded.calls] == [c.request["messages"] for c in whole.calls]
    assert {c.conversation for c in threaded.calls} == {1} and [c.miss for c in threaded.calls] == [None] * 6
    for n in range(1, 7):
        drawn, sent_whole = threaded.detail(n)["blocks"], whole.detail(n)["blocks"]
        assert [(b["path"], b["region"]) for b in drawn] == [(b["path"], b["region"]) for b in sent_whole]
    blocks = threaded.detail(3)["blocks"]  # tools, system and four messages held; the fifth sent
    assert [b["path"] for b in blocks if not b["held"]] == ["messages.4.0"] and blocks[0]["path"] == "tools.0"


@pytest.mark.parametrize("content, says", [
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4 + b"\n" * 30, "lines left out, line 1: not JSON"),
    (b"", ""),
    (b'{"type": "user", "message": {"role": "user", "content": "hi"}, "sessionId": "s"}\n', ""),  # a Claude Code line
])
def test_view_refuses_a_log_with_no_call_in_one_line_pointing_at_replay(content, says, tmp_path, monkeypatch):
    from minimal_runtime.emulator import server

    def never_listen(*args, **kwargs):  # the old code served an empty page until Ctrl-C
        raise AssertionError("view served a log with no call")
    monkeypatch.setattr(server, "serve", never_listen)
    log = tmp_path / "session.jsonl"
    log.write_bytes(content)
    with pytest.raises(SystemExit) as stopped:
        view_main(SimpleNamespace(log=str(log), host="127.0.0.1", port=0))
    message = str(stopped.value.code)
    assert message.startswith(f"view: no call in {log}") and says in message and "\n" not in message
    assert message.endswith(": view shows a log written by serve --log; a Claude Code, mini-swe-agent, OpenHands or "
                            "Cline log is read by replay")


def test_view_names_five_lines_it_left_out_and_counts_the_rest(run):
    tool_loop(run.client, turns=1)
    with run.log.open("a") as log:
        log.write("not a record\n" * 12)
    command = [sys.executable, "-m", "minimal_runtime", "view", str(run.log), "--port", "0"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert process.stdout.readline().startswith("view: 3 calls of ")  # printed once the signals are handled
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    assert errors.splitlines() == [f"view: left out line {k}: not JSON (Expecting value)" for k in range(4, 9)] + [
        "view: left out 7 more lines (named on the page)"]


def test_the_same_bytes_get_the_same_token_figure_in_every_call(run):
    """The per-block figure is the emulator's count of the block's own bytes, not its length scaled
    to each call's total: an unchanged system prompt and tool result read the same in calls 2 and 3."""
    tool_loop(run.client, turns=1)
    two, three = (httpx.get(f"{run.url}/ui/api/call/{n}").json()["blocks"] for n in (2, 3))
    assert two[0]["path"] == "tools.0" and len(three) > len(two)
    for before, after in zip(two, three):
        assert before["path"] == after["path"] and before["tokens"] == after["tokens"], before["path"]
    assert all(isinstance(b["tokens"], int) and b["tokens"] > 0 for b in three)
    script = (ROOT / "minimal_runtime/serve/ui/page.js").read_text()
    assert 'el("th", { class: "tokens", textContent: "tokens"' in script and "the emulator's count" in script


def test_a_call_of_20000_blocks_opens_bounded_its_gaps_counted(run):
    """Past 300 blocks the detail sends the first 50 and the last 250, each run of the rest as one
    entry with its block count and tokens by region: the page's answer stays the size of a
    300-block call's, whatever the call holds."""
    many = [{"type": "text", "text": f"line {k}"} for k in range(20_000)]  # 100,000 take a minute to emulate
    small = [{"type": "text", "text": f"line {k}"} for k in range(300)]
    for blocks in (small, many):
        run.client.messages.create(model=MODEL, max_tokens=50, messages=[{"role": "user", "content": blocks}])
    small_detail, big = (httpx.get(f"{run.url}/ui/api/call/{n}", timeout=120) for n in (1, 2))
    detail = big.json()
    assert len(detail["blocks"]) == 301  # 50, one gap, 250
    gap = detail["blocks"][50]
    assert gap["gap"] and gap["count"] == 20_000 - 300 and (gap["from"], gap["to"]) == ("messages.0.50", "messages.0.19749")
    assert sum(b["tokens"] for b in detail["blocks"]) == detail["input"] + detail["read"] + detail["write"]
    assert len(big.content) < 2 * len(small_detail.content)


def test_the_poll_sends_only_the_conversations_that_changed(run):
    for k in range(30):
        create(run.client, [{"role": "user", "content": f"task {k}"}])
    first = httpx.get(f"{run.url}/ui/api/calls").json()
    assert len(first["conversations"]) == 30
    create(run.client, [{"role": "user", "content": "task 3"}, {"role": "assistant", "content": "ok"},
                        {"role": "user", "content": "more"}])
    later = httpx.get(f"{run.url}/ui/api/calls?after=30").json()
    assert [c["id"] for c in later["conversations"]] == [4] and later["conversations"][0]["calls"] == 2
    assert [c["n"] for c in later["calls"]] == [31]
    assert httpx.get(f"{run.url}/ui/api/calls?after=31").json()["conversations"] == []


def test_a_blocks_figure_is_counted_with_its_models_image_limits_and_tokenizer():
    """An image of unknown size costs the model's most: 4,784 tokens on a 4.7-or-later model, 1,568 on
    an earlier one; the same text is 1.3x the tokens on a model with the newer tokenizer. The page
    counted every block with the old limits and factor 1.0."""
    image = {"type": "image", "source": {"type": "url", "url": "https://example.org/a.png"}}
    text = {"type": "text", "text": "a sentence of ordinary words, long enough to count. " * 40}
    timeline = Timeline("test", live=False)
    for n, model in enumerate(["claude-opus-5-5", "claude-sonnet-4-5", "claude-opus-4-7"], 1):
        timeline.add({**record(n, {"model": model, "messages": [{"role": "user", "content": [image, text]}]},
                               usage(read=0, write=0, uncached=9000)), "model": model})
    (new_image, new_text), (old_image, old_text), (_, opus47_text) = (
        [b["tokens"] for b in timeline.detail(n)["blocks"]] for n in (1, 2, 3))
    assert (new_image, old_image) == (4784, 1568)
    assert new_text == old_text and opus47_text > old_text * 1.25
