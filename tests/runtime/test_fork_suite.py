"""The fork ships its tests (issue 50 item 2): ``fork DEST`` writes ``test_PKG.py`` (``fork_suite.py``),
which runs offline with nothing but anthropic and pydantic, skips nothing, and catches a broken core.

Each bug below is planted in a fork's own core, as its new owner might write it, and the fork's suite
is run on it, stopping at the first test that fails, which is the one named here. ``BUGS`` caught
each on the day it was written (the suite before: one three-call test, skipped offline, caught none);
``HIGH`` are the bugs issue 65 lists under "High", which an engineer planted in a fork and the suite
of its day passed. Every fork is written once, side by side under its own name, and every suite run
in one process (``RUNNER``): one interpreter start and one import of the SDK for all of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minimal_runtime.fork import write_fork
from tests.support import fork_suite_size as suite_size

NAME = "myagent"

# (what the bug is, the file, the text replaced, what replaces it, the test that catches it)
BUGS = [
    ("state hooks set is never written", "core/agent.py",
     'self.store.write({**event, "state": state} if state else event, sync=sync)',
     "self.store.write(event, sync=sync)", "Exact.test_each_request_the_history_and_the_record_exactly"),
    ("a killed run's task is asked again", "core/agent.py",
     '            log.info("the run record ends in an unfinished run of this task: resumed, not asked again")\n'
     '            task = None\n',
     '            self._current_run.task = None\n', "Kills.test_a_call_in_flight_at_the_kill_is_the_only_one_paid_twice_and_is_listed"),
    ("no bill on the turn", "core/agent.py",
     'call=reply.record.model_dump(), ', "",
     "Bill.test_each_call_is_billed_in_the_record_as_the_server_counted_it"),
    ("a lost thread ends the run", "core/agent.py",
     "if attempt == 2 or not self.thread.failed(e, plan):", "if True:",
     "ThreadRecord.test_a_request_the_server_cannot_thread_goes_whole_from_then_on"),
    ("no cache breakpoints", "core/context.py",
     "    for target in targets:\n        spot = _last_markable(messages, target)",
     "    for target in []:\n        spot = _last_markable(messages, target)",
     "Breakpoint.test_the_cache_breakpoint_is_on_the_last_block_of_the_history_not_on_the_notes"),
    ("no hook isolation", "core/hooks.py",
     "            except Exception as e:  # isolation: log, remember, go on with the next hook",
     "            except ZeroDivisionError as e:",
     "HookRules.test_registration_when_and_the_names_of_failures"),
    ("hooks run in reverse order", "core/hooks.py",
     "for index, reg in enumerate(self._hooks.get(Point(point), [])):",
     "for index, reg in enumerate(reversed(self._hooks.get(Point(point), []))):",
     "HookRules.test_registration_when_and_the_names_of_failures"),
    ("a resumed step runs its tools again", "core/agent.py",
     'results = [self._run_tool(call, self.progress.results.get(call["id"])) for call in calls]',
     "results = [self._run_tool(call) for call in calls]",
     "Kills.test_a_kill_after_each_event_of_a_step_resumes_from_it"),
    ("a reply cut at max_tokens is kept as an answer", "core/agent.py",
     "    if stop_reason not in UNFINISHED:\n", '    if stop_reason != "refusal":\n',
     "StopStatuses.test_a_reply_cut_short_or_refused_says_why_and_is_not_kept"),
    ("the step cap is never reached", "core/agent.py",
     "        while self.steps < self.max_steps:\n", "        while True:\n",
     "StepCap.test_the_step_cap_stops_the_run_at_its_boundary_and_not_before"),
    ("the call's entries are not kept with its turn (the history is edited)", "core/agent.py",
     "turn = [*reply.entries, reply.message, *results] if reply.kept else []",
     "turn = [reply.message, *results] if reply.kept else []",
     "AppendOnly.test_each_request_extends_the_one_before"),
    ("hook marks are never written (a resumed step runs its hooks again)", "core/agent.py",
     "start=self.progress.hooks.get(key, 0), ran=ran, run_id=run_id)", "start=0, run_id=run_id)",
     "Exact.test_each_request_the_history_and_the_record_exactly"),
]


# Issue 65, "High": (what the bug is, the file, the text replaced, what replaces it, the test that catches it)
HIGH = [
    ("the second cache breakpoint one message late", "core/context.py",
     "targets.add(previous_len - 1)", "targets.add(previous_len)",
     "Exact.test_each_request_the_history_and_the_record_exactly"),
    ("a turn-scoped entry loses clear_at and stays", "core/context.py",
     '{"role": "system", "clear_at": "next_user_message", "content": [i.block() for i in batch]}',
     '{"role": "system", "content": [i.block() for i in batch]}',
     "Exact.test_each_request_the_history_and_the_record_exactly"),
    ("parallel tool results reversed", "core/agent.py",
     'self._land_turn(reply, calls and [{"role": "user", "content": results}])',
     'self._land_turn(reply, calls and [{"role": "user", "content": results[::-1]}])',
     "Exact.test_each_request_the_history_and_the_record_exactly"),
    ("thread expiry ignored", "core/agent.py",
     "        self.thread.expire_if_idle()\n", "",
     "ThreadExpiry.test_a_thread_idle_as_long_as_it_lives_is_replayed_not_continued"),
    ("cache writes priced at the read price", "provider/cost.py",
     "self.cache_creation_5m * p.write_5m", "self.cache_creation_5m * p.read",
     "Dollars.test_a_read_is_a_tenth_of_the_input_price_unless_the_models_page_says_otherwise"),
    ("the price tier chosen from the uncached tokens only", "provider/cost.py",
     "p = model_spec(self.model).price(self.prompt_tokens, self.speed, self.inference_geo)\n        if p is None:\n"
     "            return math.nan\n        own = (self.input_tokens * p.input",
     "p = model_spec(self.model).price(self.input_tokens, self.speed, self.inference_geo)\n        if p is None:\n"
     "            return math.nan\n        own = (self.input_tokens * p.input",
     "Dollars.test_haiku_bills_the_whole_call_at_the_tier_of_its_whole_prompt"),
    ("a half-written last line not repaired on open", "core/store.py",
     "        self._repair()\n", "",
     "LastLine.test_a_torn_last_line_is_cut_and_its_tool_runs_again"),
    ("the step cap off by one", "core/agent.py",
     "        while self.steps < self.max_steps:\n", "        while self.steps <= self.max_steps:\n",
     "StepCap.test_the_step_cap_stops_the_run_at_its_boundary_and_not_before"),
    ("a failed call's notes not put back on the queue", "core/agent.py",
     'self._write({"type": "failed", "error": _describe(e)}, step={"phase": "failed"})',
     'self._write({"type": "failed", "error": _describe(e)}, step={"phase": "failed", "notes": []})',
     "FailedCall.test_a_failed_calls_notes_go_to_the_next_call_here_and_after_a_restart"),
    ("a steer accepted before it is on disk", "core/agent.py",
     '            self.store.write({"type": "steer", "text": text})  # durable first: an accepted steer survives a crash\n'
     "            self._pending_steers.append(text)\n",
     "            self._pending_steers.append(text)\n"
     '            self.store.write({"type": "steer", "text": text})\n',
     "Steering.test_a_steer_is_accepted_only_once_it_is_on_disk"),
    ("state set by a tool not restored on resume", "core/agent.py",
     'self._write({"type": "tool_output", "tool_use_id": call["id"], "raw": raw["content"]},\n'
     '                        step={"results": {call["id"]: result}})',
     'self.store.write({"type": "tool_output", "tool_use_id": call["id"], "raw": raw["content"], '
     '"step": {"results": {call["id"]: result}}})\n'
     '            self.progress = self.progress.advanced({"results": {call["id"]: result}})',
     "Kills.test_a_kill_after_each_event_of_a_step_resumes_from_it"),
]

# Runs each fork's suite (failfast) in one process; prints {module: [first failing test, its traceback's end] or None}.
RUNNER = """
import json, sys, unittest
found = {}
for name in sys.argv[1:]:
    result = unittest.TestResult()
    result.failfast = True
    unittest.defaultTestLoader.loadTestsFromName(name).run(result)
    bad = result.failures + result.errors
    found[name] = [bad[0][0].id(), bad[0][1][-1500:]] if bad else None
    ran = result.testsRun
    found[name + ":ran"] = [ran, len(result.skipped)]
