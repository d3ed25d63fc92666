"""How long ``serve --ui``'s page takes to render a 1,000-call run in Chromium (issue 43).

A run of 1,000 calls is made first through ``serve --log`` on loopback: ten SDK agents of 100 calls
each (an orchestrator's sub-agents, one after another), every call a tool round appended to its
history, on the offline emulator. Its log is served as ``python -m minimal_runtime view`` serves it,
and Debian's chromium (driven by Playwright, as ``make ui-test`` drives it) opens the page: the time
from navigation until the 1,000th call is on the timeline and the totals read "1,000 calls", then the
time to open the run's largest call and to open two side by side, each the median of a few tries. The
same page over the first 100 calls gives the ratio. Absolute times depend on the machine (and its
load); the ratio is what to compare.

    .venv/bin/python benchmarks/page_render.py        # needs .[ui] (Playwright) and /usr/bin/chromium
"""

from __future__ import annotations

import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import anthropic  # noqa: E402

from minimal_runtime.emulator import Emulator  # noqa: E402
from minimal_runtime.emulator.server import serve as serve_http  # noqa: E402
from minimal_runtime.serve import ToolThenAnswer, started  # noqa: E402
from minimal_runtime.serve.page import Page, read_log  # noqa: E402

BROWSER = os.environ.get("UI_BROWSER", "/usr/bin/chromium")
AGENTS, CALLS, TRIES = 10, 100, 3
SYSTEM = [{"type": "text", "text": "You are one of ten careful sub-agents; read before you answer. " * 80}]
TOOLS = [{"name": "read_file", "description": "read a file", "input_schema": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]


def make_run(log: Path) -> None:
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer(rounds=CALLS + 1))
    with started(emulator, log=str(log), out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        for agent in range(AGENTS):
            messages = [{"role": "user", "content": f"Sub-task {agent + 1}: read the files of part {agent + 1}."}]
            for n in range(CALLS):
                answer = client.messages.create(model="claude-sonnet-5-5", max_tokens=200, system=SYSTEM, tools=TOOLS,
                                                messages=messages, cache_control={"type": "ephemeral"})
                use = next(b for b in answer.content if b.type == "tool_use")
                messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                           "content": f"part {agent + 1}, file {n + 1}: " + "data " * 40}]}]
            print(f"  made {(agent + 1) * CALLS} calls", file=sys.stderr, flush=True)


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(browser, log: Path, calls: int) -> dict[str, float]:
    with serve_http(Page(read_log(log)), raw=True) as url:
        tries = {"render": [], "open": [], "compare": []}
        for _ in range(TRIES):
            page = browser.new_page(viewport={"width": 1366, "height": 900})

            def render():
                page.goto(f"{url}/ui")
                page.locator(".call").nth(calls - 1).wait_for()
                page.get_by_text(f"{calls:,} calls in", exact=False).wait_for()
            tries["render"].append(timed(render))
            assert page.locator(".call").count() == calls
            biggest = max(range(1, calls + 1), key=lambda n: (n - 1) % CALLS)  # the longest history: an agent's last call

            def open_call():
                page.locator(f'.call[data-n="{biggest}"]').click()
                page.locator(f'.callview[data-n="{biggest}"]').wait_for()
            tries["open"].append(timed(open_call))

            def compare():
                page.locator(f'.call[data-n="{biggest - 1}"]').click(modifiers=["Shift"])
                page.locator("tr.first-edit").last.wait_for()
            tries["compare"].append(timed(compare))
            page.close()
    return {k: statistics.median(v) for k, v in tries.items()}


def main() -> None:
    if not os.access(BROWSER, os.X_OK):
        raise SystemExit(f"page_render: no browser at {BROWSER} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SystemExit("page_render: Playwright is not installed (uv pip install -e '.[ui]')")
    with tempfile.TemporaryDirectory(prefix="page-render-") as folder:
        log, head = Path(folder) / "calls.jsonl", Path(folder) / "head.jsonl"
        started_at = time.perf_counter()
        make_run(log)
        lines = log.read_text().splitlines()
        head.write_text("\n".join(lines[:CALLS]) + "\n")
        size = log.stat().st_size / 1e6
        print(f"a run of {len(lines):,} calls ({AGENTS} agents x {CALLS}) made in {time.perf_counter() - started_at:.0f} s; "
              f"its log {size:.0f} MB; the page's list of calls {len(json.dumps(read_log(log).since())) / 1e3:.0f} kB")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=BROWSER, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            small, full = measure(browser, head, CALLS), measure(browser, log, len(lines))
            version = browser.version
            browser.close()
    print(f"Chromium {version}, median of {TRIES} tries:")
    for key, what in (("render", "render the timeline (navigation to the last call on it)"),
                      ("open", f"open the largest call ({2 + 1 + (CALLS - 1) * 3} blocks)"),
                      ("compare", "open it next to the call before, first new block marked")):
        print(f"  {what}: {full[key]:.2f} s for {len(lines):,} calls, {small[key]:.2f} s for {CALLS} "
              f"({full[key] / small[key]:.1f}x)")


if __name__ == "__main__":
    main()
