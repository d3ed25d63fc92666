"""The page under ``/ui``: a run's conversations, their calls, a call's prompt in cache regions.

``serve --ui`` answers these paths on the API's own port, behind the same checks (the server's: a
loopback ``Host``, a body cap, a deadline); ``python -m minimal_runtime view calls.jsonl`` serves
them alone for a log read back. Nothing here reaches the internet: the page is three static files
(``ui/``) and JSON from the ``Timeline``, which the page polls while a run goes on.

    GET /ui                      the page
    GET /ui/page.js, page.css    its script and style
    GET /ui/api/calls?after=N    calls (and the server's refusals) numbered after N, every conversation's
                                 totals, every batch
    GET /ui/api/call/N           call N opened: its prompt block by block, in cache regions
    GET /ui/api/compare/A/B      two calls side by side, and the first block where the later edits
    GET /ui/run.html             the run so far as one file that opens with no server (``view/run_file.py``)
    GET /ui?room                 the room view, for a projector: each attendee's figures and progress
    POST /ui/api/progress        a ``make progress`` report (``room.Room.report_progress``), shown in the room view

In a room with a token (``room.py``) every path but the static files needs it: the header, or
``?token=`` in the page's address, which the page passes on to what it asks for.

The page shows what clients sent (prompts, tool results), so it is served with a policy that runs
only its own script and style and loads nothing from elsewhere, and every text is put on the page
as text, never as markup.
"""

from __future__ import annotations

import contextlib
import errno
import json
import re
import sys
from pathlib import Path

from .exchange import flaw
from .room import Room
from .timeline import Timeline

UI = Path(__file__).with_name("ui")
FILES = {"/ui": ("index.html", "text/html; charset=utf-8"), "/ui/": ("index.html", "text/html; charset=utf-8"),
         "/ui/page.js": ("page.js", "text/javascript; charset=utf-8"),
         "/ui/page.css": ("page.css", "text/css; charset=utf-8")}
# Only the page's own files; no inline script or style attribute, no frames, no forms, no other origin.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"content-security-policy": POLICY, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
           "cache-control": "no-store"}
SKIPPED_SHOWN = 5  # the view command names this many lines it left out; the page names them all
_CALL = re.compile(r"^/ui/api/call/(\d+)$")
_COMPARE = re.compile(r"^/ui/api/compare/(\d+)/(\d+)$")


def is_page(path: str) -> bool:
    bare = path.split("?")[0]
    return bare == "/ui" or bare.startswith("/ui/")


