"""The knowledge manager's rules, each stated by a test (issue 27, items 6 and 11): the worker that
never holds the process, the bounded queue, the snapshot, the 90 s age cap, high urgency first,
the raw section's memory, the six-word boundary, the nudge counters, one KM run at a time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from minimal_runtime.features.knowledge import (MAX_AGE, Board, KmOutput, KmWorker, KnowledgeManager, Nudge,
                                                RawSection, snapshot)

ROOT = Path(__file__).resolve().parents[2]


class FakeClock:
    def __init__(self, now: float = 0.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


# item 6: the worker ------------------------------------------------------------------------------

HUNG_KM = textwrap.dedent("""
    import threading, time
    from minimal_runtime.features.knowledge import KnowledgeManager

    class Hung:  # a KM model that never answers
        class messages:
            @staticmethod
            def create(**request):
                threading.Event().wait()

    try:
        km = KnowledgeManager(Hung(), "claude-haiku-5-5", time.monotonic, shutdown_wait=0.3)
    except TypeError:  # a runtime without the setting
        km = KnowledgeManager(Hung(), "claude-haiku-5-5", time.monotonic)
    for k in range(20):
        km.schedule("test", {"messages": [{"role": "user", "content": f"call {k}"}]})
    print("dropped", getattr(km, "dropped", None), flush=True)
""")


def test_a_km_call_that_never_returns_does_not_keep_the_process_alive():
    """The process ends by itself with a KM run hung and 19 more scheduled: the queued runs are
    cancelled at exit and the hung one is waited for at most the bound (0.3 s here). The timeout is
    only the guard for the old behaviour, which never exits."""
    try:
        child = subprocess.run([sys.executable, "-c", HUNG_KM], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("the process was still alive 30 s after its last line, held by a hung KM run")
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.split() in (["dropped", "11"], ["dropped", "12"])  # 20 - 8 queued - (0 or 1 started)


def test_the_queue_is_bounded_and_drops_the_oldest_snapshot():
    worker, started, release, ran = KmWorker(max_queued=2), threading.Event(), threading.Event(), []
    first = worker.submit(lambda: (started.set(), release.wait(10)))
    assert started.wait(10)
    later = [worker.submit(ran.append, k) for k in range(5)]
    assert worker.dropped == 3 and [f.cancelled() for f in later] == [True, True, True, False, False]
    release.set()
    for future in [first, *later[3:]]:
        future.result(timeout=10)
    assert ran == [3, 4]  # the two newest, in order


def test_runs_are_serial_one_at_a_time_in_order():
    worker, lock, inside, overlaps, order = KmWorker(), threading.Lock(), [0], [], []

    def job(k):
        with lock:
            inside[0] += 1
            overlaps.append(inside[0])
        threading.Event().wait(0.001)
        order.append(k)
        with lock:
            inside[0] -= 1
    futures = [worker.submit(job, k) for k in range(6)]
    for future in futures:
        future.result(timeout=10)
    assert max(overlaps) == 1 and order == list(range(6))


def test_close_cancels_the_queued_runs_and_waits_for_the_one_in_flight_within_its_bound():
    started, release = threading.Event(), threading.Event()

    class Slow:
        class messages:
            @staticmethod
            def create(**request):
                started.set()
                release.wait(10)
                raise RuntimeError("the KM model failed")
    km = KnowledgeManager(Slow(), "claude-haiku-5-5", FakeClock(), shutdown_wait=0.05)
    futures = [km.schedule("test", {"messages": []}) for _ in range(4)]
    assert started.wait(10)
    km.close()
    assert [f.cancelled() for f in futures] == [False, True, True, True] and not futures[0].done()
    release.set()
    futures[0].result(timeout=10)
    assert [r["error"] for r in km.runs] == ["the KM model failed"]
    with pytest.raises(RuntimeError):
        km.schedule("after close", {"messages": []})


def test_a_snapshot_is_frozen_against_later_appends_without_copying_the_messages():
    history = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    request = {"model": "m", "system": [{"type": "text", "text": "rules"}], "messages": history}
    frozen = snapshot(request)
    history.append({"role": "assistant", "content": [{"type": "text", "text": "later"}]})
    request["system"].append({"type": "text", "text": "more"})
    assert len(frozen["messages"]) == 1 and len(frozen["system"]) == 1
    assert frozen["messages"][0] is history[0]  # a reference: the history never edits a message it holds


# item 11: the board's rules ----------------------------------------------------------------------

def test_guidance_is_injected_up_to_90_s_after_it_was_made_and_never_after():
    clock = FakeClock(1000.0)
    board = Board(clock)
    board.post(KmOutput(guidance={"executor": ["The Acme page is read."]}))
    for age, delivered in [(0.0, True), (MAX_AGE, True), (MAX_AGE + 0.001, False)]:
        clock.now = 1000.0 + age
        assert bool(board.take("executor")) == delivered, age
    assert [age for *_, age in board.delivered] == [0.0, MAX_AGE]
    assert MAX_AGE == 90.0


def test_high_urgency_nudges_come_first_then_in_arrival_order():
    board = Board(FakeClock())
    board.post(KmOutput(nudges=[Nudge(text="First normal.", role="executor"),
                                Nudge(text="First high.", role="both", urgency="high"),
                                Nudge(text="Second normal.", role="executor"),
                                Nudge(text="Second high.", role="executor", urgency="high")]))
    assert board.take("executor") == "- First high.\n- Second high.\n- First normal.\n- Second normal."
    assert board.take("executor") == ""  # consumed once


def test_nudges_are_counted_when_posted_and_when_taken_for_their_role_only():
    board = Board(FakeClock())
    board.post(KmOutput(nudges=[Nudge(text="For the planner.", role="planner"),
                                Nudge(text="For both.", role="both"), Nudge(text="For the executor.", role="executor"),
                                Nudge(text="I notice you forgot.", role="both")]))  # refused: never counted as posted
    assert (board.nudges_posted, board.nudges_consumed) == (3, 0)
    assert board.take("executor") == "- For both.\n- For the executor."
    assert (board.nudges_posted, board.nudges_consumed) == (3, 2)
    assert board.take("other") == "" and board.nudges_consumed == 2
    assert board.take("planner") == "- For the planner." and board.nudges_consumed == 3


def test_the_raw_section_remembers_every_text_it_was_given():
    raw = RawSection()
    raw.add("alpha beta gamma delta epsilon zeta eta")
    raw.add("one two three four five six seven")
    assert raw.quotes("so: alpha beta gamma delta epsilon zeta")  # the first text is still known
    assert raw.quotes("ONE two three four five six")


def test_a_quote_is_six_words_in_a_row_five_are_not():
    raw = RawSection()
    raw.add("The Initech plans start at twelve dollars a month for teams.")
    assert not raw.quotes("Initech plans start at twelve, as I saw.")
    assert raw.quotes("Initech plans start at twelve dollars, as I saw.")
    assert not raw.quotes("plans start at twelve dollars")  # five words, the whole line
