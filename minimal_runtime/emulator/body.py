"""Parsing request bodies without re-reading what the last request already said: ``json.loads``
with a memory, and nothing else.

Call 1,000 of an agent run sends a body of most of a megabyte, and all but its last few messages
are byte-for-byte what call 999 sent. Parsing it whole on every call would make the emulator slower
than the SDK that built it, so we keep the last few bodies with the offset where each of their
messages ends, find the longest run of leading messages whose bytes are unchanged, reuse those
parsed messages, and parse only the rest. The other top-level arrays and objects (``tools``,
``system``, which the SDK sends after the messages) are reused whole when their bytes are unchanged:
the same parsed object, so that the emulator can tell by identity that a request's head is the
earlier one's.

Why a reused piece is what ``json.loads`` would make of the new body: a piece is reused only when
the new body's bytes from its very start to the piece's end are the earlier body's (checked byte for
byte, whoever sent either), and the earlier body was read by the strict grammar below, so the same
bytes are the same parse up to there: the same top-level keys before ``messages``, none repeated,
the array opening at the same offset, each message an object (self-delimiting: a number ``1`` could
be the start of ``10``). Everything the fast path does not read exactly as JSON says (a repeated
top-level key, where the last wins; a missing or extra comma; a message that is not an object; a
byte sequence that is not plain UTF-8) is handed to ``json.loads`` whole, with no reuse: its result,
or its error, is the answer. Every step of the fast path moves forward or raises, so it ends.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

_scan = json.JSONDecoder().raw_decode
_WS = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, exactly (str.strip would take more)


class _NotPlain(ValueError):
    """The body is not in the shape the fast path reads; ``json.loads`` reads it instead."""


@dataclass
class ParsedBody:
    text: str
    request: Any
    messages: list = field(default_factory=list)  # our own list: the request's may be changed by its user
    messages_at: int = -1  # offset of the messages array's "[" (-1: read by json.loads, nothing to reuse)
    message_ends: list[int] = field(default_factory=list)  # offset just past each message
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # where each other top-level value is
    prompt: Any = None  # the flattened Prompt, attached by the emulator for reuse
    memo: dict = field(default_factory=dict)  # what else a later request repeating these messages may reuse

    def shared_messages(self, text: str) -> int:
        """How many leading messages ``text`` has byte-identical to this body, from byte 0 (same offsets)."""
        ends = self.message_ends
        if not ends or not text.startswith(self.text[: ends[0]]):
            return 0
        # The usual case first: an agent's next call keeps all but the last message or two.
        for k in (len(ends), len(ends) - 1):
            if k > 1 and text.startswith(self.text[: ends[k - 1]]):
                return k
        lo, hi = 1, len(ends) - 2  # otherwise bisect: shared prefixes are monotone
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if text.startswith(self.text[: ends[mid - 1]]):
                lo = mid
            else:
                hi = mid - 1
        return lo


KEPT_BYTES = 16 * 2**20  # the text of the bodies kept for reuse, at most (a bigger body is parsed, not kept)


class BodyParser:
    """Parses bodies, reusing the messages they share with one of the last ``keep`` bodies (as many
    of them as fit in ``KEPT_BYTES`` of text: a client's big bodies cannot make the emulator keep
    eight of them; one past it is parsed whole each time, which it costs anyway). Safe to call from
    several threads: the kept bodies are only looked at and added to under its own short lock; the
    parse itself runs outside it (and outside the emulator's)."""

    def __init__(self, keep: int = 8):
        self.recent: deque[ParsedBody] = deque(maxlen=keep)  # several agents may share an emulator
        self._lock = threading.Lock()

    def parse(self, raw: bytes) -> tuple[ParsedBody, ParsedBody | None, int]:
        """Returns (this body, the earlier body it shares messages with, how many it shares).
        Raises ``ValueError`` (``json.JSONDecodeError`` or ``UnicodeDecodeError``) where ``json.loads`` would."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return ParsedBody(raw.decode("utf-8", "replace"), json.loads(raw)), None, 0  # json.loads reads other encodings; or raises
        with self._lock:
            candidates = list(self.recent)
        best, shared = None, 0
        for earlier in reversed(candidates):  # newest first: usually the one this call extends
            if len(earlier.message_ends) <= shared:
                continue  # cannot share more than the best so far
            n = earlier.shared_messages(text)
            if n > shared:
                best, shared = earlier, n
        try:
            parsed = _parse_object(text, best, shared)
        except (ValueError, IndexError, TypeError):  # not the plain shape, or not JSON: json.loads says which
            parsed, best, shared = ParsedBody(text, json.loads(raw)), None, 0
        if len(text) <= KEPT_BYTES:
            with self._lock:
                self.recent.append(parsed)
                kept = sum(len(b.text) for b in self.recent)
                while kept > KEPT_BYTES:
                    kept -= len(self.recent.popleft().text)
        return parsed, best, shared


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _parse_object(text: str, earlier: ParsedBody | None, shared: int) -> ParsedBody:
    """The top-level object, strictly: ``{`` then ``"key": value`` pairs split by single commas, ``}``,
    nothing after but whitespace; a key seen twice is not the plain shape."""
    body = ParsedBody(text, {})
    i = _ws(text, 0)
    if text[i] != "{":
        raise _NotPlain("not an object")
    i = _ws(text, i + 1)
    if text[i] != "}":
        while True:
            if text[i] != '"':
                raise _NotPlain(f"expected a key at {i}")
            key, i = _scan(text, i)
            if key in body.request:
                raise _NotPlain(f"key {key!r} repeated")  # json.loads keeps the last: let it
            i = _ws(text, i)
            if text[i] != ":":
                raise _NotPlain(f"expected ':' at {i}")
            i = _ws(text, i + 1)
            if key == "messages" and text[i] == "[":
                body.messages_at = i
                body.messages, i = _parse_messages(text, i, body, earlier, shared)
                body.request[key] = list(body.messages)
            else:
                start = i
                i = _reused(text, i, key, body, earlier)
                if i == start:
                    body.request[key], i = _scan(text, i)
                body.spans[key] = (start, i)
            i = _ws(text, i)
            if text[i] == "}":
                break
            if text[i] != ",":
                raise _NotPlain(f"expected ',' or '}}' at {i}")
            i = _ws(text, i + 1)
    if _ws(text, i + 1) != len(text):
        raise _NotPlain("extra data after the JSON object")
    return body


def _parse_messages(text: str, i: int, body: ParsedBody, earlier: ParsedBody | None, shared: int):
    """The messages array opening at ``i``: the first ``shared`` messages taken from ``earlier``
    (whose bytes up to the end of its message ``shared`` are this text's), the rest read one by one."""
    messages: list = []
    if earlier is not None and shared:
        if earlier.messages_at != i:  # cannot be, with the same bytes before it; checked, not assumed
            raise _NotPlain("a shared prefix whose messages open elsewhere")
        messages = earlier.messages[:shared]
        body.message_ends = earlier.message_ends[:shared]
        return _read_messages(text, body.message_ends[-1], body, messages)
    i = _ws(text, i + 1)  # past "["
    if text[i] == "]":
        return messages, i + 1
    return _read_messages(text, _read_message(text, i, body, messages), body, messages)


def _read_messages(text: str, i: int, body: ParsedBody, messages: list):
    """From ``i``, just past a message: ``, {message}`` as many times as there are, then ``]``."""
    while True:
        i = _ws(text, i)
        if text[i] == "]":
            return messages, i + 1
        if text[i] != ",":
            raise _NotPlain(f"expected ',' or ']' at {i}")
        i = _read_message(text, _ws(text, i + 1), body, messages)


def _read_message(text: str, i: int, body: ParsedBody, messages: list) -> int:
    if text[i] != "{":
        raise _NotPlain(f"a message that is not an object at {i}")  # its end would not be self-evident
    message, i = _scan(text, i)
    messages.append(message)
    body.message_ends.append(i)
    return i


def _reused(text: str, i: int, key: str, body: ParsedBody, earlier: ParsedBody | None) -> int:
    """Past the value at ``i`` if it is an array or object byte-identical to ``earlier``'s value
    under ``key`` (taken as is, the same object), else ``i``. Only these end where their bytes say
    (a number such as ``1`` could be the start of ``10``)."""
    if earlier is None or key not in earlier.spans or text[i] not in "[{":
        return i
    start, end = earlier.spans[key]
    if not text.startswith(earlier.text[start:end], i):
        return i
    body.request[key] = earlier.request[key]
    return i + end - start
