"""A run as one HTML file (issue 67): ``view --html RUN -o run.html`` from a ``serve --log``, a runtime
record and a Claude Code stream-json log (all generated here), and the live page's download. The file
refers to nothing outside itself, runs only its own script and style (the content policy names them by
hash), and keeps hostile prompt text as inert data. tests/ui/test_run_file.py opens it in Chromium."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from html.parser import HTMLParser

import anthropic
import httpx
import pytest

from minimal_runtime.__main__ import main
from minimal_runtime.core.store import RunStore
from minimal_runtime.emulator import Emulator
from minimal_runtime.replay.current import write_current
from minimal_runtime.serve import ToolThenAnswer, started
from minimal_runtime.view.run_file import html, timeline_of
from tests.support import TASK, pricing_agent

MODEL = "claude-sonnet-5-5"
HOSTILE = ('</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
           '<!-- <a href="https://example.com/x">x</a> \u2028 & </style>')
SYSTEM = "You read files before you answer. " * 120  # past the minimum cacheable length


def serve_run(log, calls: int = 4, hostile: str = HOSTILE) -> list:
    """An SDK client's loop through serve --log, its first message and its tool results hostile; the answers it got."""
    answers = []
    with started(Emulator(model=MODEL, policy=ToolThenAnswer(rounds=calls)), log=str(log), out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages = [{"role": "user", "content": hostile + " Read the files."}]
        for _ in range(calls):
            answer = client.messages.create(model=MODEL, max_tokens=200, system=SYSTEM, messages=messages,
                                            cache_control={"type": "ephemeral"},
                                            tools=[{"name": "read_file", "description": "read a file", "input_schema": {
                                                "type": "object", "properties": {"path": {"type": "string"}}}}])
            answers.append(answer)
            messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": hostile}
                                                      for b in answer.content if b.type == "tool_use"] or "go on"}]
    return answers


class Parts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self.styles, self._in = [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = (tag, dict(attrs)) if tag in ("script", "style") else None

    def handle_data(self, data):
        if self._in and self._in[0] == "script":
            self.scripts.append((self._in[1], data))
        elif self._in and self._in[0] == "style":
            self.styles.append(data)

    def handle_endtag(self, tag):
        self._in = None


def digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def data_of(page: str) -> dict:
    """The file's data, its shared parts put back (what page.js does)."""
    saved = json.loads(re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page, re.S)[1])

    def unpacked(v):
        if isinstance(v, list):
            return [unpacked(x) for x in v]
        if isinstance(v, dict):
            return unpacked(saved["shared"][v["$s"]]) if list(v) == ["$s"] else {k: unpacked(x) for k, x in v.items()}
        return v
    return {"calls": saved["calls"], "paths": {path: unpacked(value) for path, value in saved["paths"].items()}}  # as page.js


