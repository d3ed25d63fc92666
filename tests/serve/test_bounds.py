"""What one client can make ``serve`` keep, and how long a thing it sends may be (issue 52 items 3, 4
and 13): a Message Batch costs the log a bounded amount a request; held bytes are counted and capped;
a header line past 64 KB is refused. The big measurements (26 MB calls, a 20,000-request batch) are
``benchmarks/hostile_clients.py``'s; these check the accounting on small inputs."""

from __future__ import annotations

import json

import anthropic

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import started

MODEL = "claude-sonnet-5-5"


def test_a_batch_costs_the_log_its_first_requests_and_each_results_usage_not_its_content(tmp_path):
    """Item 4: ``--log`` grew 85 MB with one batch. Now a create is logged with its first 10 requests
    (and how many more), its results without each message's content; the page still counts the whole
    batch, its cost at the batch price, from the log's record."""
    log = tmp_path / "calls.jsonl"
    with started(Emulator(model=MODEL), log=str(log), ui=True) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="offline", max_retries=0)
        batch = client.messages.batches.create(requests=[
            {"custom_id": f"r{i}", "params": {"model": MODEL, "max_tokens": 64,
                                             "messages": [{"role": "user", "content": f"question {i} " + "x" * 500}]}}
            for i in range(30)])
        assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
        assert len([r for r in client.messages.batches.results(batch.id) if r.result.type == "succeeded"]) == 30
    records = [json.loads(line) for line in log.read_text().splitlines()]
    create = next(r for r in records if r["method"] == "POST" and r["path"] == "/v1/messages/batches")
    assert len(create["request"]["requests"]) == 10 and create["request_omitted"].startswith("20 more requests")
    downloaded = next(r for r in records if r["path"].endswith("/results"))
    lines = [json.loads(line) for line in downloaded["response_text"].splitlines()]
    assert len(lines) == 30 and all("content" not in line["result"]["message"] for line in lines)
    assert all(line["result"]["message"]["usage"]["service_tier"] == "batch" for line in lines)
    assert len(downloaded["response_text"]) < 30 * 600  # each result a few hundred bytes, whatever its answer
    counted = front.timeline.batches[batch.id]
    assert counted.results.count == 30 and len(counted.results.records) == 30
