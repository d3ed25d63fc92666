"""The course as a website (`make book`, issue 54), every page opened in Chromium in the light and the
dark theme at 1,366 px: nothing rendered as maths and no LaTeX left raw (a $ in prose is a price),
every plot loaded (as many as the notebook committed), no sideways scroll of the page or of a printed
output, and every link inside the
site naming a page and an anchor that exist. Run by `make book-test`, which builds the site first and
names it in BOOK_SITE; skipped without it. Screenshots go to .ui-artifacts/book/."""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ["BOOK_SITE"]).resolve() if os.environ.get("BOOK_SITE") else None
pytestmark = pytest.mark.skipif(SITE is None, reason="make book-test builds the site and names it in BOOK_SITE")
VIEWPORT = {"width": 1366, "height": 900}
THEMES = ("light", "dark")


def content_pages() -> list[str]:
    """The site's pages: the README (its first page), every chapter, every page under docs/."""
    if SITE is None:
        return []
    return ["README.html", *(f"chapters/{p.stem}.html" for p in sorted((ROOT / "chapters").glob("*.ipynb"))),
            *(f"docs/{p.stem}.html" for p in sorted((ROOT / "docs").glob("*.md")))]


def committed_plots(page: str) -> int:
    """How many images the page's source holds: a notebook's image outputs, a Markdown page's images."""
    if page.startswith("chapters/"):
        cells = json.loads((ROOT / page.replace(".html", ".ipynb")).read_text())["cells"]
        return sum("image/png" in out.get("data", {}) for c in cells for out in c.get("outputs", []))
    source = (ROOT / ("README.md" if page == "README.html" else page.replace(".html", ".md"))).read_text()
    return len(re.findall(r"!\[[^\]]*\]\(", source))


@pytest.fixture(scope="module")
def site():
    """The built site on loopback, served as files (what any static host does)."""
    if not (SITE / "README.html").exists():
        pytest.fail(f"no site at {SITE}: run make book")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def shots(artifacts):
    folder = artifacts / "book"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.jpg"):
        old.unlink()
    return folder


# Runs in the page: what the checks need, read from the DOM as rendered.
MEASURE = """() => {
  const article = document.querySelector('article') || document.body;
  const prose = article.cloneNode(true);
  prose.querySelectorAll('pre, code, .cell_output, .output, script, style').forEach(e => e.remove());
  return {
    theme: document.documentElement.dataset.theme,
    maths: [...document.querySelectorAll('mjx-container, .MathJax, .katex, .math')].map(e => e.textContent.slice(0, 80)),
    prose: prose.textContent,
    images: [...article.querySelectorAll('img')].map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
    scrollWidth: document.documentElement.scrollWidth, width: document.documentElement.clientWidth,
    // a printed output wider than its box: the chapters print 100 characters a line, as JupyterLab shows them
    cutOutputs: [...article.querySelectorAll('div.cell_output pre')].filter(p => p.scrollWidth > p.clientWidth + 1)
                  .map(p => p.textContent.slice(0, 60)),
    links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
  };
}"""
LATEX = re.compile(r"\$\$|\\\(|\\\[|\\(?:frac|text|mathrm|times|cdot|sum|approx|le|ge)\b")
RAW_DOLLAR = re.compile(r"\$(?![\d.])")  # a $ in prose that does not start an amount: maths left raw


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("page", content_pages())
def test_every_page_reads_in_both_themes_without_maths_sideways_scroll_or_a_missing_plot(browser, site, shots, page, theme):
    context = browser.new_context(viewport=VIEWPORT, color_scheme=theme)
    context.add_init_script(f"localStorage.setItem('mode', '{theme}'); localStorage.setItem('theme', '{theme}');")
    tab = context.new_page()
    try:
        tab.goto(urljoin(site, page), wait_until="load")
        tab.wait_for_function("() => [...document.images].every(i => i.complete)")
        seen = tab.evaluate(MEASURE)
        # JPEG: a chapter's page is 10,000 to 16,000 px tall, and PNG took twice as long to write
        tab.screenshot(path=str(shots / f"{page.replace('/', '_').removesuffix('.html')}-{theme}.jpg"), full_page=True,
                       type="jpeg", quality=70)
    finally:
        context.close()
    assert seen["theme"] == theme
    assert seen["maths"] == [], f"{page}: rendered as maths: {seen['maths'][:3]}"
    assert not LATEX.findall(seen["prose"]), f"{page}: LaTeX left raw: {LATEX.findall(seen['prose'])[:3]}"
    raw = [seen["prose"][max(0, m.start() - 30):m.end() + 30] for m in RAW_DOLLAR.finditer(seen["prose"])]
    assert raw == [], f"{page}: a $ that is no amount: {raw[:3]}"
    assert [i["src"] for i in seen["images"] if not i["ok"]] == []
    assert len(seen["images"]) == committed_plots(page), f"{page}: {len(seen['images'])} images shown"
    assert seen["scrollWidth"] <= seen["width"], f"{page}: {seen['scrollWidth']} px wide in a {seen['width']} px window"
    assert seen["cutOutputs"] == [], f"{page}: outputs wider than the page shows: {seen['cutOutputs'][:3]}"


