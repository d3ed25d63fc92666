"""``serve`` against slow and hostile clients (issue 41): a slowloris keeps nobody waiting, a chunked
``-1`` is refused without reading, the proxy goes nowhere but its upstream, no secret reaches a
line or the log, and a page on another host name (DNS rebinding) is refused. Each test failed on
the ``http.server`` front it replaced. Times are the benchmark's (``benchmarks/hostile_clients.py``)."""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import re
import socket
import sys
import threading
import time

import httpx
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.server import serve
from minimal_runtime.serve import banner, started

CLIENT = {"x-api-key": "offline", "anthropic-version": "2023-06-01", "content-type": "application/json"}
BODY = json.dumps({"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hello"}]})


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


class Trickle:
    """``count`` connections that each send a request a byte at a time, one byte every ``every``
    seconds: half stop inside the headers, half inside a declared body (the two slowloris forms)."""

    def __init__(self, url: str, count: int = 32, every: float = 0.1):
        self.sockets, self.every, self.stop = [], every, threading.Event()
        for k in range(count):
            s = socket.create_connection(address(url), timeout=5)
            if k % 2:
                s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                          b"x-api-key: offline\r\ncontent-length: 100000\r\n\r\n{")
            else:
                s.sendall(b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: ")
            self.sockets.append(s)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            for s in self.sockets:
                try:
                    s.send(b"a")
                except OSError:
                    pass

    def __enter__(self) -> "Trickle":
        self.thread.start()
        time.sleep(3 * self.every)  # every slow connection has sent bytes since it connected
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        for s in self.sockets:
            s.close()


def test_32_slow_connections_keep_no_request_waiting():
    """On the old front, 16 workers each held by a trickling client left everyone else unanswered."""
    with Emulator(model="claude-sonnet-5-5").serve() as url, Trickle(url):
        listed = httpx.get(f"{url}/v1/models", timeout=3)
        answered = httpx.post(f"{url}/v1/messages", content=BODY, headers=CLIENT, timeout=3)
    assert listed.status_code == 200 and answered.status_code == 200, answered.text


def test_a_request_that_takes_longer_than_its_deadline_is_ended():
    """A byte every 50 ms keeps inside any per-read timeout; the deadline for the whole request ends it."""
    with serve(Emulator(), deadline=0.3) as url:
        s = socket.create_connection(address(url), timeout=5)
        s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1000\r\n\r\n")
        started_at, answer = time.monotonic(), b""
        for _ in range(60):  # 3 s at most
            try:
                s.sendall(b"a")
            except OSError:
                break
            s.settimeout(0.05)
            try:
                piece = s.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
            if not piece:
                break
            answer += piece
        s.close()
    assert time.monotonic() - started_at < 2.5
    assert answer.startswith(b"HTTP/1.1 408 "), answer


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the resident size from /proc")
def test_a_chunked_body_with_a_negative_size_is_refused_without_reading_it():
    """The old reader took ``-1`` as "read to the end of the connection": 64 MB went into memory."""
    sent_mb, peak = 64, [0]
    with Emulator().serve() as url:
        before, done = _rss(), threading.Event()

        def watch():
            while not done.wait(0.005):
                peak[0] = max(peak[0], _rss())
        watcher = threading.Thread(target=watch)
        watcher.start()
        s = socket.create_connection(address(url), timeout=10)
        s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                  b"transfer-encoding: chunked\r\n\r\n-1\r\n")
        answer, block = b"", b"x" * (1 << 20)
        try:
            for _ in range(sent_mb):
                s.sendall(block)
            s.shutdown(socket.SHUT_WR)
            while piece := s.recv(65536):
                answer += piece
        except OSError:  # the server answered and hung up while we were still sending: what it should do
            pass
        s.close()
        time.sleep(0.1)
        done.set()
        watcher.join()
        assert httpx.get(f"{url}/v1/models", timeout=3).status_code == 200  # and it still serves
    growth = (peak[0] - before) / 2**20
    print(f"\nresident growth while {sent_mb} MB followed a chunk size of -1: {growth:.1f} MB")
    assert growth < 40
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400 "), answer[:200]


