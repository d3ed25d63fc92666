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
import errno
import hashlib
import json
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..core.hooks import HookEvent, HookRegistry, Point

OBSERVATIONS = ".observations"
RECORD = f"{OBSERVATIONS}/offloaded.jsonl"  # which tool call's output the offloader saved where


# -- files under a folder handle ------------------------------------------------------------------
# A check by path ("does it resolve inside the workspace?") and a write by path are two lookups: a
# folder swapped for a link between them sends the write elsewhere. So nothing here writes by path:
# a file is opened one folder at a time from a handle on the one before, each with O_NOFOLLOW, and
# a link anywhere on the way is refused with the path named. The workspace root itself is opened
# the same way (its last part must not be a link; it was resolved when the workspace was named).

def _parts(root: Path, relative_path: str) -> list[str]:
    """``relative_path`` as names under ``root``; refused if it leaves the workspace (``..``)."""
    path = os.path.normpath(relative_path)
    if os.path.isabs(path) and Path(path).is_relative_to(root):  # an absolute path inside is the same file
        path = os.path.relpath(path, root)
    if os.path.isabs(path) or path == ".." or path.startswith("../"):
        raise PermissionError(f"{relative_path!r} is outside the workspace")
    return path.split("/")


def _open(folder: int | None, name: str, flags: int, shown: str, relative_path: str, mode: int = 0o644) -> int:
    """``name`` opened in ``folder`` (a handle; None: ``name`` is the root's absolute path), never through a link."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
    except OSError as e:
        if _is_link(folder, name):  # O_NOFOLLOW says ELOOP, or ENOTDIR with O_DIRECTORY
            raise _link_refused(relative_path, shown) from None
        raise OSError(e.errno, e.strerror, relative_path if folder is not None else name) from None


def _link_refused(relative_path: str, shown: str) -> PermissionError:
    return PermissionError(f"{relative_path!r}: {shown!r} is a link: refused, not followed (a write stays in the workspace)")


def _is_link(folder: int | None, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=folder).st_mode)
    except OSError:
        return False


def _folder(root: Path, relative_path: str, create: bool) -> tuple[int, str]:
    """A handle on the folder that holds ``relative_path`` (made as needed when ``create``), and the
    file's name in it. The caller closes the handle."""
    parts = _parts(root, relative_path)
    directory = os.O_RDONLY | os.O_DIRECTORY
    if create:
        with contextlib.suppress(FileExistsError):
            os.makedirs(root)  # only the workspace itself is made by path, before the first handle
    folder = _open(None, str(root), directory, str(root), relative_path)
    try:
        for k, part in enumerate(parts[:-1]):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=folder)
            inner = _open(folder, part, directory, "/".join(parts[:k + 1]), relative_path)
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder, parts[-1]


def read_inside(root: Path, relative_path: str) -> bytes:
    """The bytes of ``root/relative_path``, read without following a link."""
    folder, name = _folder(root, relative_path, create=False)
    try:
        fd = _open(folder, name, os.O_RDONLY, relative_path, relative_path)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", relative_path)
        return f.read()


def write_whole(root: Path, relative_path: str, data: bytes) -> None:
    """Write ``data`` so that ``root/relative_path`` is either its old self or all of ``data``, never a
    part: a kill or a full disk in the middle leaves a stray temporary file, not a truncated copy
    under a name that promises the whole. Temporary file in the same folder, fsync, rename, fsync
    the folder, all through one folder handle: a rename replaces a link planted at the name, it
    never writes through it."""
    folder, name = _folder(root, relative_path, create=True)
    try:
        if _is_link(folder, name):  # the rename would replace it, not follow it; refused all the same
            raise _link_refused(relative_path, relative_path)
        temporary = f".{name}.{secrets.token_hex(4)}.part"
        fd = _open(folder, temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, relative_path, relative_path, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
        os.fsync(folder)  # the rename itself survives a crash
    finally:
        os.close(folder)


def append_inside(root: Path, relative_path: str, line: bytes) -> None:
    """Append ``line`` (a whole line) to ``root/relative_path``; a line cut by a kill is ended first."""
    folder, name = _folder(root, relative_path, create=True)
    try:
        fd = _open(folder, name, os.O_RDWR | os.O_APPEND | os.O_CREAT, relative_path, relative_path)
    finally:
        os.close(folder)
    if os.fstat(fd).st_nlink > 1:  # a hard link planted at the name: appending would write the file outside
        os.close(fd)
        raise PermissionError(f"{relative_path!r} has another name (a hard link): refused, not written")
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a line cut by a kill: start a fresh one
            line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


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
        line = json.dumps({"id": tool_use_id, "path": relative_path, "sha256": hashlib.sha256(data).hexdigest()})
        append_inside(self.root, RECORD, line.encode() + b"\n")

    def saved(self, tool_use_id: str) -> str | None:
        """The path the offloader saved this call's output at, if it did and the file still holds
        exactly what it saved (inside the workspace); else None."""
        self._refresh()
        found = self._saved.get(tool_use_id)
        if found is None:
            return None
        path, digest = found
        try:
            return path if hashlib.sha256(read_inside(self.root, path)).hexdigest() == digest else None
        except OSError:  # PermissionError included: a path outside, or through a link, is no saved copy
            return None

    def _refresh(self) -> None:
        try:
            new = read_inside(self.root, RECORD)[self._read_to:]
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
        try:
            if self._taken(path, content):  # the same id again (a resumed step repeats its tools), or
                # something planted at the name (a folder, a link): a name of its own
                path = self.path_for(f"{tool_use['id']}#{hashlib.sha256(_exact_bytes(content)).hexdigest()}")
            note = self.offload(content, path)
            self.record.add(tool_use["id"], path, _exact_bytes(content))
            return {**result, "content": note}
        except OSError as e:
            preview = placeholder(content, "(not saved)", self.head, self.tail)
            return {**result, "is_error": True,
                    "content": f"The output could not be saved to the workspace ({type(e).__name__}: {e}).\n{preview}"}

    def _taken(self, path: str, content: str) -> bool:
        """Is something other than this very content at ``path``?"""
        try:
            return self.restore(path) != content
        except FileNotFoundError:
            return False
        except OSError:  # a folder, a link, anything that is not a file of ours
            return True

    def offload(self, content: str, relative_path: str) -> str:
        """Write ``content`` exactly (lone surrogates from undecodable bytes go back to those bytes)
        and return the placeholder."""
        write_whole(self.root, relative_path, _exact_bytes(content))
        return placeholder(content, relative_path, self.head, self.tail)

    def restore(self, relative_path: str) -> str:
        """The content exactly as offloaded; only paths inside the workspace, never through a link."""
        return read_inside(self.root, relative_path).decode("utf-8", "surrogateescape")


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
- Images and PDFs are the exception: what one shows is written down right after viewing it. The image stays in the history, re-sent on every call, until compaction drops it; the notes are what is left after that."""


class FilesystemRules:
    """PRE_LLM_CALL for executors: the filesystem rules, every call."""

    def __init__(self, rules: str = REFINED_RULES):
        self.rules = rules

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.remind)

    def remind(self, event: HookEvent) -> None:
        event.agent.inject_turn_scoped("filesystem", self.rules)


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
        if self.as_dict() != before:  # into the run record, with the turn
            event.agent.state.set("counters", self.as_dict())

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
