"""browser-use's ``Agent`` on its default path (``ChatAnthropic``, the Anthropic SDK underneath, ``base_url`` pointed at
serve), against plain ``serve``: a page served on loopback by this driver, Debian's ``/usr/bin/chromium`` headless,
the task, then a follow-up task on the same agent (``add_new_task``, its documented way to continue). Model:
claude-sonnet-4-6: browser-use forces its output tool (``tool_choice`` of type ``tool``) on every model but Fable and
Mythos 5, and the API refuses forced tool use on Sonnet 5.5 (a 400 on each step; serve refuses it too). Each task
has three steps and must end by ``done`` (browser-use offers only ``done`` on a task's last step); after each task
browser-use's judge asks the model once more whether the task was done (its default): 8 calls in all.

The client's own token record: the agent's history, ``history.usage`` (its token cost service's ``UsageSummary``),
where ``total_prompt_tokens`` is input plus cache reads (browser-use adds them, ``llm/anthropic/chat.py``), so the
input figure compared is ``total_prompt_tokens - total_prompt_cached_tokens``. No cost: its prices are fetched from
the network, which is closed here."""

from __future__ import annotations

import asyncio
import http.server
import os
import shutil
import tempfile
import threading
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")  # no posthog or cloud sync off loopback
os.environ.setdefault("BROWSER_USE_CLOUD_SYNC", "false")

from browser_use import Agent, BrowserProfile, BrowserSession, ChatAnthropic  # noqa: E402
from common import API_KEY, main  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PAGE = "<html><body><h1>Weather</h1><p id=paris>Paris: sunny</p><p id=oslo>Oslo: snow</p></body></html>"
MAX_STEPS = 3  # a step is one call; its last step offers only ``done`` (browser-use's own rule)


def serve_page() -> tuple[http.server.ThreadingHTTPServer, str]:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


async def conversation(model: str, base_url: str, page: str, profile_dir: str) -> dict:
    session = BrowserSession(browser_profile=BrowserProfile(executable_path=CHROMIUM, headless=True,
                                                            user_data_dir=profile_dir))
    agent = Agent(task=f"Open {page} and tell me the weather in Paris.",
                  llm=ChatAnthropic(model=model, api_key=API_KEY, base_url=base_url), browser_session=session)
    try:
        for i, task in enumerate(("", "And the weather in Oslo, from the same page?")):
            if task:
                agent.add_new_task(task)
            # its step count runs on across tasks (``state.n_steps``): each task gets MAX_STEPS more
            history = await agent.run(max_steps=agent.state.n_steps - 1 + MAX_STEPS)
            if not history.is_done():
                raise RuntimeError(f"task {i + 1} ended without done (max_steps {MAX_STEPS}): {history.errors()[-3:]}")
    finally:
        await session.kill()
    usage = history.usage
    actions = [a for step in history.history if step.model_output for a in step.model_output.action]
    return {"tool_calls": len(actions), "record": "AgentHistoryList.usage (token cost service)",
            "usage": {"input_tokens": usage.total_prompt_tokens - usage.total_prompt_cached_tokens,
                      "cache_read_input_tokens": usage.total_prompt_cached_tokens,
                      "cache_creation_input_tokens": usage.total_prompt_cache_creation_tokens,
                      "output_tokens": usage.total_completion_tokens},
            "cost_usd": None, "done": history.is_done(), "calls": usage.entry_count}


def run(model: str, base_url: str) -> dict:
    if not shutil.which(CHROMIUM):
        raise RuntimeError(f"no {CHROMIUM}: apt-get install -y chromium")
    server, page = serve_page()
    workdir = Path(os.environ.get("INTEROP_WORKDIR") or tempfile.mkdtemp(prefix="browser-use-"))
    try:
        return asyncio.run(conversation(model, base_url, page, str(workdir / "chromium-profile")))
    finally:
        server.shutdown()


if __name__ == "__main__":
    main(run)
