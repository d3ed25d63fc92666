"""What the README and the pages under docs/ are made of, read the way GitHub and the site read them:
their links, their headings' anchors, their words. Shared by this folder's tests and tests/ui's site test."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    """The README and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def words(text: str) -> int:
    """Words as `wc -w` counts them: what the README's limit is in."""
    return len(text.split())


def outside_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def markdown(path: Path) -> str:
    """A Markdown file's text, or a notebook's Markdown cells."""
    if path.suffix == ".ipynb":
        return "\n\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")
    return path.read_text()


def links(path: Path) -> list[str]:
    """Every link and image target of a Markdown file or a notebook's Markdown, outside code blocks."""
    return [a or b for a, b in LINK.findall(outside_code(markdown(path)))]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it (and the site, with myst_heading_anchors): lower case, spaces
    to hyphens, everything but letters, digits, hyphens and underscores dropped."""
    text = re.sub(r"[`*]", "", heading.strip().lstrip("#").strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file or of a notebook's Markdown cells."""
    return [line for line in outside_code(markdown(path)).splitlines() if re.match(r"#{1,6} ", line)]


def broken_links(path: Path) -> list[str]:
    """The relative links of a page that name no file, or an anchor no heading of that file has."""
    broken = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: outside the repository
            continue
        where, _, anchor = target.partition("#")
        file = (path.parent / where).resolve() if where else path
        if not file.exists():
            broken.append(f"{path.name}: {target}: no such file")
        elif anchor and anchor not in {slug(h) for h in headings(file)}:
            broken.append(f"{path.name}: {target}: no heading with that anchor")
    return broken