class Page:
    """Answers the page's paths from ``timeline`` (the emulator's ``handle`` signature)."""

    def __init__(self, timeline: Timeline, room: Room | None = None):
        self.timeline, self.room = timeline, room or Room()

    @staticmethod
    def needs_token(bare: str) -> bool:
        """The page's own files carry no data: served without a room token (the script asks with it)."""
        return bare not in FILES

    def handle(self, method: str, path: str, body: bytes,
               request_headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        bare, _, query = path.partition("?")
        if method == "POST" and bare == "/ui/api/progress":
            try:
                return _json(200, self.room.report_progress(body, request_headers or {}))
            except (ValueError, UnicodeDecodeError, RecursionError) as e:
                return _json(400, {"error": f"not a progress report: {e}"})
        if method not in ("GET", "HEAD"):
            return _json(405, {"error": f"{method} {bare}: the page is read only"})
        if bare in FILES:
            name, kind = FILES[bare]
            return 200, {**HEADERS, "content-type": kind}, (UI / name).read_bytes()
        if bare == "/ui/run.html":  # the run as one file, as view --html writes it (view/run_file.py)
            from ..view.run_file import html
            return 200, {**HEADERS, "content-type": "text/html; charset=utf-8",
                         "content-disposition": 'attachment; filename="run.html"'}, html(self.timeline).encode()
        if bare == "/ui/api/calls":
            after = re.search(r"(?:^|&)after=(\d+)", query)
            return _json(200, {**self.timeline.since(int(after[1]) if after else 0),
                               "progress": list(self.room.progress.values())})
        if match := _CALL.match(bare):
            found = self.timeline.detail(int(match[1]))
            return _json(200, found) if found else _json(404, {"error": f"no call #{match[1]}"})
        if match := _COMPARE.match(bare):
            found = self.timeline.compare(int(match[1]), int(match[2]))
            return _json(200, found) if found else _json(404, {"error": f"no call #{match[1]} or #{match[2]}"})
        return _json(404, {"error": f"GET {bare}: not a page of this server"})


def _json(status: int, value) -> tuple[int, dict[str, str], bytes]:
    # allow_nan=False: a NaN (an unpriced model's cost) is not JSON; the timeline sends null instead
    return status, {**HEADERS, "content-type": "application/json"}, json.dumps(value, allow_nan=False).encode()


def read_log(path: Path) -> Timeline:
    """A ``--log`` file as a timeline. A line that is not a JSON object (a run killed mid-write leaves
    one at the end) is left out and named on the page; an unreadable file is an OSError."""
    timeline = Timeline(f"serve's log {path.name}", live=False)
    with path.open(encoding="utf-8", errors="replace") as lines:
        for k, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as e:
                timeline.skipped.append(f"line {k}: not JSON ({e.msg})")
                continue
            except RecursionError:
                timeline.skipped.append(f"line {k}: not JSON this reader takes (nested too deeply)")
                continue
            if not isinstance(record, dict):
                timeline.skipped.append(f"line {k}: not a record (a JSON {type(record).__name__})")
                continue
            if (wrong := flaw(record)) is not None:  # a shared log may be hostile: never a 500 or a page error
                timeline.skipped.append(f"line {k}: not a serve record ({wrong})")
                continue
            try:
                timeline.add(record)
            except (TypeError, ValueError, AttributeError, KeyError, OverflowError, RecursionError) as e:
                timeline.skipped.append(f"line {k}: not a serve record ({type(e).__name__}: {str(e)[:200]})")
    return timeline


def listen_hint(error: OSError) -> str:
    """What to change when serve or view cannot listen: the address when it is not this machine's, else the port."""
    if error.errno == errno.EADDRNOTAVAIL:
        return "give an address of this machine with --host (default 127.0.0.1)"
    return "pick another with --port (0: any free port)"


def view_main(args) -> None:
    """The ``view`` subcommand: a ``--log`` file's page on loopback until Ctrl-C."""
    import signal
    import threading

    from ..emulator.server import serve as serve_http
    path = Path(args.log).expanduser()
    try:
        timeline = read_log(path)
    except OSError as e:
        raise SystemExit(f"view: cannot read {path}: {e.strerror or e}")
    if not (timeline.calls or timeline.batches or timeline.refusals):  # an empty page would say nothing of why
        left = len(timeline.skipped)
        why = f" ({left:,} line{'s' * (left != 1)} left out, {timeline.skipped[0]})" if left else ""
        raise SystemExit(f"view: no call in {path}{why}: view shows a log written by serve --log; a Claude Code, "
                         "mini-swe-agent, OpenHands or Cline log is read by replay")
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(serve_http(Page(timeline), args.host, args.port, raw=True))
        except OSError as e:
            raise SystemExit(f"view: cannot listen on {args.host}:{args.port}: {e.strerror or e}; {listen_hint(e)}")
        batches = f" and {len(timeline.batches)} batch{'es' * (len(timeline.batches) != 1)}" if timeline.batches else ""
        refused = f" ({len(timeline.refusals)} more requests the server refused)" if timeline.refusals else ""
        print(f"view: {len(timeline.calls)} calls{batches}{refused} of {path} at {url}/ui (Ctrl-C to stop)", flush=True)
        for note in timeline.skipped[:SKIPPED_SHOWN]:  # every one is named on the page
            print(f"view: left out {note}", file=sys.stderr, flush=True)
        if len(timeline.skipped) > SKIPPED_SHOWN:
            print(f"view: left out {len(timeline.skipped) - SKIPPED_SHOWN} more lines (named on the page)", file=sys.stderr,
                  flush=True)
        while not stop.wait(0.5):
            pass
