"""``serve --ui``'s page in Chromium, as a person watching a run sees it: opened before the run starts
and never reloaded, during a 300-call SDK run, a run with one edit, a Claude Code run (the pinned
2.1.332, skipped in one line without the npm registry), and a ``--log`` read back with ``view``.
Measured on the page: the timeline's count, a call opened into its blocks, two opened side by side
with the first differing block marked and in view, and the text's contrast on its background (WCAG)
in the light and the dark scheme. Screenshots go to .ui-artifacts/ (kept, not committed)."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import threading

import anthropic
import httpx
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.server import serve as serve_http
from minimal_runtime.serve import ToolThenAnswer, started
from minimal_runtime.serve.page import Page, read_log

SYSTEM = [{"type": "text", "text": "You are a careful agent that reads files before it answers. " * 80}]  # past 1,024
TOOLS = [{"name": "read_file", "description": "read a file", "input_schema": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
VIEWPORT = {"width": 1366, "height": 900}
AA = 4.5  # WCAG 2's minimum contrast for text
WAIT_MS = 300_000  # a 300-call run on a busy two-core machine takes a minute or two

# Runs in the page: the contrast of each text against the colours composited under it.
CONTRAST = """(selector) => {
  const rgba = s => { const v = (s.match(/[\\d.]+/g) || [0, 0, 0, 0]).map(Number); return v.length === 3 ? [...v, 1] : v; };
  const blend = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const page = rgba(getComputedStyle(document.documentElement).backgroundColor);
  const backdrop = el => { const chain = []; for (let e = el; e; e = e.parentElement) chain.unshift(e);
    return chain.reduce((under, e) => blend(rgba(getComputedStyle(e).backgroundColor), under), blend(page, [255, 255, 255, 1])); };
  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const opacity = el => { let o = 1; for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity); return o; };
  return [...document.querySelectorAll(selector)].filter(e => e.innerText.trim()).map(e => {
    const under = backdrop(e), ink = rgba(getComputedStyle(e).color);
    const text = blend([...ink.slice(0, 3), ink[3] * opacity(e)], under);
    const [hi, lo] = [lum(text), lum(under)].sort((x, y) => y - x);
    return {text: e.innerText.slice(0, 40), contrast: (hi + 0.05) / (lo + 0.05)};
  });
}"""
TEXTS = "h1, #totals, .stats, .legend, .conversation h2, .callview h2, .figures, .verdict, .compared, table.blocks td"


def agent_run(url: str, calls: int, model: str = "claude-sonnet-5-5", edit_at: int | None = None) -> None:
    """An SDK agent: one tool call per call, its result appended, ``calls`` times. At ``edit_at`` the
    client rewrites its first tool result (the bug a page is for) and goes on from the edited history."""
    client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
    messages = [{"role": "user", "content": "Read every file in the folder, one by one."}]
    for n in range(1, calls + 1):
        if n == edit_at:
            messages = copy.deepcopy(messages)
            messages[2]["content"][0]["content"] = "file 1: (trimmed by the client)"
        answer = client.messages.create(model=model, max_tokens=200, system=SYSTEM, tools=TOOLS, messages=messages,
                                        cache_control={"type": "ephemeral"})
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
        use = next(b for b in answer.content if b.type == "tool_use")
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                      "content": f"file {n}: " + "lorem ipsum " * 20}]})


def calls_on(page) -> int:
    return page.locator(".call").count()


def wait_for_calls(page, n: int) -> None:
    # a locator, not wait_for_function: the page's content policy forbids the eval that one runs in it
    page.locator(".call").nth(n - 1).wait_for(timeout=WAIT_MS)


def open_pair(page, first: int, second: int):
    page.locator(f'.call[data-n="{first}"]').click()
    page.wait_for_selector(f'.callview[data-n="{first}"]')
    page.locator(f'.call[data-n="{second}"]').click(modifiers=["Shift"])
    page.wait_for_selector(".pair")
    return page.locator("tr.first-edit")


def legible(page) -> list:
    return [t for t in page.evaluate(CONTRAST, TEXTS) if t["contrast"] < AA]


def test_the_page_follows_a_300_call_sdk_run_as_it_goes(browser, artifacts, tmp_path):
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=301))
    with started(emulator, ui=True, out=io.StringIO()) as (url, front):
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/ui")  # before the first call: the page waits for it
        assert page.locator("#totals").inner_text() == "waiting for the first call"
        errors = []
        run = threading.Thread(target=lambda: _record(errors, agent_run, url, 300), daemon=True)
        run.start()
        wait_for_calls(page, 30)
        assert run.is_alive(), "the run ended before the page showed its 30th call: nothing was seen during it"
        run.join(timeout=WAIT_MS / 1000)
        assert not errors, errors
        wait_for_calls(page, 300)  # the same page, never reloaded
        assert calls_on(page) == 300 == len(front.report.calls)
        assert page.locator("#totals").inner_text().startswith("300 calls in 1 conversation, 0 refused, 0 missed")
        assert page.locator(".conversation").count() == 1 and page.locator(".call.miss, .call.refused").count() == 0
        page.locator('.call[data-n="150"]').click()
        page.wait_for_selector('.callview[data-n="150"]')
        blocks = httpx.get(f"{url}/ui/api/call/150").json()["blocks"]
        # tools, system, the task, then 149 rounds of thinking + tool_use and a tool_result: past 300 blocks
        # the first 50 and the last 250 are sent, the rest as one gap row
        assert page.locator(".callview tbody tr").count() == len(blocks) == 50 + 1 + 250
        assert blocks[50]["gap"] and 300 + blocks[50]["count"] == 2 + 1 + 149 * 3
        assert page.locator(".callview tr.gap").count() == 1
        assert page.locator(".callview tr.read").count() > 250 and page.locator(".callview .mark").count() == 1
        marked = open_pair(page, 150, 151)
        assert page.locator(".compared").inner_text() == "#151 extends #150 append-only; its first new block is marked"
        assert marked.count() == 1 and marked.first.get_attribute("data-path") == "messages.299.0"
        page.screenshot(path=str(artifacts / "serve-page-300-calls.png"), full_page=True)
        assert not legible(page)
        page.close()


def _record(errors: list, function, *args, **kwargs) -> None:
    try:
        function(*args, **kwargs)
    except Exception as e:  # shown by the test, not lost in a thread
        errors.append(f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_run_with_one_edit_shows_where_the_prefix_broke_and_a_log_shows_the_same(browser, artifacts, tmp_path, scheme):
    log = tmp_path / "calls.jsonl"
    emulator = Emulator(model="claude-sonnet-4-6", policy=ToolThenAnswer(rounds=30))
    with started(emulator, ui=True, log=str(log), out=io.StringIO()) as (url, front):
        page = browser.new_page(viewport=VIEWPORT, color_scheme=scheme)
        page.goto(f"{url}/ui")
        agent_run(url, 24, model="claude-sonnet-4-6", edit_at=16)
        anthropic.Anthropic(base_url=url, api_key="dummy").messages.create(  # a side call: a conversation of its own
            model="claude-haiku-4-5", max_tokens=50, messages=[{"role": "user", "content": "A five-word title for: read every file"}])
        wait_for_calls(page, 25)
        assert [page.locator(".conversation").nth(k).locator(".call").count() for k in (0, 1)] == [24, 1]
        missed = page.locator('.conversation[data-id="1"] .call.miss')
        assert missed.count() == 1 and missed.get_attribute("data-n") == "16"
        assert "miss: no cache_control breakpoint" in page.locator('.call[data-n="25"]').get_attribute("title")
        missed.click()
        page.wait_for_selector('.callview[data-n="16"]')
        verdict = page.locator(".verdict.miss").inner_text()
        assert verdict.startswith("cache miss: messages.2: edited (an earlier user message is not sent as it was)")
        page.get_by_role("button", name="compare with #15, the call it continues").click()
        page.wait_for_selector(".pair")
        assert page.locator(".compared").inner_text().startswith("#16 is not an append-only extension of #15: messages.2")
        marked = page.locator("tr.first-edit")
        assert marked.count() == 2 and {marked.nth(k).get_attribute("data-path") for k in (0, 1)} == {"messages.2.0"}
        assert "first edit" in marked.nth(1).locator("td.where").evaluate("td => getComputedStyle(td, '::after').content")
        assert marked.nth(1).is_visible() and page.evaluate(
            "() => { const r = document.querySelectorAll('tr.first-edit')[1].getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= innerHeight; }")  # scrolled into view
        page.screenshot(path=str(artifacts / f"serve-page-one-edit-{scheme}.png"))
        page.set_viewport_size({"width": 1366, "height": 1040})  # the run, its timeline and the pair's head:
        page.evaluate("() => scrollTo(0, 0)")  # the README's picture (docs/serve-page.png)
        page.screenshot(path=str(artifacts / f"serve-page-one-edit-{scheme}-top.png"))
        assert not legible(page), legible(page)
        live = page.locator("#totals").inner_text()
        page.close()
    with serve_http(Page(read_log(log)), raw=True) as viewer:  # python -m minimal_runtime view calls.jsonl
        page = browser.new_page(viewport=VIEWPORT, color_scheme=scheme)
        page.goto(f"{viewer}/ui#compare=15,16")  # a link to a comparison opens it
        page.wait_for_selector(".pair")
        assert calls_on(page) == 25 and page.locator("#totals").inner_text() == live
        assert page.locator("#status").inner_text() == "a log" and page.locator("tr.first-edit").count() == 2
        page.close()


def dollars(x: float) -> str:
    return f"${x:.{5 if x < 0.01 else 4}f}"  # as the page writes them


def test_a_batch_is_on_the_page_once_at_the_batch_price_and_in_its_cost_as_in_serves_summary(browser, artifacts, tmp_path):
    """An SDK run that also sends two Message Batches and downloads one's results twice: the page shows
    each batch once, as what it is (its results' count and cost at the batch price), and its totals and
    its cost-over-time chart say what serve's summary says; so does the log read back."""
    log = tmp_path / "calls.jsonl"
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=30))
    with started(emulator, ui=True, log=str(log), out=io.StringIO()) as (url, front):
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/ui")
        agent_run(url, 6)
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        ask = {"model": "claude-sonnet-5-5", "max_tokens": 200, "system": SYSTEM,
               "messages": [{"role": "user", "content": "Summarize the folder in one line."}]}
        three = client.messages.batches.create(requests=[{"custom_id": f"r{k}", "params": ask} for k in range(3)])
        one = client.messages.batches.create(requests=[{"custom_id": "only", "params": ask}])
        for batch in (three, one, three):  # created, polled until ended, results downloaded (three's twice)
            assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
            list(client.messages.batches.results(batch.id))
        wait_for_calls(page, 6)
        page.locator(".batch").nth(1).wait_for(timeout=30_000)  # the next poll's (one a second)
        records = front.report.calls  # what serve's summary adds up: 6 calls, then 4 batch results once
        cost, plain = sum(r.cost for r in records), sum(r.cost_without_cache for r in records)
        batched = sum(r.cost for r in records if r.batch)
        assert len(records) == 10 and batched > 0.001 and dollars(cost) != dollars(cost - batched)
        assert calls_on(page) == 6 and page.locator(".batch").count() == 2  # batches are not drawn as calls
        totals = page.locator("#totals").inner_text()
        assert totals.startswith("6 calls in 1 conversation, 0 refused, 0 missed the cache · 2 batches of 4 results · ")
        assert totals.endswith(f"of {sum(r.prompt_tokens for r in records):,} prompt tokens · "
                               f"cost {dollars(cost)} (without caching {dollars(plain)})")
        assert f": {dollars(cost)} spent (solid), {dollars(plain)} without caching (dashed)" in \
            page.locator("#cost-caption").inner_text()
        first = page.locator(f'.batch[data-id="{three.id}"]').inner_text()
        three_cost = sum(r.cost for r in records[6:9])
        assert f"batch {three.id}" in first and "3 results: 3 succeeded" in first
        assert f"{dollars(three_cost)} at the batch price (50%)" in first
        page.screenshot(path=str(artifacts / "serve-page-batches.png"), full_page=True)
        assert not legible(page), legible(page)
        page.close()
    with serve_http(Page(read_log(log)), raw=True) as viewer:  # python -m minimal_runtime view calls.jsonl
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{viewer}/ui")
        page.locator(".batch").nth(1).wait_for(timeout=30_000)
        assert page.locator("#totals").inner_text() == totals and calls_on(page) == 6
        page.close()


