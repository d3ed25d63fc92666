"""Reading, then solving, as a learner does it in JupyterLab (Chromium): a chapter opened in the lab runs
the solutions (reading mode), Run All draws every figure and a save keeps them; one line of its settings
cell (IMPL) switches it to the learner's exercises/, and the banner under that cell says which code ran
and how many of the chapter's tests it passes. Chapter 01 on a plausible bug (the batch entry without its
clear_at: the run completes, its figures drawn by failing code), chapter 09 on the stub as committed (the
run stops at the stub). Screenshots go to .ui-artifacts/."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.ui.conftest import running_lab
from tests.ui.test_notebooks_in_jupyterlab import open_notebook

ROOT = Path(__file__).resolve().parents[2]
# a learner's chapter 01 that passes some tests and not others: the 2026 entry forgets clear_at, so the
# notes it carries stay on the wire and in the prompt of every later call
BUGGY_CH01 = '''"""A learner's chapter 01: everything from the runtime but batch_entry, written without clear_at."""
from minimal_runtime.core.context import Injection, TurnScopedQueue, append_batch, first_edit

__all__ = ["TurnScopedQueue", "Injection", "append_batch", "batch_entry", "first_edit"]


def batch_entry(batch):
    return {"role": "system", "content": [i.block() for i in batch]}
'''
CHAPTERS = {"01": "01_ephemeral_queue", "09": "09_compaction"}


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A learner's project (the course's own files, chapter 01's exercise written with the bug above, the
    other stubs as committed) and JupyterLab on its workbook/, its kernels importing that project; with
    what the chapter suites say of those exercises, measured here as make progress measures them."""
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import copy_own_files, run_suites

    home = tmp_path_factory.mktemp("learner")
    project = home / "project"
    if not copy_own_files(project):
        pytest.skip("not a git checkout")
    (project / "exercises" / "ch01_ephemeral_queue.py").write_text(BUGGY_CH01)
    (project / "workbook").mkdir()
    for name in CHAPTERS.values():
        shutil.copy(ROOT / "chapters" / f"{name}.ipynb", project / "workbook")
    suites = [ROOT / "tests" / f"ch{n}_{name[3:]}" for n, name in CHAPTERS.items()]  # named as here, run in the copy
    tests = {suite.name[2:4]: counts for suite, counts in run_suites(suites, project).items()}
    with running_lab(home, project / "workbook", PYTHONPATH=str(project), COURSE_OWN_LOGS="0") as served:
        yield served, tests


def images(notebook: dict) -> int:
    return sum("image/png" in o.get("data", {}) for c in notebook["cells"] for o in c.get("outputs", []))


RUN_ALL = """async () => {  // outputs cleared first, so what shows after is this run's
  const app = window.jupyterapp, panel = app.shell.currentWidget;
  await panel.sessionContext.ready;
  await app.commands.execute('notebook:clear-all-cell-outputs');
  app.commands.execute('notebook:run-all-cells');
}"""
SWITCH = """async ([from, to]) => {  // the learner's edit of the settings cell, then Kernel > Restart Kernel
  const panel = window.jupyterapp.shell.currentWidget, cell = panel.content.model.sharedModel.getCell(1);
  if (!cell.getSource().includes(from)) throw new Error('the settings cell has no ' + from);
  cell.setSource(cell.getSource().replace(from, to));
  await panel.sessionContext.session.kernel.restart();
}"""
# a run has ended when no cell is queued or running ([*]) and the kernel is idle, several polls in a row
FINISHED = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const busy = [...panel.content.node.querySelectorAll('.jp-InputPrompt')].some(p => p.textContent.includes('*'));
  const done = !busy && panel.sessionContext.session.kernel.status === 'idle'
    && panel.content.model.sharedModel.getCell(1).execution_count !== null;
  window.__uiIdle = done ? (window.__uiIdle || 0) + 1 : 0;
  return window.__uiIdle >= 6;
}"""
SEEN = """() => {
  const panel = window.jupyterapp.shell.currentWidget, model = panel.context.model.toJSON();
  const banner = panel.content.node.querySelector('.course-banner');
  return {banner: banner && {kind: [...banner.classList].find(c => c.startsWith('course-banner-')), text: banner.innerText},
          images: panel.content.node.querySelectorAll('.jp-OutputArea-output img').length,
          errors: model.cells.flatMap(c => (c.outputs || []).filter(o => o.output_type === 'error').map(o => o.traceback.join('\\n')))};
}"""


def run_all(page) -> dict:
    page.evaluate(RUN_ALL)
    page.wait_for_function(FINISHED, polling=500, timeout=900_000)
    return page.evaluate(SEEN)


def saved(page, lab, name: str) -> dict:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=60_000)
    return json.loads((lab.folder / f"{name}.ipynb").read_text())


@pytest.mark.parametrize("number", CHAPTERS)
def test_a_chapter_reads_with_every_figure_then_switches_to_the_learners_code_and_says_how_it_tests(browser, learner, artifacts,
                                                                                                    number):
    lab, tests = learner
    name = CHAPTERS[number]
    committed = images(json.loads((ROOT / "chapters" / f"{name}.ipynb").read_text()))
    page = open_notebook(browser, lab, f"{name}.ipynb", "light")
    try:
        # reading mode, as the lab opens a chapter: the solutions, every figure, a save that keeps them
        seen = run_all(page)
        page.screenshot(path=artifacts / f"reading-{number}.png")
        assert seen["banner"] and seen["banner"]["kind"] == "course-banner-reading", seen["banner"]
        assert "Reading mode" in seen["banner"]["text"] and 'IMPL = "exercises"' in seen["banner"]["text"]
        assert seen["errors"] == [] and seen["images"] == committed >= 1, (seen["images"], committed, seen["errors"])
        assert images(saved(page, lab, name)) == committed, "the saved copy lost its plots"

        # the switch: one line, then a restart and Run All on the learner's code
        page.evaluate(SWITCH, ['IMPL = "solutions"', 'IMPL = "exercises"'])
        seen = run_all(page)
        banner = page.locator(".course-banner")
        banner.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.screenshot(path=artifacts / f"exercises-{number}.png")
        passed, failed, first = tests[number]
        assert failed, f"chapter {number}'s exercise was meant to fail some tests: {tests[number]}"
        assert seen["banner"]["kind"] == "course-banner-failing", seen["banner"]
        assert f"passes {passed} of {passed + failed} tests" in seen["banner"]["text"], (seen["banner"], tests[number])
        assert f"fails {failed}" in seen["banner"]["text"] and f"tests/ch{number}_" in seen["banner"]["text"]
        if passed:  # chapter 01: the bug runs to the end, every figure drawn, the banner the only sign
            assert seen["errors"] == [] and seen["images"] == committed, (seen["images"], seen["errors"])
            assert images(saved(page, lab, name)) == committed
        else:  # chapter 09: the stub stops the run, with the one-line error naming the file to write
            assert len(seen["errors"]) == 1 and f"exercises/ch{number}_" in seen["errors"][0], seen["errors"]
    finally:
        page.close()
