"""The emulator as a client sees it over HTTP: the ``python -m minimal_runtime serve`` command a user
runs, with a record of every exchange read back from its ``--log``.

``serve_emulator(policy, model)`` is the one place that starts the server: the command, in its own
process, on a free loopback port, answering with the suite's policy (``--policy
tests.interop.policy:Configured``). When the block ends the command is stopped (SIGTERM, as Ctrl-C)
and its log is read into ``Exchange`` records; the list yielded is filled then.

Each record says what the client sent that matters for fidelity (API version, auth scheme, betas,
how many signed thinking blocks it resent) and what the emulator did: the status, the error text,
and the prefix check's verdicts. The verdicts are recomputed here with the emulator's own
``binding.check`` for every accepted request, on every model, so a client that edits history
shows up even on a model where the API does not enforce the check (the strict verdict; ``serve``'s
own ``prefix`` column reports only what the model enforces). For a refused request the record
keeps a shape of the request (field paths, block types, headers), never the client's prose.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from minimal_runtime.emulator import Emulator, binding
from minimal_runtime.provider.models import lookup

from .policy import ToolRounds

PREFIX_ERROR = "bound to a different conversation"
_SCALARS = ("model", "max_tokens", "stream", "temperature", "top_p", "top_k", "thinking", "output_config",
            "tool_choice", "context_management", "compaction", "service_tier", "inference_geo")
ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = inspect.signature(Emulator).parameters["account"].default  # the account ``serve`` signs blocks for
START_TIMEOUT = 120  # seconds for the command to print its address (an import on a busy machine)
URL_LINE = "export ANTHROPIC_BASE_URL="


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    model: str | None = None
    error: str | None = None
    error_code: str | None = None  # error.details.error_code; "emulated_fault" for serve --faults
    thread: str | None = None  # what a message thread did (serve's own note)
    version: str | None = None  # anthropic-version
    auth: str | None = None  # "x-api-key" or "bearer"
    betas: list[str] = field(default_factory=list)
    stream: bool = False
    keys: list[str] = field(default_factory=list)  # the request's top-level fields
    settings: dict = field(default_factory=dict)  # the values of those that select behaviour (no prose)
    signed_blocks: int = 0  # thinking blocks with a signature, resent in messages
    prefix_failures: list[str] = field(default_factory=list)  # paths of blocks the check rejects
    shape: dict | None = None  # refused requests only: what was sent, without prose

    @property
    def refused(self) -> bool:
        return self.status >= 400

    def to_json(self) -> dict:
        return asdict(self)


def exchange_of(record: dict) -> Exchange:
    """An ``Exchange`` from one line of ``serve --log`` (see ``minimal_runtime/serve/exchange.py``).
    Secret headers are redacted there, so the auth scheme is read from which header was sent."""
    h = {k.lower(): v for k, v in (record.get("request_headers") or {}).items()}
    auth = "bearer" if "authorization" in h else ("x-api-key" if "x-api-key" in h else None)
    betas = sorted(b.strip() for b in h.get("anthropic-beta", "").split(",") if b.strip())
    path, status, request = record["path"], record["status"], record.get("request")
    x = Exchange(record["method"], path, status, version=h.get("anthropic-version"), auth=auth, betas=betas)
    if isinstance(request, dict):
        x.model, x.stream = record.get("model") or request.get("model"), bool(request.get("stream"))
        x.keys = sorted(request)
        x.settings = {k: request[k] for k in _SCALARS if k in request and k not in ("model", "stream")}
        x.signed_blocks = sum(1 for _, b in _thinking_blocks(request) if b.get("signature"))
    x.thread = record.get("thread")
    if status >= 400:
        response = record.get("response")
        try:
            x.error = response["error"]["message"]
            x.error_code = (response["error"].get("details") or {}).get("error_code")
        except (KeyError, TypeError, AttributeError):
            x.error = (record.get("response_text") or json.dumps(response))[:300]
        if x.error and "(emulated fault)" in x.error:
            x.error_code = "emulated_fault"
        x.shape = shape(request, h)
        if x.error and PREFIX_ERROR in x.error:
            x.prefix_failures.append(x.error.split(":")[0])
    elif isinstance(request, dict) and path == "/v1/messages" and x.signed_blocks:
        spec = lookup(x.model or "")
        if spec is not None:
            bound = binding.check(request, spec, ACCOUNT, 0, None)
            x.prefix_failures = [v.path for v in bound.verdicts if v.reason is not None or v.tampered]
    return x


def _thinking_blocks(request: dict) -> Iterator[tuple[int, dict]]:
    for i, message in enumerate(request.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in binding.THINKING_TYPES:
                yield i, block


def shape(request: Any, headers: dict[str, str]) -> dict:
    """What a refused request looked like, minus the client's prose: parameter values, field
    paths, block types, tool names, and the headers that select behaviour."""
    out: dict[str, Any] = {"headers": {k: v for k, v in headers.items()
                                       if k in ("anthropic-version", "anthropic-beta", "content-type",
                                                "content-encoding", "transfer-encoding", "user-agent")}}
    if not isinstance(request, dict):
        out["body"] = "not a JSON object"
        return out
    out["keys"] = sorted(request)
    out.update({k: request[k] for k in _SCALARS if k in request})
    system = request.get("system")
    if isinstance(system, list):
        out["system"] = [_block_shape(b) for b in system]
    out["tools"] = [t.get("name", t.get("type")) for t in request.get("tools") or [] if isinstance(t, dict)]
    out["messages"] = [
        {"role": m.get("role"), **{k: v for k, v in m.items() if k not in ("role", "content")},
         "content": [_block_shape(b) for b in m["content"]] if isinstance(m.get("content"), list) else "str"}
        for m in request.get("messages") or [] if isinstance(m, dict)]
    return out


def _block_shape(block: Any) -> Any:
    if not isinstance(block, dict):
        return type(block).__name__
    return {"type": block.get("type"), **{k: block[k] for k in ("cache_control", "citations", "is_error")
                                          if k in block}}


@contextlib.contextmanager
def serve_emulator(policy: ToolRounds, model: str = "claude-sonnet-5-5", *, log: Path | None = None,
                   account_created: str | None = None, options: tuple[str, ...] = ()) -> Iterator[tuple[str, list[Exchange]]]:
    """Run ``python -m minimal_runtime serve`` on a free loopback port with ``policy``; yields (base
    URL, the list its exchanges land in when the block ends). ``log``: where the command's JSONL log
    goes (its printed lines next to it, ``.out``); default a temporary folder. ``options``: more of
    the command's options (``--batch-delay 1``)."""
    logs = {model: log} if log else None
    with serve_emulators(policy, [model], logs=logs, account_created=account_created, options=options) as servers:
        yield servers[model]


