"""The learner's path: a solved exercise does not break `make test`, an unfinished stub says so."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minimal_runtime.core.hooks import HookRegistry, Point
from tests.support import TASK, course_module, pricing_agent

ROOT = Path(__file__).resolve().parents[2]




def working_copy(tmp_path: Path) -> Path:
    """The project as a learner has it: its files and its git history, without .venv or .interop."""
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import copy_own_files

    project = tmp_path / "project"
    # a clone, not a copy of .git: in a worktree, .git is a file that points into another checkout's repository
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(project)], check=True, capture_output=True)
    copy_own_files(project)
    return project


def test_an_unfinished_stub_in_a_hook_stops_the_run_and_names_itself(tmp_path):
    import exercises  # noqa: F401  (the course's own setting: a stub's NotImplementedError stops the run)
    hooks = HookRegistry()

    def stub(event):
        raise NotImplementedError("ch05: BudgetMonitor.warn")
    hooks.register(Point.PRE_LLM_CALL, stub)
    agent, _, _ = pricing_agent(tmp_path, hooks=hooks)
    with pytest.raises(NotImplementedError, match="ch05: BudgetMonitor.warn"):
        agent.run(TASK)
    assert hooks.failures == []  # not isolated, not logged as a skipped note


def test_a_notebooks_scratch_folders_are_gone_when_its_kernel_exits(tmp_path):
    script = ("import tempfile; from minimal_runtime.example import scratch_dir, pricing_agent, TASK\n"
              "for _ in range(3):\n"
              "    agent, _, _ = pricing_agent(scratch_dir()); agent.run(TASK)\n"
              "print(scratch_dir().parent)\n")
    env = {**__import__("os").environ, "TMPDIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    parent = Path(run.stdout.strip().splitlines()[-1])
    assert parent.parent == tmp_path and not parent.exists()
    assert list(tmp_path.iterdir()) == []


def test_make_test_fails_on_a_notebook_whose_committed_output_is_stale(tmp_path):
    """A cell whose committed output no longer matches what it prints fails the notebook check,
    marked or not; only a cell marked NBVAL_IGNORE_OUTPUT (wall-clock timings) is exempt, and
    where the project and temporary folders live is sanitized."""
    import nbformat
    flags = [f.replace("=", f"={ROOT}/") if "=" in f else f for f in course_module().NBVAL]  # as make test checks them

    def cell(source: str, committed: str):
        return nbformat.v4.new_code_cell(source, execution_count=1, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text=committed)])
    cells = [cell("print(1 + 1)", "2\n"),                                   # fresh
             cell("print(1 + 1)", "3\n"),                                   # stale
             cell("# NBVAL_IGNORE_OUTPUT\nprint(1 + 1)", "3\n"),           # a timing
             cell("import os, tempfile; d = tempfile.mkdtemp(dir='/tmp'); os.rmdir(d); print(d)",
                  "/tmp/tmp_on_another_day\n")]  # a temporary folder differs from run to run: sanitized
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "lesson.ipynb")  # one notebook: one kernel
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *flags, str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "1 failed, 3 passed" in run.stdout, run.stdout[-2000:]
    assert "lesson.ipynb::Cell 1" in run.stdout


def readme_table_mismatches(root: Path = ROOT, tests=None) -> list[str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import chapter_times

    rows = {}
    for line in (root / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit() and cells[3].endswith("words"):  # the workshop table
            rows[cells[0]] = (cells[3], cells[4])
    notebooks = sorted((root / "chapters").glob("*.ipynb"))
    if sorted(rows) != [p.name[:2] for p in notebooks]:
        return [f"README rows {sorted(rows)} for notebooks {[p.name for p in notebooks]}"]
    tests = tests or chapter_times.chapter_tests(root)
    counted = {p.name[:2]: (chapter_times.prose_column(p), chapter_times.exercise_size(p.name[:2], tests, root))
               for p in notebooks}
    return [f"README row {n}: {rows[n]} but counted {counted[n]}; run make times" for n in rows if rows[n] != counted[n]]


def test_the_readme_chapter_table_matches_the_notebooks_and_exercises():
    """The prose and exercise columns are counted, not typed: a notebook that grew or an exercise
    that changed makes this fail until `make times` has been run and the table updated."""
    assert readme_table_mismatches() == []


def test_make_progress_times_each_exercise_from_its_first_check(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import timed

    log = tmp_path / ".progress.jsonl"
    assert timed({"ch01": (0, 10), "ch02": (0, 5)}, 1000.0, log) == {}
    assert timed({"ch01": (4, 6), "ch02": (0, 5)}, 1600.0, log) == {}
    said = timed({"ch01": (10, 0), "ch02": (0, 5)}, 2800.0, log)
    assert said == {"ch01": "solved 30 min after your first check"}
    assert timed({"ch01": (10, 0), "ch02": (5, 0)}, 4000.0, log)["ch01"] == said["ch01"]  # the first time it was done


def test_make_progress_says_why_a_chapter_solved_before_its_first_check_has_no_time(tmp_path):
    """The README's first command is pytest, not make progress: a chapter solved before its first
    make progress would otherwise show "done" with an empty time column and no reason."""
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import timed

    said = timed({"ch01": (10, 0), "ch02": (0, 5)}, 1000.0, tmp_path / ".progress.jsonl")
    assert set(said) == {"ch01"} and "no time kept" in said["ch01"] and "make progress" in said["ch01"]


def test_make_progress_skips_a_damaged_log_line_and_says_so(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import timed

    log = tmp_path / ".progress.jsonl"
    timed({"ch01": (0, 10)}, 1000.0, log)
    log.write_text(log.read_text() + '{"at": "x\n[1, 2]\n{"at": 1}\n')
    assert timed({"ch01": (10, 0)}, 1600.0, log) == {"ch01": "solved 10 min after your first check"}
    assert "3 line(s) that are not a check were skipped" in capsys.readouterr().out


@pytest.mark.parametrize("exercises", ["every one solved", "one with a syntax error"])
def test_a_learners_exercises_never_decide_whether_make_test_passes(tmp_path, exercises):
    """What `make test` reads of exercises/ (the stub check, its lint, the README table) is the stubs
    as committed, so a learner's own work there, finished or broken, leaves it green; `make progress`
    is what reads their code. With every exercise solved, this runs make test's whole stub check
    (`make test-stubs`: every test of every chapter suite fails on the stubs as committed)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from chapter_times import chapter_tests
    project = working_copy(tmp_path)
    for solution in (project / "solutions").glob("ch*.py"):
        shutil.copy(solution, project / "exercises" / solution.name)
    if exercises == "one with a syntax error":
        (project / "exercises" / "ch03_hooks.py").write_text("def half_written(:\n    import os\n")
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", *course_module().LINTED], cwd=project,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    check = [sys.executable, "tests/exercise_check.py"]
    suites = [] if exercises == "every one solved" else ["tests/ch01_ephemeral_queue", "tests/ch03_hooks"]
    run = subprocess.run([*check, "stubs", *suites], cwd=project, capture_output=True, text=True)
    checked = len(suites) or len(list(ROOT.glob("tests/ch*/")))
    assert run.returncode == 0 and run.stdout.count("every test fails on the stubs") == checked, run.stdout + run.stderr
    assert "the first says NotImplementedError: ch03: HookRegistry." in run.stdout  # a stub names what to write
    assert "`make progress` checks your code" in run.stdout
    if exercises == "every one solved":
        progress = subprocess.run([*check, "progress", "tests/ch01_ephemeral_queue", "tests/ch03_hooks"], cwd=project,
                                  capture_output=True, text=True).stdout
        for chapter in ("ch01_ephemeral_queue", "ch03_hooks"):
            n = chapter_tests()[chapter[2:4]]
            assert re.search(rf"{chapter} +{n} of {n} +done", progress), progress
    assert readme_table_mismatches(project, tests=chapter_tests()) == []  # tests/ is the same: counted once, here