def test_the_page_follows_a_claude_code_run(browser, artifacts, tmp_path):
    from tests.interop.fixtures import FOLLOW_UP, TASK, claude_env
    from tests.interop.harness import serve_emulator
    from tests.interop.install import Unreachable, ensure_claude_code
    from tests.interop.policy import ToolRounds
    try:
        claude = ensure_claude_code()
    except Unreachable as e:
        pytest.skip(f"Claude Code 2.1.332 cannot be installed: {e}")
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    (project / "notes.txt").write_text("The build passes. Next: the release notes.\n")
    policy = ToolRounds(rounds=2, prefer={"Read": {"file_path": str(project / "notes.txt")},
                                          "Bash": {"command": "ls", "description": "List the project files"}})
    log = tmp_path / "serve.jsonl"
    model = "claude-sonnet-5-5"
    with serve_emulator(policy, model, log=log, options=("--ui",)) as (base_url, _):
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{base_url}/ui")
        session, seen = None, []
        for prompt in (TASK, FOLLOW_UP):  # two turns, the second resuming the first's session
            command = [str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose", "--model", model,
                       "--allowedTools", "Read", "Bash(ls:*)", *(["--resume", session] if session else [])]
            done = subprocess.run(command, cwd=project, env=claude_env(base_url, home), capture_output=True, text=True,
                                  timeout=300, stdin=subprocess.DEVNULL)
            events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            session = next((e["session_id"] for e in events if e.get("session_id")), session)
            assert done.returncode == 0, done.stderr[-2000:]
            sent = sum(1 for line in log.read_text().splitlines()
                       if (r := json.loads(line))["method"] == "POST" and r["path"] == "/v1/messages")
            wait_for_calls(page, sent)  # the page, open since before the first turn, follows each one
            seen.append(calls_on(page))
            assert seen[-1] == sent
        assert seen[0] < seen[1]
        conversations = page.locator(".conversation")
        main = max(range(conversations.count()), key=lambda k: conversations.nth(k).locator(".call").count())
        bars = conversations.nth(main).locator(".call")
        assert conversations.nth(main).locator("h2 .note").inner_text() == TASK  # named by its task, not a reminder
        assert bars.count() >= 4  # two tool rounds and an answer, in each of two turns
        last, before = (int(bars.nth(k).get_attribute("data-n")) for k in (bars.count() - 1, bars.count() - 2))
        bars.nth(bars.count() - 1).click()
        page.wait_for_selector(f'.callview[data-n="{last}"]')
        blocks = httpx.get(f"{base_url}/ui/api/call/{last}").json()["blocks"]
        assert page.locator(".callview tbody tr").count() == len(blocks)
        assert page.locator(".callview .mark").count() >= 1  # Claude Code marks its own breakpoints
        assert {"tools.0", "system.0", "messages.0.0"} <= {b["path"] for b in blocks}
        marked = open_pair(page, before, last)
        assert marked.count() >= 1 and marked.last.is_visible()
        page.screenshot(path=str(artifacts / "serve-page-claude-code.png"), full_page=True)
        assert not legible(page)
        page.close()


