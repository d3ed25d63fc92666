"""``serve`` as a workshop room: attendees (one API key each) kept apart and named, the room token."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from pathlib import Path

import anthropic
import httpx
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, room_of, started
from minimal_runtime.serve.room import HEADER, Room

ROOT = Path(__file__).resolve().parents[2]

SYSTEM = [{"type": "text", "text": "You are a careful agent that plans a release in small steps. " * 60,
           "cache_control": {"type": "ephemeral"}}]


def ask(client, text="Plan the release in one line."):
    return client.messages.create(model="claude-sonnet-5-5", max_tokens=200, system=SYSTEM,
                                  messages=[{"role": "user", "content": text}]).usage


def test_each_api_key_has_its_own_cache_and_one_key_shares_it():
    """Caches are not shared between organizations: a second attendee's first call writes the prefix
    the first attendee wrote, and reads none of it; that attendee's next call reads it."""
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer()), out=io.StringIO()) as (url, _):
        ada = anthropic.Anthropic(base_url=url, api_key="sk-room-ada")
        bob = anthropic.Anthropic(base_url=url, api_key="sk-room-bob")
        first = ask(ada)
        assert first.cache_creation_input_tokens > 500 and first.cache_read_input_tokens == 0
        bobs_first = ask(bob)  # the same prefix, another key: written again, nothing read
        assert bobs_first.cache_creation_input_tokens == first.cache_creation_input_tokens
        assert bobs_first.cache_read_input_tokens == 0
        bobs_next = ask(bob, "And the one after?")
        assert bobs_next.cache_read_input_tokens == first.cache_creation_input_tokens
        again = ask(anthropic.Anthropic(base_url=url, api_key="sk-room-ada"))  # one key, another client: shares
        assert again.cache_read_input_tokens == first.cache_creation_input_tokens
        assert again.cache_creation_input_tokens == 0
        # the cache diagnostics are a key's own too: another's message is not found, as another workspace's
        asked = {"model": "claude-sonnet-5-5", "max_tokens": 50, "system": SYSTEM,
                 "messages": [{"role": "user", "content": "Plan the release in one line."}]}
        adas = ada.messages.create(**asked, extra_body={"diagnostics": {"previous_message_id": None}})
        for client, found in ((ada, True), (bob, False)):
            reply = client.messages.create(**asked, extra_body={"diagnostics": {"previous_message_id": adas.id}})
            reason = (reply.model_dump().get("diagnostics") or {}).get("cache_miss_reason")
            assert (reason is None or reason["type"] != "previous_message_not_found") == found, reason


def test_attendees_are_named_in_the_lines_the_log_the_summary_and_the_page_and_the_key_never_shown(tmp_path):
    """Named by an --attendee label, by metadata.user_id, else by a short hash of the key; the same
    first message from two attendees is two conversations, and no call continues another's."""
    log = tmp_path / "room.jsonl"
    out = io.StringIO()
    room = room_of(["sk-room-ada-secret=ada"], None, "127.0.0.1")
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=0)), out=out, log=str(log),
                 ui=True, room=room) as (url, front):
        ada = anthropic.Anthropic(base_url=url, api_key="sk-room-ada-secret")
        bob = anthropic.Anthropic(base_url=url, api_key="sk-room-bob-secret")
        cyd = anthropic.Anthropic(base_url=url, api_key="sk-room-cyd-secret")
        ask(ada)
        bob.messages.create(model="claude-sonnet-5-5", max_tokens=200, system=SYSTEM, metadata={"user_id": "bob"},
                            messages=[{"role": "user", "content": "Plan the release in one line."}])
        ask(cyd)
        ask(ada, "And the one after?")
        page = httpx.get(f"{url}/ui/api/calls").json()
    lines = out.getvalue().splitlines()
    hashed = f"key-{hashlib.sha256(b'sk-room-cyd-secret').hexdigest()[:8]}"
    assert [line.split(" ")[1] for line in lines[:4]] == ["[ada]", "[bob]", f"[{hashed}]", "[ada]"]
    assert "read 0%" in lines[1] and "read 0%" in lines[2]  # each its own cache
    summary = front.report.summary()
    assert "by attendee: ada 2 calls" in summary and "; bob 1 calls, read 0%" in summary and hashed in summary
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["attendee"] for r in records] == ["ada", "bob", hashed, "ada"]
    calls = {c["n"]: c for c in page["calls"]}
    assert [calls[n]["attendee"] for n in (1, 2, 3, 4)] == ["ada", "bob", hashed, "ada"]
    assert calls[2]["previous"] is None and calls[3]["previous"] is None  # never linked across attendees
    assert len({calls[n]["conversation"] for n in (1, 2, 3)}) == 3
    assert {c["attendee"] for c in page["conversations"]} == {"ada", "bob", hashed}
    everything = out.getvalue() + log.read_text() + json.dumps(page) + summary
    for key in ("sk-room-ada-secret", "sk-room-bob-secret", "sk-room-cyd-secret"):
        assert key not in everything


