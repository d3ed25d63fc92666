"""The durable run record: what survives a crash.

One JSON line per event in ``events.jsonl``: a completed turn (the messages it appended to the
history, with the record of the call that produced it), a tool's raw output, a compaction (the
history as rewritten), a paid-for response (before its turn), an accepted steer, what a run sends
besides its history (its start), a status change. What hooks keep (``RunState``) rides on the turn
or status event written after it. A line is written whole and flushed to disk before the run goes on, so a kill
between any two steps leaves a file that ends on a complete line; a kill in the middle of a write
leaves a torn last line, which opening the store cuts off, and a write that fails (a full disk) is
cut back at once. Every event carries its sequence number, so a deleted or duplicated line is found
on load, and a damaged line is reported with its file, line and what is wrong, never as a bare
``JSONDecodeError``.

What is written is what the history holds. On the turn-scoped layout that includes each call's
turn-scoped batch (it joins the history with its turn: see ``agent``); on the 2025 tail layout the
batch is never written here. On a message thread the record is the same (the server's copy is a
cache of it), and each turn says how its call was sent: a create, a continue, or a replay and why.

Every start event says the record's format (``RECORD_FORMAT``). A record of an older format is read
as it was written (``upgrade``, before ``load`` reads the events; the next start event written says
the current one); a newer one is refused, naming both, rather than read half-understood.

``MemoryStore`` keeps the same events in memory: the agent's default, so the loop has one code path
whether or not a run is meant to survive a crash.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import logging
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..provider.cost import CallRecord
from .context import Injection
from .messages import dumps

log = logging.getLogger(__name__)

# 3: each boundary of a step carries its change to the step's one value (``step``: a ``StoredStep``).
# 2: start events say the format, task events when they came (``at``: a run's max_seconds counts from it).
# 1: neither (before December 2026): a run opened from one counts its time from when it was opened.
RECORD_FORMAT = 3


class StoredStep(BaseModel):
    """The one record of a step's progress (or a run's ending): the phase it reached, the notes it
    carries, the hooks it ran, the reply and tool results it has. The agent writes each boundary's
    change to it (``step`` on the boundary's event) and reads it back through ``advanced``, the one
    rule both sides use: a resume starts from this value. A stored reply is never asked for again, a
    stored result never recomputed, a hook that ran never runs again (only one killed while it ran may)."""

    # idle: between steps (or runs); started: a task's START hooks; sent: the call recorded as sent;
    # replied: its reply stored; failed, landed: the call failed, its turn landed; ended: the END hooks
    phase: Literal["idle", "started", "sent", "failed", "replied", "landed", "ended"] = "idle"
    # The notes the next call carries: undelivered (a call that did not finish), or queued by hooks
    # that ran; from ``sent`` to its reply, the call's batch. Never in the record on a layout that
    # keeps no batch (``tail_layout``): there they live in memory only.
    notes: list[Injection] = Field(default_factory=list)
    hooks: dict[str, int] = Field(default_factory=dict)  # ``point`` or ``point:tool_use_id``: how many of its hooks ran
    sent: dict[str, Any] | None = None  # the call recorded as sent: its model, and how many calls were before it
    reply: dict | None = None  # the response, its bill (``call``), the entries and batch it carried, its thread
    results: dict[str, dict] = Field(default_factory=dict)  # tool_use_id: the tool_result block the history keeps
    ended: dict | None = None  # the run's result, once its END hooks began (a ``RunResult`` as a dict)

    @property
    def in_flight(self) -> bool:
        """Was the step's call sent? A kill after it: its steers go after its turn, no limit stops it."""
        return self.phase in ("sent", "replied")

    def passed_by(self, change: dict[str, Any]) -> tuple[dict | None, CallRecord | None]:
        """What of this value's bill a boundary's ``change`` leaves behind: a call sent and then sent
        again, or never answered before its run ended (possibly billed); a reply whose turn never
        landed (paid for, not in the history). The one rule for both: the record's reader and the agent."""
        phase = change.get("phase")
        if phase is None:
            return None, None
        unanswered = dict(self.sent or {}) if self.phase == "sent" and phase not in ("replied", "failed") else None
        lost = CallRecord(**(self.reply or {})["call"]) if self.phase == "replied" and phase != "landed" else None
        return unanswered, lost

    def advanced(self, change: dict[str, Any]) -> "StoredStep":
        """This value after a boundary's ``change`` (as the record holds it): a phase of ``BEGINS``
        begins a new value, which carries the notes; any other change replaces the fields it names,
        and adds to the hooks and the results."""
        fields = dict(change)
        if "notes" in change:
            fields["notes"] = [Injection.model_validate(n) for n in change["notes"]]
        if change.get("phase") in BEGINS:
            return StoredStep(**{"notes": self.notes, **fields})
        fields.update({k: {**getattr(self, k), **change[k]} for k in ("hooks", "results") if k in change})
        return self.model_copy(update=fields)


BEGINS = {"idle", "started", "failed", "landed", "ended"}  # phases that begin a new value
UNFINISHED = ("max_tokens", "model_context_window_exceeded", "refusal")  # a reply with one is never kept


class CurrentRun(BaseModel):
    """The record's last run, from its task on: its task until it ends, where its limits count from."""

    task: dict | None = None  # its task message until its status is written (a kill): run(task) resumes it
    first_call: int = 0  # calls made before its task: the step cap counts from here
    started_at: float | None = None  # when its task came (``time.time()``; format 1: unknown): max_seconds counts from here


class StoredRun(BaseModel):
    messages: list[dict] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    current: CurrentRun = Field(default_factory=CurrentRun)  # the last run: its task, where its limits count from
    tool_outputs: dict[str, str] = Field(default_factory=dict)
    start: dict[str, Any] | None = None  # the latest start event: model, digests of system and tools, options
    state: dict[str, Any] = Field(default_factory=dict)  # what hooks keep (``RunState``), the latest value per key
    pending_steers: list[str] = Field(default_factory=list)  # accepted, not yet in the history
    # Paid for, never in the history: a reply whose turn never landed (the run ended, or an older
    # record's crash fell between a response and its turn). Not in ``calls`` (hooks count turns by
    # it), but part of what the run cost.
    lost_calls: list[CallRecord] = Field(default_factory=list)
    # Recorded as sent and never answered in the record (a kill while the call was in flight): the
    # server may have answered, and billed, a call no one read. At most one per kill.
    unanswered_calls: list[dict] = Field(default_factory=list)
    compactions: int = 0
    status: str = "new"
    threads: list[dict] = Field(default_factory=list)  # each threaded call: how it went, its response id
    step: StoredStep = Field(default_factory=StoredStep)  # the last step's progress: a resume goes on from it
    previous_len: int | None = None  # the history's length at the last call (where its breakpoint was)
    skipped: list[str] = Field(default_factory=list)  # events of a type this reader does not know: kept, not read
    counts: dict[str, int] = Field(default_factory=dict)  # events of each type: where a hook's run id counts from
    format: int = RECORD_FORMAT  # the format of its latest start event (``RECORD_FORMAT``)


class RunState:
    """What hooks and features keep across crashes (a warning given, a count, a response id): one
    JSON value per key, read back when an agent opens the record. ``set`` holds the value until the
    agent writes its next completed turn (or the run's status), in that same event: a value and the
    notes its step produced land together or not at all, so a note given once is given exactly once
    however often the process dies."""

    def __init__(self, values: dict[str, Any] | None = None):
        self.values: dict[str, Any] = dict(values or {})
        self.unwritten: dict[str, Any] = {}  # set since the agent's last write: it writes them with its next

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: Any) -> None:
        dumps(value)  # a value the record cannot hold fails here, in the hook that set it
        self.values[key] = self.unwritten[key] = value