def test_an_unwritten_stub_stops_a_notebook_with_an_error_naming_its_file_and_the_check(tmp_path):
    """In a notebook, a stub's NotImplementedError is an error output (JupyterLab shows it as one, and
    Run All stops there) of one line: the file to write and the command that checks it."""
    import nbclient
    import nbformat

    stub = tmp_path / "exercises" / "ch02_tail_placement.py"  # a stand-in: the learner's exercises/ is theirs
    stub.parent.mkdir()
    stub.write_text('def tail_layout(parts):\n    raise NotImplementedError("ch02: tail_layout")\n')
    cells = [f"import importlib.util\nfrom solutions import impl\nimpl('ch02_tail_placement')\n"
             f"spec = importlib.util.spec_from_file_location('stub', {str(stub)!r})\n"
             "ch02 = importlib.util.module_from_spec(spec); spec.loader.exec_module(ch02)",
             "ch02.tail_layout(None)", "print('ran on')"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    with pytest.raises(nbclient.exceptions.CellExecutionError):
        nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    stopped, after = notebook.cells[1].outputs, notebook.cells[2].outputs
    assert [o.output_type for o in stopped] == ["error"] and after == [], (stopped, after)
    said = "\n".join(stopped[0].traceback)
    assert len(stopped[0].traceback) == 1 and "tail_layout is not written yet" in said, said
    assert "exercises/ch02_tail_placement.py" in said and "`.venv/bin/pytest tests/ch02_tail_placement --impl exercises`" in said
    assert "\n    `.venv/bin/pytest tests/ch02_tail_placement --impl exercises`\n" in said, \
        f"the command on a line of its own, so the page never wraps inside it: {said!r}"


CONTRACT_CHAPTERS = ["01_ephemeral_queue", "02_tail_placement", "05_budget", "07_knowledge_manager", "08_drift", "09_compaction"]


def test_the_notebooks_contract_cells_never_read_the_learners_exercises(tmp_path):
    """Cell 1 of six notebooks prints the exercise's contract (signatures and docstrings). With every
    solution copied into exercises/ and a docstring edited, those cells still print what is committed:
    the notebook check (nbval, make test's flags) passes on them and the settings cells before them,
    run as one notebook in one kernel."""
    import nbformat

    project = working_copy(tmp_path)
    for solution in (project / "solutions").glob("ch*.py"):
        shutil.copy(solution, project / "exercises" / solution.name)
    mine = project / "exercises" / "ch09_compaction.py"
    mine.write_text(mine.read_text() + '\n\ndef ladder_step(*args, **kwargs):\n    """My own words."""\n    return "wait"\n')
    contracts = [nbformat.read(project / "chapters" / f"{name}.ipynb", as_version=4) for name in CONTRACT_CHAPTERS]
    # each notebook's settings cell (the contract cell may use what it defines), then its contract cell
    cells = [cell for notebook in contracts for cell in [c for c in notebook.cells if c.cell_type == "code"][:2]]
    assert all("committed_stub" in cell.source for cell in cells[1::2])
    for k, cell in enumerate(cells):  # ids are unique within a notebook, not across six
        cell.id = f"contract-{k}"
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata=contracts[0].metadata), project / "chapters" / "contracts.ipynb")
    flags = [f.replace("=", f"={project}/") if "=" in f else f for f in course_module().NBVAL]
    env = {**os.environ, "PYTHONPATH": str(project), "COURSE_IMPL": "solutions"}  # the kernel imports the copy's packages
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          *flags, "chapters/contracts.ipynb"], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert f"{2 * len(CONTRACT_CHAPTERS)} passed" in run.stdout and "failed" not in run.stdout, run.stdout[-4000:]