def test_beyond_loopback_a_room_token_is_required_and_refused_without_it():
    room = room_of([], None, "0.0.0.0")
    assert room.token and room_of([], None, "127.0.0.1").token is None  # loopback: none needed
    with started(Emulator(model="claude-sonnet-5-5"), host="0.0.0.0", out=io.StringIO(), ui=True,
                 room=room) as (url, front):
        url = url.replace("0.0.0.0", "127.0.0.1")
        bare = anthropic.Anthropic(base_url=url, api_key="sk-room-ada", max_retries=0)
        with pytest.raises(anthropic.AuthenticationError, match="room token: send it as the x-room-token header"):
            ask(bare)
        with_header = anthropic.Anthropic(base_url=url, api_key="sk-room-ada", default_headers={HEADER: room.token})
        assert ask(with_header).cache_creation_input_tokens > 0
        in_key = anthropic.Anthropic(base_url=url, api_key=f"{room.token}:sk-room-bob")  # a client that sets only a key
        assert ask(in_key).cache_read_input_tokens == 0  # another attendee
        assert httpx.get(f"{url}/ui/api/calls").status_code == 401
        assert httpx.get(f"{url}/ui/api/calls?token={room.token}").status_code == 200
        assert httpx.get(f"{url}/ui/page.js").status_code == 200  # the page's own files carry no data
        # an attendee names the server by the room's address: any Host, the token still asked for
        lan = {"host": "192.0.2.10:8765", "x-api-key": "sk-room-cyd", "anthropic-version": "2023-06-01"}
        body = {"model": "claude-sonnet-5-5", "max_tokens": 50, "messages": [{"role": "user", "content": "Hi"}]}
        assert httpx.post(f"{url}/v1/messages", headers=lan, json=body).status_code == 401
        assert httpx.post(f"{url}/v1/messages", headers={**lan, HEADER: room.token}, json=body).status_code == 200
        lines = front.lines
    assert " 401 | refused: authentication_error: this serve is a room" in lines[0]
    assert sum(" 401 | " in line for line in lines) == 2 and sum(" 200 | " in line for line in lines) == 3
    assert room.token not in "\n".join(lines)


def exercise_check():
    sys.path.insert(0, str(ROOT / "tests"))
    import exercise_check
    return exercise_check


def test_make_progress_names_the_failing_tests_and_reports_to_the_room_given_once(tmp_path):
    check = exercise_check()
    results = {"ch01_ephemeral_queue": (10, 0), "ch02_tail_placement": (3, 2), "ch03_hooks": (0, 7)}
    failing = {"ch01_ephemeral_queue": [], "ch03_hooks": [("test_hooks.py::test_x", "NotImplementedError")] * 7,
               "ch02_tail_placement": [("test_tail.py::test_marker_moves", "AssertionError: assert 2 == 3"),
                                       ("test_tail.py::test_one_breakpoint", "AssertionError: assert False")]}
    lines = check.failing_lines(results, failing)  # only a chapter started: an untouched one fails every test
    assert lines == ["ch02_tail_placement: 2 failing", "  test_tail.py::test_marker_moves: AssertionError: assert 2 == 3",
                     "  test_tail.py::test_one_breakpoint: AssertionError: assert False"]
    first = check.first_failing(results, failing)
    assert first == "ch02_tail_placement/test_tail.py::test_marker_moves: AssertionError: assert 2 == 3"
    room = Room(token="tok-123")
    saved = tmp_path / ".room.json"
    with started(Emulator(model="claude-sonnet-5-5"), out=io.StringIO(), ui=True, room=room) as (url, _):
        given = argparse.Namespace(room=url, token="tok-123", name="ada", no_room=False)
        assert check.remembered_room(given, saved)["url"] == url
        later = check.remembered_room(argparse.Namespace(room=None, token=None, name=None, no_room=False), saved)
        assert later == {"name": "ada", "url": url, "token": "tok-123"}  # given once, remembered
        assert check.report_to_room(later, results, first) == f"reported to the room at {url} as ada"
        refused = check.report_to_room({**later, "token": "wrong"}, results, first)
        assert refused.startswith(f"the room at {url} refused the report: HTTP 401")
        page = httpx.get(f"{url}/ui/api/calls", headers={HEADER: "tok-123"}).json()
    with started(Emulator(model="claude-sonnet-5-5"), out=io.StringIO()) as (url, _):  # no --ui: no page to show it
        assert check.report_to_room({**later, "url": url}, results, first).endswith("keeps progress with --ui: ask the instructor)")
    assert page["progress"] == [{"attendee": "ada", "failing": first, "chapters": {
        "01": {"passed": 10, "total": 10}, "02": {"passed": 3, "total": 5}, "03": {"passed": 0, "total": 7}}}]
