"""What one client can make ``serve`` keep, and how long a thing it sends may be (issue 52 items 3, 4
and 13): a Message Batch costs the log a bounded amount a request; held bytes are counted and capped;
a header line past 64 KB is refused. The big measurements (26 MB calls, a 20,000-request batch) are
``benchmarks/hostile_clients.py``'s; these check the accounting on small inputs."""

from __future__ import annotations

import json

import anthropic
import pytest

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
    from minimal_runtime.steering import steering_server

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


# -- item 3: what serve keeps is bounded in bytes, not only by count ------------------------------------

BETA = "message-threads-2026-08-12"


def _call(i: int, size: int, **extra) -> dict:
    return {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": f"call {i} " + "x" * size}],
            **extra}


def test_the_report_the_page_and_the_parser_keep_at_most_their_bytes(monkeypatch):
    """30 distinct calls of 26 MB grew serve by 1.58 MB a MB sent: each part kept a count of calls
    (256 conversations, every call on the page, 8 bodies), whatever their size. Here the bounds are
    100 KB and the calls 40 KB: each part keeps what fits (the newest always), counted in bytes, and
    the page keeps every call's figures while forgetting the prompts of the oldest conversations."""
    from minimal_runtime.emulator import body
    from minimal_runtime.serve import report, timeline
    for module in (report, timeline, body):
        monkeypatch.setattr(module, "KEPT_BYTES", 100_000)
    with started(Emulator(model=MODEL), ui=True) as (url, front):
        client = anthropic.Anthropic(base_url=url, api_key="offline", max_retries=0)
        for i in range(12):
            client.messages.create(**_call(i, 40_000))
        page = front.timeline
        kept = front.report.conversations.kept_bytes
        parser = front.emulator._bodies.recent
        assert 40_000 < kept <= 100_000 and kept == sum(p.size for c in front.report.conversations._recent.values()
                                                       for p in c)
        assert 1 <= len(parser) <= 2 and sum(len(b.text) for b in parser) <= 100_000
        assert 40_000 < page.kept_bytes <= 100_000 and len(page.calls) == 12
        forgotten = [c.n for c in page.calls if not c.request["messages"]]
        assert forgotten == list(range(1, len(forgotten) + 1)) and len(forgotten) >= 9  # the oldest went first
        assert page.detail(1)["blocks"] == [] and page.detail(1)["input"] > 0  # its figures stay
        assert page.detail(1)["forgotten"] == 100_000 and page.detail(12)["forgotten"] is None  # and it says so
        assert len(page.detail(12)["blocks"]) == 1
        client.messages.create(**_call(99, 120_000))  # past the parser's bound: parsed, not kept
        assert parser and all(len(b.text) < 100_000 for b in parser)
        # one conversation past the bound by itself keeps its latest call's prompt alone
        history = [{"role": "user", "content": "one long conversation"}]
        for i in range(6):
            history += [{"role": "assistant", "content": f"answer {i}"}, {"role": "user", "content": f"{i} " + "y" * 40_000}]
            client.messages.create(model=MODEL, max_tokens=16, messages=history)
        assert page.kept_bytes <= 100_000 + 6 * 40_100 and page.calls[-1].request["messages"]
        assert not page.calls[-2].request["messages"]


def test_held_threads_are_bounded_in_bytes_and_one_client_never_evicts_anothers(monkeypatch):
    """Held responses are counted by the bytes their requests stand for: past its credential's bound
    a client's oldest go; past the bound in all a new response is not held (its continue is the 404
    the SDKs replay after), and another client's live thread stays."""
    from minimal_runtime.emulator import threads
    monkeypatch.setattr(threads, "CREDENTIAL_BYTES", 60_000)
    monkeypatch.setattr(threads, "HELD_BYTES", 70_000)
    emu = Emulator(model=MODEL)
    a, b, c = (emu.client(api_key=k, max_retries=0) for k in ("key-a", "key-b", "key-c"))
    create = lambda client, i: client.beta.messages.create(**_call(i, 20_000, thread={"type": "create"}),  # noqa: E731
                                                            betas=[BETA])
    go_on = lambda client, first: client.beta.messages.create(  # noqa: E731
        model=MODEL, max_tokens=16, betas=[BETA], messages=[{"role": "user", "content": "go on"}],
        thread={"type": "continue", "previous_message_id": first.id})
    kept = create(a, 0)
    of_b = [create(b, i) for i in range(1, 6)]
    assert emu.threads.held_bytes <= 70_000 and emu.threads._bytes[threads.credential({"x-api-key": "key-b"})] <= 60_000
    of_c = create(c, 9)  # a and b hold 20 KB and 40 KB: c's 20 KB would pass the bound in all
    with pytest.raises(anthropic.NotFoundError):
        go_on(c, of_c)
    with pytest.raises(anthropic.NotFoundError):
        go_on(b, of_b[0])  # b's own oldest went first
    assert go_on(b, of_b[-1]).stop_reason and go_on(a, kept).stop_reason
