"""Bodies that json.loads reads in an unusual way, sent to ``serve`` over raw HTTP (issue 60): a
repeated ``"messages"`` key stalled every client for good, an attacker's repeated key changed how a
victim's next body was billed, and bodies with missing commas were answered 200. Each client here
gets what a fresh server would give it for its own bytes."""

from __future__ import annotations

import http.client
import json

import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import started

MODEL = "claude-sonnet-5-5"
HEADERS = {"x-api-key": "offline", "anthropic-version": "2023-06-01", "content-type": "application/json"}


def post(url: str, raw: bytes, key: str = "offline") -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)  # a stalled server fails the test
    try:
        connection.request("POST", "/v1/messages", body=raw, headers={**HEADERS, "x-api-key": key})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def models(url: str) -> int:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("GET", "/v1/models", headers=HEADERS)
        return connection.getresponse().status
    finally:
        connection.close()


def body(messages: list) -> bytes:
    return json.dumps({"model": MODEL, "max_tokens": 64, "messages": messages}).encode()


def alone(raw: bytes) -> tuple[int, dict]:
    """What a fresh emulator answers ``raw``, with no body before it."""
    status, _, answer = Emulator(model=MODEL).handle("POST", "/v1/messages", raw, HEADERS)
    return status, json.loads(answer)


VALID = [{"role": "user", "content": "Summarise the report."}]
VICTIM = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."},
          {"role": "user", "content": "How are you?"}]


def test_a_second_messages_key_is_answered_as_json_loads_reads_it_and_stalls_nobody():
    """The issue's reproduction: a valid body, then the same body with ``"messages": []`` added. It
    looped for ever under the emulator's lock; now it is the API's 400 for an empty messages list
    (json.loads keeps the last key), and another client, another key and the model list are answered."""
    first = body(VALID)
    repeated = first[:-1] + b', "messages": []}'
    with started(Emulator(model=MODEL)) as (url, _):
        assert post(url, first)[0] == 200
        status, answer = post(url, repeated)
        assert (status, answer["error"]["type"]) == (400, "invalid_request_error")
        assert answer == {**alone(repeated)[1], "request_id": answer["request_id"]}
        assert models(url) == 200
        status, answer = post(url, body(VICTIM), key="another-client")
    assert status == 200 and answer["usage"] == alone(body(VICTIM))[1]["usage"]


@pytest.mark.parametrize("attack", [
    b', "messages": [{"role": "user", "content": "' + b"attacker's text " * 60 + b'"}]}',
    b', "messages": []}',
])
def test_a_victims_request_after_an_attackers_repeated_key_is_billed_as_on_a_fresh_server(attack):
    """The attacker sends the victim's first message, then the same bytes with a second messages array;
    the victim's three-message request then billed 388 input tokens instead of 13 (or failed with
    'at least one message is required'). The attacker's own body is read with its last array."""
    opening = body(VICTIM[:1])
    attacker = opening[:-1] + attack
    with started(Emulator(model=MODEL)) as (url, _):
        post(url, opening, key="attacker")
        status, answer = post(url, attacker, key="attacker")
        assert (status, answer.get("usage")) == (alone(attacker)[0], alone(attacker)[1].get("usage"))
        status, answer = post(url, body(VICTIM), key="victim")
    assert status == 200, answer
    assert answer["usage"] == alone(body(VICTIM))[1]["usage"]


@pytest.mark.parametrize("raw", [
    b'{"model": "%s", "max_tokens": 64 "messages": [{"role": "user", "content": "hi"}]}' % MODEL.encode(),
    b'{"model": "%s", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"} '
    b'{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]}' % MODEL.encode(),
])
def test_a_body_with_a_missing_comma_is_the_apis_400_for_invalid_json(raw):
    with started(Emulator(model=MODEL)) as (url, _):
        assert post(url, body(VALID))[0] == 200  # an earlier body, as a running agent would have sent
        status, answer = post(url, raw)
    assert status == 400 and answer["error"]["type"] == "invalid_request_error"
    assert answer["error"]["message"].startswith("request body is not valid JSON")
