"""No link sends a write outside the workspace or the run folder (issue 41): every write opens its
file one folder at a time from a folder handle, refusing links, so a folder swapped for a link
between a check and the write is refused with the path named. Each test failed on the runtime
that checked ``inside()`` first and wrote by path after."""

from __future__ import annotations

import os
import pathlib

import pytest

from minimal_runtime.core.store import RunStore
from minimal_runtime.example.tools import Workspace
from minimal_runtime.features.filesystem import Offloader
from minimal_runtime.features.recall import Keeper

BIG = "an observation worth keeping " * 50


@pytest.fixture
def race(monkeypatch, tmp_path):
    """``race(folder)``: the workspace ``ws`` with ``folder`` in it, and an ``arm()`` that swaps
    ``folder`` for a link to ``outside`` right after the write checks where it goes (a
    ``Path.resolve``) or, for a write that checks nothing first, right after it opens its first
    handle: the race the adversary won 4 times in 600, made certain. Returns (workspace, outside,
    the list that says whether the swap happened, arm)."""
    def prepare(folder: str):
        workspace, outside = tmp_path / "ws", tmp_path / "outside"
        (workspace / folder).mkdir(parents=True)
        outside.mkdir()
        swapped = []

        def swap() -> None:
            if not swapped:
                swapped.append(True)
                os.rename(workspace / folder, workspace / f"{folder}-before")
                os.symlink(outside, workspace / folder)

        def after(real):
            def look(*args, **kwargs):
                result = real(*args, **kwargs)
                swap()
                return result
            return look

        def arm() -> None:
            for owner, name in ((pathlib.Path, "resolve"), (os, "open")):
                monkeypatch.setattr(owner, name, after(getattr(owner, name)))
        return workspace, outside, swapped, arm
    return prepare


