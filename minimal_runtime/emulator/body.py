"""Parsing request bodies without re-reading what the last request already said.

Call 1,000 of an agent run sends a body of most of a megabyte, and all but its last few messages
are byte-for-byte what call 999 sent. Parsing it whole on every call would make the emulator slower
than the SDK that built it, so we keep the last few bodies with the offset where each of their
messages ends, find the longest run of leading messages whose bytes are unchanged, reuse those
parsed messages, and parse only the rest. The other top-level arrays and objects (``tools``,
``system``, which the SDK sends after the messages) are reused whole when their bytes are unchanged:
the same parsed object, so that the emulator can tell by identity that a request's head is the
earlier one's. Any body that is not a
JSON object with a ``messages`` array in the expected shape is parsed the plain way; the result is
always what ``json.loads`` would return.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

_scan = json.JSONDecoder().raw_decode
_WS = re.compile(r"[ \t\n\r]*")


@dataclass
class ParsedBody:
    text: str
    request: Any
    messages: list = field(default_factory=list)  # our own list: the request's may be changed by its user
    message_ends: list[int] = field(default_factory=list)  # offset just past each message
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # where each other top-level value is
    prompt: Any = None  # the flattened Prompt, attached by the emulator for reuse
    memo: dict = field(default_factory=dict)  # what else a later request repeating these messages may reuse

    def shared_messages(self, text: str) -> int:
        """How many leading messages ``text`` has byte-identical to this body (same offsets)."""
        ends = self.message_ends
        if not ends or text[: ends[0]] != self.text[: ends[0]]:
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
    eight of them; one past it is parsed whole each time, which it costs anyway)."""

    def __init__(self, keep: int = 8):
        self.recent: deque[ParsedBody] = deque(maxlen=keep)  # several agents may share an emulator

    def parse(self, raw: bytes) -> tuple[ParsedBody, ParsedBody | None, int]:
        """Returns (this body, the earlier body it shares messages with, how many it shares)."""
        text = raw.decode("utf-8")
        best, shared = None, 0
        for earlier in reversed(self.recent):  # newest first: usually the one this call extends
            if len(earlier.message_ends) <= shared:
                continue  # cannot share more than the best so far
            n = earlier.shared_messages(text)
            if n > shared:
                best, shared = earlier, n
        try:
            parsed = _parse_object(text, best, shared)
        except (ValueError, IndexError, TypeError):
            parsed = ParsedBody(text, json.loads(text))  # unusual shape: plain parse, no reuse
            best, shared = None, 0
        if len(text) <= KEPT_BYTES:
            self.recent.append(parsed)
        kept = sum(len(b.text) for b in self.recent)
        while kept > KEPT_BYTES:
            kept -= len(self.recent.popleft().text)
        return parsed, best, shared


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _expect(text: str, i: int, char: str) -> int:
    i = _ws(text, i)
    if text[i] != char:
        raise ValueError(f"expected {char!r} at {i}")
    return i + 1


def _parse_object(text: str, earlier: ParsedBody | None, shared: int) -> ParsedBody:
    body = ParsedBody(text, {})
    i = _expect(text, 0, "{")
    while True:
        i = _ws(text, i)
        if text[i] == "}":
            break
        key, i = _scan(text, i)
        i = _ws(text, _expect(text, i, ":"))
        if key == "messages" and text[i] == "[":
            body.messages, i = _parse_messages(text, i + 1, body, earlier, shared)
            body.request[key] = list(body.messages)
        else:
            start = i
            i = _reused(text, i, key, body, earlier)
            if i == start:
                body.request[key], i = _scan(text, i)
            body.spans[key] = (start, i)
        i = _ws(text, i)
        if text[i] == ",":
            i += 1
    if text[i + 1:].strip():
        raise ValueError("extra data after the JSON object")
    return body


def _parse_messages(text: str, i: int, body: ParsedBody, earlier: ParsedBody | None, shared: int):
    messages: list = []
    if earlier is not None and shared:
        messages = earlier.messages[:shared]
        body.message_ends = earlier.message_ends[:shared]
        i = body.message_ends[-1]
    while True:
        i = _ws(text, i)
        if text[i] == "]":
            return messages, i + 1
        if text[i] == ",":
            i = _ws(text, i + 1)
        message, i = _scan(text, i)
        messages.append(message)
        body.message_ends.append(i)


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