class StoreFailure(OSError):
    """The one error a store's backend raises when it cannot do what was asked (a file system's is
    already an ``OSError``; a database's is wrapped in this): the agent ends the run cleanly on it,
    its END hooks run, and what the record holds is still whole."""


class StoreError(ValueError):
    """A run record that cannot be read back as it was written: names the file, the line, the fault."""


class StoreBase:
    """A store's common part: ``load`` (the events folded into a ``StoredRun``) and ``close``. A
    backend implements ``write`` (one event, in order, whole or not at all) and ``events``. Its error
    contract: any failure of the backend is a ``StoreFailure`` (or another ``OSError``); the agent
    wraps any other exception a ``write`` raises in one, and ends the run on it with its END hooks."""

    where = "the run record"

    def load(self) -> StoredRun:
        return load(self.events(), self.where)

    def close(self) -> None:
        """Release what the log holds (a lock, a connection); nothing by default."""


def load(events: list[dict[str, Any]], where: str = StoreBase.where) -> StoredRun:
    """The run a store's events record (``where`` names the store in errors). The event kinds
    (``type``), as the agent writes them:

        start      what the run sends besides its history: ``format``, ``model``, digests of ``system`` and ``tools``, ``options``
        task       the user turn that starts a run (``messages``, ``at``: when): the step and time caps count from here
        hooked     a hook ran
        sent       a call about to be sent (``model``): without a reply after it, unanswered
        reply      its answer, before any tool runs
        failed     the call was refused past the SDK's retries (``error``)
        tool_output  a tool's raw output (``tool_use_id``, ``raw``)
        turn       a completed turn (``messages``) with the record of the call that made it (``call``)
                   and, on a message thread, how it was sent (``thread``: its type, why, the response id)
        steer      an accepted steer (``text``); ``steered``: the oldest one, now in the history
        compaction the history as rewritten (``messages``)
        ended      the run's result, before its END hooks
        status     the run's ``status`` at the end of a ``run()``
    Each event of a step's boundary carries its change to the step's value (``step``: see
    ``StoredStep.advanced``); a call sent and never answered, or a reply whose turn never landed, is
    found where the value moves past it. Any event may carry ``state``: the values hooks set
    (``RunState``) since the last one. An event of a type not listed here (a newer writer's) is kept
    in the record and skipped, with a warning."""
    run = StoredRun()
    for number, event in enumerate(upgrade(events, where), start=1):
        if not isinstance(event, dict):
            raise StoreError(f"{where}:{number}: not an event object")
        kind = event.get("type")
        if event.get("seq", number) != number:
            raise StoreError(f"{where}:{number}: event {number} expected, found event {event['seq']} "
                             "(a line was deleted, duplicated or moved)")
        try:
            run.counts[str(kind)] = run.counts.get(str(kind), 0) + 1
            run.state.update(event.get("state") or {})
            if "step" in event:
                _advance(run, event["step"])
            if kind in ("task", "turn", "steered"):
                if not isinstance(event["messages"], list) or not all(isinstance(m, dict) for m in event["messages"]):
                    raise ValueError("its messages are not a list of message objects")
                if kind == "steered" and not run.pending_steers:
                    raise StoreError(f"{where}:{number}: a steered turn without an accepted steer before it")
                run.messages.extend(event["messages"])
            if kind == "task":
                run.current = CurrentRun(task=event["messages"][0] if event["messages"] else None,
                                         first_call=len(run.calls), started_at=event.get("at"))
            elif kind == "steered":
                run.pending_steers.pop(0)
            elif kind == "turn" and "call" in event:
                run.calls.append(CallRecord(**event["call"]))
                run.threads += [dict(event["thread"])] if "thread" in event else []
            elif kind == "steer":
                run.pending_steers.append(event["text"])
            elif kind == "tool_output":
                run.tool_outputs[event["tool_use_id"]] = event["raw"]
            elif kind == "compaction":
                run.messages = list(event["messages"])
                run.compactions, run.previous_len = run.compactions + 1, None
            elif kind == "start":
                run.start = {k: v for k, v in event.items() if k not in ("type", "seq", "state")}
                run.format = event["format"]
            elif kind == "status":
                run.status, run.current.task = event["status"], None
            elif kind not in ("turn", "hooked", "sent", "reply", "failed", "ended"):
                run.skipped.append(str(kind))
                log.warning("%s:%d: an event of a type this reader does not know (%r): kept, skipped", where, number,
                            kind)
        except StoreError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise StoreError(f"{where}:{number}: a {kind} event that cannot be read ({type(e).__name__}: {e})") from None
    if run.step.phase == "sent":  # a call in flight at the kill
        run.unanswered_calls.append(dict(run.step.sent or {}))
    if run.step.phase == "replied" and "response" not in (run.step.reply or {}):  # format 1: billed, its turn lost
        _advance(run, {"phase": "idle"})
    return run


