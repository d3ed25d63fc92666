"""``serve`` under many and slow connections (issue 60, items 5 and 6): at its limit of requests
arriving at once, a new client is answered and the request arriving the longest is closed (as the
steering server does), where uvicorn's ``limit_concurrency`` answered every new request with a 503;
a request that does not arrive whole within the deadline is cut, trickled in 1-byte chunks or not.
Functional, not timed: ``benchmarks/serve_fairness.py`` measures the latencies."""

from __future__ import annotations

import io
import socket

import anthropic

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.server import CONNECTIONS
from minimal_runtime.serve import started

MODEL = "claude-sonnet-4-6"


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def waiting(url: str, count: int) -> list[socket.socket]:
    """``count`` connections that each sent one byte of a request and wait."""
    out = []
    for _ in range(count):
        sock = socket.create_connection(address(url), timeout=5)
        sock.sendall(b"P")
        out.append(sock)
    return out


def answer(sock: socket.socket) -> bytes:
    """What the server sent on ``sock`` until it closed it (blocking, at most the socket's timeout)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True  # nothing sent, not closed


def test_a_flood_at_the_limit_closes_the_oldest_unfinished_request_not_the_new_client(tmp_path):
    out = io.StringIO()
    with started(Emulator(model=MODEL), out=out) as (url, _):
        flood = waiting(url, CONNECTIONS)
        try:
            client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
            reply = client.messages.create(model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "hi"}])
            assert reply.type == "message"  # was: a 503, "Exceeded concurrency limit", for as long as the flood lasted
            oldest = answer(flood[0])
            assert oldest.startswith(b"HTTP/1.1 503 ") and b"closed to make room" in oldest, oldest
            assert all(still_open(sock) for sock in flood[1:50])  # the others are left as they were
        finally:
            for sock in flood:
                sock.close()
    assert "503 | refused by the server: api_error: over 1,000 requests were arriving at once" in out.getvalue()


def test_a_request_still_arriving_at_its_deadline_is_cut_whether_sent_slowly_or_in_1_byte_chunks():
    with started(Emulator(model=MODEL), out=io.StringIO(), deadline=0.2) as (url, _):
        slow = socket.create_connection(address(url), timeout=5)
        slow.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n{")
        chunked = socket.create_connection(address(url), timeout=5)
        chunked.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        chunked.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n")
        sent = 0
        try:
            while sent < 2**20:  # 1-byte chunks as fast as they go, until the server cuts the connection
                chunked.send(b"1\r\n \r\n")
                sent += 1
        except OSError:
            pass
        assert answer(slow).startswith(b"HTTP/1.1 408 ")
        assert sent < 2**20  # cut before it was sent whole
        try:  # the 408, unless the server's close met chunks it had not read (then a reset: cut all the same)
            assert answer(chunked).startswith(b"HTTP/1.1 408 ")
        except ConnectionResetError:
            pass
        slow.close()
        chunked.close()
        client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
        assert client.messages.create(model=MODEL, max_tokens=20,
                                      messages=[{"role": "user", "content": "hi"}]).type == "message"
