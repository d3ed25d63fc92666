"""The emulator's HTTP layer (``emulator/server.py``), as other clients reach it (issue 23, item 5).

The model listing is read through the real SDK (``client.models``); bodies the SDK never sends
(chunked, gzip) through httpx, which other clients use; idle connections as raw sockets."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import socket
import threading
import zlib

import anthropic
import httpx
import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.emulator.server import MAX_REQUEST_BYTES, serve
from minimal_runtime.provider.models import MODELS
from minimal_runtime.serve import started

CLIENT = {"x-api-key": "offline", "anthropic-version": "2023-06-01"}  # what every SDK sends
BODY = json.dumps({"model": "claude-sonnet-5-5", "max_tokens": 64,
                   "messages": [{"role": "user", "content": "hello"}]}).encode()


@pytest.fixture(scope="module")
def base_url():
    with Emulator(model="claude-sonnet-5-5").serve() as url:
        yield url


def test_models_list_and_retrieve_have_the_sdk_shapes(base_url):
    client = anthropic.Anthropic(base_url=base_url, api_key="dummy")
    listed = list(client.models.list())  # the SDK pages through it by itself
    assert sorted(m.id for m in listed) == sorted(MODELS)
    assert all(m.type == "model" and m.created_at.tzinfo is not None and m.lifecycle in ("active", "deprecated")
               for m in listed)
    newest_first = [m.created_at for m in listed]
    assert newest_first == sorted(newest_first, reverse=True)
    page = client.models.list(limit=3)
    assert len(page.data) == 3 and page.has_more and page.first_id == page.data[0].id and page.last_id == page.data[-1].id
    after = client.models.list(limit=3, after_id=page.last_id)
    assert after.data[0].id == listed[3].id
    one = client.models.retrieve("claude-sonnet-4-5-20250929")  # a dated id names its model
    assert one.id == "claude-sonnet-4-5" and one.lifecycle == "deprecated" and one.max_input_tokens == 200_000
    sonnet = client.models.retrieve("claude-sonnet-5-5")
    assert (sonnet.display_name, sonnet.line, sonnet.max_tokens) == ("Claude Sonnet 5.5", "sonnet", 128_000)
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("claude-nonexistent-9")
    with pytest.raises(anthropic.BadRequestError):
        client.models.list(limit=0)


def test_an_unknown_path_is_a_404_that_names_the_method_used(base_url):
    answer = httpx.get(f"{base_url}/v1/skills")
    assert answer.status_code == 404
    assert answer.json()["error"]["type"] == "not_found_error"
    assert answer.json()["error"]["message"].startswith("GET /v1/skills: no such endpoint; emulated: POST /v1/messages, ")
    assert httpx.delete(f"{base_url}/v1/messages").json()["error"]["message"].startswith("DELETE /v1/messages: ")


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/chat/completions", "/v1/responses"])
def test_an_openai_endpoint_is_told_it_is_not_emulated_and_what_is(path):
    """An OpenAI-style client (or one set to its OpenAI provider) posts to /v1/chat/completions: the
    API has an OpenAI compatibility layer there, serve does not (issue 60)."""
    with started(Emulator(model="claude-sonnet-5-5"), out=io.StringIO()) as (url, front):
        answer = httpx.post(f"{url}{path}", json={"model": "claude-sonnet-5-5", "messages": []})
    assert "not emulated" in front.lines[0]
    message = answer.json()["error"]["message"]
    assert answer.status_code == 404 and "the OpenAI-compatible endpoint is not emulated" in message
    assert "POST /v1/messages" in message and "GET /v1/models" in message


def test_a_chunked_request_body_is_read_whole(base_url):
    def pieces():
        for i in range(0, len(BODY), 7):
            yield BODY[i:i + 7]
    answer = httpx.post(f"{base_url}/v1/messages", content=pieces(), headers={**CLIENT, "content-type": "application/json"})
    assert answer.request.headers["transfer-encoding"] == "chunked"
    assert answer.status_code == 200, answer.text
    assert answer.json()["type"] == "message"


@pytest.mark.parametrize("encoding, encode", [("gzip", gzip.compress), ("deflate", zlib.compress)])
def test_a_compressed_request_body_is_decoded(base_url, encoding, encode):
    answer = httpx.post(f"{base_url}/v1/messages", content=encode(BODY),
                        headers={**CLIENT, "content-type": "application/json", "content-encoding": encoding})
    assert answer.status_code == 200, answer.text
    assert answer.json()["usage"]["input_tokens"] > 0


def test_a_compressed_body_is_limited_by_its_decoded_size_and_an_unknown_coding_is_refused(base_url):
    bomb = gzip.compress(b" " * (MAX_REQUEST_BYTES + 1), compresslevel=1)  # about 140 KB on the wire
    answer = httpx.post(f"{base_url}/v1/messages", content=bomb,
                        headers={**CLIENT, "content-type": "application/json", "content-encoding": "gzip"})
    assert answer.status_code == 413 and answer.json()["error"]["type"] == "request_too_large"
    answer = httpx.post(f"{base_url}/v1/messages", content=BODY,
                        headers={**CLIENT, "content-type": "application/json", "content-encoding": "br"})
    assert answer.status_code == 415 and "br" in answer.json()["error"]["message"]
    answer = httpx.post(f"{base_url}/v1/messages", content=b"not gzip",
                        headers={**CLIENT, "content-type": "application/json", "content-encoding": "gzip"})
    assert answer.status_code == 400 and "gzip" in answer.json()["error"]["message"]


def test_a_batch_body_may_pass_the_messages_cap_and_a_message_body_may_not():
    """API-2026 §12.3, §13: 32 MB for Messages and count_tokens, 256 MB for a batch, each enforced
    while reading. Bodies 1 MB over 32 MB, streamed chunked a megabyte at a time: at the batches
    endpoint it is read whole (the answer is the emulator's own: the batch has no requests), at
    ``/v1/messages`` it is a 413 as soon as the cap is passed. Through serve's front, as a client reaches it."""
    megabyte, megabytes = b" " * 2**20, MAX_REQUEST_BYTES // 2**20 + 1

    def batch():
        yield b'{"requests": []'
        yield from (megabyte for _ in range(megabytes))
        yield b"}"
    with started(Emulator(model="claude-sonnet-5-5"), out=io.StringIO()) as (url, front):
        answer = httpx.post(f"{url}/v1/messages/batches", content=batch(), timeout=30,
                            headers={**CLIENT, "content-type": "application/json"})
        assert answer.status_code == 400 and "at least 1" in answer.json()["error"]["message"], answer.text
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                      b"transfer-encoding: chunked\r\n\r\n")
            refused = b""
            try:
                for _ in range(megabytes + 2):
                    s.sendall(b"100000\r\n" + megabyte + b"\r\n")
                s.sendall(b"0\r\n\r\n")
            except OSError:  # the server answered and hung up while the rest was still coming: as it should
                pass
            with contextlib.suppress(OSError):
                while piece := s.recv(65536):
                    refused += piece
    assert refused.startswith(b"HTTP/1.1 413 ") and b"(33,554,432)" in refused, refused[:300]
    assert " 400 | refused: invalid_request_error" in front.lines[0] and len(front.lines) == 2, front.lines


