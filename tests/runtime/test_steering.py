"""Steering over HTTP on a real loopback socket: 200 into the history, 401 without the token,
409 when no run is active."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from minimal_runtime.core.hooks import Point
from minimal_runtime.core.messages import text_of
from minimal_runtime.steering import steering_server
from tests.support import TASK, pricing_agent

TOKEN = "s3cret-token"


def post(url: str, body: dict, token: str | None) -> int:
    request = urllib.request.Request(url + "/steer", data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json",
                                              **({"authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def test_steering_statuses_and_effect(tmp_path):
    agent, _, _ = pricing_agent(tmp_path)
    statuses: dict[str, int] = {}
    with steering_server(agent, TOKEN) as url:
        statuses["idle"] = post(url, {"text": "too early"}, TOKEN)
        reached = threading.Event()

        def during_run(event):  # from inside the run, as a person would from outside
            if len(event.agent.calls) == 3 and not reached.is_set():
                reached.set()
                statuses["no_token"] = post(url, {"text": "x"}, None)
                statuses["wrong_token"] = post(url, {"text": "x"}, "guess")
                statuses["bad_body"] = post(url, {"txt": "x"}, TOKEN)
                statuses["ok"] = post(url, {"text": "Also note whether annual billing is discounted."}, TOKEN)
        agent.hooks.register(Point.POST_LLM_CALL, during_run)
        assert agent.run(TASK).status == "done"
        statuses["after"] = post(url, {"text": "too late"}, TOKEN)
    assert statuses == {"idle": 409, "no_token": 401, "wrong_token": 401, "bad_body": 400, "ok": 200, "after": 409}
    steering = [m for m in agent.messages if m["role"] == "user" and "annual billing" in text_of(m)]
    assert len(steering) == 1  # durable: it is in the history, once
    assert "too early" not in json.dumps(agent.messages) and "too late" not in json.dumps(agent.messages)


class _Agent:
    """Only what the server calls: ``steer``, answering as told."""

    def __init__(self, answer):
        self.answer, self.steered = answer, []

    def steer(self, text):
        self.steered.append(text)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _exchange(url: str, body: bytes | None, headers: dict) -> tuple[int, dict, bytes]:
    import http.client
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.putrequest("POST", headers.pop("path", "/steer"), skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    response = connection.getresponse()
    answer = (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    connection.close()
    return answer


def test_every_answer_is_a_complete_json_response():
    from minimal_runtime.steering import SteerTooLarge

    auth = {"authorization": f"Bearer {TOKEN}"}

    def body(text) -> tuple[bytes, dict]:
        data = json.dumps({"text": text}).encode()
        return data, {**auth, "content-length": str(len(data))}
    cases = [  # (the agent's answer, body, headers, status, answer)
        (True, *body("go on"), 200, {"status": "queued"}),
        (False, *body("go on"), 409, {"error": "the run is not active"}),
        (SteerTooLarge("too big for the window"), *body("go on"), 413, {"error": "too big for the window"}),
        (True, *body("go on"), 401, {"error": "missing or wrong token"}),
        (True, *body(5), 400, {"error": 'body must be {"text": "<non-empty string>"}'}),
        (True, *body("  "), 400, {"error": 'body must be {"text": "<non-empty string>"}'}),
        (True, b"", {**auth}, 411, {"error": "a content-length is required"}),  # refused before reading
        (True, b"{}", {**auth, "content-length": "two"}, 400, {"error": "content-length must be a number"}),
        (True, *body("x" * 80), 413, {"error": "the body is over 64 bytes"}),
        (True, *body("x" * 52), 200, {"status": "queued"}),  # exactly the cap: accepted
        (True, *body("go on"), 404, {"error": "no such endpoint"}),
    ]
    cases[3][2].pop("authorization")
    cases[-1][2]["path"] = "/other"
    assert len(body("x" * 52)[0]) == 64
    agent = _Agent(True)
    with steering_server(agent, TOKEN, max_bytes=64) as url:
        for answer, data, headers, status, expected in cases:
            agent.answer, agent.steered = answer, []
            got_status, got_headers, got_body = _exchange(url, data, dict(headers))
            assert (got_status, json.loads(got_body)) == (status, expected), (status, data)
            assert got_headers["content-type"] == "application/json" and got_headers["connection"] == "close"
            assert int(got_headers["content-length"]) == len(got_body)
            reached_agent = status in (200, 409) or expected == {"error": "too big for the window"}
            assert agent.steered == ([json.loads(data)["text"]] if reached_agent else [])


# issue 27 item 8: slow clients, lying lengths, bursts ---------------------------------------------

def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _answer_of(connection) -> bytes:
    """Everything the server sent until it closed its side."""
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    return data


def test_slow_clients_cannot_hold_every_slot_past_the_request_deadline():
    """Three clients take all three slots and send a header byte every 20 ms: the 0.3 s deadline for
    a whole request ends them (a 408, then the server hangs up), and a real steer gets in."""
    import socket

    agent = _Agent(True)
    with steering_server(agent, TOKEN, max_connections=3, deadline=0.3) as url:
        slow = [socket.create_connection(_address(url), timeout=5) for _ in range(3)]
        ended = []

        def trickle(connection):
            connection.sendall(b"POST /steer HTTP/1.1\r\nx-pad: ")
            for _ in range(150):  # 3 s at most: far past the deadline
                try:
                    connection.sendall(b"a")
                    connection.settimeout(0.02)
                    if connection.recv(1024) == b"":  # the server gave up on us
                        ended.append(connection)
                        return
                except TimeoutError:
                    continue
                except OSError:
                    ended.append(connection)
                    return
        threads = [threading.Thread(target=trickle, args=(c,)) for c in slow]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        status = post(url, {"text": "a real steer"}, TOKEN)
        for c in slow:
            c.close()
    assert len(ended) == 3 and status == 200 and agent.steered == ["a real steer"]


def test_a_negative_length_is_refused_before_a_byte_of_the_body_is_read():
    import socket

    agent = _Agent(True)
    body = json.dumps({"text": "x" * 100_000}).encode()  # far over the cap
    with steering_server(agent, TOKEN, max_bytes=1000, deadline=2.0) as url:
        connection = socket.create_connection(_address(url), timeout=10)
        connection.sendall(f"POST /steer HTTP/1.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-length: -1\r\n\r\n".encode()
                           + body)
        connection.shutdown(socket.SHUT_WR)
        answer = _answer_of(connection)
        connection.close()
    assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400")
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"error": "content-length must be a number: a length is "
                                                                     "never negative"}
    assert agent.steered == []


def test_the_listen_backlog_is_sized_to_the_connection_cap():
    from minimal_runtime.steering import _SteeringServer

    server = _SteeringServer(_Agent(True), TOKEN, "127.0.0.1", 0, max_bytes=64, deadline=1.0, max_connections=40,
                             workers=1)
    try:
        assert server.backlog == 160  # four times the cap
    finally:
        server.close()


def test_an_answer_is_delivered_whole_even_to_a_client_still_sending_its_body():
    """Twelve clients each send a 1 MB steer to a 64 KB cap, and the one slot's holder is still
    sending its headers. Each reads a whole answer (a 413; the holder a 503): the server reads what
    they send after answering instead of resetting the connection under them."""
    import socket

    agent = _Agent(True)
    body = json.dumps({"text": "y" * 1_000_000}).encode()
    request = (f"POST /steer HTTP/1.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
               + body)
    answers = []
    with steering_server(agent, TOKEN, max_connections=1, max_bytes=64_000, deadline=5) as url:
        holder = socket.create_connection(_address(url), timeout=10)  # takes the slot and says no more
        holder.sendall(b"POST /steer HTTP/1.1\r\n")
        try:
            for _ in range(12):
                connection = socket.create_connection(_address(url), timeout=10)
                try:
                    connection.sendall(request)
                    answers.append(_answer_of(connection))
                except OSError as e:
                    answers.append(type(e).__name__.encode())
                finally:
                    connection.close()
            held = _answer_of(holder)
        finally:
            holder.close()
    too_large = json.dumps({"error": "the body is over 64000 bytes"}).encode()
    assert answers == [b"HTTP/1.1 413 Request Entity Too Large\r\ncontent-type: application/json\r\n"
                       b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(too_large), too_large)] * 12
    assert held.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert agent.steered == []


# issue 41: a selector reads every request whole before a worker sees it ------------------------------

def _send(url: str, raw: bytes) -> bytes:
    import socket
    with socket.create_connection(_address(url), timeout=10) as connection:
        connection.sendall(raw)
        return _answer_of(connection)


def _steer_request(text, host: str = "127.0.0.1", body: bytes | None = None) -> bytes:
    body = json.dumps({"text": text}).encode() if body is None else body
    return (f"POST /steer HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {TOKEN}\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode() + body


def test_32_slow_connections_keep_no_steer_waiting():
    """With the defaults: 32 clients trickle a byte every 50 ms, half in their headers and half in
    their bodies; a real steer is queued at once (a 200, not a 503) while they are still connected."""
    import socket
    import time

    agent = _Agent(True)
    with steering_server(agent, TOKEN) as url:
        slow = [socket.create_connection(_address(url), timeout=5) for _ in range(32)]
        for k, connection in enumerate(slow):
            connection.sendall(b"POST /steer HTTP/1.1\r\nx-pad: " if k % 2 else _steer_request("slow")[:-5])
        stop = threading.Event()

        def trickle():
            while not stop.wait(0.05):
                for connection in slow:
                    try:
                        connection.send(b"a")
                    except OSError:
                        pass
        thread = threading.Thread(target=trickle)
        thread.start()
        try:
            time.sleep(0.2)
            started = time.monotonic()
            answer = _send(url, _steer_request("a real steer"))
            waited = time.monotonic() - started
        finally:
            stop.set()
            thread.join()
            for connection in slow:
                connection.close()
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    assert agent.steered == ["a real steer"] and waited < 2


def test_past_the_connection_cap_the_oldest_unfinished_request_gets_the_503():
    """The cap bounds what the selector holds: a new connection past it ends the oldest one still
    arriving, with a whole 503, and requests that arrived whole are served."""
    import socket

    agent = _Agent(True)
    with steering_server(agent, TOKEN, max_connections=2) as url:
        oldest = socket.create_connection(_address(url), timeout=5)
        oldest.sendall(b"POST /steer HTTP/1.1\r\n")
        second = socket.create_connection(_address(url), timeout=5)
        second.sendall(b"POST /steer HTTP/1.1\r\n")
        first_answer = _send(url, _steer_request("arrived whole"))  # the third connection: the oldest goes
        oldest_answer = _answer_of(oldest)
        newer = socket.create_connection(_address(url), timeout=5)
        newer.sendall(b"POST /steer HTTP/1.1\r\n")
        second_answer = _send(url, _steer_request("also whole"))  # now the second is the oldest
        second_ended = _answer_of(second)
        for connection in (oldest, second, newer):
            connection.close()
    assert first_answer.startswith(b"HTTP/1.1 200 ") and second_answer.startswith(b"HTTP/1.1 200 ")
    assert oldest_answer.startswith(b"HTTP/1.1 503 ") and b"connection: close" in oldest_answer
    assert json.loads(oldest_answer.split(b"\r\n\r\n", 1)[1]) == {"error": "too many connections: try again"}
    assert second_ended.startswith(b"HTTP/1.1 503 ")
    assert agent.steered == ["arrived whole", "also whole"]


def test_a_body_nested_30000_deep_is_a_400():
    agent = _Agent(True)
    deep = b'{"text": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    with steering_server(agent, TOKEN, max_bytes=100_000) as url:
        answer = _send(url, _steer_request(None, body=deep))
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:100]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"error": 'body must be {"text": "<non-empty string>"}'}


def test_a_steer_on_a_full_disk_is_answered_and_not_queued():
    import errno

    agent = _Agent(OSError(errno.ENOSPC, "No space left on device"))
    with steering_server(agent, TOKEN) as url:
        answer = _send(url, _steer_request("keep this"))
    assert answer.startswith(b"HTTP/1.1 507 "), answer
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {
        "error": "the steer could not be recorded ([Errno 28] No space left on device): it is not queued; send it again"}


def test_a_host_that_is_not_loopback_or_the_one_served_is_refused_before_the_token_is_read():
    agent = _Agent(True)
    with steering_server(agent, TOKEN) as url:
        port = _address(url)[1]
        accepted = [_send(url, _steer_request("ok", host=h)) for h in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]")]
        refused = _send(url, _steer_request("rebound", host=f"rebound.example:{port}"))
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in accepted), accepted
    assert refused.startswith(b"HTTP/1.1 403 ")
    assert json.loads(refused.split(b"\r\n\r\n", 1)[1]) == {"error": "Host 'rebound.example' is not served here"}
    assert agent.steered == ["ok"] * 3


@pytest.mark.parametrize("lengths", [["17", "18"], ["17, 18"], ["18", "17"], ["1_7"], ["+17"], ["17 x"], ["0x11"],
                                     ["\u0661\u0667"], ["17", ""]])
def test_differing_or_non_digit_content_lengths_are_a_400_as_rfc_9112_says(lengths):
    """Issue 61 item 5: two differing Content-Length fields were read as the first, and "1_7" or "+17"
    as 17 (Python's int()). RFC 9110 §8.6: 1*DIGIT; RFC 9112 §6.3: invalid framing is a 400."""
    agent = _Agent(True)
    body = json.dumps({"text": "x" * 5}).encode()  # 17 bytes
    fields = "".join(f"content-length: {v}\r\n" for v in lengths)
    with steering_server(agent, TOKEN, deadline=2.0) as url:
        answer = _send(url, (f"POST /steer HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\n{fields}"
                             "\r\n").encode() + body + b"x")
        same = _send(url, (f"POST /steer HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\n"
                           "content-length: 17\r\ncontent-length: 17, 17\r\n\r\n").encode() + body)
    assert answer.split(b"\r\n", 1)[0].split()[1] == b"400", answer
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"] in ("content-length must be a number",
                                                                   "differing content-length values")
    assert same.split(b"\r\n", 1)[0].split()[1] == b"200" and agent.steered == ["xxxxx"]  # one value, repeated
