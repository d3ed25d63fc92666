"""Chapter 07: the KM's notes read as the agent's own (bare bullets, capped, no second writer
showing), and its runs are triggered on a clock, rate-limited, never inline."""

from __future__ import annotations

import pytest


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("line", [
    "I notice the page moved.", "As your assistant, I suggest browsing.", "Another agent saw a 404 here.",
    "Guidance: browse the page.", "Steering - stay on Acme.", "Note from the planner: save first.", "# Next step",
    "**Important** save the note", "This was suggested by the manager.", "According to the KM, prices are monthly.",
    "You should save the note now.", "Your task is Globex only.", "Save the note.\nThen browse.",
])
def test_the_lint_refuses_anything_that_shows_a_second_writer(impl, line):
    assert impl.lint(line), f"should be refused: {line!r}"


@pytest.mark.parametrize("line", [
    "The Initech page moved: its prices are at /plans.", "Three pages read since the last note; they go into a note first.",
    "Acme renders its prices in the browser: browse shows them, fetch does not.",
    "Prices are per user per month unless the page says otherwise.",
])
def test_the_lint_accepts_a_plain_first_person_note(impl, line):
    assert impl.lint(line) == []


def test_bullets_are_bare_and_single_line(impl):
    assert impl.bullet("  * Prices   are\nmonthly. ") == "- Prices are monthly."
    assert impl.bullet("2) Save the note.") == "- Save the note."
    assert impl.bullet("\u2022 Browse Acme.") == "- Browse Acme."
    assert impl.bullet("Browse Acme.") == "- Browse Acme."


def test_the_block_puts_nudges_first_and_caps_guidance_in_code(impl):
    guidance = [f"Line {k}." for k in range(1, 10)]
    block = impl.format_block(["Save the Acme note first.", ""], guidance)
    lines = block.split("\n")
    assert lines[0] == "- Save the Acme note first."
    assert lines[1:] == [f"- Line {k}." for k in range(1, impl.MAX_BULLETS + 1)]
    assert impl.MAX_BULLETS == 6 and len(lines) == 7
    assert impl.format_block([], []) == ""


def test_prefetch_waits_for_both_ten_seconds_and_four_new_messages(impl):
    clock = FakeClock()
    t = impl.Triggers(clock)
    assert t.after_call(4, ["read_file"]) == "prefetch"  # the first run: nothing to wait for
    clock.now = 5.0
    assert t.after_call(12, ["read_file"]) is None  # 8 new messages, but only 5 s
    clock.now = 10.0
    assert t.after_call(7, ["read_file"]) is None  # 10 s, but only 3 new messages
    assert t.after_call(8, ["read_file"]) == "prefetch"  # 10 s and 4 new messages
    clock.now = 19.9
    assert t.after_call(30, ["read_file"]) is None


def test_a_content_burst_fires_at_once_after_three_in_a_row(impl):
    clock = FakeClock()
    t = impl.Triggers(clock)
    assert t.after_call(4, ["read_file"]) == "prefetch"
    clock.now = 1.0
    assert t.after_call(5, ["fetch"]) is None
    assert t.after_call(6, ["browse"]) is None
    assert t.after_call(7, ["fetch"]) == "content burst"  # 1 s after the last run: the limit does not apply
    assert t.after_call(8, ["fetch"]) is None  # the streak starts again
    assert t.after_call(9, ["fetch", "write_file", "fetch"]) is None  # broken by the write
    assert t.after_call(10, ["fetch", "fetch"]) == "content burst"


def test_the_ticker_fires_only_after_fifteen_quiet_seconds(impl):
    clock = FakeClock()
    t = impl.Triggers(clock)
    assert t.tick(2) == "ticker"
    clock.now = 14.9
    assert t.tick(2) is None
    clock.now = 15.0
    assert t.tick(2) == "ticker"
    clock.now = 20.0
    assert t.executor_done(3) == "executor done"  # always, and it counts as the last run
    clock.now = 34.0
    assert t.tick(3) is None
