"""course.py: the course's steps without make, the same in PowerShell and a POSIX shell. Windows cannot be
run on these machines: what is checked here is that no step needs make or a POSIX-only path, with make
off the PATH, and (the slow test, run by .ci/run) the whole path from a folder of wheels with no network."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support import course_module

ROOT = Path(__file__).resolve().parents[2]




def own_copy(tmp_path: Path) -> Path:
    """The project's own files (tracked, or new and not ignored), without .venv, .git or workbook/."""
    sys.path.insert(0, str(ROOT / "tests"))
    from exercise_check import copy_own_files

    project = tmp_path / "project"
    if not copy_own_files(project):
        pytest.skip("not a git checkout")
    return project


def without_make(tmp_path: Path) -> dict:
    """An environment whose PATH has git and nothing else: no make, no shell tools."""
    tools = tmp_path / "tools"
    tools.mkdir()
    git = shutil.which("git")
    if git is None:
        pytest.skip("no git on this machine")
    (tools / "git").symlink_to(git)
    # PYTHONPATH too: the project's own install decides what it imports
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS", "PYTHONPATH"))}
    env["PATH"] = str(tools)
    assert shutil.which("make", path=env["PATH"]) is None
    return env


# A stand-in for .venv's interpreter: the running one with the copy's packages first, except that starting
# JupyterLab is logged, not done (its import check says "installed")
VENV_PYTHON = """#!/bin/sh
case "$*" in "-m jupyterlab"*) echo "own=$COURSE_OWN_LOGS $(pwd) $*" >> "$LAB_LOG"; exit 0;; "-c import jupyterlab") exit 0;; esac
PYTHONPATH="{project}" exec "{python}" "$@"
"""


def fake_venv(tmp_path: Path) -> tuple[Path, dict]:
    """A copy of the project whose .venv is the stand-in above, installed; the environment without make."""
    project = own_copy(tmp_path)
    venv_python = project / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text(VENV_PYTHON.format(project=project, python=sys.executable))
    venv_python.chmod(0o755)
    (project / ".venv" / ".installed").touch()  # newer than pyproject.toml: installed
    return project, {**without_make(tmp_path), "LAB_LOG": str(tmp_path / "lab.log")}


