"""``replay DIR``: every log under a folder (sub-agents' files included), one table across runs,
``--csv`` one row per run and strategy, a file that cannot be imported listed with its reason."""

from __future__ import annotations

import csv

from minimal_runtime.replay.current import write_current


def test_a_folder_replays_every_log_under_it_into_one_table_and_a_csv(tmp_path, capsys):
    paths = write_current(tmp_path / "logs", "claude-sonnet-5-5", rounds=3)
    (tmp_path / "logs" / "notes.jsonl").write_text('{"hello": 1}\n')
    out_csv = tmp_path / "runs.csv"
    from minimal_runtime.__main__ import main
    main(["replay", str(tmp_path / "logs"), "--strategy", "recorded", "--strategy", "tail-2025",
          "--jobs", "2", "--csv", str(out_csv)])  # two worker processes, once
    out = capsys.readouterr().out
    # the session, its sub-agent's own file, and the stream log with its sub-agent: four runs
    assert "4 runs from 3 files, 1 files not imported" in out
    recorded = next(line for line in out.splitlines() if line.startswith("recorded "))
    assert recorded.split()[1:3] == ["4", str(sum(int(r["logged_calls"]) for r in csv.DictReader(open(out_csv))
                                                  if r["strategy"] == "recorded"))]
    assert recorded.split()[-1] == "0"  # every run finished
    assert next(line for line in out.splitlines() if line.startswith("tail-2025 ")).split()[-1] == "4"
    assert f"not imported: {tmp_path / 'logs' / 'notes.jsonl'}: not a trajectory I know" in out
    rows = list(csv.DictReader(open(out_csv)))
    assert len(rows) == 4 * 3  # per run: the log itself, recorded, tail-2025
    assert {r["run"].split("#")[0] for r in rows} == {str(p) for p in paths.values()}
    assert all(r["stopped"].startswith("stopped at call 2:") for r in rows if r["strategy"] == "tail-2025")
