"""How long a legitimate client waits while slow ones hold connections, on both servers (issue 41).

For ``serve`` (``Emulator.serve()``, the same HTTP layer as ``python -m minimal_runtime serve``) and
the steering server: the median time of a plain request (``GET /v1/models``, a ``POST /steer``)
with no other client, then with 32 connections trickling a byte every 100 ms (half stopped in their
headers, half in a declared body), printed with the ratio of the two. Then ``serve``'s start and
stop, and the resident growth while 64 MB follow a chunk size of ``-1``. Then (issue 52 item 4) a
plain ``POST /v1/messages`` and ``GET /v1/models`` through ``serve``'s front with nothing else running,
then while a 20,000-request Message Batch is processed (each timed from another process, as another
client), with the ratio, and what the batch added to ``--log``. Everything on loopback, in this process; absolute times depend on the machine, the ratios
are what to compare.

    .venv/bin/python benchmarks/hostile_clients.py          # all of it
    .venv/bin/python benchmarks/hostile_clients.py batch    # the batch beside other clients only
    .venv/bin/python benchmarks/hostile_clients.py memory   # what serve keeps of 26 MB calls only
"""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.steering import steering_server  # noqa: E402
from minimal_runtime.emulator import Emulator  # noqa: E402

SLOW, EVERY, TRIES = 32, 0.1, 20
TOKEN = "bench-token"


class Agent:
    def steer(self, text: str) -> bool:
        return True


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def timed(url: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection(*address(url), timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 200, answer.status
    return time.perf_counter() - started


def trickling(url: str, openings: tuple[bytes, bytes]) -> tuple[list[socket.socket], threading.Event, threading.Thread]:
    sockets = []
    for k in range(SLOW):
        s = socket.create_connection(address(url), timeout=5)
        s.sendall(openings[k % 2])
        sockets.append(s)
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(EVERY):
            for s in sockets:
                try:
                    s.send(b"a")
                except OSError:
                    pass
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    time.sleep(3 * EVERY)
    return sockets, stop, thread


def compare(name: str, url: str, request, openings: tuple[bytes, bytes]) -> None:
    alone = statistics.median(request() for _ in range(TRIES))
    sockets, stop, thread = trickling(url, openings)
    try:
        crowded = statistics.median(request() for _ in range(TRIES))
    finally:
        stop.set()
        thread.join()
        for s in sockets:
            s.close()
    print(f"{name:<34} alone {alone * 1000:7.2f} ms   with {SLOW} slow clients {crowded * 1000:7.2f} ms   "
          f"({crowded / alone:.2f}x)")


BATCH = 20_000
PLAIN = json.dumps({"model": "claude-sonnet-5-5", "max_tokens": 64,
                    "messages": [{"role": "user", "content": "what is the capital of France?"}]}).encode()
API = {"x-api-key": "bench", "anthropic-version": "2023-06-01", "content-type": "application/json"}


ELSEWHERE = """
import http.client, json, sys, time
host, port, path, body, headers, tries = json.loads(sys.argv[1])
times = []
for _ in range(tries):
    began = time.perf_counter()
    connection = http.client.HTTPConnection(host, port, timeout=60)
    connection.request("POST" if body else "GET", path, body=body.encode() if body else None, headers=headers)
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 200, answer.status
    times.append(time.perf_counter() - began)
print(json.dumps(times))
"""


def elsewhere(url: str, path: str, body: bytes | None) -> list[float]:
    """``TRIES`` timed calls from another process, as another client makes them (in this process its
    own code would compete with the server's threads for the interpreter)."""
    import subprocess
    job = json.dumps([*address(url), path, body.decode() if body else None, API, TRIES])
    return json.loads(subprocess.run([sys.executable, "-c", ELSEWHERE, job], capture_output=True, text=True,
                                     check=True).stdout)


def batch_beside() -> None:
    """Another client's plain call during a 20,000-request batch, against the same call alone."""
    import tempfile

    from minimal_runtime.serve import started
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "calls.jsonl"
        emulator = Emulator(model="claude-sonnet-5-5")
        with started(emulator, log=str(log)) as (url, _):
            alone = statistics.median(elsewhere(url, "/v1/messages", PLAIN))
            alone_models = statistics.median(elsewhere(url, "/v1/models", None))
            before = log.stat().st_size
            items = [{"custom_id": f"r{i}", "params": {**json.loads(PLAIN), "messages": [
                {"role": "user", "content": f"question {i}: what is the capital of France?"}]}} for i in range(BATCH)]
            began = time.perf_counter()
            connection = http.client.HTTPConnection(*address(url), timeout=600)
            connection.request("POST", "/v1/messages/batches", json.dumps({"requests": items}), API)
            batch = json.loads(connection.getresponse().read())
            created = time.perf_counter() - began
            sent = sum(c.batch for c in emulator.calls)
            calls = elsewhere(url, "/v1/messages", PLAIN)
            first, during = calls[0], statistics.median(calls)
            during_models = statistics.median(elsewhere(url, "/v1/models", None))
            sent = f"{sent:,} to {sum(c.batch for c in emulator.calls):,}"
            # With serve's default --batch-delay 0 the batch ends at its creation on the clock: this
            # poll waits for the processor to finish it (a poll of a batch in progress would not).
            connection.request("GET", f"/v1/messages/batches/{batch['id']}", headers=API)
            assert json.loads(connection.getresponse().read())["processing_status"] == "ended"
            ended = time.perf_counter() - began
            connection.request("GET", f"/v1/messages/batches/{batch['id']}/results", headers=API)
            results = connection.getresponse().read()
            connection.close()
            grown = log.stat().st_size - before
    print(f"{'serve: POST /v1/messages':<34} alone {alone * 1000:7.2f} ms   during a {BATCH:,}-request batch "
          f"{during * 1000:7.2f} ms   ({during / alone:.2f}x; the first call after the create {first * 1000:.2f} ms, "
          f"{first / alone:.2f}x)")
    print(f"{'serve: GET /v1/models':<34} alone {alone_models * 1000:7.2f} ms   during the batch "
          f"{during_models * 1000:7.2f} ms   ({during_models / alone_models:.2f}x)")
    print(f"{'serve: the batch':<34} created in {created:.2f} s, {sent} of its requests sent while the calls "
          f"above were timed, ended after "
          f"{ended:.1f} s; results {len(results) / 2**20:.1f} MB, --log grew {grown / 2**20:.1f} MB "
          f"({grown / BATCH:.0f} bytes a request)")


CALLS, MB = 30, 26


def noise_png(side: int = 1000) -> str:
    """A ``side`` x ``side`` PNG of random pixels, stored uncompressed (about 3 MB), as base64."""
    import base64
    import os
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + os.urandom(side * 3) for _ in range(side))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def big_call(i: int, thread: bool = False) -> bytes:
    """A distinct call of about ``MB`` MB that the emulator answers: 6 random 1000 x 1000 images
    (about 4 MB of base64 each; an image is counted by its pixels, so the prompt stays in the
    context window) and a text of the rest, its first message its own."""
    images = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": noise_png()}}
              for _ in range(6)]
    rest = MB * 2**20 - sum(len(b["source"]["data"]) for b in images)
    messages = [{"role": "user", "content": [{"type": "text", "text": f"call {i}: " + "x" * rest}, *images]}]
    return json.dumps({"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": messages,
                       **({"thread": {"type": "create"}} if thread else {})}).encode()


