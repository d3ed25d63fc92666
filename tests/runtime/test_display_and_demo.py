"""A call displays itself in Jupyter; the demo runs offline end to end."""

from __future__ import annotations

import io
import re
import tempfile

import pytest

from minimal_runtime.example.demo import run_demo
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.view import CallView
from tests.support import TASK, pricing_agent


@pytest.fixture(autouse=True)
def _demo_folders_in_tmp_path(tmp_path, monkeypatch):
    """The demo keeps its workspace for the learner to look at; the tests' copies go to tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_call_view_tells_the_regions_apart(tmp_path):
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", "I am on phase 2 of 4."))
    agent, _, _ = pricing_agent(tmp_path, hooks=hooks)
    agent.run(TASK)
    view = CallView(agent.last_request, agent.calls[-1])  # the agent records; the view shows
    rows = view.rows()
    regions = [region for region, *_ in rows]
    breakpoints = [i for i, row in enumerate(rows) if row[3]]
    assert regions[-1] == "batch" and regions.index("batch") > max(breakpoints)
    assert regions[0] == "cache read" and "cache write" in regions  # the history read, the new turn written
    assert all(r == "cache read" for r in regions[: breakpoints[0]])  # the head was cached long ago
    page = view._repr_html_()
    assert "&lt;!-- plan --&gt;" in page and "cache read" in page and f"&#36;{view.usage.cost:.4f}" in page
    assert page.count("breakpoint") >= len(breakpoints)
    assert "read" in str(view) and "batch 1" in str(view)


def luminance(rgb):
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def over(rgba: str, page):
    """A CSS colour laid over an opaque page colour."""
    if rgba == "transparent":
        return page
    *rgb, alpha = (float(x) for x in re.findall(r"[\d.]+", rgba))
    return tuple(alpha * c + (1 - alpha) * p for c, p in zip(rgb, page))


def contrast(a, b):
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# JupyterLab 4's themes: page background and text colour (--jp-layout-color0, --jp-content-font-color1)
THEMES = {"light": ((255, 255, 255), (0, 0, 0)), "dark": ((17, 17, 17), (255, 255, 255))}


@pytest.mark.parametrize("theme", THEMES)
def test_call_view_reads_in_jupyterlab_in_either_theme(tmp_path, theme):
    """Money is not maths (JupyterLab typesets $...$ in HTML outputs), the text keeps the theme's
    colour over a tint that contrasts with it (WCAG AA, 4.5:1), and cells are left-aligned (JupyterLab
    right-aligns table cells). The browser check (`make ui-test`) measures the same on the page."""
    from minimal_runtime.view.call import COLOURS

    agent, _, _ = pricing_agent(tmp_path)
    agent.run(TASK)
    page = CallView(agent.last_request, agent.calls[-1])._repr_html_()
    assert "$" not in page and 'class="tex2jax_ignore mathjax_ignore"' in page.split(">")[0]
    cells = re.findall(r"<td[^>]*>", page)
    assert cells and all("text-align:left" in cell for cell in cells)
    background, text = THEMES[theme]
    for region, tint in COLOURS.items():
        assert contrast(over(tint, background), text) >= 4.5, (region, tint, theme)
    assert "color:#" not in page  # no fixed text colour: the theme's shows through
    assert "var(" not in page  # JupyterLab's sanitizer drops a CSS variable from an output it does not trust


def test_demo_runs_offline_and_summarises(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = io.StringIO()
    agent = run_demo(out=out)
    text = out.getvalue()
    assert "SIMULATED" in text and "run done after 14 calls" in text
    assert ("layout threaded_layout: claude-sonnet-5-5 accepts turn-scoped system messages and message threads"
            in text)
    assert "cache-read share of prompt tokens" in text and "without caching" in text
    assert "| Initech | Business | $45 |" in text
    assert len(agent.calls) == 14


def test_the_long_demos_progress_note_counts_calls_and_says_so(monkeypatch):
    """It said "N pages read so far" while counting calls (a learner saw "98 pages read" on page 89)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    agent = run_demo(turns=3, out=io.StringIO())
    notes = [n["text"] for e in agent.store.events() if e["type"] == "sent" for n in e["step"].get("notes", [])]
    assert notes[:3] == [f"Progress of this run: {n} made so far." for n in ("0 calls", "1 call", "2 calls")]


def test_demo_online_path_against_any_messages_api_server(monkeypatch):
    """With a key set the demo builds a plain anthropic.Anthropic from the environment. Pointed by
    ANTHROPIC_BASE_URL at the emulator served over HTTP, that online path runs end to end."""
    from minimal_runtime.emulator import Emulator
    from minimal_runtime.example import SimulatedResearcher
    emu = Emulator(policy=SimulatedResearcher())
    with emu.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        out = io.StringIO()
        agent = run_demo(out=out)
    assert f"via the Messages API at {base_url}" in out.getvalue() and "run done after 14 calls" in out.getvalue()
    assert len(emu.calls) == len(agent.calls) == 14


def test_demo_with_a_rejected_key_prints_the_api_error_and_exits_non_zero(monkeypatch, capsys):
    """A stale or fake key: the API's own error, how to run offline, exit status 1, no traceback."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from minimal_runtime.__main__ import main

    class RejectsKey(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.dumps({"type": "error", "error": {"type": "authentication_error",
                                                          "message": "invalid x-api-key"}}).encode()
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), RejectsKey)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_port}")
        with pytest.raises(SystemExit) as stopped:
            main(["demo"])
    finally:
        server.shutdown()
    printed = capsys.readouterr().out
    assert stopped.value.code == 1
    assert "run stopped after 0 calls: AuthenticationError 401: invalid x-api-key" in printed
    assert "ANTHROPIC_API_KEY= make demo" in printed


@pytest.mark.parametrize("turns", ["0", "-1", "ten"])
def test_demo_turns_below_one_is_a_usage_error(turns, capsys):
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit) as stopped:  # was: 0 ran the ordinary demo, -1 one call, neither said so
        main(["demo", "--turns", turns])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"argument --turns: '{turns}' is not a number of turns: "
                                                             "1 or more")


def test_a_null_cache_control_is_drawn_as_no_breakpoint():
    """The API ignores ``cache_control: null`` (the emulator counts it as no marker): the view must not
    draw a breakpoint there, or a notebook's call view shows a cache boundary the bill never had."""
    from minimal_runtime.provider.cost import CallRecord
    from minimal_runtime.view.call import placed

    request = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": None},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}]}]}
    usage = CallRecord(model="claude-sonnet-5-5", input_tokens=10, output_tokens=1)
    assert [p.breakpoint for p in placed(request, usage)] == [False, True]
