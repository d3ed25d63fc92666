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
        (True, b"", {**auth}, 400, {"error": 'body must be {"text": "<non-empty string>"}'}),  # no content-length: empty
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