def _advance(run: StoredRun, change: dict[str, Any]) -> None:
    """The step's value moved on by ``change``, and the bill of what it moves past (``passed_by``)."""
    unanswered, lost = run.step.passed_by(change)
    run.unanswered_calls += [unanswered] if unanswered is not None else []
    run.lost_calls += [lost] if lost is not None else []
    if change.get("phase") == "replied":
        run.previous_len = len(run.messages)
    run.step = run.step.advanced(change)


def upgrade(events: list[dict[str, Any]], where: str = StoreBase.where) -> list[dict[str, Any]]:
    """A record's events as this reader reads them. Format 1 (its start events say none) is read
    as format 2 (its task events have no ``at``: read as unknown); an event of format 2 (a boundary
    without its ``step``) gets its change to the step's value (``_step_change``). A record
    with a start event of a newer format than ``RECORD_FORMAT`` is refused."""
    upgraded, written, step, calls = [], 1, StoredStep(), 0
    for number, event in enumerate(events, start=1):
        if isinstance(event, dict) and event.get("type") == "start":
            written = event.get("format", 1)
            if not isinstance(written, int) or written > RECORD_FORMAT:
                raise StoreError(f"{where}:{number}: written in record format {written!r}; this reader knows formats "
                                 f"1 to {RECORD_FORMAT}: open it with the version of the runtime that wrote it")
            event = {**event, "format": written}
        elif isinstance(event, dict) and "step" not in event:  # format 3 writes one on every boundary
            change = _step_change(event, step, calls)
            calls += event.get("type") == "turn" and "call" in event
            if change is not None:
                step, event = step.advanced(change), {**event, "step": change}
        upgraded.append(event)
    return upgraded


