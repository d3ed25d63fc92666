"""Every chapter measures the runtime's own feature, not a stand-in written in a cell (issue 64).

For each shipped feature a chapter's figures rest on, the feature is replaced by one that raises
(``broken/sitecustomize.py``, loaded before the kernel imports anything) and the chapter is run
under nbval: it must fail. A chapter that re-implemented the feature in a cell would still pass.
A raising hook costs the run a note, not the run (chapter 03), so what fails is a figure.

Slow (a kernel per pair, minutes): ``make features-test``, run by CI beside ``make test``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# the shipped feature -> the chapters whose printed figures come from it
BREAKS = {
    "minimal_runtime.features.plan:PlanHook.recite": ["04_plan", "08_drift"],
    "minimal_runtime.features.delegation:render_task_block": ["04_plan", "08_drift"],
    "minimal_runtime.features.budget:BudgetMonitor.warn": ["05_budget"],
    "minimal_runtime.features.filesystem:Offloader.__call__": ["06_filesystem_first"],
    "minimal_runtime.features.knowledge:KnowledgeManager.inject": ["07_knowledge_manager", "08_drift"],
    "minimal_runtime.features.drift:EventRecitation.recite": ["08_drift"],
    "minimal_runtime.features.drift:DriftMeter.record": ["08_drift"],
    "minimal_runtime.features.compaction:ManusLadder.before_call": ["09_compaction"],
}
PAIRS = [(feature, chapter) for feature, chapters in BREAKS.items() for chapter in chapters]


def nbval(chapter: str, feature: str | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COURSE_IMPL": "solutions",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "course" / "broken"), str(ROOT)])}
    env.pop("COURSE_BREAK", None)
    if feature:
        env["COURSE_BREAK"] = feature
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:xdist", "-p", "nbval", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with=chapters/nbval_sanitize.cfg", f"chapters/{chapter}.ipynb"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
@pytest.mark.parametrize("feature,chapter", PAIRS, ids=[f"{c}-{f.split(':')[1]}" for f, c in PAIRS])
def test_a_chapter_fails_when_the_feature_it_measures_is_broken(feature, chapter):
    run = nbval(chapter, feature)
    assert run.returncode != 0, (
        f"chapter {chapter} passed with {feature} raising: its figures do not come from the shipped feature\n"
        + run.stdout[-2000:])
    assert "broken on purpose" in run.stdout or "Captured" in run.stdout or "failed" in run.stdout, run.stdout[-2000:]


@pytest.mark.slow
def test_the_check_breaks_nothing_by_itself():
    """With no feature named, the loader changes nothing: the chapter passes (so a failure above is the break's)."""
    run = nbval("04_plan", None)
    assert run.returncode == 0, run.stdout[-3000:]
