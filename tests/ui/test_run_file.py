"""A run as one HTML file (``view --html``), opened in Chromium from ``file://`` with the network off,
as the instructor who was sent it would: from a ``serve --log``, a runtime record and a Claude Code
stream-json log, all generated here. Every call opens into its figures and blocks; the file asks for
nothing but itself; hostile prompt text shows as text and never runs. Screenshots in .ui-artifacts/."""

from __future__ import annotations

import pytest

from minimal_runtime.__main__ import main
from minimal_runtime.core.store import RunStore
from minimal_runtime.replay.current import write_current
from tests.serve.test_run_file import data_of, serve_run
from tests.support import TASK, pricing_agent

VIEWPORT = {"width": 1366, "height": 900}
# what runs if the page ever puts a prompt on the page as markup: both leave a mark a locator can see
HOSTILE = ('</script><script>document.title = "pwned"; document.body.dataset.pwned = 1</script>'
           '<img src=x onerror="document.title = \'pwned\'; document.body.dataset.pwned = 2">')


def serve_log(folder):
    log = folder / "calls.jsonl"
    serve_run(log, calls=4, hostile=HOSTILE)
    return log


def runtime_record(folder):
    store = RunStore(folder / "run")
    agent, _, _ = pricing_agent(folder, store=store)
    assert agent.run(TASK).status == "done"
    store.close()
    return folder / "run"


def claude_code_log(folder):
    return write_current(folder, "claude-sonnet-4-6", rounds=3)["stream"]


@pytest.mark.parametrize("kind, make", [("serve-log", serve_log), ("runtime-record", runtime_record),
                                        ("claude-code", claude_code_log)])
def test_the_file_opens_offline_every_call_shows_and_hostile_text_stays_text(kind, make, browser, artifacts, tmp_path):
    out = tmp_path / "run.html"
    main(["view", "--html", str(make(tmp_path)), "-o", str(out)])
    saved = data_of(out.read_text(encoding="utf-8"))
    calls = saved["calls"]["calls"]
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    page = context.new_page()
    asked, problems = [], []
    page.on("request", lambda request: asked.append(request.url))
    page.on("console", lambda message: message.type in ("error", "warning") and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(out.as_uri())
    page.locator("body[data-ready]").wait_for()
    assert page.locator(".call").count() == len(calls)
    for call in calls:
        n, prompt = call["n"], call["input"] + call["write"] + call["read"]
        page.locator(f'.call[data-n="{n}"]').click()
        view = page.locator(f'.callview[data-n="{n}"]')
        view.wait_for()
        assert view.locator(".figures").inner_text().startswith(f"{prompt:,} prompt tokens: read {call['read']:,}")
        rows = saved["paths"][f"/ui/api/call/{n}"]["blocks"]
        assert view.locator("table.blocks tbody tr").count() == len(rows)
        if call["miss"]:
            assert call["miss"] in view.locator(".verdict.miss").inner_text()
    last = calls[-1]
    if last["previous"] is not None:  # the button that compares a call with the one it continues
        page.locator(f'.callview[data-n="{last["n"]}"] h2 button').click()
        page.locator(".compared").wait_for()
    if kind == "serve-log":  # the hostile text is on the page, as text
        page.locator('.call[data-n="1"]').click()
        assert page.get_by_text('<script>document.title = "pwned"', exact=False).count() > 0
    page.screenshot(path=str(artifacts / f"run-file-{kind}.png"), full_page=False)
    assert page.title() != "pwned" and page.locator("body[data-pwned]").count() == 0
    assert {url.split(":")[0] for url in asked} == {"file"} and asked == [out.as_uri()]  # itself, nothing else
    assert problems == []  # no script refused by the content policy, no error
    context.close()


def test_the_live_pages_download_is_the_same_file_and_opens_offline(browser, artifacts, tmp_path):
    import io

    import anthropic

    from minimal_runtime.emulator import Emulator
    from minimal_runtime.serve import ToolThenAnswer, started
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=2)), ui=True, out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        for _ in range(2):
            client.messages.create(model="claude-sonnet-5-5", max_tokens=100,
                                   messages=[{"role": "user", "content": HOSTILE}])
        live = browser.new_page(viewport=VIEWPORT)
        live.goto(f"{url}/ui")
        live.locator(".call").nth(1).wait_for()
        with live.expect_download() as download:
            live.locator("#download").click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
        live.close()
    assert saved.name == "run.html"
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    page = context.new_page()
    page.goto(saved.as_uri())
    page.locator("body[data-ready]").wait_for()
    assert page.locator(".call").count() == 2 and page.locator("#download").count() == 0
    page.locator('.call[data-n="2"]').click()
    page.locator('.callview[data-n="2"]').wait_for()
    assert page.title() != "pwned" and page.locator("body[data-pwned]").count() == 0
    page.screenshot(path=str(artifacts / "run-file-downloaded.png"))
    context.close()