def _step_change(event: dict[str, Any], step: StoredStep, calls: int) -> dict[str, Any] | None:
    """The change an event of format 2 made to its step's value, as format 3 writes it."""
    kind = event.get("type")
    if kind == "hooked":
        return {"hooks": {event["point"]: event["upto"]}, "notes": [*step.notes, *event.get("notes", [])]}
    if kind == "sent":
        return {"phase": "sent", "sent": {"model": event.get("model"), "calls": calls}, "notes": event.get("batch", [])}
    if kind in ("reply", "billed"):
        reply = {k: v for k, v in event.items() if k not in ("type", "seq", "state")}
        response = reply.get("response") or {}
        finished = response.get("stop_reason") not in UNFINISHED and bool(response.get("content"))
        batch = [n.model_dump() for n in step.notes]
        return {"phase": "replied", "reply": {**reply, "batch": batch}, "notes": [] if finished else batch}
    if kind == "tool_output" and "result" in event and step.phase == "replied":
        return {"results": {event["tool_use_id"]: event["result"]}}
    if kind == "turn" and "call" in event:
        return {"phase": "landed", **({"notes": []} if event["messages"] else {})}
    phase = {"task": "started", "failed": "failed", "ended": "ended", "status": "idle"}.get(str(kind))
    return {"phase": phase, **({"ended": event["result"]} if kind == "ended" else {})} if phase else None


