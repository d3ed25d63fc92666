"""Odd files under a folder and odd ways to end a replay (issue 52 item 11, issue 49 item 12): a FIFO,
a socket, an unreadable sub-folder and a name that is not UTF-8 are each listed as not replayed, and
a FIFO given alone does not hang; a scheduler that is not there is one line at once; a killed replay
takes its workers with it; a rerun with the folder spelled another way resumes."""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from minimal_runtime.replay import TrajectoryError, load
from minimal_runtime.replay.current import write_current


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    return write_current(tmp_path_factory.mktemp("odd"), "claude-sonnet-4-6", rounds=3)["stream"]


def test_fifos_sockets_unreadable_folders_and_non_utf8_names_are_listed_not_replayed(stream, tmp_path, capsys):
    from minimal_runtime.__main__ import main
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "run.jsonl").write_bytes(stream.read_bytes())
    name = os.fsdecode(b"caf\xe9.jsonl")  # a Latin-1 name: not UTF-8
    (folder / name).write_bytes(stream.read_bytes())
    os.mkfifo(folder / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock"))
    locked = folder / "locked"
    locked.mkdir()
    (locked / "inside.jsonl").write_text("{}\n")
    locked.chmod(0)
    try:
        out_csv = tmp_path / "runs.csv"
        main(["replay", str(folder), "--strategy", "recorded", "--jobs", "1", "--csv", str(out_csv)])
        out = capsys.readouterr().out
        assert f"not replayed: {folder / 'pipe'}: a FIFO, not a log file" in out
        assert f"not replayed: {folder / 'sock'}: a socket, not a log file" in out
        if not os.access(locked, os.R_OK):  # root reads every folder: then its file is listed instead
            assert f"not replayed: {locked}: a folder that cannot be read (Permission denied)" in out
        rows = list(csv.DictReader(open(out_csv, encoding="utf-8", errors="surrogateescape")))
        assert {r["run"].split("#")[0] for r in rows if r["source"]} == {str(folder / "run.jsonl"), str(folder / name)}
        assert "4 runs from 2 files" in out  # each with its sub-agent
        main(["replay", str(folder), "--strategy", "recorded", "--jobs", "1", "--csv", str(out_csv)])  # resumes
        assert "files read back from the --csv" in capsys.readouterr().out
    finally:
        locked.chmod(0o700)
        sock.close()


def test_a_fifo_given_alone_is_refused_without_opening_it(tmp_path):
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(TrajectoryError, match="a FIFO, not a log file"):
        load(tmp_path / "pipe.jsonl")  # opening it would wait for a writer forever


def test_a_scheduler_that_is_not_there_is_one_line_at_once(stream, tmp_path):
    from minimal_runtime.__main__ import main
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(stream.parent), "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"])
    assert f"no Dask scheduler answered at 127.0.0.1:{port}" in str(stopped.value.code)
    assert "\n" not in str(stopped.value.code) and time.monotonic() - start < 10


def test_a_rerun_with_the_folder_spelled_another_way_resumes(stream, tmp_path, capsys, monkeypatch):
    from minimal_runtime.__main__ import main
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(stream.read_bytes())
    out_csv = tmp_path / "runs.csv"
    main(["replay", str(folder), "--strategy", "recorded", "--jobs", "1", "--csv", str(out_csv)])
    rows = len(list(csv.DictReader(open(out_csv))))
    monkeypatch.chdir(tmp_path)
    main(["replay", "./logs/../logs/", "--strategy", "recorded", "--jobs", "1", "--csv", str(out_csv)])
    assert "(1 files read back from the --csv)" in capsys.readouterr().out
    assert len(list(csv.DictReader(open(out_csv)))) == rows  # nothing replayed twice


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the process table from /proc")
def test_killing_replay_takes_its_worker_processes_with_it(stream, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for k in range(40):
        (folder / f"{k}.jsonl").write_bytes(stream.read_bytes())
    replay = subprocess.Popen([sys.executable, "-m", "minimal_runtime", "replay", str(folder), "--jobs", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        workers = [p for p in _children(replay.pid) if p != replay.pid]
        time.sleep(0.05)
    assert len(workers) >= 2, "the workers never started"
    replay.send_signal(signal.SIGKILL)
    replay.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") and _state(p) != "Z" for p in workers):
        time.sleep(0.05)
    assert not [p for p in workers if os.path.exists(f"/proc/{p}") and _state(p) != "Z"], "workers outlived replay"


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_lone_surrogate_in_a_mini_swe_agent_system_message_is_refused_with_its_line(tmp_path):
    path = tmp_path / "x.traj.json"
    path.write_text('{"info": {},\n "messages": [\n  {"role": "system", "content": "be \\ud800 careful"},\n'
                    '  {"role": "user", "content": "go \\ud83d\\ude00"}\n ]}\n')
    with pytest.raises(TrajectoryError, match=r"x\.traj\.json:3: text with a lone UTF-16 surrogate"):
        load(path)
