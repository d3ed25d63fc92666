"""The chapters' real-log cells: your own Claude Code sessions only when COURSE_OWN_LOGS=1 and not
under CI, read only and named by number; otherwise the CI's logs, otherwise a labelled sample."""

from __future__ import annotations

import shutil

import pytest

from minimal_runtime.example.real_logs import OWN, real_logs
from minimal_runtime.replay.current import write_current


@pytest.fixture(scope="module")
def session_file(tmp_path_factory):
    return write_current(tmp_path_factory.mktemp("made"), "claude-sonnet-5-5")["session"]


@pytest.fixture
def home(tmp_path, monkeypatch, session_file):
    """A home whose ~/.claude/projects holds one session of a project with a telling name."""
    project = tmp_path / "home" / ".claude" / "projects" / "-Users-someone-secret-project"
    project.mkdir(parents=True)
    shutil.copy(session_file, project / "abc.jsonl")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(OWN, raising=False)
    monkeypatch.delenv("CI", raising=False)
    return project / "abc.jsonl"


def test_your_sessions_are_read_with_the_variable_named_by_number_and_left_as_they_were(home, tmp_path, monkeypatch):
    before = (home.read_bytes(), home.stat().st_mtime_ns)
    monkeypatch.setenv(OWN, "1")
    logs = real_logs(shared=tmp_path / "no-ci-logs")
    assert logs.kind == "yours" and logs.runs, f"COURSE_OWN_LOGS=1 with a session in ~/.claude/projects: {logs.label}"
    names = [logs.name(r) for r in logs.runs]
    assert names[0] == "your session 1", names
    shown = " ".join([logs.label, *names])
    assert "secret" not in shown and "abc" not in shown and str(home.parent) not in shown, \
        f"a cell prints aggregates only, never a path or a project's name: {shown}"
    assert (home.read_bytes(), home.stat().st_mtime_ns) == before, "your session file was changed"


@pytest.mark.parametrize("setting", [{}, {OWN: "0"}, {OWN: "1", "CI": "true"}])
def test_without_the_variable_or_under_ci_your_sessions_are_not_read(home, tmp_path, monkeypatch, setting):
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    ci_logs = tmp_path / "ci-logs"
    ci_logs.mkdir()
    shutil.copy(home, ci_logs / "someone-else.session.jsonl")
    logs = real_logs(shared=ci_logs)
    assert logs.kind == "course CI" and logs.name(logs.runs[0]) == "someone-else.session.jsonl", (setting, logs.label)


def test_with_no_logs_at_all_the_cell_reads_a_labelled_sample_not_a_dead_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(OWN, "1")
    monkeypatch.delenv("CI", raising=False)
    logs = real_logs(shared=tmp_path / "none")
    assert logs.kind == "sample" and logs.label.startswith("SAMPLE") and "no Claude Code session" in logs.label, logs.label
    assert len(logs.runs) >= 4 and all(logs.name(r).startswith("sample: ") for r in logs.runs)
    assert {r.source for r in logs.runs} >= {"claude-code", "claude-code-stream", "mini-swe-agent", "openhands"}
