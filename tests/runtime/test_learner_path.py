"""The learner's path: a solved exercise does not break `make test`, an unfinished stub says so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minimal_runtime.core.hooks import HookRegistry, Point
from tests.support import TASK, pricing_agent

ROOT = Path(__file__).resolve().parents[2]


def test_the_stub_check_reads_the_committed_stubs_not_a_solved_exercise(tmp_path):
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    project = tmp_path / "project"
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(".venv", "chapters", "mutants", "__pycache__"))
    shutil.copy(project / "solutions" / "ch01_ephemeral_queue.py", project / "exercises" / "ch01_ephemeral_queue.py")
    check = [sys.executable, "tests/exercise_check.py"]
    stubs = subprocess.run([*check, "stubs", "tests/ch01_ephemeral_queue"], cwd=project, capture_output=True, text=True)
    assert stubs.returncode == 0 and "every test fails on the stubs" in stubs.stdout, stubs.stdout + stubs.stderr
    progress = subprocess.run([*check, "progress", "tests/ch01_ephemeral_queue"], cwd=project, capture_output=True, text=True)
    assert "10 of 10" in progress.stdout and "done" in progress.stdout


def test_an_unfinished_stub_in_a_hook_stops_the_run_and_names_itself(tmp_path):
    hooks = HookRegistry()

    def stub(event):
        raise NotImplementedError("ch05: BudgetMonitor.warn")
    hooks.register(Point.PRE_LLM_CALL, stub)
    agent, _, _ = pricing_agent(tmp_path, hooks=hooks)
    with pytest.raises(NotImplementedError, match="ch05: BudgetMonitor.warn"):
        agent.run(TASK)
    assert hooks.failures == []  # not isolated, not logged as a skipped note


def test_a_chapter_suite_on_the_stubs_names_the_function_to_write():
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "--impl", "exercises", "tests/ch05_budget"],
                         cwd=ROOT, capture_output=True, text=True).stdout
    assert "NotImplementedError: ch05: BudgetMonitor" in out