def step(project: Path, env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, "course.py", *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"course.py {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def test_every_step_runs_with_make_off_the_path(tmp_path):
    project, env = fake_venv(tmp_path)
    assert step(project, env, "setup") == ""  # installed already: nothing to do, nothing said
    assert "passing" in step(project, env, "progress", "tests/ch03_hooks") and (project / ".progress.jsonl").exists()
    step(project, env, "test", "lint")
    said = step(project, env, "lab")
    assert "workbook/ holds your copies" in said and 'IMPL = "exercises" runs your own code' in said
    assert (tmp_path / "lab.log").read_text().split()[1:4] == [str(project), "-m", "jupyterlab"]


def test_lab_opens_copies_made_once_passes_its_arguments_and_reads_your_sessions_unless_told_not_to(tmp_path):
    """JupyterLab autosaves a notebook a learner ran: the lab opens copies in workbook/, made once, so
    chapters/ stays as committed and a copy keeps the learner's work. As root (a container) JupyterLab
    starts only with --allow-root. The real-log cells read your own Claude Code sessions unless
    COURSE_OWN_LOGS=0."""
    project, env = fake_venv(tmp_path)
    step(project, env, "lab", "--port", "8890", "--no-browser")
    copies = sorted(p.name for p in (project / "workbook").glob("*.ipynb"))
    assert copies == sorted(p.name for p in (project / "chapters").glob("*.ipynb")) and len(copies) == 12
    mine = project / "workbook" / copies[0]
    mine.write_text("the learner's own run")
    step(project, {**env, "COURSE_OWN_LOGS": "0"}, "lab")
    assert mine.read_text() == "the learner's own run"  # a copy is made once: the learner's work stays
    assert (project / "chapters" / copies[0]).read_bytes() == (ROOT / "chapters" / copies[0]).read_bytes()
    first, second = (tmp_path / "lab.log").read_text().splitlines()
    assert first.startswith("own=1 ") and second.startswith("own=0 "), (first, second)
    assert first.endswith("--port 8890 --no-browser workbook/") and second.endswith(" workbook/"), first
    assert ("--allow-root" in first) == (os.geteuid() == 0), first


FAKE_PYTHON = """#!/bin/sh
# A stand-in venv interpreter: answers the version check with {answer}
case "$*" in *version_info*) [ "{answer}" = yes ]; exit $?;; esac
exit 3
"""


def setup_with(tmp_path, monkeypatch, running: tuple, venv_answers: str | None):
    """course.setup in a folder holding pyproject.toml (and a venv whose interpreter answers the version
    check as told), the programs it would start recorded, not run."""
    course = course_module()
    project = tmp_path / "project"
    project.mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", project)
    if venv_answers is not None:
        python = project / ".venv" / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text(FAKE_PYTHON.format(answer=venv_answers))
        python.chmod(0o755)
    started = []

    def run(command, cwd, env=None):
        started.append([str(c) for c in command])
        if command[1:3] == ["-m", "venv"]:
            (cwd / command[3]).mkdir()
        return 0
    monkeypatch.setattr(course, "run", run)
    status = course.setup(course.Project(project), running=running)
    return status, project, started


def test_setup_refuses_a_python_older_than_3_11_before_building_anything(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MAKELEVEL", raising=False)  # make test runs this under make: the plain-shell advice first
    status, project, started = setup_with(tmp_path, monkeypatch, running=(3, 10), venv_answers=None)
    said = capsys.readouterr().out
    assert status == 1 and started == [] and not (project / ".venv").exists()
    assert "is Python 3.10, not Python 3.11 or newer" in said and "py -3.12 course.py setup" in said
    assert "uv python install 3.12" in said, said
    monkeypatch.setenv("MAKELEVEL", "1")  # under make, the fix is make's own variable
    setup_with(tmp_path / "make", monkeypatch, running=(3, 10), venv_answers=None)
    assert "pick one with: make PYTHON=python3.12" in capsys.readouterr().out


def test_setup_rebuilds_a_venv_that_an_older_python_left_behind(tmp_path, monkeypatch, capsys):
    status, project, started = setup_with(tmp_path, monkeypatch, running=(3, 12), venv_answers="no")
    assert ".venv was built by another Python: rebuilding it" in capsys.readouterr().out
    assert not (project / ".venv" / "bin" / "python").exists()  # the old interpreter is gone
    assert started[0] == [sys.executable, "-m", "venv", ".venv"], started  # a new venv, by the Python running setup
    assert status == 0 and (project / ".venv" / ".installed").exists()


def test_setup_keeps_a_venv_built_by_a_good_python_and_reinstalls_after_pyproject_changes(tmp_path, monkeypatch, capsys):
    status, project, started = setup_with(tmp_path, monkeypatch, running=(3, 12), venv_answers="yes")
    assert "rebuilding" not in capsys.readouterr().out and (project / ".venv" / "bin" / "python").exists()
    assert [c[:3] for c in started] == [[str(project / ".venv" / "bin" / "python"), "-m", "pip"],
                                        [str(project / ".venv" / "bin" / "uv"), "pip", "install"]], started
    course = course_module()
    started.clear()
    assert course.setup(course.Project(project), running=(3, 12)) == 0
    assert started == [], "installed, and pyproject.toml not changed since: nothing to do"


def test_windows_venvs_keep_their_programs_in_scripts(monkeypatch):
    course = course_module()
    monkeypatch.setattr(course, "WINDOWS", True)
    project = course.Project(Path("C:/course"))
    assert project.python == Path("C:/course/.venv/Scripts/python.exe") and project.bin("uv").name == "uv.exe"


@pytest.mark.slow
def test_a_venue_installs_from_the_wheelhouse_with_no_network_and_runs_every_step_without_make(tmp_path):
    """The wheelhouse's Linux wheels for the running Python; then a fresh copy of the project set up from
    them alone (pip and uv told there is no index, and any connection sent to a closed port), with make
    off the PATH: setup, a chapter's tests, the demo, progress and JupyterLab answering on loopback."""
    course = course_module()
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    house = tmp_path / "wheelhouse"
    assert course.wheelhouse(course.Project(ROOT), house, ["linux-x86_64"], [running]) == 0
    project = own_copy(tmp_path)
    env = without_make(tmp_path)
    for name in [k for k in env if k.startswith(("PIP_", "UV_"))]:
        del env[name]  # this machine's own package settings (its local indexes) would hide a missing wheel
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp_path / "uv-cache"),
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               HTTPS_PROXY="http://127.0.0.1:9", ALL_PROXY="http://127.0.0.1:9", COURSE_OWN_LOGS="0")

    def run(*args: str, timeout: int = 600) -> str:
        done = subprocess.run([sys.executable, "course.py", *args], cwd=project, env=env, capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, f"course.py {' '.join(args)}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done.stdout

    run("setup", "--wheelhouse", str(house))
    python = project / ".venv" / "bin" / "python"
    assert subprocess.run([python, "-c", "import jupyterlab, anthropic, nbval"], env=env).returncode == 0
    assert " passed" in run("test", "suites", "tests/ch01_ephemeral_queue")
    assert "SSO starts at" in run("demo")
    assert "passing" in run("progress", "tests/ch01_ephemeral_queue")
    port = course_free_port()
    lab = subprocess.Popen([sys.executable, "course.py", "lab", "--no-browser", f"--port={port}", "--ServerApp.port_retries=0",
                            "--IdentityProvider.token="], cwd=project, env=env, start_new_session=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert lab.poll() is None, lab.stdout.read().decode()[-3000:]
            try:
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                        f"http://127.0.0.1:{port}/api/status", timeout=5) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
                time.sleep(0.5)  # a server starting: polled, not a fixed wait
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)


def course_free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_tests_two_workers_start_without_a_line_a_newcomer_cannot_place(capfd):
    """xdist wrote `bringing up nodes...` (twice where the output is not a terminal, as in CI) before the
    verdict of `make test`: course.py test's own pytest command, on one test, says only the verdict."""
    course = course_module()
    status = course.test(course.Project(ROOT), "suites", "tests/course/test_course_py.py", "-k", "windows_venvs", "-p", "no:cacheprovider")
    out = capfd.readouterr().out
    assert status == 0 and "1 passed" in out, out
    assert "bringing up nodes" not in out, out
