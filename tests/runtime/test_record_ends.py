"""A record keeps every complete event (issue 61 item 2): the record of a real run (tool, reply, hook
and steer events), cut after each of its events and written back as a hand or a script might leave
it (without its final newline, with CRLF line endings, with a blank line after it, with the next
event torn), opens with exactly the events it holds, and its resume runs no tool and pays no call
that the plainly cut record's resume does not. Before, an event without its final newline was cut
without a word: the resume ran its tool again (``tool_output``) or paid its call again (``reply``)."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import BaseModel

from minimal_runtime.core.agent import Agent
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import dumps
from minimal_runtime.core.store import RunStore, StoreError
from minimal_runtime.core.tools import FunctionTool
from minimal_runtime.emulator import Emulator, Turn, tool_use

MODEL = "claude-sonnet-5-5"
TASK = "Append four lines."


class Entry(BaseModel):
    n: int


def policy(request: dict) -> Turn:
    results = sum(1 for m in request["messages"] if isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    if results < 4:
        return Turn.of([tool_use("append", {"n": results}), tool_use("append", {"n": results + 1})])
    return Turn.of(f"Done after {results} appends.")


class World:
    """The server and the tool's side effects: what outlives the process."""

    def __init__(self, steer: bool = False):
        self.emu = Emulator(model=MODEL, policy=policy)
        self.appended: list[int] = []
        self.steer = steer  # the user steers once, during the first step's tools (never again on a resume)

    def agent(self, store: RunStore) -> Agent:
        def append(entry: Entry) -> str:
            self.appended.append(entry.n)
            return f"{len(self.appended)} lines"

        def note(event):
            event.agent.state.set("notes", event.agent.state.get("notes", 0) + 1)
            event.agent.inject_turn_scoped("count", f"Note {event.agent.state.get('notes')}.")

        def steer_once(event):
            if self.steer:
                self.steer = False
                assert event.agent.steer("Also note the time.")
        hooks = HookRegistry()
        hooks.register(Point.PRE_LLM_CALL, note)
        hooks.register(Point.POST_TOOL_CALL, steer_once)
        return Agent(self.emu.client(max_retries=0), model=MODEL, system="You append.", hooks=hooks, store=store,
                     tools=[FunctionTool("append", "Append a line.", Entry, append)])


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    """What a file holds is the question here, not whether it reached the disk: some 5,000 writes
    without waiting for the disk each time."""
    monkeypatch.setattr("minimal_runtime.core.store.os.fsync", lambda fd: None)


@pytest.fixture(scope="module")
def lines(tmp_path_factory) -> list[bytes]:
    """The lines (each with its newline) of a real run's record."""
    folder = tmp_path_factory.mktemp("run")
    store = RunStore(folder)
    assert World(steer=True).agent(store).run(TASK).status == "done"
    store.close()
    lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
    kinds = {json.loads(line)["type"] for line in lines}
    assert {"tool_output", "reply", "hooked", "steer", "sent", "turn"} <= kinds
    return lines


def crlf(lines: list[bytes]) -> bytes:
    return b"".join(line[:-1] + b"\r\n" for line in lines)


