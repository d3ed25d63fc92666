"""The chapter suites as a learner meets them: a failing test says what to change, the API's own
answer comes before any count, and no test sees what another test's call did to a fixture."""

from __future__ import annotations

import ast
import copy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITES = sorted(ROOT.glob("tests/ch*/test_*.py"))


def test_every_assert_in_a_chapter_suite_says_what_to_change():
    """A bare ``assert 1 >= 2`` tells a learner nothing about their code: every assert carries a message."""
    bare = []
    for path in SUITES:
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assert) and node.msg is None:
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}: {source.splitlines()[node.lineno - 1].strip()[:90]}")
    assert SUITES and bare == [], "asserts without a message:\n" + "\n".join(bare)


def keeps_its_thinking(task, messages, summary, keep_last):
    """The learner's likeliest slip: the kept turns replayed as they were, thinking and all."""
    from minimal_runtime.core.messages import user
    from minimal_runtime.features.compaction import answered_calls

    cut = answered_calls(messages)[-keep_last][0]
    return [user(f"{task}\n\n{summary}"), *copy.deepcopy(messages[cut:])]


def test_the_ch09_run_test_reports_the_apis_400_before_any_count():
    from tests.ch09_compaction import test_compaction_on_sonnet_5_5 as suite

    with pytest.raises(AssertionError) as failed:
        suite.test_a_run_compacted_this_way_finishes_on_sonnet_5_5(SimpleNamespace(compact_keeping_tail=keeps_its_thinking))
    assert "bound to a different conversation" in str(failed.value), str(failed.value)


MUTATES_IN_PLACE = '''"""Right answers, but it strips the thinking out of the history it was given, in place."""
from solutions.ch09_compaction import compact_keeping_tail as solved, ladder_step  # noqa: F401


def compact_keeping_tail(task, messages, summary, keep_last):
    for message in messages:
        if isinstance(message["content"], list):
            message["content"][:] = [b for b in message["content"] if b["type"] not in ("thinking", "redacted_thinking")]
    return solved(task, messages, summary, keep_last)
'''


def test_an_exercise_that_edits_the_history_it_was_given_fails_the_ch09_suite(tmp_path):
    """With one history shared by the module's tests, the first test's call stripped it for all the
    others: an implementation that edits its input in place passed the whole suite (and failed the
    same test run alone). Each test must get a history of its own."""
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import copy_own_files

    project = tmp_path / "project"
    if not copy_own_files(project):
        pytest.skip("not a git checkout")
    (project / "exercises" / "ch09_compaction.py").write_text(MUTATES_IN_PLACE)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "--tb=no", "--impl", "exercises",
                          "tests/ch09_compaction/test_compaction_on_sonnet_5_5.py", "-k", "not finishes"],
                         cwd=project, capture_output=True, text=True, timeout=300)
    assert "FAILED tests/ch09_compaction/test_compaction_on_sonnet_5_5.py::test_the_history_given_is_left_as_it_was" \
        in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
