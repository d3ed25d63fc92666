"""A run as one HTML file: ``python -m minimal_runtime view --html RUN -o run.html``.

The page ``serve --ui`` shows (``serve/ui/``: its markup, script and style), with the run's data inside
it, so it opens from a file with no server and no network: a learner sends "here is my run, why did
call 7 miss?" as one attachment. RUN is a ``serve --log`` file, a runtime record (a ``RunStore``'s
folder or its ``events.jsonl``), or any log ``replay`` reads (Claude Code, Codex, mini-swe-agent, ...).

What the file holds is what the live page asks its server for: the run's calls and totals, each call
opened (its prompt block by block in cache regions), and each call side by side with the one it
continues. Long texts that many calls repeat (a history is resent every call) are kept once. The
live page's safety holds: the same content policy, now by hash (only the page's own script and style
run; nothing is loaded or fetched), the data inert JSON with ``<`` escaped, every text put on the page
as text (``page.js``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..serve.timeline import Timeline

UI = Path(__file__).resolve().parent.parent / "serve" / "ui"
SHARED_CHARS = 80  # a string (or a block, as JSON) this long or longer is kept once, however many calls repeat it
DOWNLOAD = '<a id="download" href="/ui/run.html" download="run.html">download this run as one file</a>'


def html(timeline: Timeline) -> str:
    """The page, its script, its style and ``timeline``'s data, as one self-contained document."""
    page, script, style = ((UI / name).read_text(encoding="utf-8") for name in ("index.html", "page.js", "page.css"))
    data = _data(timeline)
    inert = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    # inside <script type="application/json">: no "</script>" or "<!--" can end or bend it
    inert = inert.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    inert = inert.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    policy = (f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    head = f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n<meta name="referrer" content="no-referrer">'
    for old, new in (('<meta charset="utf-8">', f'<meta charset="utf-8">\n{head}'),
                     ('<link rel="stylesheet" href="/ui/page.css">', f"<style>{style}</style>"),
                     ('<script src="/ui/page.js" defer></script>\n', ""),
                     (DOWNLOAD, ""),  # the file is the download
                     ("</body>", f'<script type="application/json" id="run-data">{inert}</script>\n'
                                 f"<script>{script}</script>\n</body>")):
        if old not in page:
            raise AssertionError(f"serve/ui/index.html no longer has {old!r}: run_file.py must follow it")
        page = page.replace(old, new, 1)
    return page


def _data(timeline: Timeline) -> dict:
    """What the page would ask for, by its path: the calls (``/ui/api/calls``), each call opened, each
    next to the call it continues; long strings in one table."""
    calls = {**timeline.since(0), "live": False}
    paths: dict[str, Any] = {}
    for call in list(timeline.calls):
        paths[f"/ui/api/call/{call.n}"] = timeline.detail(call.n)
        if call.previous is not None:
            paths[f"/ui/api/compare/{call.previous}/{call.n}"] = timeline.compare(call.previous, call.n)
    shared: list[Any] = []
    index: dict[str, int] = {}

    def packed(value: Any) -> Any:
        """``value`` with every long string, block and call detail that repeats kept once, in ``shared``
        (a detail's blocks are mostly its previous call's, and a comparison holds two details)."""
        if isinstance(value, list):
            value = [packed(v) for v in value]
        elif isinstance(value, dict):
            value = {k: packed(v) for k, v in value.items()}
        elif not isinstance(value, str):
            return value
        key = value if isinstance(value, str) else json.dumps(value, sort_keys=True, allow_nan=False)
        if len(key) < SHARED_CHARS:
            return value
        if key not in index:
            index[key] = len(shared)
            shared.append(value)
        return {"$s": index[key]}
    return {"calls": calls, "paths": {path: packed(value) for path, value in paths.items()}, "shared": shared}


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


# -- RUN, whichever kind it is, as the page's timeline -----------------------------------------------

def timeline_of(path: Path) -> Timeline:
    """A ``serve --log``, a runtime record, or a log ``replay`` reads, as the timeline the page shows.
    A file none of them is raises ``ValueError`` saying what was expected."""
    from ..replay.recorded import TrajectoryError
    from ..serve.page import read_log
    record = path / "events.jsonl" if path.is_dir() else path
    first = _first_object(record)
    if isinstance(first, dict) and "seq" in first and first.get("type") in ("start", "task"):
        return _from_store(record)
    if isinstance(first, dict) and {"n", "method", "path", "status"} <= first.keys():
        return read_log(path)
    from ..replay.formats import load
    try:
        runs = load(path)
    except TrajectoryError as e:
        raise ValueError(f"{e}; or a serve --log, or a runtime record (a RunStore's events.jsonl)") from None
    return _from_recorded(path, runs)


def _first_object(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8", errors="replace") as lines:
            first = next((line for line in lines if line.strip()), "")
        return json.loads(first)
    except (ValueError, RecursionError):
        return None


def _record(n: int, at: float | None, request: dict, response: dict | None, usage: dict | None, **extra: Any) -> dict:
    """A Messages call as ``serve --log`` writes it (``exchange.Exchange.record``): what the page reads."""
    time = datetime.fromtimestamp(at or 0, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"n": n, "time": time, "method": "POST", "path": "/v1/messages", "request": request, "status": 200,
            "response": response, "model": request.get("model"), "usage": usage, "prefix": None, "thread": None,
            "line": None, **extra}


def _from_store(events: Path) -> Timeline:
    """A runtime record: each reply with the history it was sent after (the record keeps the history,
    the batch where the layout keeps it, and digests of the system prompt and tools, not their text)."""
    from ..core.store import _read
    timeline = Timeline(f"the runtime record {events.parent.name}/{events.name}", live=False)
    history: list[dict] = []
    model, n = None, 0
    for event in _read(events):
        kind = event.get("type")
        if kind == "start":
            model = event.get("model")
        elif kind in ("task", "turn", "steered"):
            history.extend(event.get("messages") or [])
        elif kind == "compaction":
            history = list(event.get("messages") or [])
        elif kind == "reply":
            n += 1
            reply = (event.get("step") or {}).get("reply") or event  # format 2 kept it on the event itself
            response = reply.get("response") or {}
            request = {"model": response.get("model") or model, "messages": [*history, *(reply.get("entries") or [])]}
            timeline.add(_record(n, None, request, response, response.get("usage")))
    timeline.skipped.append("the system prompt and the tools: the record keeps their digests only")
    return timeline


def _from_recorded(path: Path, runs: list) -> Timeline:
    """A log ``replay`` reads, as it logged each call: the history before it, its answer, the usage it
    reported (input after the last breakpoint, cache reads and writes, output)."""
    timeline = Timeline(f"{runs[0].source} log {path.name}", live=False)
    n = 0
    for run in runs:
        messages: list[dict] = [{"role": "user", "content": run.task or [{"type": "text", "text": "(no prompt)"}]}]
        system = [{"type": "text", "text": run.system}] if run.system else None
        for call in run.calls:
            n += 1
            if call.compacted_before:  # the log's summary replaced the history before this call
                messages = [{"role": "user", "content": [{"type": "text", "text": call.compacted_before}]}]
            model = call.model or run.model or "?"
            request = {"model": model, "messages": list(messages), **({"system": system} if system else {})}
            u = call.usage
            usage = None if u is None else {
                "input_tokens": u.prompt_tokens - (u.cache_read or 0) - (u.cache_write or 0),
                "cache_read_input_tokens": u.cache_read or 0, "cache_creation_input_tokens": u.cache_write or 0,
                "cache_creation": {"ephemeral_5m_input_tokens": (u.cache_write or 0) - u.cache_write_1h,
                                   "ephemeral_1h_input_tokens": u.cache_write_1h},
                "output_tokens": u.output or 0}
            response = {"id": f"call_{n}", "type": "message", "role": "assistant", "model": model,
                        "content": call.assistant.get("content") or [], "usage": usage}
            timeline.add(_record(n, call.at, request, response, usage))  # no usage: shown as not billed
            messages.append(call.assistant)
            after = [*call.results.values(), *call.then_user]
            if after:
                messages.append({"role": "user", "content": after})
    return timeline


def main(args) -> None:
    """``view --html RUN -o FILE``."""
    path = Path(args.log).expanduser()
    try:
        timeline = timeline_of(path)
    except OSError as e:
        raise SystemExit(f"view: cannot read {path}: {e.strerror or e}")
    except ValueError as e:
        raise SystemExit(f"view: {e}")
    if not timeline.calls:
        raise SystemExit(f"view: no call in {path}")
    out = Path(args.output or "run.html").expanduser()
    text = html(timeline)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise SystemExit(f"view: cannot write {out}: {e.strerror or e}")
    print(f"view: {len(timeline.calls)} calls of {path} in {out} ({len(text.encode()) / 1024:,.0f} KB; opens with no "
          "server and no network)", flush=True)
