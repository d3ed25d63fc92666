"""A figure a chapter reads from a kept file is the benchmark's own output: chapter 09's 500-page
table (``benchmarks/compaction_long.json``, written by ``benchmarks/compaction_long.py``, which
``make bench`` runs), chapter 11's sessions table (``benchmarks/sessions.json``, by ``benchmarks/sessions.py``)
and chapters 04, 05, 07 and 08's held-out seeds (``benchmarks/held_out.json``, by ``benchmarks/held_out.py``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def benchmark(name: str = "compaction_long"):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shape(data: dict) -> dict:
    """The file's keys at every level, without its figures."""
    return {"top": sorted(data), "rows": list(data["rows"]), "paired": list(data["paired"]),
            "columns": sorted({tuple(sorted(row)) for row in [*data["rows"].values(), *data["paired"].values()]})}


def test_the_kept_500_page_table_is_what_the_benchmark_writes():
    bench = benchmark()
    assert bench.KEPT.is_file(), f"{bench.KEPT.name} is missing: run `.venv/bin/python benchmarks/compaction_long.py` (make bench)"
    kept = bench.KEPT.read_text()
    data = json.loads(kept)
    assert kept == bench.text(data), f"{bench.KEPT.name} is not as the benchmark writes it (edited by hand?): rerun make bench"
    assert (data["pages"], data["limit"]) == (bench.PAGES, bench.LIMIT), "the kept run's length or limit is not the benchmark's"
    short = bench.measure(pages=6)  # the benchmark's own code, at a length make test affords
    assert shape(short) == shape(data), \
        f"the benchmark now writes other rows or columns than {bench.KEPT.name} holds: rerun make bench"


@pytest.mark.slow
def test_a_rerun_of_the_benchmark_writes_the_kept_figures():
    """Minutes: the whole 500-page benchmark again (``-m slow``). No rule in it draws a coin."""
    bench = benchmark()
    assert bench.measure() == json.loads(bench.KEPT.read_text()), "the runtime or the emulator moved the 500-page figures: rerun make bench"


def test_the_kept_sessions_table_is_what_the_benchmark_writes():
    bench = benchmark("sessions")
    assert bench.KEPT.is_file(), f"{bench.KEPT.name} is missing: run `.venv/bin/python benchmarks/sessions.py`"
    kept = bench.KEPT.read_text()
    data = json.loads(kept)
    assert kept == bench.text(data), f"{bench.KEPT.name} is not as the benchmark writes it (edited by hand?): rerun it"
    assert (data["pages"], data["sizes"]) == (bench.PAGES, bench.SIZES), "the kept run's length or sessions are not the benchmark's"
    short = bench.measure(pages=10, sizes=[12, 20])  # the benchmark's own code, at a length make test affords
    strategies = [r["strategy"].replace("12", "N").replace("20", "M") for r in short["rows"]]
    assert strategies == [r["strategy"].replace("40", "N").replace("80", "M") for r in data["rows"]], \
        f"the benchmark now writes other rows than {bench.KEPT.name} holds: rerun it"
    assert sorted(short) == sorted(data) and {tuple(sorted(r)) for r in short["rows"]} == {tuple(sorted(r)) for r in data["rows"]}, \
        f"the benchmark now writes other columns than {bench.KEPT.name} holds: rerun it"
    assert all(r["sessions"] > 1 for r in short["rows"][1:]), "at the small size each session strategy still hands off"


CODE_WIDTH = 118  # characters: what JupyterLab 1,366 px wide with its file browser open shows of a code line


def test_no_notebook_code_line_is_wider_than_jupyterlab_shows():
    """A code line past the width scrolls sideways in JupyterLab (printed output has its own test, at 110)."""
    wide = [f"{notebook.name} cell {n}: {len(line)} characters: {line.strip()[:50]!r}..."
            for notebook in sorted((ROOT / "chapters").glob("*.ipynb"))
            for n, cell in enumerate(json.loads(notebook.read_text())["cells"]) if cell["cell_type"] == "code"
            for line in "".join(cell["source"]).splitlines() if len(line) > CODE_WIDTH]
    assert wide == [], f"{len(wide)} code lines over {CODE_WIDTH} characters:\n" + "\n".join(wide)


def test_chapter_07s_lint_before_this_round_is_what_its_script_measures():
    """The table's 'before' column: the lint at the commit before issue 61, run again from git."""
    spec = importlib.util.spec_from_file_location("lint_before", ROOT / "benchmarks" / "lint_before.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    kept = bench.KEPT.read_text()
    assert kept == bench.text(json.loads(kept)), "lint_before.json is not as the script writes it: rerun it"
    import subprocess
    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", bench.BEFORE], capture_output=True).returncode:
        pytest.skip(f"no git history with {bench.BEFORE} here: the kept figures stand")
    assert bench.measure() == json.loads(kept)


def test_the_kept_held_out_figures_are_what_the_benchmark_writes():
    """Chapters 04, 05, 07 and 08 read their held-out seeds' figures from ``benchmarks/held_out.json``."""
    bench = benchmark("held_out")
    kept = bench.KEPT.read_text()
    data = json.loads(kept)
    assert kept == bench.text(data), f"{bench.KEPT.name} is not as the benchmark writes it (edited by hand?): rerun it"
    assert data["seeds"] == [5, 6, 7, 8, 9]
    assert sorted({label[:2] for label in data["figures"]}) == [c[:2] for c in bench.CHAPTERS]
    for chapter in bench.CHAPTERS:
        cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
        assert any("held_out(" in "".join(c["source"]) for c in cells if c["cell_type"] == "code"), chapter


def test_a_chapter_reads_the_kept_figures_and_the_benchmark_records_what_the_chapter_measures(tmp_path, monkeypatch):
    from minimal_runtime.example.held_out import KEPT, held_out

    def never():
        raise AssertionError("make test measured a figure the kept file holds")

    monkeypatch.delenv("HELD_OUT_RUN", raising=False)
    kept = json.loads(KEPT.read_text())["figures"]
    assert held_out("05 figures lost", never) == kept["05 figures lost"]
    assert held_out("a length set by hand", lambda: {0.5: (1, 2)}) == {"0.5": [1, 2]}  # not kept: measured
    record = tmp_path / "record.json"
    monkeypatch.setenv("HELD_OUT_RUN", str(record))  # as benchmarks/held_out.py runs a chapter
    assert held_out("05 figures lost", lambda: [[0.5, [3]]]) == [[0.5, [3]]]
    assert held_out("07 with the KM", lambda: [(6, 0.43)]) == [[6, 0.43]]
    assert json.loads(record.read_text()) == {"05 figures lost": [[0.5, [3]]], "07 with the KM": [[6, 0.43]]}


@pytest.mark.slow
def test_a_rerun_of_the_held_out_seeds_writes_the_kept_figures():
    """Minutes: chapters 04, 05, 07 and 08 executed whole, measuring their held-out seeds (``-m slow``, in .ci/run)."""
    bench = benchmark("held_out")
    assert bench.measure() == json.loads(bench.KEPT.read_text())["figures"], \
        "the runtime or the emulator moved the held-out figures: rerun .venv/bin/python benchmarks/held_out.py"
