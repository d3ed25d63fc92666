"""A file ``replay`` was given, as the formats look at it: its first JSON line, its lines one at a
time, or (where it is one JSON document) the document.

Nothing here reads a line-based log whole: ``lines()`` streams it, so a big stream-json log is held
once, as the run it becomes. Only a file that is one JSON document (a Cline history, an export, a
``.traj.json``) is parsed whole. What every file must be (a regular file of UTF-8 JSON text, under
``MAX_BYTES``) is checked here, once, in one line.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .build import TOO_DEEP
from .recorded import TrajectoryError

MAX_BYTES = 256 * 2**20  # a log past this is refused: the run it becomes takes a few times its size in memory
HEAD = 8192

# an escaped high surrogate not followed by a low one, or a low one not after a high one
LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                            r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")

NOT_ONE = object()  # the file is not one JSON document (a line-based log, or broken)


@dataclass
class Source:
    path: Path
    size: int
    first: Any = None  # the first non-blank line, parsed (None where it is not JSON on its own)
    first_number: int = 0
    one_line: bool = False  # nothing but blanks after the first line
    text_head: str = ""  # the file's first 8 KB as text (a format that is not JSON is recognised by it)
    _document: Any = field(default=NOT_ONE, repr=False)
    _parsed: bool = field(default=False, repr=False)

    @classmethod
    def open(cls, path: Path, accepted: str) -> "Source":
        """The file at ``path``, checked: it exists, is a regular file (a FIFO or socket would
        block a reader forever), holds text, is not empty, and is not past ``MAX_BYTES``.
        ``accepted`` names the formats read (a refusal says "expected" before it)."""
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise TrajectoryError(str(path), None, "no such file") from None
        if stat.S_ISDIR(info.st_mode):
            raise TrajectoryError(str(path), None, f"a directory; give one file: {accepted}")
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else \
                "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a regular file"
            raise TrajectoryError(str(path), None, f"{kind}, not a log file (reading it could wait forever)")
        if info.st_size > MAX_BYTES:
            raise TrajectoryError(str(path), None, f"{info.st_size / 2**20:,.0f} MB: past replay's limit of "
                                  f"{MAX_BYTES // 2**20} MB a file (split the log, or replay a part of it)")
        with open(path, "rb") as f:
            head = f.read(HEAD)
            if b"\x00" in head:  # before reading it all: a folder may hold archives, images, databases
                raise TrajectoryError(str(path), None, f"not UTF-8 text (binary, or UTF-16?); expected {accepted}")
            f.seek(0)
            number, raw = 0, b""
            for number, raw in enumerate(f, start=1):
                if raw.strip():
                    break
            else:
                raise TrajectoryError(str(path), None, f"an empty file; expected {accepted}")
            rest = any(line.strip() for line in f)  # another non-blank line? (stops at the first)
        source = cls(path, info.st_size, first_number=number, one_line=not rest,
                     text_head=head.decode("utf-8", "replace"))
        try:
            source.first = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise TrajectoryError(str(path), number, f"not UTF-8 text (binary, or UTF-16?); expected {accepted}") from None
        except (ValueError, RecursionError):  # not JSON (or a number of over 4,300 digits: the document says)
            source.first = None
        return source

    @property
    def document(self) -> Any:
        """The whole file as one JSON document, or ``NOT_ONE``: only tried where the first line is not
        JSON on its own (a pretty-printed document) or is the file's only line."""
        if not self._parsed:
            self._parsed = True
            if self.one_line or self.first is None:
                try:
                    text = self.path.read_text(encoding="utf-8")
                    self._document = json.loads(text)
                except UnicodeDecodeError:
                    raise TrajectoryError(str(self.path), None, "not UTF-8 text (binary, or UTF-16?)") from None
                except RecursionError:
                    raise TrajectoryError(str(self.path), None, TOO_DEEP) from None
                except json.JSONDecodeError as e:
                    if self.first is None:  # neither one document nor a first line of JSON: say where
                        last = e.doc.count("\n", 0, len(e.doc.rstrip())) + 1  # not past the last line of text
                        raise TrajectoryError(str(self.path), min(e.lineno, last), f"invalid JSON: {e.msg}") from None
                except ValueError as e:  # Python's limit on an integer's digits (4,300)
                    raise TrajectoryError(str(self.path), None, f"a number too long to read: {e}") from None
                else:
                    lone = LONE_SURROGATE.search(text) if "\\ud" in text.lower() else None
                    if lone:  # no request can carry it: refused here, with its line, not deep in a replay
                        whole_characters(self._document, self.path, text.count("\n", 0, lone.start()) + 1)
        return self._document

    @property
    def head(self) -> dict:
        """What recognising a format looks at: the document where the file is one, else the first line."""
        document = self.document
        return document if document is not NOT_ONE else self.first

    def lines(self, objects_only: bool = True) -> Iterator[tuple[int, Any]]:
        """(line number, object) for each non-blank line, read one at a time; a line of JSON that is no
        object is refused, or (``objects_only`` False) handed on as it is, for the format to skip."""
        return json_lines(self.path, objects_only)


def json_lines(path: Path, objects_only: bool = True) -> Iterator[tuple[int, Any]]:
    with open(path, encoding="utf-8") as f:
        number = 0
        while True:
            try:
                raw = f.readline()
            except UnicodeDecodeError:
                raise TrajectoryError(str(path), number + 1, "not UTF-8 text (binary, or UTF-16?)") from None
            if not raw:
                return
            number += 1
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as e:
                kind = "a truncated line" if not raw.endswith("\n") else "invalid JSON"
                raise TrajectoryError(str(path), number, f"{kind}: {e.msg}") from None
            except ValueError as e:  # Python's limit on an integer's digits (4,300)
                raise TrajectoryError(str(path), number, f"a number too long to read: {e}") from None
            except RecursionError:
                raise TrajectoryError(str(path), number, TOO_DEEP) from None
            if not isinstance(value, dict) and objects_only:
                raise TrajectoryError(str(path), number, f"a JSON {type(value).__name__} where a JSON object was expected")
            if "\\ud" in raw.lower():
                whole_characters(value, path, number)
            yield number, value


def whole_characters(value: Any, path: Path | str, number: int | None) -> None:
    """An escaped surrogate that is not half of a pair is no character: no request can carry it."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise TrajectoryError(str(path), number, "text with a lone UTF-16 surrogate (\\udXXX): not a character "
                              "any request can carry") from None