def test_a_thread_continue_shows_the_part_the_thread_held(browser, artifacts):
    """The SDK's tool runner threads by default: a continue sends only its new messages, and the page
    draws the rest of the conversation as held."""
    from anthropic import beta_tool

    @beta_tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: the file's path
        """
        return f"the contents of {path}: " + "words " * 60

    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=4))
    with started(emulator, ui=True, out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5-5", max_tokens=400, system=SYSTEM[0]["text"], cache_control={"type": "ephemeral"},
            tools=[read_file], messages=[{"role": "user", "content": "Read the files."}])
        assert list(runner)[-1].stop_reason == "end_turn"
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/ui#call=4")  # a link to a call opens it
        page.wait_for_selector('.callview[data-n="4"]')
        assert calls_on(page) == 5 and page.locator(".conversation").count() == 1
        assert page.locator(".verdict", has_text="thread:").inner_text().startswith(
            "thread: continue: 6 earlier messages (and system, tools) held by the thread, not sent again")
        rows = page.locator(".callview tbody tr")
        held = [rows.nth(k).locator(".badge.held").count() == 1 for k in range(rows.count())]
        assert held == sorted(held, reverse=True) and held.count(False) == 1  # all held but the one message sent
        page.screenshot(path=str(artifacts / "serve-page-thread.png"), full_page=True)
        assert not legible(page)
        page.close()


def test_a_replayed_thread_and_the_requests_the_server_refused_are_said_on_the_page(browser, artifacts):
    """A create that replays a lost thread names the replay as serve's line does; a request the HTTP
    server refused itself (a foreign Host, a body past its cap) is listed apart from the calls."""
    import socket

    from tests.serve.test_threads_and_faults import SYSTEM as LONG, run_tool_runner

    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=3))
    with started(emulator, ui=True, out=io.StringIO()) as (url, front):
        run_tool_runner(url, system=LONG, cache_control={"type": "ephemeral"})
        emulator.threads.ttl = 0  # the next runner's first continue finds its thread gone, and it replays
        run_tool_runner(url, system=LONG, cache_control={"type": "ephemeral"})
        assert httpx.get(f"{url}/v1/models", headers={"host": "rebound.example"}).status_code == 403
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 40000000\r\n\r\n{")
            assert s.recv(64).startswith(b"HTTP/1.1 413 ")
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/ui#call=7")
        page.wait_for_selector('.callview[data-n="7"]')
        assert page.locator(".verdict", has_text="thread:").inner_text() == \
            "thread: create (replays 2 messages of an earlier call)"
        assert front.lines[6].endswith("| thread create (replays 2 messages of an earlier call)")
        refusals = page.locator("#refusals")
        refusals.locator("summary", has_text="2 requests refused by the server").wait_for(timeout=10_000)
        refusals.locator("summary").click()
        items = [refusals.locator("li").nth(k).inner_text() for k in range(refusals.locator("li").count())]
        assert items == ["#11 GET /v1/models 403 permission_error: Host 'rebound.example' is not served here: only "
                         "loopback and 127.0.0.1 are",
                         "#12 POST /v1/messages 413 request_too_large: Request exceeds the maximum allowed number of "
                         "bytes (33,554,432)."], items
        assert calls_on(page) == 10  # the refusals are not calls
        page.screenshot(path=str(artifacts / "serve-page-refusals.png"), full_page=True)
        assert not legible(page) and not [t for t in page.evaluate(CONTRAST, "#refusals li") if t["contrast"] < AA]
        page.close()
