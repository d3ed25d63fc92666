"""make lab: JupyterLab's own arguments pass through ARGS, and the lab reads your own Claude Code
sessions in the real-log cells (COURSE_OWN_LOGS=1) unless you say otherwise."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_JUPYTER = """#!/bin/sh
echo "own=$COURSE_OWN_LOGS args=$*" >> "$FAKE_LOG"
"""


def make_lab(tmp_path: Path, *args: str, **env: str) -> str:
    project = tmp_path / "project"
    if not project.exists():
        (project / "chapters").mkdir(parents=True)
        shutil.copy(ROOT / "chapters" / "03_hooks.ipynb", project / "chapters")
        for name in ("Makefile", "pyproject.toml"):
            shutil.copy(ROOT / name, project)
        bin_ = project / ".venv" / "bin"
        bin_.mkdir(parents=True)
        for name, script in (("python", "#!/bin/sh\nexit 0\n"), ("jupyter", FAKE_JUPYTER)):  # JupyterLab "installed"
            (bin_ / name).write_text(script)
            (bin_ / name).chmod(0o755)
        (project / ".venv" / ".installed").touch()
    log = tmp_path / "log"
    log.unlink(missing_ok=True)
    done = subprocess.run(["make", "lab", *args], cwd=project, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "FAKE_LOG": str(log), **env})
    assert done.returncode == 0, done.stdout + done.stderr
    return log.read_text().strip()


def test_make_lab_passes_args_to_jupyterlab_and_reads_your_sessions_unless_told_not_to(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    ran = make_lab(tmp_path, "ARGS=--port 8890 --no-browser")
    assert "--port 8890 --no-browser" in ran and ran.endswith(" workbook/"), ran
    assert ran.startswith("own=1 "), f"make lab turns the real-log cells to your own sessions: {ran}"
    assert make_lab(tmp_path, COURSE_OWN_LOGS="0").startswith("own=0 "), "COURSE_OWN_LOGS=0 make lab keeps them out"
