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


# -- item 13: a head past 64 KB, and two Host headers on the steering server -------------------------------

def _raw(url: str, data: bytes, pieces: int = 1) -> bytes:
    """Send ``data`` on a fresh connection (in ``pieces`` writes) and read the answer until it closes."""
    import socket
    import time
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        step = -(-len(data) // pieces)
        for k in range(0, len(data), step):
            s.sendall(data[k:k + step])
            if pieces > 1:
                time.sleep(0.01)  # each piece its own read: h11 sees the head incomplete
        answer = b""  # every request here ends the connection: its answer is read until the server closes
        while chunk := s.recv(65536):
            answer += chunk
    return answer


def _models_request(pad: int) -> bytes:
    return (b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: offline\r\nanthropic-version: 2023-06-01\r\n"
            b"x-pad: " + b"a" * pad + b"\r\nconnection: close\r\n\r\n")


def test_a_header_line_past_64_kb_is_refused_however_it_arrives(tmp_path):
    """The README promises 64 KB of headers: h11 measures a head only while it is incomplete, so a
    70 KB header line that arrived in one read was answered 200. Now 431 (RFC 6585 §5) whole or in
    pieces, logged as the server's refusal; 60 KB still passes."""
    log = tmp_path / "calls.jsonl"
    with started(Emulator(model=MODEL), log=str(log)) as (url, front):
        fits, whole, pieces = (_raw(url, _models_request(60_000)), _raw(url, _models_request(70_000)),
                               _raw(url, _models_request(70_000), pieces=4))
    assert fits.startswith(b"HTTP/1.1 200 "), fits[:100]
    for answer in (whole, pieces):
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b"Request header fields exceed the maximum allowed number of bytes (65,536)" in answer
    assert sum(" 431 | refused by the server" in line for line in front.lines) == 2


def test_the_steering_server_refuses_two_host_headers_as_serve_does():
    """RFC 9112 §3.2: a request with more than one Host line is a 400 (serve answers 400): loopback
    first, then a foreign name, no longer passes the Host check (the token was right)."""
    from minimal_runtime.core.steering import steering_server

    class Agent:
        steered: list = []

        def steer(self, text: str) -> bool:
            self.steered.append(text)
            return True
    body = json.dumps({"text": "go"}).encode()
    with steering_server(Agent(), "tok") as url:
        port = url.rsplit(":", 1)[1]
        two = _raw(url, f"POST /steer HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nhost: rebound.example\r\n"
                        f"authorization: Bearer tok\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body)
        big = _raw(url, f"POST /steer HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nx-pad: {'a' * 10_000}\r\n"
                        f"authorization: Bearer tok\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body)
        with started(Emulator(model=MODEL)) as (served, _):
            serve_two = _raw(served, b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nhost: rebound.example\r\n"
                                     b"x-api-key: k\r\nconnection: close\r\n\r\n")
    assert serve_two.startswith(b"HTTP/1.1 400 "), serve_two[:100]
    assert two.startswith(b"HTTP/1.1 400 ") and b"more than one Host header" in two, two[:200]
    assert big.startswith(b"HTTP/1.1 431 "), big[:200]  # past the steering server's 8 KB, arrived whole
    assert Agent.steered == []
