"""Steering over HTTP on a real loopback socket: 200 into the history, 401 without the token,
409 when no run is active."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

from minimal_runtime.core.hooks import Point
from minimal_runtime.core.messages import text_of
from minimal_runtime.core.steering import steering_server
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
    from minimal_runtime.core.steering import SteerTooLarge

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


def test_a_connection_over_the_limit_gets_a_well_formed_503():
    import socket

    agent = _Agent(True)
    with steering_server(agent, TOKEN, max_connections=1, timeout=5) as url:
        host, port = url.removeprefix("http://").split(":")
        holder = socket.create_connection((host, int(port)))  # takes the only slot and says nothing
        try:
            import time
            time.sleep(0.3)
            extra = socket.create_connection((host, int(port)), timeout=5)
            answer = extra.recv(1024)
            extra.close()
        finally:
            holder.close()
    assert answer == b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


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
    """Three clients take all three slots and send a header byte every 20 ms, each well inside the
    1 s timeout: the 0.3 s deadline for a whole request ends them, and a real steer then gets in."""
    import socket

    agent = _Agent(True)
    with steering_server(agent, TOKEN, max_connections=3, timeout=1.0, deadline=0.3) as url:
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
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"error": "content-length must not be negative"}
    assert agent.steered == []


def test_the_listen_backlog_is_sized_to_the_connection_cap():
    from minimal_runtime.core.steering import _SteeringServer

    server = _SteeringServer(("127.0.0.1", 0), _Agent(True), TOKEN, 64, 1.0, 1.0, 40)
    try:
        assert server.request_queue_size == 160  # four times the cap
    finally:
        server.server_close()


def test_a_503_is_delivered_whole_even_to_a_client_still_sending_its_body():
    """The one slot is taken; twelve clients each send a 1 MB steer. Each reads a whole 503: the
    server reads what they send after answering instead of resetting the connection under them."""
    import socket

    agent = _Agent(True)
    body = json.dumps({"text": "y" * 1_000_000}).encode()
    request = (f"POST /steer HTTP/1.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
               + body)
    answers = []
    with steering_server(agent, TOKEN, max_connections=1, max_bytes=64_000, timeout=5, deadline=5) as url:
        holder = socket.create_connection(_address(url), timeout=10)  # takes the slot and says nothing
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
        finally:
            holder.close()
    assert answers == [b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"] * 12
    assert agent.steered == []
