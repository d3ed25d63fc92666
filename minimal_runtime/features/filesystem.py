"""Filesystem first: large observations live in files; the history keeps head, tail and path.

A web page or a long command output can cost tens of thousands of tokens on every later call.
Dropping it is irreversible (nobody knows which observation matters ten steps later), so instead
the full output is written to the run's workspace and the history gets a placeholder that says
what it was, how big, where it is, and shows its head and tail. The content is one ordinary
``read_file`` away, byte for byte.

The hook that tells executors how to use the filesystem had to be written twice: a first version
("persist important state to disk") produced agents that saved the same content under several
names and re-read their own output every turn to check it was still there. The refined rules
defend against the reminder itself. Counters in the run record keep both failures visible.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..core.hooks import HookEvent, HookRegistry, Point

OBSERVATIONS = ".observations"
RECORD = f"{OBSERVATIONS}/offloaded.jsonl"  # which tool call's output the offloader saved where


def inside(root: Path, relative_path: str) -> Path:
    """``root / relative_path`` resolved (symlinks followed), refused unless it stays in ``root``."""
    target = (root / relative_path).resolve()
    if not target.is_relative_to(root):
        raise PermissionError(f"{relative_path!r} is outside the workspace")
    return target


def write_whole(target: Path, data: bytes) -> None:
    """Write ``data`` so that ``target`` is either its old self or all of ``data``, never a part: a
    kill or a full disk in the middle leaves a stray temporary file, not a truncated copy under a
    name that promises the whole. Temporary file in the same folder, fsync, rename, fsync the folder."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    folder = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename itself survives a crash
    finally:
        os.close(folder)


