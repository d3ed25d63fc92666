"""benchmarks/prose_stats.py counts prose as issue 54 defines it: prose paragraphs only (headings, table
rows and code left out), a list item a sentence, sentences split at . ! ? before a space and a capital
or a digit, the main path ending at "Going further"."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from tests.docs.pages import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import prose_stats  # noqa: E402


def notebook(tmp_path, *cells):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c[5:]) if c.startswith("code:") else
                                         nbformat.v4.new_markdown_cell(c) for c in cells])
    path = tmp_path / "07_sample.ipynb"
    nbformat.write(nb, path)
    return path


def test_it_counts_prose_paragraphs_sentences_and_cells_as_the_issue_defines_them(tmp_path):
    path = notebook(
        tmp_path,
        "# A heading of six words here\n\n"
        "One two three four. Five six seven eight nine ten? 2 is a digit, e.g. this is one sentence.\n"
        "A wrapped line joins the paragraph.\n\n"
        "| a table | row |\n|---|---|\n| never | counted |\n\n"
        "```python\nprint('code is left out')\n```\n",
        "code:print('a code cell is not prose either')",
        "- a list item, no stop\n- another [linked](https://example.org) `item` here\n\n<details><summary>Answers</summary>\n\n"
        "Sonnet 5.5 costs $1,200.50 today. It ends.\n\n</details>",
        "## Going further\n\nThree more words.",
    )
    got = prose_stats.chapter_prose(path)
    # cell 1: 4 + 6 + 9 + 6 = 25 words in four sentences ("e.g. this": no capital after the point, no split;
    # "? 2": a digit after it, a split; the wrapped line a sentence of its own)
    # cell 3: 5 + 4 (the link's text and the code span count) + 5 ("5.5" and "$1,200.50" one word each) + 2
    # = 16 words in four sentences, the fold's label left out
    # cell 4: after the heading: 3 words, off the main path
    assert (got.main_words, got.all_words, got.sentences) == (41, 44, 9)
    assert got.sentence_longest == 9 and got.largest_cell == 25
    assert round(got.sentence_mean, 3) == round(44 / 9, 3)


def test_a_going_further_heading_inside_a_cell_splits_that_cell(tmp_path):
    got = prose_stats.chapter_prose(notebook(tmp_path, "One two three.\n\n### Going further\n\nFour five."))
    assert (got.main_words, got.all_words, got.sentences) == (3, 5, 2)


def test_the_script_prints_a_row_per_chapter_and_the_targets_beside_them():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "prose_stats.py")], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    rows = [line.split("|")[1].strip() for line in run.stdout.splitlines() if line.startswith("| ")][1:]
    assert rows == [p.name[:2] for p in sorted((ROOT / "chapters").glob("*.ipynb"))] + ["target"]
    assert "at most 1,200" in run.stdout and "at most 22" in run.stdout and "at most 60" in run.stdout
    now = prose_stats.chapter_prose(sorted((ROOT / "chapters").glob("09_*.ipynb"))[0])
    was = prose_stats.before()["09"]
    assert f"| 09 | {was.main_words:,} → {now.main_words:,}" in run.stdout  # before → now, each figure


def test_the_before_figures_are_the_chapters_as_they_stood_before_the_rewrite():
    """prose_before.json is counted, not typed: the notebooks at BEFORE, from the git history."""
    if subprocess.run(["git", "cat-file", "-e", prose_stats.BEFORE], cwd=ROOT, capture_output=True).returncode:
        pytest.skip(f"no git history with {prose_stats.BEFORE} (a shallow clone)")
    assert prose_stats.counted_at(prose_stats.BEFORE) == prose_stats.before()


def test_every_chapter_is_within_the_issues_targets():
    """Issue 54's reading load, asserted now that the chapters are rewritten: a main path of at most
    1,200 words, sentences of 22 words on average and none over 60, no Markdown cell over 250."""
    over = {}
    for notebook in sorted((ROOT / "chapters").glob("*.ipynb")):
        got = prose_stats.chapter_prose(notebook)
        over.update({f"{got.chapter} {key}": getattr(got, key) for key, target in prose_stats.TARGETS.items()
                     if getattr(got, key) > target})
    assert over == {}
