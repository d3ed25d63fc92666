"""The README's symptom map (issue 54) quotes what serve, its page, replay and the chapters print. Each
quoted phrase must still occur in the code (the runtime's modules and the page's script) or in a
committed notebook output, and each entry must point at a chapter section that exists, so the map
cannot go stale when a message is reworded or a section renamed."""

from __future__ import annotations

import json
import re

from tests.docs.pages import ROOT, broken_links, links

# a placeholder in a quote (N, M) stands for a number as printed or an f-string field as written
PLACEHOLDER = r"(?:\{[^{}]*\}|[\d,.]+)"


def symptom_rows() -> list[list[str]]:
    """The map's rows as their three cells: when you see, it usually means, go to."""
    section = (ROOT / "README.md").read_text().split("## When you see ... go to ...", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines() if line.startswith("|")]
    return [r for r in rows[2:]]  # the header and its rule left out


def quotes(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def printed_text() -> str:
    """What can print a phrase: the runtime's source (the page's script included) and every committed output."""
    code = [p.read_text() for p in (ROOT / "minimal_runtime").rglob("*") if p.suffix in (".py", ".js", ".html")]
    outputs = []
    for notebook in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            for out in cell.get("outputs", []):
                outputs.append("".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", "")))
    return "\n".join(code + outputs)


def pattern(quote: str) -> re.Pattern:
    parts = re.split(r"\b[NM]\b", quote)
    return re.compile(PLACEHOLDER.join(re.escape(p) for p in parts))


def test_the_map_has_an_entry_for_every_symptom_the_issue_lists():
    seen = " ".join(r[0] for r in symptom_rows())
    for symptom in ("cache-read share", "edited", "minimum cacheable", "repeats a failed action", "forgets the goal",
                    "warning comes twice", "bound to a different conversation", "fills with tool output",
                    "redoes finished work", "forgets what it learned yesterday"):
        assert symptom in seen, symptom


def test_every_phrase_the_map_quotes_is_still_printed_by_the_code_or_a_notebook():
    text = printed_text()
    missing = [q for row in symptom_rows() for q in quotes(row[0]) if not pattern(q).search(text)]
    assert missing == []


def test_every_entry_points_at_a_chapter_section_that_exists():
    for row in symptom_rows():
        targets = re.findall(r"\]\(([^)]+)\)", row[2])
        assert targets and all(t.startswith("chapters/") and "#" in t for t in targets), row[2]
    assert [b for b in broken_links(ROOT / "README.md") if "chapters/" in b] == []
    assert len(links(ROOT / "README.md")) > len(symptom_rows())


def test_a_reworded_message_fails_the_check(tmp_path):
    """The check itself: a phrase no code prints is found missing, a placeholder matches a field or a figure."""
    text = printed_text()
    assert not pattern("messages.N: edited (and reworded").search(text)
    assert pattern("messages.N: edited (an earlier").search("f\"messages.{i}: edited (an earlier {old.get('role')}")
    assert pattern("prompt N tokens < M").search("prompt 812 tokens < 1,024, the model's minimum")
