"""How much a learner reads in each chapter, counted as issue 54 defines it:

    python benchmarks/prose_stats.py            # every chapter
    python benchmarks/prose_stats.py 01 09      # some

Counted in prose paragraphs only: headings, table rows, code (code cells, fenced blocks) and HTML tags
and the label of a fold (``<summary>``) are left out; a link counts its text, an inline code span its words. A sentence ends at ``.``, ``!`` or
``?`` followed by a space and a capital or a digit, and at the end of a paragraph or a list item (a
list item is a sentence, split further by the same rule). A word is a run of letters or digits, with
the apostrophes, hyphens, points and commas inside it (``don't``, ``5.5``, ``1,200``: one word each).

*main path*: the prose before the notebook's first "Going further" heading (all of it where there is
none); *in all*: every Markdown cell. The sentence figures and the largest cell are over the whole
notebook. Each figure is printed beside the same figure before the rewrite (``prose_before.json``:
the chapters at commit ``BEFORE``, the last one before issue 54's rewrite began) and the issue's target
(a figure over its target is starred; ``tests/docs/test_prose_stats.py`` fails on one).

    python benchmarks/prose_stats.py --before   # recount the chapters at BEFORE from git (rewrites the file)
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"main_words": 1200, "sentence_mean": 22, "sentence_longest": 60, "largest_cell": 250}  # issue 54
WORD = re.compile(r"[A-Za-z0-9](?:[\w'’]|[.,-](?=\w))*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
BEFORE = "8db30ef"  # main before the chapters were rewritten to one idea each
BEFORE_FILE = ROOT / "benchmarks" / "prose_before.json"
GOING_FURTHER = re.compile(r"^#{1,6}\s+Going further", re.I | re.M)


class ChapterProse(BaseModel):
    chapter: str
    main_words: int
    all_words: int
    sentences: int
    sentence_mean: float
    sentence_longest: int
    largest_cell: int


def words(text: str) -> int:
    return len(WORD.findall(text))


def _plain(line: str) -> str:
    """A line of prose without its markup: links to their text, images, tags and emphasis dropped."""
    line = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", line)
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"<[^>]+>", " ", line)
    return re.sub(r"[`*]", "", line)


def paragraphs(markdown: str) -> list[str]:
    """The prose units of a Markdown cell: each paragraph and each list item, as one line of plain text."""
    markdown = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", markdown, flags=re.S | re.M)  # fenced code
    markdown = re.sub(r"<summary>.*?</summary>", " ", markdown, flags=re.S)  # a fold's label is a heading
    units, current = [], []

    def close() -> None:
        if current:
            units.append(" ".join(current))
            current.clear()

    for raw in markdown.splitlines():
        line = re.sub(r"^\s*>\s?", "", raw)  # a quote's text is prose
        if not line.strip() or line.lstrip().startswith(("#", "|")) or re.fullmatch(r"\s*(<[^>]+>\s*)+", line):
            close()  # a blank line, a heading, a table row or a line of tags alone ends a paragraph
            continue
        if LIST_ITEM.match(line):
            close()
            line = LIST_ITEM.sub("", line)
        current.append(_plain(line).strip())
    close()
    return [u for u in units if words(u)]


def sentences(unit: str) -> list[int]:
    """The words of each sentence of a paragraph or list item."""
    return [n for n in (words(s) for s in SENTENCE_END.split(unit)) if n]


def chapter_prose(path: Path, text: str | None = None) -> ChapterProse:
    """The figures of one notebook (``text``: its contents, where they are not the file's)."""
    notebook = nbformat.read(io.StringIO(text) if text is not None else path, as_version=4)
    cells = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    main, lengths, cell_words, on_main = 0, [], [], True
    for source in cells:
        if on_main and (hit := GOING_FURTHER.search(source)):
            main += sum(words(u) for u in paragraphs(source[:hit.start()]))
            on_main = False
        units = paragraphs(source)
        counted = sum(words(u) for u in units)
        main += counted if on_main else 0
        cell_words.append(counted)
        lengths += [n for u in units for n in sentences(u)]
    return ChapterProse(chapter=path.name[:2], main_words=main, all_words=sum(cell_words), sentences=len(lengths),
                        sentence_mean=sum(lengths) / max(1, len(lengths)), sentence_longest=max(lengths, default=0),
                        largest_cell=max(cell_words, default=0))


def table(rows: list[ChapterProse], before: dict[str, ChapterProse]) -> str:
    def cell(r: ChapterProse, key: str, fmt: str = ",") -> str:
        now = f"{getattr(r, key):{fmt}}" + ("*" if key in TARGETS and getattr(r, key) > TARGETS[key] else "")
        old = before.get(r.chapter)
        return f"{getattr(old, key):{fmt}} → {now}" if old else now
    keys = [("main_words", ","), ("all_words", ","), ("sentences", ","), ("sentence_mean", ".1f"),
            ("sentence_longest", ","), ("largest_cell", ",")]
    lines = ["| # | main path (words) | in all (words) | sentences | mean (words) | longest (words) | largest cell (words) |",
             "|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join([r.chapter, *(cell(r, k, f) for k, f in keys)]) + " |" for r in rows]
    t = TARGETS
    lines.append(f"| target | at most {t['main_words']:,} | | | at most {t['sentence_mean']} | at most {t['sentence_longest']} | "
                 f"at most {t['largest_cell']} |")
    return "\n".join(lines) + f"\n(before → now; before: the chapters at {BEFORE}; * over the issue's target)"


def counted_at(commit: str) -> dict[str, ChapterProse]:
    """Every chapter's figures as the notebooks stood at ``commit`` (needs the git history)."""
    names = subprocess.run(["git", "ls-tree", "--name-only", commit, "chapters/"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    return {Path(n).name[:2]: chapter_prose(Path(n), subprocess.run(["git", "show", f"{commit}:{n}"], cwd=ROOT,
                                                                     capture_output=True, text=True, check=True).stdout)
            for n in names if n.endswith(".ipynb")}


def before() -> dict[str, ChapterProse]:
    return {k: ChapterProse(**v) for k, v in json.loads(BEFORE_FILE.read_text()).items()}


def main(wanted: list[str]) -> None:
    if wanted == ["--before"]:
        BEFORE_FILE.write_text(json.dumps({k: r.model_dump() for k, r in counted_at(BEFORE).items()}, indent=1) + "\n")
        return
    notebooks = sorted((ROOT / "chapters").glob("*.ipynb"))
    print(table([chapter_prose(p) for p in notebooks if not wanted or p.name[:2] in wanted], before()))


if __name__ == "__main__":
    main(sys.argv[1:])
