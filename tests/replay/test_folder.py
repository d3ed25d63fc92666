"""``replay DIR``: every file under a folder read by its content (sub-agents' files included, any
name), one table across runs, every file not replayed listed with its reason, ``--csv`` streamed one
row per run and strategy and resumed by a rerun, progress on stderr."""

from __future__ import annotations

import csv
import re
import shutil

import pytest

from minimal_runtime.replay.current import write_current


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    return folder, write_current(folder, "claude-sonnet-5-5", rounds=3)


def test_a_folder_replays_every_log_under_it_into_one_table_and_a_csv(logs, tmp_path, capsys):
    folder, paths = logs
    (folder / "notes.jsonl").write_text('{"hello": 1}\n')
    out_csv = tmp_path / "runs.csv"
    from minimal_runtime.__main__ import main
    main(["replay", str(folder), "--strategy", "recorded", "--strategy", "tail-2025",
          "--jobs", "2", "--csv", str(out_csv)])  # two worker processes, once
    out = capsys.readouterr().out
    # the session, its sub-agent's own file, and the stream log with its sub-agent: four runs
    assert "4 runs from 3 files, 1 files not replayed" in out
    recorded = next(line for line in out.splitlines() if line.startswith("recorded "))
    rows = list(csv.DictReader(open(out_csv)))
    assert recorded.split()[1:3] == ["4", str(sum(int(r["logged_calls"]) for r in rows if r["strategy"] == "recorded"))]
    assert recorded.split()[-1] == "0"  # every run finished
    assert next(line for line in out.splitlines() if line.startswith("tail-2025 ")).split()[-1] == "4"
    assert f"not replayed: {folder / 'notes.jsonl'}: line 1: not a trajectory I know" in out  # the file mode's line
    assert len(rows) == 4 * 3 + 1  # per run: the log itself, recorded, tail-2025; and the file not replayed
    assert {r["run"].split("#")[0] for r in rows if r["source"]} == {str(p) for p in paths.values()}
    assert all(r["stopped"].startswith("stopped at call 2:") for r in rows if r["strategy"] == "tail-2025")
    assert {r["log_cost_usd"] for r in rows if r["run"].startswith(str(paths["stream"]))} != {""}  # its own cost
    (folder / "notes.jsonl").unlink()


def test_files_are_read_by_content_whatever_their_name_and_each_one_not_replayed_is_listed(logs, tmp_path, capsys):
    folder, paths = logs
    mixed = tmp_path / "mixed"
    for k, name in enumerate(["stream"] * 2):  # Claude Code's own name for a headless log
        (mixed / f"phase-{k}" / "execute").mkdir(parents=True)
        shutil.copy(paths[name], mixed / f"phase-{k}" / "execute" / "agent_log_raw.txt")
    (mixed / "README.md").write_text("# notes\n")
    (mixed / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (mixed / "empty.log").write_text("")
    from minimal_runtime.__main__ import main
    main(["replay", str(mixed), "--strategy", "recorded", "--jobs", "1"])
    out = capsys.readouterr().out
    assert "4 runs from 2 files, 3 files not replayed" in out  # 5 files, each accounted for
    assert f"not replayed: {mixed / 'image.png'}: not UTF-8 text (binary, or UTF-16?)" in out
    assert f"not replayed: {mixed / 'README.md'}: " in out and f"not replayed: {mixed / 'empty.log'}: an empty file" in out


def test_a_folder_where_nothing_is_replayed_exits_non_zero_and_says_why(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("hello\n")
    (tmp_path / "b.json").write_text("[1, 2]")
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(tmp_path), "--jobs", "1"])
    assert str(stopped.value.code) == f"nothing under {tmp_path} was replayed (2 files, each listed above)"
    assert capsys.readouterr().out.count("not replayed: ") == 2