def retention() -> None:
    """Issue 52 item 3: serve's resident memory after 30 distinct calls of 26 MB, then 30 thread
    creates of 26 MB (``--ui`` on: the report, the page and the held threads all keep what they may)."""
    import gc

    from minimal_runtime.serve import started
    threads = {**API, "anthropic-beta": "message-threads-2026-08-12"}
    with started(Emulator(model="claude-sonnet-5-5"), ui=True) as (url, _):
        timed(url, "POST", "/v1/messages", PLAIN, API)
        gc.collect()
        start, sent = rss(), 0
        for phase, headers in (("calls", API), ("thread creates", threads)):
            began = time.perf_counter()
            for i in range(CALLS):
                body = big_call(i + (CALLS if headers is threads else 0), thread=headers is threads)
                sent += len(body)
                timed(url, "POST", "/v1/messages", body, headers)
                del body
            gc.collect()
            grown = rss() - start
            print(f"{'serve: ' + str(CALLS) + ' ' + phase + ' of 26 MB':<34} resident {grown / 2**20:+7.1f} MB after "
                  f"{sent / 2**20:,.0f} MB sent ({grown / sent:.3f} MB per MB; {time.perf_counter() - began:.1f} s)")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def main() -> None:
    emulator = Emulator(model="claude-sonnet-5-5")
    with emulator.serve() as url:
        compare("serve: GET /v1/models", url, lambda: timed(url, "GET", "/v1/models"),
                (b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: ",
                 b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100000\r\n\r\n{"))
    body = json.dumps({"text": "check the annual prices too"}).encode()
    steer_headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    with steering_server(Agent(), TOKEN) as url:
        compare("steering: POST /steer", url, lambda: timed(url, "POST", "/steer", body, steer_headers),
                (b"POST /steer HTTP/1.1\r\nx-pad: ",
                 f"POST /steer HTTP/1.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-length: 1000\r\n\r\n{{".encode()))

    starts, stops = [], []
    for _ in range(5):
        began = time.perf_counter()
        with emulator.serve():
            up = time.perf_counter()
        stops.append(time.perf_counter() - up)
        starts.append(up - began)
    print(f"{'serve: start, stop':<34} {statistics.median(starts) * 1000:.1f} ms, {statistics.median(stops) * 1000:.1f} ms "
          "(median of 5)")

    if sys.platform.startswith("linux"):
        with emulator.serve() as url:
            before, peak, done = rss(), [0], threading.Event()

            def watch() -> None:
                while not done.wait(0.005):
                    peak[0] = max(peak[0], rss())
            watcher = threading.Thread(target=watch)
            watcher.start()
            began = time.perf_counter()
            s = socket.create_connection(address(url), timeout=10)
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n-1\r\n")
            sent = 0
            try:
                for _ in range(64):
                    s.sendall(b"x" * (1 << 20))
                    sent += 1
            except OSError:
                pass
            s.close()
            refused_after = time.perf_counter() - began
            done.set()
            watcher.join()
        print(f"{'serve: chunk size -1, then 64 MB':<34} refused after {sent} MB sent ({refused_after * 1000:.0f} ms), "
              f"resident growth {(peak[0] - before) / 2**20:.1f} MB")


if __name__ == "__main__":
    if sys.argv[1:] == ["batch"]:
        batch_beside()
    elif sys.argv[1:] == ["memory"]:
        retention()
    else:
        main()
        batch_beside()
        retention()
