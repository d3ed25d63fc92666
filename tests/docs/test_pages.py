"""The README fits a screen or two and sends everything else to a page of its own under docs/ (issue 54):
every page is linked from it, every link of every page resolves, and no page repeats another's lines."""

from __future__ import annotations

from collections import Counter

from tests.docs.pages import ROOT, broken_links, links, pages, words

LIMIT = 1500


def test_the_readme_is_at_most_1500_words():
    assert words((ROOT / "README.md").read_text()) <= LIMIT


def test_every_page_under_docs_is_linked_from_the_readme():
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(ROOT / "README.md")}
    assert [p.name for p in pages()[1:] if p.resolve() not in linked] == []


def test_every_link_of_the_readme_and_the_pages_resolves_to_a_file_and_a_heading():
    assert [b for page in pages() for b in broken_links(page)] == []


def test_every_link_in_a_chapters_markdown_resolves_to_a_file_and_a_heading():
    """What make book's -W would refuse, found by make test: a chapter linking a section renamed since."""
    assert [b for nb in sorted((ROOT / "chapters").glob("*.ipynb")) for b in broken_links(nb)] == []


def test_no_line_of_prose_is_repeated_across_the_readme_and_its_pages():
    """Nothing repeated: the split moved each section to one place. Short lines (a fence, a table rule,
    the pages' one line back to the README) are left out."""
    seen = Counter(line for page in pages() for line in set(page.read_text().splitlines())
                   if len(line) > 60 and not line.startswith("Part of [the course"))
    assert [line for line, n in seen.items() if n > 1] == []
