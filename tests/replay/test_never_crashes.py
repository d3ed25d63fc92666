"""No real log crashes the report (issue 62 items 1 and 13): a run whose calls record no prompt
tokens gets its table, a count of 10**400 is refused in one line, a null Cline CLI message and an
opencode ``info`` that is a list are refused cleanly, symbolic links in a folder are listed as not
replayed, and no refusal says "expected expected"."""

from __future__ import annotations

import csv
import json
import os

import pytest

from minimal_runtime.replay import TrajectoryError, load, replay
from minimal_runtime.replay.report import rows, table
from tests.replay.cli_logs import write_cline_cli, write_opencode, write_pi


def test_a_run_whose_calls_record_no_prompt_tokens_gets_its_table(tmp_path):
    path = write_pi(tmp_path, rounds=2)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for d in lines:  # pi 0.73 against serve: every count of the prompt zero
        u = (d.get("message") or {}).get("usage")
        if u:
            u.update(input=0, cacheRead=0, cacheWrite=0)
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    (run,) = load(path)
    logged = rows(run, [])[0]
    assert logged["prompt_tokens"] == 0 and logged["cache_read_share"] is None
    assert "the log itself" in table(run, [replay(run, "recorded")])


def test_a_count_past_any_float_is_refused_in_one_line(tmp_path):
    path = write_pi(tmp_path, rounds=1)
    text = path.read_text()
    first = json.loads(text.splitlines()[2])  # the first assistant entry
    assert first["message"]["role"] == "assistant"
    number = first["message"]["usage"]["input"]
    path.write_text(text.replace(f'"input": {number},', f'"input": {10**400},', 1))
    with pytest.raises(TrajectoryError, match=r"usage\.input is a number of 401 digits: more tokens than any call"):
        load(path)


def test_a_null_cline_cli_message_is_refused_at_its_position(tmp_path):
    path = write_cline_cli(tmp_path, rounds=1)
    d = json.loads(path.read_text())
    d["messages"].insert(1, None)
    path.write_text(json.dumps(d))
    with pytest.raises(TrajectoryError, match=r":2: message is null, not an object"):
        load(path)


def test_an_opencode_message_info_that_is_a_list_is_refused_at_its_position(tmp_path):
    path = write_opencode(tmp_path, rounds=1)
    d = json.loads(path.read_text())
    d["messages"][1]["info"] = ["role", "assistant"]
    path.write_text(json.dumps(d))
    with pytest.raises(TrajectoryError, match=r":2: info is a list, not an object"):
        load(path)


def test_symbolic_links_in_a_folder_are_each_listed_as_not_replayed(tmp_path, capsys):
    from minimal_runtime.__main__ import main
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    log = write_pi(tmp_path / "kept", rounds=1)
    (folder / "run.jsonl").write_bytes(log.read_bytes())
    links = {"to-a-log": log, "to-a-folder": tmp_path / "kept", "to-itself": folder / "to-itself",
             "to-zero": "/dev/zero"}
    for name, target in links.items():
        os.symlink(target, folder / name)
    out_csv = tmp_path / "runs.csv"
    main(["replay", str(folder), "--strategy", "recorded", "--jobs", "1", "--csv", str(out_csv)])
    out = capsys.readouterr().out
    for name in links:
        line = next(x for x in out.splitlines() if f"{folder / name}:" in x)
        assert line.strip().startswith("not replayed:") and "a symbolic link" in line
    refused = {r["run"] for r in csv.DictReader(open(out_csv)) if r["strategy"] == "(not replayed)"}
    assert refused == {str(folder / name) for name in links}


def test_no_refusal_says_expected_twice(tmp_path):
    for name, text in [("empty.jsonl", ""), ("binary.jsonl", "\x00x")]:
        (tmp_path / name).write_text(text)
        with pytest.raises(TrajectoryError) as refused:
            load(tmp_path / name)
        assert "expected expected" not in str(refused.value) and "; expected a" in str(refused.value)
    with pytest.raises(TrajectoryError) as refused:
        load(tmp_path)
    assert "expected expected" not in str(refused.value)
