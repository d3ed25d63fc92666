"""``make otel``: Arize Phoenix (``arize-phoenix`` from PyPI, in its own venv) on loopback as the tracing
tool, fed the spans of a ``serve`` run of the SDK's tool runner and of a runtime run over OTLP/HTTP: what
Phoenix stored (its REST API) against the usage the clients got, then its page of the runtime's trace in
Chromium (a screenshot in .ui-artifacts/, and in docs/tracing.md). Skipped without ``PHOENIX`` (the
``phoenix`` command make otel installs)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
import urllib.request

import anthropic
import pytest

from minimal_runtime import tracing
from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started
from tests.support import TASK, pricing_agent
from tests.tracing.test_spans import MODEL, SYSTEM, get_weather, usage_attributes
from tests.ui.conftest import free_port

STARTUP = 600  # seconds: Phoenix migrates its database on first start (two and a half minutes on two busy cores)
VIEWPORT = {"width": 1400, "height": 900}


def get(url: str):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    command = os.environ.get("PHOENIX")
    if not command or not os.access(command, os.X_OK):
        pytest.skip("no Phoenix (make otel installs it into .otel/venv and sets PHOENIX)")
    home = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(free_port()),
           "PHOENIX_WORKING_DIR": str(home)}
    log = (home / "phoenix.log").open("w")
    server = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            if server.poll() is not None:
                pytest.fail(f"Phoenix exited ({server.returncode}):\n{(home / 'phoenix.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not answer within {STARTUP} s")
                time.sleep(1)  # a server starting: polled, not a fixed wait
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_phoenix_shows_the_spans_of_serve_and_of_a_runtime_run(phoenix, browser, artifacts, tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix)  # Phoenix takes OTLP/HTTP on its own port
    monkeypatch.setenv("OTEL_SERVICE_NAME", "course")
    with started(Emulator(model=MODEL, policy=ToolThenAnswer(rounds=3)), out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        replies = list(client.beta.messages.tool_runner(
            model=MODEL, max_tokens=1024, system=SYSTEM, cache_control={"type": "ephemeral"}, tools=[get_weather],
            messages=[{"role": "user", "content": "What is the weather in Paris?"}]))
    agent, _, _ = pricing_agent(tmp_path, hooks=tracing.hooks())  # its spans are sent as run() returns
    assert agent.run(TASK).status == "done"
    (project,) = get(f"{phoenix}/v1/projects")["data"]
    stored = []
    deadline = time.monotonic() + 60
    while len(stored) < len(replies) + 1 + 2 * len(agent.calls) and time.monotonic() < deadline:
        stored = get(f"{phoenix}/v1/projects/{project['name']}/spans?limit=1000")["data"]  # Phoenix writes in the background
        time.sleep(0.5)
    by_id = {s["attributes"].get("gen_ai.response.id"): s for s in stored}
    for reply in replies:  # serve's spans, as Phoenix keeps them, against what the SDK's runner got
        span = by_id[reply.id]["attributes"]
        expected = usage_attributes(reply.usage.model_dump())
        assert {k: span.get(k) for k in expected} == expected
    names = [s["name"] for s in stored]
    assert names.count("invoke_agent agent") == 1 and sum(n.startswith("step ") for n in names) == len(agent.calls)
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{phoenix}/projects/{project['id']}/spans", timeout=120_000)
    page.get_by_text("invoke_agent agent").first.click(timeout=120_000)
    page.get_by_text("execute_tool fetch").first.wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "otel-phoenix.png"))
    page.close()