class OffloadRecord:
    """The run's own record of what was offloaded: one JSON line per saved output (tool_use id, path,
    sha256 of the bytes), appended by the offloader after the file is whole. Compaction and
    ``Produced`` ask it, never the text of a result: a tool can print anything, including a line
    that looks like a placeholder pointing at ``/etc``. ``.observations`` is read only to the
    agent's own tools, so only the offloader writes here."""

    def __init__(self, root: Path):
        self.root = root
        self._saved: dict[str, tuple[str, str]] = {}  # tool_use id -> (path, sha256), the latest
        self._read_to = 0  # bytes of the record already folded into _saved (it only grows)

    def add(self, tool_use_id: str, relative_path: str, data: bytes) -> None:
        target = inside(self.root, RECORD)
        line = json.dumps({"id": tool_use_id, "path": relative_path, "sha256": hashlib.sha256(data).hexdigest()})
        with open(target, "ab") as f:
            if f.tell() and not _ends_with_newline(target):  # a line cut by a kill: start a fresh one
                line = "\n" + line
            f.write(line.encode() + b"\n")
            f.flush()
            os.fsync(f.fileno())

    def saved(self, tool_use_id: str) -> str | None:
        """The path the offloader saved this call's output at, if it did and the file still holds
        exactly what it saved (inside the workspace); else None."""
        self._refresh()
        found = self._saved.get(tool_use_id)
        if found is None:
            return None
        path, digest = found
        try:
            target = inside(self.root, path)
            return path if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest else None
        except OSError:  # PermissionError included: a path outside is no saved copy
            return None

    def _refresh(self) -> None:
        try:
            with open(inside(self.root, RECORD), "rb") as f:
                f.seek(self._read_to)
                new = f.read()
        except OSError:
            return
        whole = new[:new.rfind(b"\n") + 1]  # a line still being written waits for the next look
        self._read_to += len(whole)
        for line in whole.splitlines():
            try:
                entry = json.loads(line)
                self._saved[entry["id"]] = (entry["path"], entry["sha256"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a kill names nothing


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


class Offloader:
    """Tool results longer than ``threshold`` characters go to ``<workspace>/.observations/``."""

    def __init__(self, workspace: str | Path, threshold: int = 4000, head: int = 600, tail: int = 300):
        self.root = Path(workspace).resolve()
        self.threshold, self.head, self.tail = threshold, head, tail
        self.record = OffloadRecord(self.root)

    def path_for(self, tool_use_id: str) -> str:
        """A file name per tool call: readable, short, and collision-free (``a/b`` and ``ab``, a
        repeated or a 300-character id all get names of their own)."""
        safe = "".join(c for c in tool_use_id if c.isalnum() or c in "_-")[:48] or "result"
        digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        return f"{OBSERVATIONS}/{safe}-{digest}.txt"

    def __call__(self, tool_use: dict, result: dict) -> dict:
        """The tool_result block the history keeps: unchanged when small, a placeholder when large.
        If the file cannot be written, an error result saying so (with the head and tail): the run
        goes on, and the store still has the raw output."""
        content = result.get("content")
        if not isinstance(content, str) or len(content) <= self.threshold:
            return result
        read_path = (tool_use.get("input") or {}).get("path")
        if isinstance(read_path, str) and read_path.startswith(OBSERVATIONS + "/"):
            return result  # a saved output read back on purpose: saving it again would only hide it again
        path = self.path_for(tool_use["id"])
        taken = (self.root / path).exists() and self.restore(path) != content
        if taken:  # the same id again (a resumed step repeats its tools): a name of its own
            path = self.path_for(f"{tool_use['id']}#{hashlib.sha256(_exact_bytes(content)).hexdigest()}")
        try:
            note = self.offload(content, path)
            self.record.add(tool_use["id"], path, _exact_bytes(content))
            return {**result, "content": note}
        except OSError as e:
            preview = placeholder(content, "(not saved)", self.head, self.tail)
            return {**result, "is_error": True,
                    "content": f"The output could not be saved to the workspace ({type(e).__name__}: {e}).\n{preview}"}

    def offload(self, content: str, relative_path: str) -> str:
        """Write ``content`` exactly (lone surrogates from undecodable bytes go back to those bytes)
        and return the placeholder."""
        write_whole(inside(self.root, relative_path), _exact_bytes(content))
        return placeholder(content, relative_path, self.head, self.tail)

    def restore(self, relative_path: str) -> str:
        """The content exactly as offloaded; only paths inside the workspace."""
        return inside(self.root, relative_path).read_bytes().decode("utf-8", "surrogateescape")


def _exact_bytes(text: str) -> bytes:
    """The bytes the text was read from: lone surrogates (undecodable bytes) become those bytes again."""
    return text.encode("utf-8", "surrogateescape")


def _printable(text: str) -> str:
    # The preview goes into the prompt, which must be valid UTF-8: undecodable bytes become U+FFFD.
    return _exact_bytes(text).decode("utf-8", "replace")


def placeholder(content: str, path: str, head: int, tail: int) -> str:
    return (f"[{len(content):,} characters; the full output is saved at {path}; read_file that path to see all of it]\n"
            f"--- first {head} characters ---\n{_printable(content[:head])}\n"
            f"--- last {tail} characters ---\n{_printable(content[-tail:])}")


# Both read as statements of fact: on the current models the batch is a turn-scoped system entry
# (operator authority), where the provider advises stating facts; in the 2025 layout they were the
# last user turn's tail, where a plain fact reads as well as a first-person note.
NAIVE_RULES = "Important state is persisted to disk."

REFINED_RULES = """Filesystem rules for this run:
- What goes to disk: search results, fetched pages, findings from images or PDFs, long command output. Content just read from the workspace does not: writing it again makes a duplicate under a new name.
- A saved file is read back with read_file only when it is no longer in the recent messages, never as a reflex because this note raised a doubt about the context.
- A file written in this conversation is not worth re-reading on the next turn or the one after; it is once it has scrolled out of the recent history.
- Images and PDFs are the exception: what one shows is written down right after viewing it. The pixels do not stay in context; the notes do."""


class FilesystemRules:
    """PRE_LLM_CALL for executors: the filesystem rules, every call."""

    def __init__(self, rules: str = REFINED_RULES):
        self.rules = rules

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.remind)

    def remind(self, event: HookEvent) -> None:
        event.agent.inject_ephemeral("filesystem", self.rules)


@dataclass
class WorkspaceCounters:
    """POST_TOOL_CALL: files written, duplicate writes (same content, new name), and re-reads of a
    file the agent itself wrote within its last ``recent`` calls."""

    recent: int = 3
    files_written: int = 0
    duplicate_writes: int = 0
    reflexive_rereads: int = 0
    _by_content: dict[str, str] = field(default_factory=dict)  # content hash -> first path
    _written_at: dict[str, int] = field(default_factory=dict)  # path -> call number

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_TOOL_CALL, self.count)

    def count(self, event: HookEvent) -> None:
        before = self.as_dict()
        self._count(event)
        if self.as_dict() != before:  # into the run record
            event.agent.store.write({"type": "counters", "counters": self.as_dict()})

    def _count(self, event: HookEvent) -> None:
        call, result = event.tool_call, event.tool_result
        if result.get("is_error"):
            return
        now = len(event.agent.calls)
        path = call["input"].get("path")
        if call["name"] == "write_file":
            self.files_written += 1
            digest = hashlib.sha256(call["input"].get("content", "").encode()).hexdigest()
            first = self._by_content.setdefault(digest, path)
            if first != path:
                self.duplicate_writes += 1
            self._written_at[path] = now
        elif call["name"] == "read_file" and path in self._written_at and now - self._written_at[path] <= self.recent:
            self.reflexive_rereads += 1

    def as_dict(self) -> dict[str, int]:
        return {"files_written": self.files_written, "duplicate_writes": self.duplicate_writes,
                "reflexive_rereads": self.reflexive_rereads}