def test_a_host_that_is_not_loopback_or_the_one_served_is_refused():
    """A page served from another name that resolves to 127.0.0.1 (DNS rebinding) sends its own Host."""
    with Emulator(model="claude-sonnet-5-5").serve() as url:
        port = address(url)[1]
        for host in ("127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert httpx.get(f"{url}/v1/models", headers={"host": host}).status_code == 200, host
        refused = httpx.get(f"{url}/v1/models", headers={"host": f"rebound.example:{port}"})
    assert refused.status_code == 403
    assert refused.json()["error"] == {"type": "permission_error",
                                       "message": "Host 'rebound.example' is not served here: only loopback and "
                                                  "127.0.0.1 are"}


# -- the recording proxy ----------------------------------------------------------------------------

class Recording:
    def __init__(self):
        self.emulator, self.seen = Emulator(model="claude-sonnet-5-5"), []

    def handle(self, method, path, body, headers):
        self.seen.append((method, path, headers))
        return self.emulator.handle(method, path, body, headers)


def test_the_proxy_refuses_an_absolute_form_target_and_reaches_only_its_upstream():
    upstream, other = Recording(), Recording()
    with serve(upstream) as upstream_url, serve(other) as other_url:
        with started(Emulator(model="claude-sonnet-5-5"), upstream=upstream_url) as (url, front):
            connection = http.client.HTTPConnection(*address(url), timeout=5)
            connection.request("POST", f"{other_url}/v1/messages", body=BODY,
                               headers={**CLIENT, "x-api-key": "sk-the-clients-own-key"})
            answer = connection.getresponse()
            status, text = answer.status, answer.read()
            connection.close()
            plain = httpx.post(f"{url}/v1/messages", content=BODY, headers=CLIENT, timeout=5)
    assert status == 400 and b"origin-form" in text, text
    assert other.seen == []  # nothing reached the other server, nor the client's key
    assert plain.status_code == 200 and [p for _, p, _ in upstream.seen] == ["/v1/messages"]


def test_credentials_in_the_upstream_url_are_never_printed_nor_logged(tmp_path):
    log = tmp_path / "calls.jsonl"
    upstream = "http://proxyuser:hunter2-password@127.0.0.1:9/?key=sk-in-the-query"  # port 9: nothing listens
    with started(Emulator(model="claude-sonnet-5-5"), upstream=upstream, log=str(log)) as (url, front):
        failed = httpx.post(f"{url}/v1/messages", content=BODY, headers=CLIENT, timeout=10)
        shown = banner(url, front.emulator, "-", upstream)
    assert failed.status_code == 502 and "127.0.0.1:9" in failed.text
    for where, text in {"the 502": failed.text, "the log": log.read_text(), "the lines": "\n".join(front.lines),
                        "the banner": shown}.items():
        assert "hunter2" not in text and "proxyuser" not in text and "sk-in-the-query" not in text, (where, text)
    assert "http://127.0.0.1:9/" in shown


def test_every_header_named_like_a_secret_is_redacted_in_the_log(tmp_path):
    log = tmp_path / "calls.jsonl"
    secrets = {"x-goog-api-key": "g-1", "anthropic-admin-key": "a-2", "x-auth-token": "t-3", "cookie": "c-4",
               "x-client-secret": "s-5", "authorization": "Bearer b-6", "x-api-key": "k-7", "proxy-authorization": "p-8",
               # issue 61 item 7: names that say nothing of a secret, and were written as sent
               "x-api-pass": "p-9", "x-credentials": "c-10", "x-signature": "s-11", "x-session": "s-12",
               "x-amz-security-token": "t-13", "x-custom-header": "h-14"}
    with started(Emulator(model="claude-sonnet-5-5"), log=str(log)) as (url, _):
        assert httpx.post(f"{url}/v1/messages", content=BODY, headers={**CLIENT, **secrets}).status_code == 200
    record = json.loads(log.read_text())
    assert all(record["request_headers"][name] == "[redacted]" for name in secrets)
    assert record["request_headers"]["anthropic-version"] == "2023-06-01"  # the allow-listed ones as sent
    assert record["request_headers"]["content-type"] == "application/json"
    assert not any(value in log.read_text() for value in secrets.values())


def test_a_request_with_a_lone_surrogate_is_logged_with_it_escaped(tmp_path):
    log = tmp_path / "calls.jsonl"
    body = BODY.replace('"hello"', '"hello \\ud800"')
    with started(Emulator(model="claude-sonnet-5-5"), log=str(log)) as (url, front):
        status = httpx.post(f"{url}/v1/messages", content=body, headers=CLIENT).status_code
    lines = log.read_text().splitlines()
    assert len(lines) == 1 == len(front.lines), front.lines
    assert json.loads(lines[0])["request"]["messages"][0]["content"] == "hello \ud800"  # escaped, read back exactly
    assert f" {status} " in front.lines[0] and "could not report" not in front.lines[0]


# -- what the server refuses itself is reported like any refused call ------------------------------

def raw(url: str, request: bytes) -> bytes:
    """Send ``request`` (whole, or the start of one) and read the answer until the server hangs up."""
    with socket.create_connection(address(url), timeout=5) as s:
        s.sendall(request)
        answer = b""
        with contextlib.suppress(OSError):  # a reset after the answer: the server refused the rest
            while piece := s.recv(65536):
                answer += piece
        return answer


def reported(front, n: int) -> list[str]:
    """The front's first ``n`` lines, once it has printed them (a refusal is reported on a worker,
    after its answer is sent: waited for here, 5 s at most)."""
    until = time.monotonic() + 5
    while len(front.lines) < n and time.monotonic() < until:
        time.sleep(0.01)
    return front.lines


def test_every_request_the_server_refuses_itself_is_printed_logged_and_left_out_of_the_page(tmp_path):
    """A 400 (absolute-form target, a chunk size of -1, a request line h11 cannot read), 403 (a foreign
    Host), 408 (the deadline, in the body and in the headers) and 413 (past the cap) are answered by the
    server, never by the front's ``handle`` (on the old server: no line, no record). Each now gets its
    line and its ``--log`` record, secrets redacted; the page lists them apart from the calls, live and
    from the log read back."""
    from minimal_runtime.serve.page import read_log

    log = tmp_path / "calls.jsonl"
    head = (b"POST %s HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\nx-api-key: sk-secret-1\r\n"
            b"content-length: %d\r\n\r\n")
    with started(Emulator(model="claude-sonnet-5-5"), log=str(log), out=io.StringIO(), ui=True,
                 deadline=0.5) as (url, front):
        answers = [
            raw(url, head % (b"http://elsewhere.example/v1/messages", b"127.0.0.1", len(BODY)) + BODY.encode()),
            raw(url, head % (b"/v1/messages", b"rebound.example", len(BODY)) + BODY.encode()),
            raw(url, head % (b"/v1/messages", b"127.0.0.1", 40 * 2**20) + b"{"),
            raw(url, b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: sk-secret-2\r\n"
                     b"transfer-encoding: chunked\r\n\r\n-1\r\n" + b"x" * 1000),
            raw(url, head % (b"/v1/messages", b"127.0.0.1", 1000) + b"{" * 200),  # the rest never comes
            raw(url, b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-auth-token: tok-secret-3\r\nx-pad: a"),
            raw(url, b"GET /v1/models and more HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"),  # not a request line
        ]
        lines = list(reported(front, 7))
        page = front.timeline.since()
        assert httpx.post(f"{url}/v1/messages", content=BODY, headers=CLIENT).status_code == 200
        reported(front, 8)
    assert [a.split(b" ", 2)[1] for a in answers] == [b"400", b"403", b"413", b"400", b"408", b"408", b"400"], answers
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == len(front.lines) == 8, front.lines
    refused = sorted(records[:7], key=lambda r: (r["status"], r["method"], r["path"]))  # in the order they ended
    assert [(r["status"], r["method"], r["path"], r["response"]["error"]["type"]) for r in refused] == [
        (400, "-", "-", "invalid_request_error"),
        (400, "POST", "/v1/messages", "invalid_request_error"),
        (400, "POST", "http://elsewhere.example/v1/messages", "invalid_request_error"),
        (403, "POST", "/v1/messages", "permission_error"),
        (408, "GET", "/v1/models", "api_error"),
        (408, "POST", "/v1/messages", "api_error"),
        (413, "POST", "/v1/messages", "request_too_large")]
    assert all(r["refused_by_server"] and r["request"] is None for r in refused)
    assert {r["request_headers"].get("x-api-key") or r["request_headers"].get("x-auth-token") for r in refused[1:]} \
        == {"[redacted]"} and refused[0]["request_headers"] == {}  # h11 keeps no part of a head it cannot read
    assert not any(secret in log.read_text() + "\n".join(front.lines) for secret in ("sk-secret", "tok-secret"))
    assert "illegal request line" in refused[0]["response"]["error"]["message"]  # h11's reason, as an API error
    assert "chunk" in refused[1]["response"]["error"]["message"]
    for line in lines:
        assert re.match(r"#\d (POST|GET|-) \S+ (400|403|408|413) \| refused by the server: \w+_error: ", line) or \
            " 413 | refused by the server: request_too_large: " in line, line
    assert "200 | in " in front.lines[7] and (front.report.turned_away, front.report.refused) == (7, 0)
    assert page["calls"] == [] and sorted(r["status"] for r in page["refusals"]) == [400, 400, 400, 403, 408, 408, 413]
    again = read_log(log).since()
    assert len(again["calls"]) == 1 and again["refusals"] == front.timeline.since()["refusals"]
    assert again["skipped"] == []