def test_the_offloader_refuses_a_folder_swapped_for_a_link_mid_write(race):
    workspace, outside, swapped, arm = race(".observations")
    offloader = Offloader(workspace, threshold=10)
    arm()
    kept = offloader({"id": "toolu_1"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": BIG})
    assert swapped and list(outside.iterdir()) == []
    assert kept["is_error"] and "could not be saved" in kept["content"]
    assert "'.observations' is a link" in kept["content"]  # the error names the path


def test_the_keeper_refuses_a_folder_swapped_for_a_link_mid_write(race):
    workspace, outside, swapped, arm = race(".observations")
    keeper = Keeper(workspace)
    arm()
    with pytest.raises(PermissionError, match=r"'\.observations/compacted-[0-9a-f]+\.txt': '\.observations' is a link"):
        keeper.keep(BIG)
    assert swapped and list(outside.iterdir()) == []


def test_write_file_refuses_a_folder_swapped_for_a_link_mid_write(race):
    workspace, outside, swapped, arm = race("notes")
    files = Workspace(workspace)
    arm()
    with pytest.raises(PermissionError, match=r"'notes/today\.md': 'notes' is a link"):
        files.write("notes/today.md", "written by the agent")
    assert swapped and list(outside.iterdir()) == []


def test_a_link_planted_in_the_workspace_is_not_followed_by_a_write(tmp_path):
    workspace, outside = tmp_path / "ws", tmp_path / "outside.md"
    workspace.mkdir()
    outside.write_text("not the agent's")
    (workspace / "report.md").symlink_to(outside)
    with pytest.raises(PermissionError, match=r"'report\.md' is a link"):
        Workspace(workspace).write("report.md", "overwritten")
    assert outside.read_text() == "not the agent's"


def test_a_folder_planted_at_the_offloaders_next_file_name_costs_it_only_that_name(tmp_path):
    """It once stopped the run with "the run record could not be written", the record being fine."""
    offloader = Offloader(tmp_path, threshold=10)
    (tmp_path / offloader.path_for("toolu_1")).mkdir(parents=True)
    kept = offloader({"id": "toolu_1"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": BIG})
    assert not kept.get("is_error"), kept["content"]
    path = kept["content"].split("saved at ")[1].split(";")[0]
    assert path != offloader.path_for("toolu_1") and offloader.restore(path) == BIG


# the store ------------------------------------------------------------------------------------------

def test_the_store_refuses_an_events_file_linked_outside(tmp_path):
    run, outside = tmp_path / "run", tmp_path / "precious.txt"
    run.mkdir()
    outside.write_bytes(b"a whole line\na line without its end")  # what opening a record would cut
    (run / "events.jsonl").symlink_to(outside)
    with pytest.raises(PermissionError, match=r"events\.jsonl is a link: refused, not followed"):
        RunStore(run)
    assert outside.read_bytes() == b"a whole line\na line without its end"


def test_the_store_refuses_an_events_pid_linked_outside_and_releases_its_lock(tmp_path):
    run, outside = tmp_path / "run", tmp_path / "precious.txt"
    run.mkdir()
    outside.write_text("someone else's file\n")
    (run / "events.pid").symlink_to(outside)
    with pytest.raises(PermissionError, match=r"events\.pid is a link: refused, not followed"):
        RunStore(run)
    assert outside.read_text() == "someone else's file\n"
    (run / "events.pid").unlink()
    with RunStore(run) as store:  # refused, not locked: the next opener gets in
        store.write({"type": "status", "status": "running"})
    assert (run / "events.pid").read_text() == f"{os.getpid()}\n"


@pytest.mark.parametrize("name", ["events.jsonl", "events.pid"])
def test_the_store_refuses_a_hard_link_planted_at_its_files_and_leaves_the_file_outside_whole(tmp_path, name):
    """O_NOFOLLOW stops a symbolic link, not a second name of a file outside: the store appends to
    events.jsonl and empties events.pid, so either would write the outside file through it."""
    run, outside = tmp_path / "run", tmp_path / "precious.txt"
    run.mkdir()
    outside.write_bytes(b"a whole line\na line without its end")
    os.link(outside, run / name)
    with pytest.raises(PermissionError, match=rf"{name.replace('.', '[.]')} has another name \(a hard link\)"):
        RunStore(run)
    assert outside.read_bytes() == b"a whole line\na line without its end"


def test_the_offload_record_is_not_appended_through_a_hard_link(tmp_path):
    from minimal_runtime.features.filesystem import RECORD
    outside = tmp_path / "precious.txt"
    outside.write_text("someone else's file\n")
    workspace = tmp_path / "ws"
    (workspace / RECORD).parent.mkdir(parents=True, exist_ok=True)
    os.link(outside, workspace / RECORD)
    offloader = Offloader(workspace, threshold=10)
    kept = offloader({"id": "toolu_1"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": BIG})
    assert outside.read_text() == "someone else's file\n"
    assert kept.get("is_error") and "has another name (a hard link)" in kept["content"], kept


def _within(seconds: float, fn):
    """``fn()``'s exception (or None) if it returns within ``seconds``; fails if it blocks (a FIFO did)."""
    import threading
    outcome: list = []

    def call():
        try:
            fn()
            outcome.append(None)
        except Exception as e:
            outcome.append(e)
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"still blocked after {seconds} s"
    return outcome[0]


@pytest.mark.parametrize("name", ["events.jsonl", "events.pid"])
def test_a_fifo_planted_at_the_stores_files_is_refused_in_one_line_not_waited_on(tmp_path, name):
    """Issue 52 item 10: a FIFO at events.pid blocked RunStore() for ever while it held the lock; one
    at events.jsonl blocked load_run()."""
    from minimal_runtime.core.store import load_run
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / name)
    error = _within(10, lambda: RunStore(run))
    assert isinstance(error, PermissionError) and "\n" not in str(error)
    assert str(error) == f"{run / name} is not a regular file (a FIFO, a socket or a device): refused, not opened"
    if name == "events.jsonl":
        error = _within(10, lambda: load_run(run))
        assert isinstance(error, PermissionError) and "not a regular file" in str(error)
    else:
        (run / name).unlink()
        with RunStore(run) as store:  # refused, not locked: the next opener gets in
            store.write({"type": "status", "status": "running"})
