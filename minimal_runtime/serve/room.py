"""``serve`` as a workshop room: who sent a call (an attendee, named, the key never shown), and the
room token that a server listening beyond loopback asks every request for.

An attendee is one API key, as an organization is one on the real API: the emulator keeps caches and
threads per key (``emulator/cache.py``, ``emulator/threads.py``). The room only names them:

- by the request's ``metadata.user_id`` (the API's own field for "an external identifier for the user");
- else by the label ``serve --attendee KEY=NAME`` gives the key;
- else by ``key-`` and the first 8 hex digits of the key's SHA-256: told apart, never shown.

The key itself is never printed, logged or put on the page (``--log`` writes ``x-api-key`` and
``authorization`` as ``[redacted]``, ``exchange.LOGGED_HEADERS``).

The room token: with one (``--room-token``, or generated when ``--host`` is not loopback), every
request must carry it, as the header ``x-room-token`` (the SDK's ``default_headers``) or as the
start of its API key, ``TOKEN:anything`` (a client that can set only a key). Without it: a 401 that
says so. The page's static files carry no data and need none; its data (``/ui/api/...``) needs it too,
as the header or ``?token=`` (the browser's address bar: the page passes it on).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
import threading
from urllib.parse import parse_qs

HEADER = "x-room-token"
NAME_CHARS = 40  # an attendee's name is cut to this (a user_id is the client's to choose)


def sent_key(headers: dict[str, str]) -> str:
    """The API key a request carries (``x-api-key``, else a bearer token: the SDKs send either)."""
    return headers.get("x-api-key") or headers.get("authorization", "")[7:].strip()


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve beyond this machine


def new_token() -> str:
    return secrets.token_urlsafe(12)


class Room:
    """Who sent a request, and whether it may be answered. One per ``Front``; thread-safe."""

    def __init__(self, labels: dict[str, str] | None = None, token: str | None = None):
        self.labels = dict(labels or {})  # API key -> the attendee's name (--attendee)
        self.token = token or None
        self.seen: dict[str, None] = {}  # the attendees named so far, in order
        self.progress: dict[str, dict] = {}  # attendee -> the latest progress report (``report_progress``)
        self._lock = threading.Lock()

    def attendee(self, headers: dict[str, str], request=None, seen: bool = True) -> str:
        """Who sent it; ``seen``: it counts as the room's (a request the server refused before reading
        it does not: a stranger's broken request does not make a room of one attendee's run)."""
        metadata = request.get("metadata") if isinstance(request, dict) else None
        user = metadata.get("user_id") if isinstance(metadata, dict) else None
        if isinstance(user, str) and user.strip():
            name = " ".join(user.split())[:NAME_CHARS]
        else:
            key = self._without_token(sent_key(headers))
            if not key:  # not an attendee: a request no client of the room sends (the API refuses it)
                return "no key"
            name = self.labels.get(key) or f"key-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
        if seen:
            with self._lock:
                self.seen.setdefault(name, None)
        return name

    @property
    def named(self) -> bool:
        """Do the lines name the attendee? In a room: labels given, a token asked, or a second attendee seen."""
        return bool(self.labels or self.token or len(self.seen) > 1)

    def _without_token(self, key: str) -> str:
        if self.token and key.startswith(self.token + ":"):
            return key[len(self.token) + 1:]
        return key

    def refusal(self, headers: dict[str, str], query: str = "") -> str | None:
        """Why the request may not be answered (None: it may)."""
        if self.token is None:
            return None
        given = headers.get(HEADER) or (parse_qs(query).get("token") or [""])[0]
        if not given and sent_key(headers).startswith(self.token + ":"):
            given = self.token
        if given and hmac.compare_digest(given.encode(), self.token.encode()):
            return None
        return (f"this serve is a room and asks for its room token: send it as the {HEADER} header "
                f"(anthropic.Anthropic(..., default_headers={{'{HEADER}': TOKEN}})) or start the API key with "
                "'TOKEN:'; the instructor's serve printed it at start")

    def report_progress(self, body: bytes, headers: dict[str, str]) -> dict:
        """A ``make progress`` report (``tests/exercise_check.py``): ``{"attendee", "chapters": {NN:
        {"passed", "total"}}, "failing": "test: assertion" | null}``; kept, the latest per attendee."""
        report = json.loads(body)
        if not isinstance(report, dict) or not isinstance(report.get("chapters"), dict):
            raise ValueError("a progress report is a JSON object with 'chapters': {chapter: {passed, total}}")
        name = report.get("attendee")
        name = " ".join(name.split())[:NAME_CHARS] if isinstance(name, str) and name.strip() \
            else self.attendee(headers)
        chapters = {}
        for chapter, counts in list(report["chapters"].items())[:50]:
            if not (isinstance(counts, dict) and all(isinstance(counts.get(k), int) for k in ("passed", "total"))):
                raise ValueError(f"chapter {str(chapter)[:20]!r}: expected {{'passed': N, 'total': M}}")
            chapters[str(chapter)[:20]] = {"passed": counts["passed"], "total": counts["total"]}
        failing = report.get("failing")
        kept = {"attendee": name, "chapters": chapters,
                "failing": " ".join(failing.split())[:300] if isinstance(failing, str) else None}
        with self._lock:
            self.progress.pop(name, None)
            self.progress[name] = kept
        return kept
