"""``replay DIR --engine dask``: the same per-file work on a Dask cluster (the optional ``dask``
extra), rows identical to ``--jobs``. Skipped where the extra is not installed."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("dask.distributed", reason="the dask extra is not installed (pip install -e '.[dask]')")

from minimal_runtime.replay.current import write_current  # noqa: E402


def test_dask_gives_the_rows_jobs_gives(tmp_path, capsys):
    from minimal_runtime.__main__ import main
    write_current(tmp_path / "logs", "claude-haiku-5-5", rounds=3)
    (tmp_path / "logs" / "notes.txt").write_text("not a log\n")
    tables = {}
    for engine in ("processes", "dask"):
        main(["replay", str(tmp_path / "logs"), "--strategy", "recorded", "--strategy", "offload",
              "--jobs", "2" if engine == "processes" else "1",  # one Dask worker: starting one is the cost here
              "--engine", engine, "--csv", str(tmp_path / f"{engine}.csv")])
        tables[engine] = capsys.readouterr().out.splitlines()[:-1]  # all but the line naming the csv

    def rows(engine):
        return sorted(map(tuple, (r.values() for r in csv.DictReader(open(tmp_path / f"{engine}.csv")))))
    assert rows("dask") == rows("processes") and len(rows("dask")) == 4 * 3 + 1
    assert tables["dask"] == tables["processes"]
