"""Is ``serve`` fair to a client while others trickle or flood it? (issue 60, items 5 and 6)

``serve`` is started as docs/serve.md starts it (``python -m minimal_runtime serve --port 0``, its
defaults, on loopback), and another client times ``--calls`` plain ``POST /v1/messages`` calls (each on
a connection of its own, as a new client's), one after the other:

- alone, nothing else connected;
- trickle: while one connection sends a 1 MB body in 1-byte chunks (chunked encoding, a ``send`` each,
  TCP_NODELAY: a segment each), one chunk every 15 ms, then ``--burst`` chunks every 15 ms (1,000:
  1 MB in about 15 s, the issue's sender);
- flood: while ``--flood`` connections (1,000 by default, ``serve``'s limit) have each sent one byte
  of a request and wait, any the server closes opened again at once, as a flooder would.

It prints each case's median and worst latency of the calls answered, and how many were refused or
failed (a 503, a reset, no answer in 10 s: counted apart, with the longest any of them waited). With ``--compare REF`` it first does the same with the code at that
git ref (``git archive``, as ``benchmarks/replay_folder.py`` does) and prints before and after.
Every loop is bounded: ``--calls`` calls per case, each given at most 10 s, a case at most 60 s.
Absolute times depend on the machine (2 shared cores here); before/after in one run is the figure.

    .venv/bin/python benchmarks/serve_fairness.py [--calls 20] [--burst 1000] [--flood 1000] [--compare REF]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.replay_folder import checkout  # noqa: E402

BODY = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 50,
                   "messages": [{"role": "user", "content": "Say hello."}]}).encode()
CALL_TIMEOUT = 10.0  # seconds a timed call may take before it counts as failed
CASE_LIMIT = 60.0  # seconds a case may run, whatever --calls says
TRICKLE_BYTES = 2**20
EVERY = 0.015


def started(code: Path) -> tuple[subprocess.Popen, tuple[str, int]]:
    """``python -m minimal_runtime serve --port 0`` with ``code``'s package first on the path."""
    server = subprocess.Popen([sys.executable, "-m", "minimal_runtime", "serve", "--port", "0"], cwd=code,
                              env={**os.environ, "PYTHONPATH": str(code)}, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    url = ""
    for _ in range(20):  # the banner: its second line names the URL
        line = server.stdout.readline().strip()
        if line.startswith("export ANTHROPIC_BASE_URL="):
            url = line.removeprefix("export ANTHROPIC_BASE_URL=")
            break
    if not url:
        server.kill()
        raise SystemExit(f"serve at {code} printed no base URL")
    threading.Thread(target=lambda: server.stdout.read(), daemon=True).start()  # its per-call lines: drained
    host, port = url.removeprefix("http://").split(":")
    return server, (host, int(port))


def call(address: tuple[str, int]) -> tuple[float, bool]:
    """One plain call on a new connection: (seconds until it was answered or gave up, answered with a 200)."""
    start = time.perf_counter()
    try:
        connection = http.client.HTTPConnection(*address, timeout=CALL_TIMEOUT)
        connection.request("POST", "/v1/messages", body=BODY, headers={
            "content-type": "application/json", "x-api-key": "dummy", "anthropic-version": "2023-06-01"})
        answer = connection.getresponse()
        answer.read()
        connection.close()
    except OSError:  # a timeout, a reset
        return time.perf_counter() - start, False
    return time.perf_counter() - start, answer.status == 200


def timed_calls(address: tuple[str, int], calls: int) -> list[tuple[float, bool]]:
    out: list[tuple[float, bool]] = []
    until = time.monotonic() + CASE_LIMIT
    while len(out) < calls and time.monotonic() < until:
        out.append(call(address))
    return out


def trickle(address: tuple[str, int], burst: int, stop: threading.Event) -> None:
    """A 1 MB body in 1-byte chunks (chunked encoding, a ``send`` each): ``burst`` chunks every 15 ms, until
    sent, closed by the server, or told to stop."""
    sock = socket.create_connection(address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(0.5)  # a send the server does not take: the stop is looked at again
    try:
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                     b"x-api-key: dummy\r\ntransfer-encoding: chunked\r\n\r\n")
        sent = 0
        while sent < TRICKLE_BYTES and not stop.is_set():
            for _ in range(min(burst, TRICKLE_BYTES - sent)):
                try:
                    sock.send(b"1\r\n \r\n")
                    sent += 1
                except TimeoutError:
                    break
            time.sleep(EVERY)
        sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server closed it (its deadline): the case goes on with whatever the server does next
    finally:
        sock.close()


def flood(address: tuple[str, int], count: int, stop: threading.Event, opened: threading.Event) -> None:
    """``count`` connections that each sent one byte of a request; any the server closes is opened again."""
    sockets: list[socket.socket | None] = [None] * count
    reopened = 0
    while not stop.is_set():
        for k in range(count):
            if stop.is_set():
                break
            sock = sockets[k]
            if sock is not None:
                try:
                    sock.setblocking(False)
                    if sock.recv(1024, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError  # closed by the server
                    sock.recv(65536)  # an answer (a 503, a 408): the connection is done
                    raise ConnectionResetError
                except BlockingIOError:
                    continue  # still open and waiting: as the flooder wants
                except OSError:
                    sock.close()
                    sockets[k] = None
                    reopened += 1
            try:
                sock = socket.create_connection(address, timeout=2)
                sock.send(b"P")
                sockets[k] = sock
            except OSError:
                sockets[k] = None
        opened.set()
        stop.wait(0.05)
    for sock in sockets:
        if sock is not None:
            sock.close()
    flood.reopened = reopened  # type: ignore[attr-defined]


def case(address: tuple[str, int], calls: int, load=None) -> list[tuple[float, bool]]:
    if load is None:
        return timed_calls(address, calls)
    stop, ready = threading.Event(), threading.Event()
    worker = threading.Thread(target=load, args=(address, stop, ready), daemon=True)
    worker.start()
    ready.wait(30)
    time.sleep(0.5)  # the load under way
    try:
        return timed_calls(address, calls)
    finally:
        stop.set()
        worker.join(30)


def measure(code: Path, args) -> dict[str, list[tuple[float, bool]]]:
    loads = {
        "alone": None,
        "trickle (a 1-byte chunk / 15 ms)": lambda a, stop, ready: (ready.set(), trickle(a, 1, stop)),
        f"trickle ({args.burst:,} chunks / 15 ms)": lambda a, stop, ready: (ready.set(), trickle(a, args.burst, stop)),
        f"flood ({args.flood:,} connections)": lambda a, stop, ready: flood(a, args.flood, stop, ready),
    }
    out = {}
    for name, load in loads.items():
        server, address = started(code)  # a fresh server each case: one case's leftovers do not weigh on the next
        try:
            out[name] = case(address, args.calls, load)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return out


def summary(times: list[tuple[float, bool]]) -> str:
    """Median and worst of the answered calls; of the others, how many and the longest any waited."""
    done = [t for t, ok in times if ok]
    failed = [t for t, ok in times if not ok]
    shown = f"{statistics.median(done):>7.3f}s {max(done):>7.3f}s" if done else f"{'-':>8} {'-':>8}"
    return shown + f" {len(failed):>3}/{len(times)}" + (f" (waited up to {max(failed):.1f}s)" if failed else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="timed calls per case (default 20)")
    parser.add_argument("--burst", type=int, default=1000, help="1-byte chunks every 15 ms by the fast trickler "
                                                                "(default 1,000: 1 MB in about 15 s)")
    parser.add_argument("--flood", type=int, default=1000, help="connections the flooder holds (default 1,000)")
    parser.add_argument("--compare", default=None, metavar="REF", help="also measure the code at this git ref, first")
    args = parser.parse_args()
    print(f"serve_fairness: {args.calls} calls per case, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="serve-fairness-") as tmp:
        if args.compare:
            results[args.compare] = measure(checkout(args.compare, Path(tmp) / "before"), args)
        results["this tree"] = measure(ROOT, args)
    print(f"{'case':<34}{'code':<14}{'median':>8} {'worst':>8} refused or failed")
    for name in results["this tree"]:
        for label, r in results.items():
            print(f"{name:<34}{label[:13]:<14}{summary(r[name])}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
