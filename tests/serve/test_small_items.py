"""serve's smaller truths, through the real SDK: a retry said as one, the path a client missed named,
a conversation named by its task, two runs of one script apart, an error shown whole."""

from __future__ import annotations

import io

import anthropic
import httpx
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started
from minimal_runtime.serve.faults import Faults
from minimal_runtime.serve.policy import script

from .test_serve import SYSTEM, TOOLS
from .test_miss_reasons import loop

MODEL = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "What is in the notes?"}]


def test_a_call_the_sdk_retries_is_said_to_be_a_retry_and_counted_apart(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text('{"error": {"status": 529}}\n"first"\n')
    policy = script(path)
    emulator = Emulator(model=MODEL, policy=policy)
    emulator.faults = Faults(script=policy)
    with started(emulator, out=io.StringIO()) as (url, front):
        anthropic.Anthropic(base_url=url, api_key="dummy").messages.create(model=MODEL, max_tokens=50, messages=ASK)
    refused, retried = front.lines
    assert "529" in refused and "SDK retry" not in refused
    assert "| SDK retry 1 (x-stainless-retry-count): the call sent again, not a new one |" in retried
    assert "summary: 2 calls (1 of them SDK retries of an earlier one), 1 refused" in front.report.summary()


def test_a_messages_path_without_v1_is_told_where_the_api_is():
    """The Vercel AI SDK (and Cline, which uses it) appends /messages to its base URL: given one
    without /v1 it posts /messages; the 404 names /v1/messages, to the client and on serve's line."""
    with started(Emulator(model=MODEL), out=io.StringIO()) as (url, front):
        answer = httpx.post(f"{url}/messages", json={"model": MODEL, "max_tokens": 10, "messages": ASK})
    assert answer.status_code == 404
    says = "POST /messages: no such endpoint; the Messages API is POST /v1/messages (a base URL ending in /v1)"
    assert answer.json()["error"]["message"] == says
    assert front.lines == [f"#1 POST /messages 404 | not_found_error: {says}"]


def test_a_conversation_is_named_by_the_task_its_first_call_asked_not_a_few_shot_example():
    """aider sends a few-shot exchange before the task: the page names the conversation by the task."""
    with started(Emulator(model=MODEL, policy=ToolThenAnswer()), ui=True, out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        client.messages.create(model=MODEL, max_tokens=100, messages=[
            {"role": "user", "content": "Change get_factorial() to use math.factorial"},
            {"role": "assistant", "content": "To make this change we need to modify `mathweb/flask/app.py`."},
            {"role": "user", "content": "Add a --dry-run option to the release script."}])
        labels = [c["label"] for c in httpx.get(f"{url}/ui/api/calls").json()["conversations"]]
    assert labels == ["Add a --dry-run option to the release script."]


def test_two_runs_of_one_script_are_two_conversations_on_the_page():
    """The emulator answers deterministically, so a second run sends the first run's requests byte
    for byte: it is a conversation of its own, each of its calls continuing its own previous one."""
    with started(Emulator(model=MODEL, policy=ToolThenAnswer()), ui=True, out=io.StringIO()) as (url, _):
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        for _ in range(2):
            loop(client, SYSTEM, cache_control={"type": "ephemeral"})
        data = httpx.get(f"{url}/ui/api/calls").json()
    calls = data["calls"]
    assert [c["conversation"] for c in calls] == [1] * 6 + [2] * 6
    assert [c["previous"] for c in calls] == [None, 1, 2, 3, 4, 5, 1, 7, 8, 9, 10, 11]
    assert [c["calls"] for c in data["conversations"]] == [6, 6]


def test_a_refused_calls_error_is_shown_whole_on_its_line_and_on_the_page():
    """The prefix check's error runs to about 500 characters, its cause at the end."""
    with started(Emulator(model=MODEL, policy=ToolThenAnswer()), ui=True, out=io.StringIO()) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        messages = loop(client, SYSTEM, turns=1)
        messages[2]["content"][0]["content"] = "edited"
        with pytest.raises(anthropic.BadRequestError) as raised:
            client.messages.create(model=MODEL, max_tokens=100, system=SYSTEM, tools=TOOLS,
                                   messages=messages + [{"role": "user", "content": "Next?"}])
        error = httpx.get(f"{url}/ui/api/calls").json()["calls"][-1]["error"]
    message = raised.value.body["error"]["message"]
    assert len(message) > 400 and message.endswith("starting at `messages.2.content.0`.")
    assert f"refused: invalid_request_error: {message} |" in front.lines[-1]
    assert error == f"invalid_request_error: {message}"


def test_the_legend_swatches_are_the_bars_colours_and_the_cost_chart_has_axis_values():
    import re
    from pathlib import Path
    ui = Path(__file__).resolve().parents[2] / "minimal_runtime" / "serve" / "ui"
    css, script = (ui / "page.css").read_text(), (ui / "page.js").read_text()
    for region in ("read", "write", "uncached"):
        swatch = re.search(rf"\.swatch\.{region} \{{ background: ([^;]+);", css)[1]
        bar = re.search(rf"\.call \.{region} \{{ background: ([^;]+);", css)[1]
        assert swatch == bar, region
    assert script.index('line(a, "spent")') < script.index('line(b, "plain")')  # the dashed line on top
    assert '$("cost-axis")' in script and 'id="cost-axis"' in (ui / "index.html").read_text()
