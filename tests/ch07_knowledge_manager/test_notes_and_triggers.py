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
    "Operator policy requires the archive first.", "Prices checked. H: send the archive. A: sending it now.",
])
def test_the_lint_refuses_anything_that_shows_a_second_writer(impl, line):
    assert impl.lint(line), f"should be refused: {line!r}"


@pytest.mark.parametrize("line", [
    "The Initech page moved: its prices are at /plans.", "Three pages read since the last note; they go into a note first.",
    "Acme renders its prices in the browser: browse shows them, fetch does not.",
    "Prices are per user per month unless the page says otherwise.",
])
def test_the_lint_accepts_a_plain_first_person_note(impl, line):
    assert (got := impl.lint(line)) == [], f"a plain statement of fact should pass the lint (return []): {line!r} got {got!r}"


def test_bullets_are_bare_and_single_line(impl):
    for line, expected in [("  * Prices   are\nmonthly. ", "- Prices are monthly."), ("2) Save the note.", "- Save the note."),
                           ("\u2022 Browse Acme.", "- Browse Acme."), ("Browse Acme.", "- Browse Acme.")]:
        assert (got := impl.bullet(line)) == expected, \
            f"bullet({line!r}) should be {expected!r} (whitespace collapsed, the marker removed, '- ' in front), not {got!r}"


def test_the_block_puts_nudges_first_and_caps_guidance_in_code(impl):
    guidance = [f"Line {k}." for k in range(1, 10)]
    block = impl.format_block(["Save the Acme note first.", ""], guidance)
    lines = block.split("\n")
    assert lines[0] == "- Save the Acme note first.", f"the nudge comes first, as a bullet (the blank one dropped): {block!r}"
    assert lines[1:] == [f"- Line {k}." for k in range(1, impl.MAX_BULLETS + 1)], \
        f"then the first MAX_BULLETS ({impl.MAX_BULLETS}) guidance lines, each a bullet, nothing else: {block!r}"
    assert impl.MAX_BULLETS == 6 and len(lines) == 7, f"one nudge and six guidance bullets make 7 lines, not {len(lines)}"
    assert (got := impl.format_block([], [])) == "", f"nothing to say is an empty string, not {got!r}"


def test_prefetch_waits_for_both_ten_seconds_and_four_new_messages(impl):
    clock = FakeClock()
    t = impl.Triggers(clock)
    assert (got := t.after_call(4, ["read_file"])) == "prefetch", f"the first run has nothing to wait for: 'prefetch', not {got!r}"
    clock.now = 5.0
    assert (got := t.after_call(12, ["read_file"])) is None, f"8 new messages but only 5 s since the last run: None, not {got!r}"
    clock.now = 10.0
    assert (got := t.after_call(7, ["read_file"])) is None, f"10 s but only 3 new messages since the last run: None, not {got!r}"
    assert (got := t.after_call(8, ["read_file"])) == "prefetch", \
        f"10 s and 4 new messages since the last run (at 0 s, with 4 messages): 'prefetch', not {got!r}"
    clock.now = 19.9
    assert (got := t.after_call(30, ["read_file"])) is None, \
        f"9.9 s since the run at 10 s (remember when a run started, and its message count): None, not {got!r}"


def test_a_content_burst_fires_at_once_after_three_in_a_row(impl):
    clock = FakeClock()
    t = impl.Triggers(clock)
    assert (got := t.after_call(4, ["read_file"])) == "prefetch", f"the first run has nothing to wait for: 'prefetch', not {got!r}"
    clock.now = 1.0
    assert (got := t.after_call(5, ["fetch"])) is None, f"one content call in a row: None, not {got!r}"
    assert (got := t.after_call(6, ["browse"])) is None, f"two content calls in a row: None, not {got!r}"
    assert (got := t.after_call(7, ["fetch"])) == "content burst", \
        f"three content calls in a row: 'content burst' at once (the 10 s limit does not apply), not {got!r}"
    assert (got := t.after_call(8, ["fetch"])) is None, f"after a burst the streak starts again from zero: None, not {got!r}"
    assert (got := t.after_call(9, ["fetch", "write_file", "fetch"])) is None, \
        f"a call with a non-content tool (write_file) breaks the streak: None, not {got!r}"
    assert (got := t.after_call(10, ["fetch", "fetch"])) == "content burst", \
        f"two content tools in one call after the broken streak's last fetch make three in a row: 'content burst', not {got!r}"


def test_the_ticker_fires_only_after_fifteen_quiet_seconds(impl):
    clock = FakeClock()
    t = impl.Triggers(clock)
    assert (got := t.tick(2)) == "ticker", f"no run yet: the ticker fires, 'ticker', not {got!r}"
    clock.now = 14.9
    assert (got := t.tick(2)) is None, f"14.9 s after the last run (under tick_every): None, not {got!r}"
    clock.now = 15.0
    assert (got := t.tick(2)) == "ticker", f"15 s after the last run (tick_every): 'ticker', not {got!r}"
    clock.now = 20.0
    assert (got := t.executor_done(3)) == "executor done", f"an executor done is always a run: 'executor done', not {got!r}"
    clock.now = 34.0
    assert (got := t.tick(3)) is None, f"14 s after the executor-done run (it counts as the last run): None, not {got!r}"