print(json.dumps(found))
"""

PLANTED = [(f"bug{k:02d}", *bug) for k, bug in enumerate([*BUGS, *HIGH])]


def plant(dest: Path, name: str, path: str, old: str, new: str) -> None:
    module = dest / name / path
    source = module.read_text()
    assert source.count(old) == 1, f"the text to break is not in {path} once: {old!r}"
    module.write_text(source.replace(old, new))


def offline() -> dict[str, str]:
    """The environment with no ANTHROPIC_BASE_URL: the fork's suite as its README says to run it, offline."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


# Slow (23 forks, each suite run in one process: about half a minute on an idle machine): `make fork-test`, run by
# CI beside make test. test_fork.py runs the fork's own suite inside make test.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def caught(tmp_path_factory) -> dict:
    """Every planted bug's fork, and an unbroken one (``unbroken``), each suite run once."""
    dest = tmp_path_factory.mktemp("forks")
    write_fork(dest, "unbroken")
    for name, _, path, old, new, _ in PLANTED:
        write_fork(dest, name)
        plant(dest, name, path, old, new)
    (dest / "run_suites.py").write_text(RUNNER)
    names = ["test_unbroken", *(f"test_{name}" for name, *_ in PLANTED)]
    done = subprocess.run([sys.executable, "run_suites.py", *names], cwd=dest, env=offline(), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_forks_own_suite_passes_offline_and_skips_nothing(caught):
    assert caught["test_unbroken"] is None, caught["test_unbroken"]
    assert caught["test_unbroken:ran"] == [suite_size(), 0]  # every test ran, none skipped


@pytest.mark.parametrize("name, bug, path, old, new, catcher", PLANTED, ids=[f"{b[0]}: {b[1]}" for b in PLANTED])
def test_a_bug_planted_in_the_forks_core_is_caught_by_its_own_suite(caught, name, bug, path, old, new, catcher):
    first = caught[f"test_{name}"]
    assert first is not None, f"{bug}: not caught"
    assert first[0].split(" ")[0].endswith(catcher), f"{bug}: caught first by {first[0]}, not {catcher}\n{first[1]}"
