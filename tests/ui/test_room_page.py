"""``serve --ui`` as a workshop room, in Chromium: three attendees (three API keys) on one serve that
asks for a room token, the page opened with the token in its address. Measured on the page: each
attendee named with its own conversations, caches kept apart (each one's first call reads 0%), the
room view's table of attendees, and the progress table filled by ``make progress``'s reports."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import anthropic

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, room_of, started

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = [{"type": "text", "text": "You are a careful agent that plans a release in small steps. " * 60,
           "cache_control": {"type": "ephemeral"}}]
KEYS = {"sk-room-ada": "ada", "sk-room-bob": "bob", "sk-room-cyd": "cyd"}


def test_the_room_page_names_three_attendees_keeps_their_caches_apart_and_shows_their_progress(browser, artifacts):
    sys.path.insert(0, str(ROOT / "tests"))
    import exercise_check as check

    room = room_of([f"{k}={v}" for k, v in KEYS.items()], "room-tok", "127.0.0.1")  # a token, as beyond loopback
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=0)), out=io.StringIO(), ui=True,
                 room=room) as (url, front):
        for turn in range(2):
            for key in KEYS:  # the same prompt from each: every attendee's first call writes, its second reads
                client = anthropic.Anthropic(base_url=url, api_key=key, default_headers={"x-room-token": "room-tok"})
                client.messages.create(model="claude-sonnet-5-5", max_tokens=100, system=SYSTEM, messages=[
                    {"role": "user", "content": "Plan the release in one line." + " Then the next." * turn}])
        results = {"ch01_ephemeral_queue": (10, 0), "ch02_tail_placement": (3, 2)}
        for n, name in enumerate(KEYS.values()):
            failing = None if n == 0 else f"ch02_tail_placement/test_tail.py::test_marker_moves: assert {n} == 3"
            said = check.report_to_room({"url": url, "token": "room-tok", "name": name}, results, failing)
            assert said.endswith(f"as {name}")
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        page.goto(f"{url}/ui?token=room-tok")
        page.locator(".call").nth(5).wait_for()
        for name in KEYS.values():
            box = page.locator(f'.attendee[data-name="{name}"]')
            assert box.locator(".conversation").count() == 2  # two first messages, each attendee's own
            stats = box.locator(".attendee-stats").inner_text()
            assert stats.startswith("2 calls · read ") and "0 missed" in stats
            first = box.locator(".call").first.get_attribute("title")
            assert "read 0%" in first  # its first call read none of the others' caches
        page.screenshot(path=str(artifacts / "room-conversations.png"), full_page=True)
        projector = browser.new_page(viewport={"width": 1366, "height": 768})
        projector.goto(f"{url}/ui?room&token=room-tok")
        projector.locator('#progress-rows tr[data-name="cyd"]').wait_for()
        assert projector.locator("#conversations").is_hidden()
        rows = projector.locator("#room-attendees tr")
        assert [rows.nth(k).locator("th").inner_text() for k in range(3)] == ["ada", "bob", "cyd"]
        assert projector.locator("#progress-head").inner_text().split() == ["attendee", "ch01", "ch02", "first",
                                                                            "failing", "test"]
        bob = projector.locator('#progress-rows tr[data-name="bob"]').inner_text()
        assert "10/10" in bob and "3/5" in bob and "test_marker_moves: assert 1 == 3" in bob
        projector.screenshot(path=str(artifacts / "room-projector.png"))
        refused = browser.new_page()
        refused.goto(f"{url}/ui")  # no token: the page loads, its data does not
        refused.locator(".status.lost").wait_for()
        page.close(), projector.close(), refused.close()
    assert all(key not in "\n".join(front.lines) for key in KEYS)