class MemoryStore(StoreBase):
    """The run record in memory: nothing survives the process, everything else is the same."""

    def __init__(self) -> None:
        self._log: list[str] = []
        self._lock = threading.Lock()

    def write(self, event: dict[str, Any], sync: bool = True) -> None:
        with self._lock:  # numbered and kept in one step: a steer's thread cannot slip in between
            self._log.append(dumps({**event, "seq": len(self._log) + 1}))  # serialized: later edits cannot reach it

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._log]


class StoreLocked(RuntimeError):
    """The run record is open in another process (or another ``RunStore`` of this one)."""


class RunStore(StoreBase):
    """The run record on disk, in ``directory/events.jsonl``. Open in one place at a time: an
    exclusive lock is held from opening to ``close`` (two processes resuming one run would both run
    every tool). Writes from several threads (a steer from the steering server, the loop's turns)
    are numbered and written under one lock, so the file is always in sequence."""

    def __init__(self, directory: str | Path):
        self._fd = None  # first: a store that failed to open has nothing to close
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "events.jsonl"
        self.where = str(self.path)
        self._lock = threading.Lock()
        # Both files are opened from a handle on the folder and never through a link: a planted
        # events.jsonl or events.pid pointing elsewhere is refused, not truncated or overwritten.
        folder = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            self._fd = _open_in(folder, self.directory, "events.jsonl", os.O_RDWR | os.O_APPEND | os.O_CREAT)
            self._hold(folder)
        finally:
            os.close(folder)
        self._repair()
        self._size = os.fstat(self._fd).st_size
        self._seq = os.pread(self._fd, self._size, 0).count(b"\n")

    def _hold(self, folder: int) -> None:
        """Take the exclusive lock, or say who holds it. The holder's pid is kept in ``events.pid``."""
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            pid = _open_in(folder, self.directory, "events.pid", os.O_WRONLY | os.O_CREAT)  # emptied once checked
            os.ftruncate(pid, 0)
        except BlockingIOError:
            self.close()
            try:
                holder = (self.directory / "events.pid").read_text().strip() or "unknown"
            except OSError:
                holder = "unknown"
            raise StoreLocked(f"{self.path} is open in process {holder}"
                              f"{' (this one)' if holder == str(os.getpid()) else ''}: close it there first "
                              "(two processes resuming one run would both run every tool)") from None
        except BaseException:
            self.close()
            raise
        with os.fdopen(pid, "w") as f:
            f.write(f"{os.getpid()}\n")

    def _repair(self) -> None:
        """Make the file end on its last complete event, or refuse to open it. The writer writes a
        line and its newline in one go, so a kill leaves either whole lines or a torn last line (the
        start of an event, no newline): that is cut, and named in a warning. A last line that is a
        whole event without its newline (a hand edit, a script that rewrote the file with
        ``"\\n".join``) is an event: kept, and its newline written, so a resume never runs its tool
        or pays its call again. Blank lines after the last event hold nothing: dropped. Anything
        else that does not read (a line with its newline that is not an event, text that is not the
        start of one) is not the writer's: a ``StoreError`` naming the file and the line, and the
        file is left as it was."""
        data = os.pread(self._fd, os.fstat(self._fd).st_size, 0)
        body = data.rstrip(b" \t\r\n")  # what follows the last event's text: its line ending, blank lines
        start = body.rfind(b"\n") + 1
        last, number, ended = body[start:], body.count(b"\n") + 1, b"\n" in data[len(body):]
        try:
            _events_of(data[:start], self.where)  # every line before the last reads, or the store is not opened
        except StoreError:
            self.close()
            raise
        try:
            if last and not isinstance(_event_of(last, self.where, number), dict):
                raise StoreError(f"{self.where}:{number}: not an event object")
        except StoreError:
            if ended or not last.startswith(b"{"):
                self.close()
                raise
            os.ftruncate(self._fd, start)  # torn by a kill in the middle of its write
            log.warning("%s:%d: a torn last line (%d bytes, no newline) was cut: the write a kill interrupted",
                        self.where, number, len(last))
            return
        if not last:  # nothing but blank lines, or nothing at all
            os.ftruncate(self._fd, 0)
            return
        if data in (body + b"\n", body + b"\r\n"):  # as the writer left it
            return
        os.ftruncate(self._fd, len(body))
        os.write(self._fd, b"\n")
        os.fsync(self._fd)
        log.warning("%s:%d: %s", self.where, number, "the last event had no newline: kept, newline written"
                    if not ended else "blank lines after the last event: dropped")

    def write(self, event: dict[str, Any], sync: bool = True) -> None:
        """One whole line; with ``sync``, on disk before the run goes on (without, it is in the
        kernel's buffers: it survives the process being killed, not the machine losing power). A
        write that fails or stops short (a full disk) is cut back to the last whole line, the count
        is unchanged, and the error is raised: the file never holds half a line between two events."""
        with self._lock:
            event = {**event, "seq": self._seq + 1}
            try:
                data = (dumps(event) + "\n").encode()
            except UnicodeEncodeError:  # lone surrogates (undecodable tool output): escaped, read back exactly
                data = (json.dumps(event, separators=(",", ":")) + "\n").encode()  # ASCII, with escapes
            try:
                view = memoryview(data)
                while view:  # a short write is not an error in itself: write the rest
                    written = os.write(self._fd, view)
                    if written <= 0:
                        raise OSError(errno.ENOSPC, "nothing was written")
                    view = view[written:]
                if sync:
                    os.fsync(self._fd)
            except OSError:
                os.ftruncate(self._fd, self._size)
                raise
            self._seq += 1
            self._size += len(data)

    def events(self) -> list[dict[str, Any]]:
        return _read(self.path)

    def close(self) -> None:
        """Release the lock (and the file): another process may open the record now."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def _open_in(folder: int, directory: Path, name: str, flags: int) -> int:
    """``name`` opened in ``folder`` (a handle on ``directory``) with O_NOFOLLOW: a link is refused, and
    so is a file with another name (a hard link planted there shares the file outside)."""
    try:  # never blocking: a FIFO planted there would hold the open (and the lock) for ever
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644, dir_fd=folder)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise PermissionError(f"{directory / name} is a link: refused, not followed (the run record "
                                  "writes only its own files)") from None
        if e.errno == errno.ENXIO:  # a FIFO with no reader, opened to write
            raise PermissionError(_not_a_file(directory / name)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PermissionError(_not_a_file(directory / name))
    os.set_blocking(fd, True)
    if os.fstat(fd).st_nlink > 1:
        os.close(fd)
        raise PermissionError(f"{directory / name} has another name (a hard link): refused, not written (the run "
                              "record writes only its own files)")
    return fd


def load_run(directory: str | Path) -> StoredRun:
    """The run record in ``directory`` as it stands, read without opening it (and so without its
    lock): for looking at a run that an agent, here or in another process, may still hold."""
    path = Path(directory) / "events.jsonl"
    return load(_read(path) if path.exists() else [], str(path))


def _not_a_file(path: Path) -> str:
    return f"{path} is not a regular file (a FIFO, a socket or a device): refused, not opened"


def _read(path: Path) -> list[dict[str, Any]]:
    """Every whole line of ``path`` as an event (a line still being written is not whole yet)."""
    if not stat.S_ISREG(os.stat(path).st_mode):  # reading a FIFO would wait for a writer for ever
        raise PermissionError(_not_a_file(path))
    data = path.read_bytes()
    return _events_of(data[:data.rfind(b"\n") + 1], str(path))


def _events_of(data: bytes, where: str) -> list[Any]:
    """Each newline-ended line of ``data`` read as JSON (the caller checks what it holds)."""
    return [_event_of(line, where, number) for number, line in enumerate(data.split(b"\n")[:-1], start=1)]


def _event_of(line: bytes, where: str, number: int) -> Any:
    try:
        return json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise StoreError(f"{where}:{number}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except ValueError as e:
        raise StoreError(f"{where}:{number}: not a JSON line ({e})") from None
