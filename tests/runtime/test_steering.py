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
