"""The fork ships its tests (issue 50 item 2): ``fork DEST`` writes ``test_PKG.py`` (``fork_suite.py``),
which runs offline with nothing but anthropic and pydantic, skips nothing, and catches a broken core.

Each bug below is planted in a fork's own core, as its new owner might write it, and the fork's suite
is run on it (``-f``: it stops at the first test that fails, which is the one named here). On the day
it was written the suite on an unbroken fork passed and caught each of these bugs; the suite before
(one three-call test, skipped offline) caught none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from minimal_runtime.fork import write_fork

NAME = "myagent"

# (what the bug is, the file, the text replaced, what replaces it, the test that catches it)
BUGS = [
    ("state hooks set is never written", "core/agent.py",
     'self.store.write({**event, "state": state} if state else event, sync=sync)',
     "self.store.write(event, sync=sync)", "Kills.test_a_call_in_flight_at_the_kill_is_the_only_one_paid_twice_and_is_listed"),
    ("a killed run's task is asked again", "core/agent.py",
     '            log.info("the run record ends in an unfinished run of this task: resumed, not asked again")\n'
     '            task = None\n',
     '            self._killed_task = None\n', "Kills.test_a_call_in_flight_at_the_kill_is_the_only_one_paid_twice_and_is_listed"),
    ("no bill on the turn", "core/agent.py",
     '**({"call": call.model_dump()} if call else {}),', "",
     "Bill.test_each_call_is_billed_in_the_record_as_the_server_counted_it"),
    ("a lost thread ends the run", "core/agent.py",
     "if attempt == 2 or not self.thread.failed(e, plan):", "if True:",
     "Threads.test_a_thread_is_created_continued_and_replayed_once_when_lost"),
    ("no cache breakpoints", "core/context.py",
     "    for target in targets:\n        spot = _last_markable(messages, target)",
     "    for target in []:\n        spot = _last_markable(messages, target)",
     "Breakpoint.test_the_cache_breakpoint_is_on_the_last_block_of_the_history_not_on_the_notes"),
    ("no hook isolation", "core/hooks.py",
     "            except Exception as e:  # isolation: log, remember, go on with the next hook",
     "            except ZeroDivisionError as e:",
     "Hooks.test_hooks_run_in_registration_order_and_a_raising_one_is_passed_over_with_its_notes"),
    ("hooks run in reverse order", "core/hooks.py",
     "for index, reg in enumerate(self._hooks.get(Point(point), [])):",
     "for index, reg in enumerate(reversed(self._hooks.get(Point(point), []))):",
     "Hooks.test_hooks_run_in_registration_order_and_a_raising_one_is_passed_over_with_its_notes"),
    ("a resumed step runs its tools again", "core/agent.py",
     'results = [self._run_tool(call, reply.results.get(call["id"])) for call in calls]',
     "results = [self._run_tool(call) for call in calls]",
     "Kills.test_a_kill_after_each_event_of_a_step_resumes_from_it"),
    ("a reply cut at max_tokens is kept as an answer", "core/agent.py",
     'if stop_reason in ("max_tokens", "model_context_window_exceeded"):', "if False:",
     "StopStatuses.test_every_stop_status_ends_at_the_end_hook_with_its_result"),
    ("the step cap is never reached", "core/agent.py",
     "        while self.steps < self.max_steps:\n            outcome = self._step()",
     "        while True:\n            outcome = self._step()",
     "StopStatuses.test_every_stop_status_ends_at_the_end_hook_with_its_result"),
    ("the call's entries are not kept with its turn (the history is edited)", "core/agent.py",
     "turn = [*reply.entries, reply.message, *results] if reply.kept else []",
     "turn = [reply.message, *results] if reply.kept else []",
     "AppendOnly.test_each_request_extends_the_one_before"),
    ("hook marks are never written (a resumed step runs its hooks again)", "core/agent.py",
     "start=self._hooks_run.pop(key, 0), ran=ran)", "start=0)",
     "Kills.test_a_call_in_flight_at_the_kill_is_the_only_one_paid_twice_and_is_listed"),
]


def suite(dest: Path, *args: str) -> subprocess.CompletedProcess:
    """The fork's own test, as its README says to run it, with no ANTHROPIC_BASE_URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run([sys.executable, "-m", "unittest", *args, f"test_{NAME}"], cwd=dest, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_forks_own_suite_passes_offline_and_skips_nothing(tmp_path):
    write_fork(tmp_path, NAME)
    done = suite(tmp_path, "-v")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.rstrip().endswith("OK") and "skipped" not in done.stderr, done.stderr[-2000:]
    assert "LiveSubset" not in done.stderr  # no server named: no live test, and none skipped either
    assert "Ran 9 tests" in done.stderr and done.stderr.count(" ... ok") == 9, done.stderr[-2000:]


@pytest.mark.parametrize("bug, path, old, new, catcher", BUGS, ids=[b[0] for b in BUGS])
def test_a_bug_planted_in_the_forks_core_is_caught_by_its_own_suite(tmp_path, bug, path, old, new, catcher):
    write_fork(tmp_path, NAME)
    module = tmp_path / NAME / path
    source = module.read_text()
    assert source.count(old) == 1, f"the text to break is not in {path} once"
    module.write_text(source.replace(old, new))
    done = suite(tmp_path, "-f")
    assert done.returncode != 0, f"{bug}: not caught\n{done.stderr[-1500:]}"
    failed = [line for line in done.stderr.splitlines() if line.startswith(("FAIL: ", "ERROR: "))]
    assert failed and catcher.split(".")[1] in failed[0] and catcher.split(".")[0] in failed[0], \
        f"{bug}: caught first by {failed}, not {catcher}"
