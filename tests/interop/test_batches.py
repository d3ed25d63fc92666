"""Message Batches through the SDKs' own helpers against ``python -m minimal_runtime serve``.

The Python SDK (the course's, installed with it) and the TypeScript SDK (pinned in package.json) each
create a batch with one request a batch refuses (it asks to stream), poll it with ``retrieve`` until it
has ended, read its results from the ``results_url`` the server gave (serve's loopback address), list
and delete it. ``serve --batch-delay 1``: the polls see the batch in progress first, on serve's clock.
Run by ``make interop`` (see conftest.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import anthropic
import pytest

from .harness import serve_emulator
from .install import CACHE, HERE, Unreachable, ensure_clients
from .policy import ToolRounds

MODEL = "claude-sonnet-5-5"
OPTIONS = ("--batch-delay", "1")
EXPECTED = {"first": "succeeded", "second": "succeeded", "streaming": "errored"}


def requests() -> list[dict]:
    ask = lambda text, **extra: {"model": MODEL, "max_tokens": 256,  # noqa: E731
                                 "messages": [{"role": "user", "content": text}], **extra}
    return [{"custom_id": "first", "params": ask("What is 2 + 2?")},
            {"custom_id": "second", "params": ask("Name a colour.")},
            {"custom_id": "streaming", "params": ask("Stream this.", stream=True)}]


def check_exchanges(exchanges, url: str) -> None:
    """Every call the SDK made was answered, GET and DELETE included."""
    assert exchanges and all(x.status == 200 for x in exchanges), [(x.method, x.path, x.status, x.error) for x in exchanges]
    assert {x.method for x in exchanges} == {"POST", "GET", "DELETE"}
    assert any(x.path.endswith("/results") for x in exchanges)


def test_the_python_sdk_creates_polls_and_reads_a_batch():
    with serve_emulator(ToolRounds(), MODEL, options=OPTIONS) as (url, exchanges):
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-offline-interop", max_retries=0)
        created = batch = client.messages.batches.create(requests=requests())
        polls, deadline = 0, time.monotonic() + 60
        while batch.processing_status != "ended":
            assert time.monotonic() < deadline, f"still {batch.processing_status} after 60 s"
            time.sleep(0.1)
            batch = client.messages.batches.retrieve(created.id)
            polls += 1
        results = {r.custom_id: r.result for r in client.messages.batches.results(created.id)}
        listed = [b.id for b in client.messages.batches.list(limit=1)]
        deleted = client.messages.batches.delete(created.id)
    assert created.processing_status == "in_progress" and polls >= 2
    assert batch.request_counts.succeeded == 2 and batch.request_counts.errored == 1
    assert batch.results_url == f"{url}/v1/messages/batches/{created.id}/results"
    assert {k: r.type for k, r in results.items()} == EXPECTED
    assert results["first"].message.usage.service_tier == "batch"
    assert results["streaming"].error.error.type == "invalid_request_error"
    assert listed == [created.id] and deleted.type == "message_batch_deleted"
    check_exchanges(exchanges, url)


def test_the_typescript_sdk_creates_polls_and_reads_a_batch():
    try:
        ensure_clients()
    except Unreachable as e:
        pytest.skip(f"interop: {e}")
    driver = CACHE / "npm" / "ts_sdk_batch_driver.mjs"
    shutil.copy(HERE / "drivers" / driver.name, driver)  # ESM resolves packages next to the file
    closed = "http://127.0.0.1:9"  # loopback only: any other request fails at once
    env = {**os.environ, "HTTPS_PROXY": closed, "HTTP_PROXY": closed, "https_proxy": closed, "http_proxy": closed,
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    with serve_emulator(ToolRounds(), MODEL, options=OPTIONS) as (url, exchanges):
        done = subprocess.run(["node", str(driver), f"{MODEL}={url}"], capture_output=True, text=True, timeout=120,
                              env=env, stdin=subprocess.DEVNULL)
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    assert lines and lines[0]["ok"], (lines, done.stderr[-2000:])
    seen = lines[0]
    assert seen["created"] == "in_progress" and seen["polls"] >= 2
    assert seen["counts"] == {"processing": 0, "succeeded": 2, "errored": 1, "canceled": 0, "expired": 0}
    assert seen["results_url"].startswith(url)
    assert {k: r["type"] for k, r in seen["results"].items()} == EXPECTED
    assert seen["results"]["first"]["service_tier"] == "batch"
    assert seen["results"]["streaming"]["error"] == "invalid_request_error"
    assert len(seen["listed"]) == 1 and seen["deleted"] == "message_batch_deleted"
    check_exchanges(exchanges, url)
