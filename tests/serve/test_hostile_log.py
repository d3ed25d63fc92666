"""``view`` and the page on a hostile shared log (issue 52 item 8): each line serve never writes (a
figure that is not a whole number, a line nested past what JSON readers take, a request the page
cannot draw, a verdict that is not text) is left out and named, as a line that is not JSON is; the
rest of the log is shown, and no answer of the page is a 500."""

from __future__ import annotations

import json

import anthropic

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import started
from minimal_runtime.serve.page import Page, read_log

MODEL = "claude-sonnet-5-5"


def one_record(tmp_path) -> dict:
    log = tmp_path / "one.jsonl"
    with started(Emulator(model=MODEL), log=str(log)) as (url, _):
        anthropic.Anthropic(base_url=url, api_key="k", max_retries=0).messages.create(
            model=MODEL, max_tokens=16, system="be brief", messages=[{"role": "user", "content": "hello"}])
    return json.loads(log.read_text())


def test_each_hostile_line_is_left_out_and_named_and_the_page_answers(tmp_path):
    good = one_record(tmp_path)
    usage = good["usage"]
    hostile = {
        "status Infinity": json.dumps({**good, "n": 2}).replace('"status": 200', '"status": Infinity'),
        "n 1e400": json.dumps({**good}).replace(f'"n": {good["n"]}', '"n": 1e400', 1),
        "nested 100,000 deep": '{"n": 4, "request": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "a 400-digit usage number": json.dumps({**good, "n": 5, "usage": {**usage, "input_tokens": 10 ** 400}}),
        "system 7": json.dumps({**good, "n": 6, "request": {**good["request"], "system": 7}}),
        "prefix not text": json.dumps({**good, "n": 7, "prefix": {"startsWith": 1}}),
    }
    assert '"n": 1e400' in hostile["n 1e400"] and "Infinity" in hostile["status Infinity"]
    log = tmp_path / "shared.jsonl"
    log.write_text("\n".join([json.dumps(good), *hostile.values(), json.dumps({**good, "n": 8})]) + "\n")
    timeline = read_log(log)
    assert [c.n for c in timeline.calls] == [1, 8]
    assert [s.split(":")[0] for s in timeline.skipped] == [f"line {k}" for k in range(2, 8)], timeline.skipped
    assert "status: Infinity is not a whole number" in timeline.skipped[0]
    assert "n: Infinity is not a whole number" in timeline.skipped[1]
    assert "nested too deeply" in timeline.skipped[2]
    assert "usage.input_tokens" in timeline.skipped[3] and "(401 characters)" in timeline.skipped[3]
    assert "request.system: a JSON int" in timeline.skipped[4]
    assert "prefix: a JSON dict, not text" in timeline.skipped[5]
    page = Page(timeline)
    for path in ("/ui/api/calls", "/ui/api/call/1", "/ui/api/call/8", "/ui/api/compare/1/8"):
        status, _, body = page.handle("GET", path, b"")
        assert status == 200, (path, body[:200])
    assert json.loads(page.handle("GET", "/ui/api/calls", b"")[2])["skipped"] == timeline.skipped


def test_a_refused_request_the_page_cannot_draw_is_still_a_call_on_the_live_page():
    """Live, serve's own record of a request it refused (``system: 7``, a 400) is a call on the page:
    its figures and its error; its prompt is not drawn, and opening it is not a 500."""
    with started(Emulator(model=MODEL), ui=True) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        try:
            client.post("/v1/messages", cast_to=object, body={"model": MODEL, "max_tokens": 16, "system": 7,
                                                              "messages": [{"role": "user", "content": "hi"}]})
        except anthropic.BadRequestError:
            pass
        status, _, body = front.page.handle("GET", "/ui/api/call/1", b"")
    assert status == 200 and json.loads(body)["status"] == 400 and json.loads(body)["blocks"] == []