def test_an_idle_connection_is_closed_after_the_socket_timeout():
    with serve(Emulator(), idle_timeout=0.2) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as idle:
            idle.settimeout(5)
            assert idle.recv(1) == b""  # the server hung up on a connection that sent nothing


def test_300_idle_connections_hold_no_thread_and_do_not_keep_a_client_waiting():
    """Idle keep-alive connections wait in a selector: 300 of them add no worker thread, and a
    client with a request is answered at once, not after the idle ones time out (30 s here)."""
    before = threading.active_count()
    with serve(Emulator(model="claude-sonnet-5-5"), workers=8, idle_timeout=30) as url:
        host, port = url.removeprefix("http://").split(":")
        idle = [socket.create_connection((host, int(port))) for _ in range(300)]
        try:
            client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0, timeout=10)
            for _ in range(3):  # on one keep-alive connection, parked between the calls
                answer = client.messages.create(model="claude-sonnet-5-5", max_tokens=32,
                                                messages=[{"role": "user", "content": "still there?"}])
                assert answer.type == "message"
            assert threading.active_count() - before <= 8 + 2, f"{threading.active_count() - before} threads"
        finally:
            for s in idle:
                s.close()


def test_a_port_already_taken_is_a_plain_os_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError) as raised:
            with serve(Emulator(), port=taken.getsockname()[1]):
                pass
    assert not isinstance(raised.value, AttributeError) and raised.value.errno is not None