NOTEBOOK_WIDTH = 110  # characters: JupyterLab 1,366 px wide with its file browser open shows 118 (make ui-test measures it)


def printed_lines(notebook: Path):
    """(code cell, line) for every line a committed output prints as text (HTML and images aside)."""
    import nbformat

    code = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    for n, cell in enumerate(code):
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                text = output.text
            elif output.output_type == "error":
                text = "\n".join(output.traceback)
            elif not {"text/html", "text/markdown", "image/png", "image/svg+xml"} & set(output.get("data", {})):
                text = output.get("data", {}).get("text/plain", "")
            else:
                continue
            yield from ((n, line) for line in text.splitlines())


def test_no_markdown_cell_holds_two_dollar_signs_jupyterlab_would_typeset_as_maths():
    """JupyterLab reads ``$...$`` in Markdown as TeX: "$2.16 with ..., $1.91" becomes italic maths.
    Amounts go in code or in a ``tex2jax_ignore mathjax_ignore`` span (a backslash does not stop it:
    make ui-test saw ``\\$`` typeset too); this is make ui-test's check without a browser."""
    def bare_dollars(source: str) -> int:
        source = re.sub(r"```.*?```|`[^`]*`", "", source, flags=re.S)
        source = re.sub(r'<span class="[^"]*mathjax_ignore[^"]*">.*?</span>', "", source, flags=re.S)
        return source.count("$")
    maths = [f"{notebook.name} cell {n}" for notebook in sorted((ROOT / "chapters").glob("*.ipynb"))
             for n, cell in enumerate(json.loads(notebook.read_text())["cells"])
             if cell["cell_type"] == "markdown" and bare_dollars("".join(cell["source"])) >= 2]
    assert maths == [], "amounts JupyterLab typesets as maths (put them in a mathjax_ignore span):\n" + "\n".join(maths)


def test_no_committed_output_line_is_wider_than_a_notebook():
    """A notebook wraps a longer line mid-word; the course's prints keep to NOTEBOOK_WIDTH characters."""
    wide = [f"{notebook.name} cell {n}: {len(line)} characters: {line[:60]!r}..."
            for notebook in sorted((ROOT / "chapters").glob("*.ipynb")) for n, line in printed_lines(notebook)
            if len(line) > NOTEBOOK_WIDTH]
    assert wide == [], f"{len(wide)} printed lines over {NOTEBOOK_WIDTH} characters:\n" + "\n".join(wide)
