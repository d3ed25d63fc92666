"""Chapters 01, 02 and 09 as a learner sees them: the committed notebooks opened in JupyterLab, in
Chromium, in the light and the dark theme. Measured on the page: no amount rendered as maths, the
CallView's text readable on its rows (WCAG contrast computed from the DOM's colours), its cells
left-aligned, and no printed line wider than the notebook. Screenshots go to .ui-artifacts/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ["01_ephemeral_queue.ipynb", "02_tail_placement.ipynb", "09_compaction.ipynb"]
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
# a common laptop screen; JupyterLab as it opens, its file browser showing
VIEWPORT = {"width": 1366, "height": 768}
AA = 4.5  # WCAG 2's minimum contrast for text

# Runs in the page: every figure the checks need, read from the DOM as rendered.
MEASURE = """() => {
  const notebook = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const rgba = s => { const v = (s.match(/[\\d.]+/g) || [0, 0, 0, 0]).map(Number); return v.length === 3 ? [...v, 1] : v; };
  const blend = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const backdrop = el => {  // the colour under el's text: every background from the root down, composited
    const chain = []; for (let e = el; e; e = e.parentElement) chain.unshift(e);
    return chain.reduce((under, e) => blend(rgba(getComputedStyle(e).backgroundColor), under), [255, 255, 255, 1]);
  };
  const luminance = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                            return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const contrast = (a, b) => { const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x); return (hi + 0.05) / (lo + 0.05); };
  const opacity = el => { let o = 1; for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity); return o; };
  const textContrast = el => { const under = backdrop(el), ink = rgba(getComputedStyle(el).color);
                               return contrast(blend([...ink.slice(0, 3), ink[3] * opacity(el)], under), under); };
  const cellOf = el => { const cell = el.closest('.jp-Cell'); return cell ? [...notebook.querySelectorAll('.jp-Cell')].indexOf(cell) : -1; };

  const maths = [...notebook.querySelectorAll('mjx-container, .MathJax')].map(e => ({cell: cellOf(e), text: e.textContent.slice(0, 80)}));
  const views = [...notebook.querySelectorAll('.jp-OutputArea-output')]  // a CallView: found by what it says
    .filter(o => o.querySelector('table') && o.innerText.includes('= cache breakpoint')).map(o => o.querySelector('div'));
  const callview = views.map(view => ({
    cells: [...view.querySelectorAll('td')].map(td => ({text: td.innerText.slice(0, 60), contrast: textContrast(td),
                                                         align: getComputedStyle(td).textAlign})),
    legend: [...view.querySelectorAll(':scope > span')].map(span => {
      const style = getComputedStyle(span);
      return {text: span.innerText, contrast: textContrast(span), border: parseFloat(style.borderTopWidth),
              edge: contrast(blend(rgba(style.borderTopColor), backdrop(view)), backdrop(view))};
    }),
  }));

  const ruler = document.createElement('span');
  ruler.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
  document.body.appendChild(ruler);
  const wide = [];
  let columns = null, widest = null;
  for (const pre of notebook.querySelectorAll('.jp-RenderedText pre')) {
    const style = getComputedStyle(pre);
    ruler.style.font = style.font;
    const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (columns === null) { ruler.textContent = '0'.repeat(100); columns = Math.floor(room / (ruler.getBoundingClientRect().width / 100)); }
    for (const line of pre.textContent.split('\\n')) {
      ruler.textContent = line;
      const width = ruler.getBoundingClientRect().width;
      const seen = {cell: cellOf(pre), chars: line.length, width: Math.round(width), room: Math.round(room), line: line.slice(0, 100)};
      if (width > room + 0.5) wide.push(seen);
      if (!widest || width > widest.width) widest = seen;
    }
  }
  ruler.remove();
  return {maths, callview, wide, widest, columns, text: notebook.innerText, light: document.body.dataset.jpThemeLight};
}"""


def amounts(notebook: Path) -> set[str]:
    """Every dollar amount the notebook shows in Markdown or in an HTML output, as a reader should read it."""
    cells = json.loads(notebook.read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    sources += ["".join(o["data"]["text/html"]) for c in cells if c["cell_type"] == "code"
                for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    return {f"${m}" for s in sources for m in re.findall(r"(?:\$|&#36;)(\d(?:[\d,.]*\d)?)", s)}


def open_notebook(browser, lab, name: str, theme: str):
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{lab.url}/lab/tree/{name}?reset", timeout=120_000)
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-NotebookPanel .jp-Cell')", timeout=120_000)
    page.evaluate("theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", THEMES[theme])
    page.wait_for_function("light => document.body.dataset.jpThemeLight === light", arg=str(theme == "light").lower(),
                           timeout=60_000)
    # rendering (Markdown, MathJax, the theme's styles) ends when the notebook's text and colours stop changing
    page.wait_for_function("""() => {
        const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
        const now = nb.innerText.length + '|' + getComputedStyle(nb).backgroundColor + '|' + nb.querySelectorAll('mjx-container').length;
        const same = window.__uiLast === now; window.__uiLast = now;
        window.__uiSame = same ? (window.__uiSame || 0) + 1 : 0;
        return window.__uiSame >= 8;
    }""", polling=250, timeout=120_000)
    return page


def shoot(page, element, path: Path) -> None:
    """The window with ``element`` at its top (an element's own screenshot is cut by the notebook's scrolling)."""
    element.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.screenshot(path=path)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("name", CHAPTERS)
def test_a_chapter_reads_well_in_jupyterlab(browser, lab, artifacts, name, theme):
    page = open_notebook(browser, lab, name, theme)
    stem = f"{name[:2]}-{theme}"
    try:
        page.screenshot(path=artifacts / f"{stem}-top.png")
        seen = page.evaluate(MEASURE)
        assert seen["light"] == str(theme == "light").lower()
        problems = []

        # money, not maths: no TeX rendered, and every amount the notebook holds is on the page with its sign
        problems += [f"cell {m['cell']}: rendered as maths: {m['text']!r}" for m in seen["maths"]]
        problems += [f"{a} is not on the page as written" for a in sorted(amounts(lab.folder / name)) if a not in seen["text"]]

        # the CallView: every cell's text against its row, the legend's text and outlines, the alignment
        for v, view in enumerate(seen["callview"]):
            shoot(page, page.locator(".jp-OutputArea-output", has_text="= cache breakpoint").nth(v), artifacts / f"{stem}-callview.png")
            problems += [f"CallView cell {c['text']!r}: contrast {c['contrast']:.2f} < {AA}" for c in view["cells"] if c["contrast"] < AA]
            problems += [f"CallView cell {c['text']!r} aligned {c['align']}" for c in view["cells"] if c["align"] not in ("left", "start")]
            problems += [f"CallView legend {k['text']!r}: text contrast {k['contrast']:.2f} < {AA}" for k in view["legend"] if k["contrast"] < AA]
            problems += [f"CallView legend {k['text']!r}: no visible outline (width {k['border']}, contrast {k['edge']:.2f})"
                         for k in view["legend"] if k["border"] < 1 or k["edge"] < 1.5]

        # printed lines fit the notebook's width (no wrapping mid-word)
        problems += [f"cell {w['cell']}: a printed line of {w['chars']} characters is {w['width']} px wide, the notebook "
                     f"{w['room']} px ({seen['columns']} characters): {w['line']!r}" for w in seen["wide"]]
        if seen["widest"]:  # the longest printed line, fitting or not
            shoot(page, page.locator(".jp-Cell").nth(seen["widest"]["cell"]), artifacts / f"{stem}-widest-line.png")
        money = page.locator(".jp-MarkdownCell", has_text=re.compile(r"\$\d")).first
        if money.count():
            shoot(page, money, artifacts / f"{stem}-money.png")
        cells = [c for view in seen["callview"] for c in view["cells"]]
        legend = [k for view in seen["callview"] for k in view["legend"]]
        (artifacts / f"{stem}.json").write_text(json.dumps({  # what was measured, beside the screenshots
            "maths rendered": len(seen["maths"]), "amounts on the page": sorted(amounts(lab.folder / name)),
            "notebook width in characters": seen["columns"], "widest printed line": seen["widest"],
            "CallView cells": len(cells), "lowest CallView text contrast": min((c["contrast"] for c in cells), default=None),
            "CallView cells not left-aligned": sum(c["align"] not in ("left", "start") for c in cells),
            "lowest legend text contrast": min((k["contrast"] for k in legend), default=None),
            "lowest legend outline contrast": min((k["edge"] for k in legend), default=None)}, indent=1))
        assert problems == [], f"{name} in the {theme} theme:\n" + "\n".join(problems)
    finally:
        page.close()