def test_a_rerun_with_the_same_csv_resumes_where_a_crash_stopped_it(logs, tmp_path):
    from minimal_runtime.replay.folder import find_logs, folder_table, run_folder
    folder, paths = logs
    files = find_logs(folder)
    whole = run_folder(files, ["recorded"], jobs=1)
    out_csv = tmp_path / "runs.csv"
    seen = []

    def crash_after_two(path, result):
        seen.append(path)
        if len(seen) == 2:
            raise KeyboardInterrupt  # Ctrl-C after the second log
    with pytest.raises(KeyboardInterrupt):
        run_folder(files, ["recorded"], jobs=1, csv_path=out_csv, each=crash_after_two)
    with open(out_csv, "a") as f:
        f.write("/a/torn,line")  # a crash mid-line: dropped
    again = []
    resumed = run_folder(files, ["recorded"], jobs=1, csv_path=out_csv, each=lambda path, result: again.append(path))
    assert again == [str(p) for p in files if str(p) not in seen] and resumed.resumed == 2
    assert folder_table(folder, resumed).splitlines()[1:] == folder_table(folder, whole).splitlines()[1:]
    assert len(list(csv.DictReader(open(out_csv)))) == 2 * len(whole.runs)  # the log itself and recorded, per run


def test_progress_shows_logs_done_calls_per_second_and_time_left(logs, capsys):
    from minimal_runtime.replay.folder import find_logs, run_folder
    folder, _ = logs
    run_folder(find_logs(folder), ["recorded"], jobs=1, progress=True)
    err = capsys.readouterr().err
    assert re.search(r"[1-3]/3 \[\d\d:\d\d<\d\d:\d\d", err) and "calls/s" in err  # done of total, time left, rate


@pytest.mark.parametrize("where", ["no folder", "a folder"])
def test_a_csv_that_cannot_be_written_is_one_line_before_any_log_is_replayed(logs, tmp_path, where, monkeypatch):
    folder, _ = logs
    target = tmp_path / "missing" / "runs.csv" if where == "no folder" else tmp_path
    from minimal_runtime import __main__
    from minimal_runtime.replay import folder as replay_folder

    def never(*args, **kwargs):  # was: the replay started, then a traceback when the rows came to be written
        raise AssertionError("replayed before the --csv was checked")
    monkeypatch.setattr(replay_folder, "run_folder", never)
    with pytest.raises(SystemExit) as stopped:
        __main__.main(["replay", str(folder), "--csv", str(target)])
    says = "No such file or directory" if where == "no folder" else "Is a directory"
    assert stopped.value.code == f"replay: cannot write the --csv {target}: {says}"


def test_a_plot_that_cannot_be_written_is_one_line_and_one_without_a_suffix_is_named_as_written(logs, tmp_path, capsys):
    _, paths = logs
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit) as stopped:  # was: FileNotFoundError's traceback once the replay had run
        main(["replay", str(paths["session"]), "--strategy", "recorded", "--plot", str(tmp_path / "no" / "mine.png")])
    assert stopped.value.code == f"replay: cannot write the plot {tmp_path / 'no' / 'mine.png'}: no folder {tmp_path / 'no'}"
    with pytest.raises(SystemExit) as stopped:  # was: matplotlib's ValueError, a traceback
        main(["replay", str(paths["session"]), "--strategy", "recorded", "--plot", str(tmp_path / "mine.v2")])
    assert str(stopped.value.code).startswith(f"replay: cannot write the plot {tmp_path / 'mine.v2'}: Format 'v2' is not")
    capsys.readouterr()
    main(["replay", str(paths["session"]), "--strategy", "recorded", "--plot", str(tmp_path / "mine"),
          "--csv", str(tmp_path / "x.csv")])
    out, err = capsys.readouterr()
    assert f"plot: {tmp_path / 'mine.png'}" in out.splitlines() and (tmp_path / "mine.png").is_file()  # was: "plot: mine"
    assert f"note: --csv is for a folder; {paths['session']} is one file, replayed here" in err.splitlines()
    assert not (tmp_path / "x.csv").exists()