# each: the prefix's lines, the line after it -> what the file holds
VARIANTS = {
    "as written": lambda kept, nxt: b"".join(kept),
    "no final newline": lambda kept, nxt: b"".join(kept)[:-1],
    "joined with \\n": lambda kept, nxt: b"\n".join(line[:-1] for line in kept),
    "CRLF": lambda kept, nxt: crlf(kept),
    "CRLF, no final newline": lambda kept, nxt: crlf(kept)[:-2],
    "CRLF, no final LF": lambda kept, nxt: crlf(kept)[:-1],
    "a trailing blank line": lambda kept, nxt: b"".join(kept) + b"\n",
    "trailing blank lines, CRLF": lambda kept, nxt: crlf(kept) + b"\r\n \r\n",
    "the next event torn": lambda kept, nxt: b"".join(kept) + nxt[:len(nxt) // 2],
    "the next event without its last byte": lambda kept, nxt: b"".join(kept) + nxt[:-2],
}


RESUMED = ("no final newline", "CRLF, no final newline")  # the case: resumed in full


def resume(folder) -> tuple[World, RunStore, object]:
    world = World()
    store = RunStore(folder)
    result = world.agent(store).run(TASK)
    return world, store, result


def test_every_prefix_of_a_real_record_opens_with_every_complete_event_and_resumes_as_the_clean_cut(lines, tmp_path,
                                                                                                     caplog):
    events = [json.loads(line) for line in lines]
    for k in range(1, len(lines)):
        kept, nxt = lines[:k], lines[k]
        plain = tmp_path / f"{k}-plain"
        plain.mkdir()
        (plain / "events.jsonl").write_bytes(b"".join(kept))
        clean_world, clean_store, clean_result = resume(plain)
        clean_store.close()
        assert clean_result.status == "done"
        # the plainly cut record's resume repeats nothing (test_durable_step proves it per event): its
        # tool runs are the ones the prefix did not record
        ran = sum(e["type"] == "tool_output" for e in events[:k])
        assert len(clean_world.appended) + ran == 4, f"after event {k}"
        for name, make in VARIANTS.items():
            folder = tmp_path / f"{k}-{name.replace(' ', '_').replace(',', '').replace(chr(92), '')}"
            folder.mkdir()
            (folder / "events.jsonl").write_bytes(make(kept, nxt))
            where = f"cut after event {k} ({events[k - 1]['type']}), {name}"
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="minimal_runtime.core.store"):
                store = RunStore(folder)
            assert store.events() == events[:k], where
            assert (folder / "events.jsonl").read_bytes().endswith(b"\n"), where  # the newline written
            if "torn" in name or "last byte" in name:
                assert f"events.jsonl:{k + 1}: a torn last line" in caplog.text, where  # cut and named
            store.close()
            if name not in RESUMED:
                continue  # it opened with the plain cut's events, so it resumes as the plain cut does
            world, store, result = resume(folder)
            store.close()
            assert result.status == "done", where
            assert world.appended == clean_world.appended, where  # no tool run again
            assert len(world.emu.calls) == len(clean_world.emu.calls), where  # no call paid again
            assert dumps(load_messages(folder)) == dumps(load_messages(plain)), where


def load_messages(folder) -> list[dict]:
    with RunStore(folder) as store:
        return store.load().messages


@pytest.mark.parametrize("content, line, fault", [
    (b'{"type":"task","seq":1,"messages":[]}\nnot json\n{"type":"status","seq":3,"status":"done"}\n', 2,
     "not a JSON line"),
    (b'{"type":"task","seq":1,"messages":[]}\n{"type":"status","seq":2,"status":"do\n', 2, "not a JSON line"),
    (b'{"type":"task","seq":1,"messages":[]}\ngarbage without a newline', 2, "not a JSON line"),
    (b'{"type":"task","seq":1,"messages":[]}\n[1, 2]\n', 2, "not an event object"),
    (b'{"type":"task","seq":1,"messages":[]}\n\n{"type":"status","seq":2,"status":"done"}\n', 2, "not a JSON line"),
    (b'{"type":"task","seq":1,"messages":[]}\n\xff\xfe\n', 2, "not UTF-8"),
])
def test_anything_else_unreadable_refuses_to_open_naming_the_file_and_line_and_changes_nothing(tmp_path, content, line,
                                                                                                fault):
    (tmp_path / "events.jsonl").write_bytes(content)
    with pytest.raises(StoreError) as e:
        RunStore(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'events.jsonl'}:{line}: {fault}")
    assert (tmp_path / "events.jsonl").read_bytes() == content  # nothing cut
    # the lock was released: mended, the file opens
    (tmp_path / "events.jsonl").write_bytes(content.split(b"\n")[0] + b"\n")
    RunStore(tmp_path).close()
