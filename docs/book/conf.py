"""make book: the course as a static site, built by Sphinx with MyST-NB from the committed notebooks and the
Markdown pages, never re-executed (the outputs as committed, plots included). The source folder is the
repository; this folder holds only the settings. The README is the first page: its symptom map is the
site's first screen, and the chapters and pages are listed in order in the sidebar (added to the README's
text here, at build time, so the file on GitHub shows no directive)."""

import json
import re
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[2]

project = "Context engineering for long-horizon agents"
author = "the course's authors"
root_doc = "README"
include_patterns = ["README.md", "chapters/*.ipynb", "docs/*.md", "docs/*.png"]
exclude_patterns = ["_build", ".venv", ".book", "workbook", "docs/book"]
extensions = ["myst_nb"]

nb_execution_mode = "off"  # the committed outputs, as nbval checks them
nb_output_stderr = "show"
myst_heading_anchors = 3  # [text](page.md#a-heading) as on GitHub
myst_enable_extensions = []  # no dollarmath: a $ is a price here, never maths
suppress_warnings = ["myst.header"]  # a notebook's or page's first heading below h1 (none today) is its own matter

html_theme = "sphinx_book_theme"
html_title = "Context engineering for long-horizon agents"
# No right-hand contents column: a chapter's outputs are printed 100 characters wide (WIDTH), and at 1,366 px
# the two sidebars left them 757 px of the 959 they need. The open page's sections are listed in the left one.
html_theme_options = {"secondary_sidebar_items": [], "show_toc_level": 2,
                      "use_download_button": False, "use_fullscreen_button": False}
html_sidebars = {"**": ["navbar-logo.html", "search-button-field.html", "sbt-sidebar-nav.html", "page-toc.html"]}
html_static_path = ["_static"]
html_css_files = ["book.css"]
html_copy_source = False
html_show_sourcelink = False

CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
# docs/ in the order the README links its pages
PAGES = list(dict.fromkeys(re.findall(r"\]\(docs/([\w-]+)\.md", (ROOT / "README.md").read_text())))


def _add_tables_of_contents(app, docname, source):
    if docname == "README":
        source[0] += ("\n\n```{toctree}\n:hidden:\n:caption: Chapters\n\n" + "\n".join(f"chapters/{c}" for c in CHAPTERS)
                      + "\n```\n\n```{toctree}\n:hidden:\n:caption: Beyond the course\n\n"
                      + "\n".join(f"docs/{p}" for p in PAGES) + "\n```\n")


def _index_is_the_readme(app, exception):
    """A static host serves index.html for the site's address: it sends the reader to the first page."""
    if exception is None and app.builder.format == "html":
        (Path(app.outdir) / "index.html").write_text(
            '<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=README.html">'
            '<title>Context engineering for long-horizon agents</title><a href="README.html">The course</a>\n')


def _heading(source: str) -> str | None:
    found = re.search(r"^#+ (.+)$", source, re.M)
    return found.group(1).strip() if found else None


def _describe_plots(app, doctree):
    """A notebook's plot gets alt text saying what it shows (its panels' titles, its chapter and section),
    where the builder wrote its hashed file name, and a width, so that Sphinx links it to the full-size
    image (html_scaled_image_link): on a phone a four-panel figure shrinks, and is read by opening it."""
    docname = app.env.docname
    if not docname.startswith("chapters/"):
        return
    cells = json.loads((ROOT / f"{docname}.ipynb").read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells]
    chapter = _heading(sources[0]) or docname
    for image in list(doctree.findall(nodes.image)):
        cell = image.parent
        while cell is not None and cell.get("nb_element") != "cell_code":
            cell = cell.parent
        if cell is None:
            continue
        index = cell["cell_index"]
        section = next((h for h in map(_heading, (sources[k] for k in range(index, -1, -1) if cells[k]["cell_type"] == "markdown"))
                        if h), chapter)
        # the panels' titles as the code writes them, up to any {placeholder} the run fills in
        titles = [t.split("{")[0].replace("\\n", " ").strip(" ,:(") for t in
                  re.findall(r'(?:set_title|suptitle)\(\s*f?"([^"]*)"', sources[index])]
        titles = [t for t in titles if t]
        image["alt"] = f"Plot: {'; '.join(titles) if titles else section} ({chapter}, section {section})"
        image["width"] = "100%"


def _mark_the_symptom_map(app, doctree):
    """The README's table whose last column is "go to" gets a class: on a narrow screen its rows stack
    (book.css), so the column that says where to go is never off the screen."""
    for table in doctree.findall(nodes.table):
        head = next(iter(table.findall(nodes.thead)), None)
        entries = list(head.findall(nodes.entry)) if head is not None else []
        if entries and entries[-1].astext().strip() == "go to":
            table["classes"].append("symptom-map")


def setup(app):
    app.connect("source-read", _add_tables_of_contents)
    app.connect("doctree-read", _describe_plots)
    app.connect("doctree-read", _mark_the_symptom_map)
    app.connect("build-finished", _index_is_the_readme)