@contextlib.contextmanager
def serve_emulators(policy: ToolRounds | None, models: list[str], *, logs: dict[str, Path] | None = None,
                    account_created: str | None = None,
                    options: tuple[str, ...] = ()) -> Iterator[dict[str, tuple[str, list[Exchange]]]]:
    """One ``serve`` command per model, started together (each takes seconds to import the SDK):
    yields model -> (base URL, its exchanges, filled when the block ends)."""
    with contextlib.ExitStack() as stack:
        if logs is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="interop-serve-")))
            logs = {m: folder / f"{m}.serve.jsonl" for m in models}
        settings = {"rounds": policy.rounds, "prefer": policy.prefer} if policy is not None else {}
        env = {**os.environ, "INTEROP_POLICY": json.dumps(settings),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        started = {}
        for model in models:
            log = logs[model]
            log.parent.mkdir(parents=True, exist_ok=True)
            log.unlink(missing_ok=True)  # the command appends
            command = [sys.executable, "-m", "minimal_runtime", "serve", "--port", "0", "--model", model, "--log", str(log)]
            if policy is not None:  # None: plain serve, its default policy, as a user starts it
                command += ["--policy", "tests.interop.policy:Configured"]
            if account_created:
                command += ["--account-created", account_created]
            command += list(options)  # --thread-ttl, --faults, --batch-delay ...
            out = stack.enter_context(log.with_suffix(".out").open("w"))
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
            stack.callback(_stop, process)
            started[model] = process
        servers = {m: (_address(p, logs[m].with_suffix(".out")), []) for m, p in started.items()}
        yield servers
        for model, process in started.items():
            _stop(process)
            if logs[model].exists():
                servers[model][1].extend(exchange_of(json.loads(line))
                                         for line in logs[model].read_text().splitlines() if line.strip())


def _address(process: subprocess.Popen, printed: Path) -> str:
    """The base URL from the command's banner (``export ANTHROPIC_BASE_URL=...``)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for line in printed.read_text().splitlines():
            if line.strip().startswith(URL_LINE):
                return line.strip()[len(URL_LINE):]
        if process.poll() is not None:
            raise RuntimeError(f"serve exited ({process.returncode}) before listening:\n{printed.read_text()[-2000:]}")
        time.sleep(0.05)
    raise RuntimeError(f"serve printed no address in {START_TIMEOUT} s:\n{printed.read_text()[-2000:]}")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM, as a user's Ctrl-C: the command prints its summary and closes its log."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def closed_network_env() -> dict[str, str]:
    """The drivers' environment: loopback only (any other request fails at once), no cost-map fetch."""
    closed = "http://127.0.0.1:9"
    return {**os.environ, "HTTPS_PROXY": closed, "HTTP_PROXY": closed, "https_proxy": closed, "http_proxy": closed,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ANTHROPIC_API_KEY": "sk-ant-offline-interop"}


# -- the summary ----------------------------------------------------------------------------------

def summary_table(rows: list[dict]) -> str:
    """One line per client and model: requests, refused, prefix failures, and what it sent."""
    header = ("client", "model", "requests", "thread create/continue", "refused (expected)", "prefix failures",
              "signed blocks resent", "api versions", "seconds", "result")
    lines = [header]
    for r in rows:
        xs: list[Exchange] = r["exchanges"]
        versions = sorted({x.version or "-" for x in xs})
        expected = [x.error_code for x in xs if x.refused and x.error_code in r.get("expected", ())]
        kinds = [(x.thread or "").split(" ")[0] for x in xs]
        lines.append((r["client"], r["model"], str(len(xs)), f"{kinds.count('create')}/{kinds.count('continue')}",
                      f"{sum(x.refused for x in xs)}" + (f" ({', '.join(sorted(set(expected)))}: {len(expected)})"
                                                         if expected else ""),
                      str(sum(bool(x.prefix_failures) for x in xs)), str(sum(x.signed_blocks for x in xs)),
                      ",".join(versions), f"{r['seconds']:.1f}", r["result"]))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    fmt = lambda line: "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(lines[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, lines[1:])])


def what_clients_send(rows: list[dict]) -> list[str]:
    """Per client, over all its requests: API versions, auth schemes, betas, and the distinct values
    of the fields that select behaviour (temperature, thinking, output_config ...)."""
    out = []
    for client in dict.fromkeys(r["client"] for r in rows):
        xs = [x for r in rows if r["client"] == client for x in r["exchanges"]]
        settings: dict[str, set] = {}
        for x in xs:
            for k, v in x.settings.items():
                if k not in ("max_tokens",):
                    settings.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
        values = "; ".join(f"{k}: " + " | ".join(sorted(v)) for k, v in settings.items())
        out.append(f"{client}: anthropic-version {sorted({x.version for x in xs if x.version})}, "
                   f"auth {sorted({x.auth for x in xs if x.auth})}, "
                   f"betas {sorted({b for x in xs for b in x.betas})}, settings {{{values}}}")
    return out