@pytest.mark.parametrize("page", content_pages())
def test_every_link_inside_the_site_names_a_page_and_an_anchor_that_exist(browser, site, page):
    tab = browser.new_page(viewport=VIEWPORT)
    try:
        tab.goto(urljoin(site, page), wait_until="load")
        hrefs = tab.evaluate(MEASURE)["links"]
    finally:
        tab.close()
    broken = []
    for href in hrefs:
        url = urlsplit(urljoin(urljoin(site, page), href))
        if f"{url.scheme}://{url.netloc}/" != site:
            continue  # outside the site
        target = SITE / unquote(url.path).lstrip("/")
        target = target / "index.html" if target.is_dir() else target
        if not target.is_file():
            broken.append(f"{href}: no such page")
        elif url.fragment and target.suffix == ".html" and f'id="{url.fragment}"' not in target.read_text():
            broken.append(f"{href}: no such anchor")
    assert broken == [], f"{page}: {broken}"


def test_the_sites_address_opens_the_first_page_and_its_symptom_map_with_the_chapters_in_order(browser, site):
    tab = browser.new_page(viewport=VIEWPORT)
    try:
        tab.goto(site, wait_until="load")
        tab.wait_for_url("**/README.html")
        headings = tab.locator("article h2").all_inner_texts()
        listed = tab.locator(".bd-sidenav a").all_inner_texts()
    finally:
        tab.close()
    assert any(h.startswith("When you see") for h in headings), headings
    numbers = [n[len("Chapter "):][:2] for n in listed if n.startswith("Chapter ")]
    assert numbers == sorted(numbers) and len(numbers) >= 10, listed


PHONE = {"width": 390, "height": 844}
ON_A_PHONE = """() => {
  const map = [...document.querySelectorAll('article table')].find(t => [...t.querySelectorAll('thead th')].pop()?.innerText.trim() === 'go to');
  const goTo = map ? [...map.querySelectorAll('tbody tr')].map(tr => [...tr.querySelectorAll('td')].pop())
                         .map(td => ({text: td.innerText.slice(0, 40), right: Math.round(td.getBoundingClientRect().right)})) : null;
  const plots = [...document.querySelectorAll('article div.cell_output img')].map(i => ({
    alt: i.getAttribute('alt'), link: i.closest('a')?.getAttribute('href') || null, src: i.getAttribute('src')}));
  return {goTo, plots, width: document.documentElement.clientWidth};
}"""


@pytest.mark.parametrize("page", ["README.html", "chapters/01_ephemeral_queue.html", "chapters/05_budget.html"])
def test_on_a_phone_the_symptom_map_says_where_to_go_and_every_plot_says_what_it_is_and_opens_full_size(browser, site,
                                                                                                        shots, page):
    """At 390 px the symptom map's "go to" column was off the screen, a four-panel figure shrank to unreadable
    and was no link, and a plot's alt text was its hashed file name."""
    tab = browser.new_page(viewport=PHONE)
    try:
        tab.goto(urljoin(site, page), wait_until="load")
        seen = tab.evaluate(ON_A_PHONE)
        tab.screenshot(path=str(shots / f"phone-{page.replace('/', '_').removesuffix('.html')}.jpg"), type="jpeg", quality=70)
    finally:
        tab.close()
    if page == "README.html":
        assert seen["goTo"], "no symptom map on the first page"
        off = [g for g in seen["goTo"] if g["right"] > seen["width"]]
        assert off == [], f"'go to' cells past the {seen['width']} px screen: {off[:3]}"
        return
    assert len(seen["plots"]) == committed_plots(page) >= 1
    for plot in seen["plots"]:
        assert plot["alt"] and not plot["alt"].endswith(".png") and plot["alt"].startswith("Plot: "), plot
        assert plot["link"] and plot["link"].endswith(plot["src"].rsplit("/", 1)[-1]), f"not a link to the full image: {plot}"