def test_a_serve_log_becomes_one_file_that_loads_nothing_and_runs_only_its_own_script(tmp_path, capsys):
    log, out = tmp_path / "calls.jsonl", tmp_path / "run.html"
    answers = serve_run(log)
    main(["view", "--html", str(log), "-o", str(out)])
    assert f"view: 4 calls of {log} in {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    parts = Parts()
    parts.feed(page)
    policy = next(a["content"] for t, a in parts.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    (data, _), (code_attrs, code) = parts.scripts  # the data, then the page's script: nothing else runs
    assert data == {"type": "application/json", "id": "run-data"} and code_attrs == {}
    assert f"script-src {digest(code)};" in policy and f"style-src {digest(parts.styles[0])};" in policy
    assert "default-src 'none'" in policy and "connect-src" not in policy  # no fetch, no image, no font from anywhere
    assert [t for t, _ in parts.tags].count("script") == 2 and [t for t, _ in parts.tags].count("img") == 0
    linked = [v for _, attrs in parts.tags for k, v in attrs.items() if k in ("src", "href", "action", "srcset")]
    assert linked == ["data:,"]  # the icon; the download link is gone: the file is the download
    assert "<script>window" not in page and "<img" not in page and page.count("</style>") == 1  # the hostile text is data
    # the data is the page's, whole: every call opened, each next to the call it continues, the hostile text kept
    saved = data_of(page)
    assert [c["n"] for c in saved["calls"]["calls"]] == [1, 2, 3, 4] and saved["calls"]["live"] is False
    for n, answer in enumerate(answers, start=1):
        opened = saved["paths"][f"/ui/api/call/{n}"]
        usage = answer.usage
        assert (opened["input"], opened["write"], opened["read"], opened["output"]) == (
            usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens, usage.output_tokens)
    assert saved["paths"]["/ui/api/call/1"]["blocks"][-1]["text"].startswith(HOSTILE)
    assert saved["paths"]["/ui/api/compare/3/4"]["a"]["n"] == 3


def test_the_live_page_offers_the_same_file(tmp_path):
    log = tmp_path / "calls.jsonl"
    with started(Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2)), ui=True, log=str(log), out=io.StringIO()) as (url, front):
        anthropic.Anthropic(base_url=url, api_key="dummy").messages.create(
            model=MODEL, max_tokens=100, messages=[{"role": "user", "content": HOSTILE}])
        page = httpx.get(f"{url}/ui").text
        got = httpx.get(f"{url}/ui/run.html")
    assert 'href="/ui/run.html" download' in page
    assert got.status_code == 200 and got.headers["content-disposition"] == 'attachment; filename="run.html"'
    downloaded = data_of(got.text)
    written = data_of(html(timeline_of(log)))
    assert downloaded["paths"] == written["paths"] and downloaded["calls"]["calls"] == written["calls"]["calls"]


def test_a_runtime_record_becomes_one_file_with_every_call_as_billed(tmp_path):
    store = RunStore(tmp_path / "run")
    agent, _, _ = pricing_agent(tmp_path, store=store)
    assert agent.run(TASK).status == "done"
    store.close()
    out = tmp_path / "run.html"
    main(["view", "--html", str(tmp_path / "run"), "-o", str(out)])
    saved = data_of(out.read_text(encoding="utf-8"))
    calls = saved["calls"]["calls"]
    assert len(calls) == len(agent.calls) == 14
    assert [(c["input"], c["write"], c["read"], c["output"]) for c in calls] == [
        (r.input_tokens, r.cache_creation_input_tokens, r.cache_read_input_tokens, r.output_tokens) for r in agent.calls]
    assert sum(c["cost"] for c in calls) == pytest.approx(agent.bill().total)
    assert saved["paths"]["/ui/api/call/1"]["blocks"][0]["text"] == TASK
    assert "digests only" in saved["calls"]["skipped"][0]  # what the record does not keep, said on the page


def test_a_claude_code_stream_json_log_becomes_one_file(tmp_path):
    from minimal_runtime.replay import load
    stream = write_current(tmp_path, "claude-sonnet-4-6", rounds=3)["stream"]
    logged = [call for run in load(stream) for call in run.calls]  # the main agent's and its sub-agent's
    out = tmp_path / "run.html"
    main(["view", "--html", str(stream), "-o", str(out)])
    calls = data_of(out.read_text(encoding="utf-8"))["calls"]["calls"]
    assert len(calls) == len(logged) > 3
    assert [c["read"] for c in calls] == [c.usage.cache_read for c in logged]
    assert [c["input"] + c["write"] + c["read"] for c in calls] == [c.usage.prompt_tokens for c in logged]


def test_a_file_that_is_no_run_is_one_line_naming_what_view_reads(tmp_path):
    odd = tmp_path / "notes.jsonl"
    odd.write_text('{"hello": "world"}\n')
    with pytest.raises(SystemExit, match="serve --log, or a runtime record"):
        main(["view", "--html", str(odd), "-o", str(tmp_path / "run.html")])
    assert not (tmp_path / "run.html").exists()
