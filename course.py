"""The course's steps, the same in PowerShell, cmd and a POSIX shell: the Makefile's targets call these.

    python course.py setup                  create .venv and install the course into it (once; again after pyproject.toml changes)
    python course.py setup --wheelhouse W   the same from a folder of wheels, with no network (see `wheelhouse`)
    python course.py test [PART]            make test: the lint, then every suite, the stub check and every notebook
                                            (PART: lint, checks, suites, stubs or notebooks, each alone)
    python course.py demo                   the running example, offline unless ANTHROPIC_API_KEY is set
    python course.py lab [ARGS]             JupyterLab on your copies of the chapters (workbook/); ARGS go to JupyterLab
    python course.py progress               how many tests of each chapter pass on your own exercises/
    python course.py serve [ARGS]           the emulator on loopback for your own agent
    python course.py wheelhouse [DIR]       every wheel the course and the lab need, for Linux, macOS and Windows
                                            on Python 3.11 to 3.14, into DIR (default wheelhouse/), and its size

`python` is any Python 3.11 or newer (on Windows, `py -3.12 course.py setup`); once .venv exists, every step
runs in it, whichever Python started this file. This file uses the standard library only, and keeps to
syntax an old Python can read, so that one says which Python to use instead of failing on a line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NEW_ENOUGH = (3, 11)
WINDOWS = os.name == "nt"
# what a workshop installs: the course (tests, notebooks) and the lab
EXTRAS = "course,lab"
# the supported Pythons and the laptops a venue meets; pip expands each macOS tag to the older releases it
# runs on, not manylinux's, so the two manylinux generations wheels are built for are both named
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
PLATFORMS = {
    "linux-x86_64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    "linux-aarch64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"],
    "macos-arm64": ["macosx_14_0_arm64"],
    "macos-x86_64": ["macosx_13_0_x86_64"],
    "windows-amd64": ["win_amd64"],
}


# what the lint reads (exercises/ is yours: the stub check lints the stubs as committed instead), and how a
# notebook is checked: every output against the committed one, sanitized of run-to-run paths
LINTED = ["minimal_runtime", "tests", "benchmarks", "solutions", "conftest.py", "course.py"]
NBVAL = ["-p", "nbval", "--nbval", "--nbval-current-env", "--nbval-sanitize-with=chapters/nbval_sanitize.cfg"]


class Project:
    """The project folder and its .venv: where each tool of the venv is, on Windows (Scripts\\x.exe) and elsewhere (bin/x)."""

    def __init__(self, root: Path):
        self.root = root
        self.venv = root / ".venv"
        self.stamp = self.venv / ".installed"  # newer than pyproject.toml: the install is current

    def bin(self, name: str) -> Path:
        return self.venv / ("Scripts" if WINDOWS else "bin") / (name + (".exe" if WINDOWS else ""))

    @property
    def python(self) -> Path:
        return self.bin("python")


def run(command: list, cwd: Path, env: dict | None = None) -> int:
    """Every program this file starts goes through here: one line saying what, then its exit status."""
    print("+ " + " ".join(str(c) for c in command), flush=True)
    return subprocess.run([str(c) for c in command], cwd=cwd, env=env).returncode


def environment(**extra: str) -> dict:
    env = dict(os.environ, **extra)
    # where PYTHONDONTWRITEBYTECODE is set, every pytest start compiles its plugins' modules again (2.5 s each,
    # in some twenty processes): the compiled files go to __pycache__/, which git ignores
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def new_enough(python: Path) -> bool:
    check = [str(python), "-c", f"import sys; sys.exit(sys.version_info < {NEW_ENOUGH})"]
    try:
        return subprocess.run(check, capture_output=True).returncode == 0
    except OSError:
        return False


def setup(project: Project, wheelhouse: Path | None = None, running: tuple = tuple(sys.version_info[:2])) -> int:
    """Create .venv with the Python running this file and install the course into it, unless the install is current."""
    installed = project.stamp.exists() and project.stamp.stat().st_mtime >= (project.root / "pyproject.toml").stat().st_mtime
    if installed and wheelhouse is None and new_enough(project.python):
        return 0
    if running < NEW_ENOUGH:
        version = ".".join(map(str, running))
        if os.environ.get("MAKELEVEL"):  # started by make: the fix is make's own variable
            print(f"{sys.executable} is Python {version}, not Python 3.11 or newer; pick one with: make PYTHON=python3.12 ...")
        else:
            print(f"{sys.executable} is Python {version}, not Python 3.11 or newer; run this file with one: "
                  f"`python3.12 course.py setup` (Windows: `py -3.12 course.py setup`), or get one with uv: "
                  f"`uv python install 3.12`, then `uv run --no-project --python 3.12 course.py setup`")
        return 1
    if project.venv.exists() and not new_enough(project.python):  # left by an older or removed interpreter
        print(".venv was built by another Python: rebuilding it")
        shutil.rmtree(project.venv)
    offline = [] if wheelhouse is None else ["--no-index", "--find-links", wheelhouse.resolve()]
    if not project.python.exists() and run([sys.executable, "-m", "venv", ".venv"], project.root):
        return 1
    # uv resolves and installs in seconds where pip takes minutes; pip only fetches uv itself
    print(f"installing uv into .venv, then the course with it ({'from ' + str(wheelhouse) if wheelhouse else 'about 440 MB'})")
    if run([project.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *offline, "uv"], project.root):
        return 1
    # compiled at install: each of make test's many processes (workers, kernels, subprocess tests) would
    # otherwise compile the SDK's ~1,000 modules itself, every time where PYTHONDONTWRITEBYTECODE is set
    extras = EXTRAS if wheelhouse else "course"  # a venue installs the lab now: there is no network later
    # --quiet: uv's list of the ~90 packages it installed says nothing a newcomer needs (pyproject.toml names them)
    if run([project.bin("uv"), "pip", "install", "--quiet", "--compile-bytecode", "--python", project.python, *offline,
            "-e", f".[{extras}]"], project.root):
        return 1
    project.stamp.touch()
    return 0


def test(project: Project, part: str = "all", *args: str) -> int:
    """make test: the lint, then one two-worker session of every suite, the stub check (in the learner-path
    test) and every notebook (conftest.py: a notebook is one unit of work, each test another, so neither
    worker idles at the end). COURSE_IMPL is pinned: the suites and notebooks check the solutions whatever
    your shell says."""
    python, env = project.python, environment(COURSE_IMPL="solutions")
    # -rs: a skipped test says why in one line; --no-header, and xdist's own lines kept out (-p no:terminal is not
    # an option): what is left is the verdict
    pytest = [python, "-m", "pytest", "-q", "-rs", "-n", "auto"]
    parts = {
        "lint": [python, "-m", "ruff", "check", "--quiet", *LINTED],
        "checks": [*pytest, "--dist", "loadscope", *NBVAL, "tests", "chapters/", *args],
        "suites": [*pytest, *args],
        "stubs": [python, "tests/exercise_check.py", "stubs"],
        "notebooks": [*pytest, "--dist", "loadscope", *NBVAL, "chapters/", *args],
    }
    if part != "all":
        return run(parts[part], project.root, env)
    failed = run(parts["lint"], project.root, env) or run(parts["checks"], project.root, env)
    changed = subprocess.run(["git", "status", "--porcelain", "--", "exercises"], cwd=project.root, capture_output=True, text=True)
    if changed.returncode == 0 and changed.stdout.strip():
        print("make test checked the exercise stubs as committed, not your exercises/: `python course.py progress` checks your code")
    return failed


def lab(project: Project, *args: str) -> int:
    """JupyterLab on copies of the chapters in workbook/: JupyterLab autosaves what a run leaves, and chapters/
    are the course's own notebooks, checked by make test. workbook/ is at the same depth as chapters/, so a
    notebook finds ../shared/ from either. The first run installs JupyterLab."""
    if subprocess.run([str(project.python), "-c", "import jupyterlab"], capture_output=True).returncode != 0:
        print("installing JupyterLab into .venv (once)")
        if run([project.bin("uv"), "pip", "install", "--quiet", "--python", project.python, "-e", f".[{EXTRAS}]"], project.root):
            return 1
    workbook = project.root / "workbook"
    workbook.mkdir(exist_ok=True)
    for notebook in sorted((project.root / "chapters").glob("*.ipynb")):
        if not (workbook / notebook.name).exists():  # made once: a copy keeps your runs and your saves
            shutil.copy2(notebook, workbook / notebook.name)
    print("workbook/ holds your copies of the chapters: your runs and saves change them, never chapters/ "
          "(delete a copy to get it fresh)")
    print('each chapter opens in reading mode (IMPL = "solutions" in its settings cell: every figure shows); '
          'IMPL = "exercises" runs your own code, and the banner under that cell says how it tests')
    # your own Claude Code sessions in the real-log cells (COURSE_OWN_LOGS=0 keeps them out); make test, nbval
    # and CI never set it. As root (a container), JupyterLab refuses to start without --allow-root.
    root = ["--allow-root"] if not WINDOWS and os.geteuid() == 0 else []
    env = environment(COURSE_OWN_LOGS=os.environ.get("COURSE_OWN_LOGS", "1"))
    return run([project.python, "-m", "jupyterlab", *root, *args, "workbook/"], project.root, env)


def wheelhouse(project: Project, folder: Path, platforms: list, pythons: list) -> int:
    """Download every wheel the course and the lab need (and uv, and setuptools to build the course itself) for
    each platform and Python, into one folder a venue copies to every laptop from a USB stick or a share.
    `setup --wheelhouse DIR` installs from it with no network."""
    import tomllib  # 3.11: this step runs in .venv

    metadata = tomllib.loads((project.root / "pyproject.toml").read_text())
    wanted = [*metadata["project"]["dependencies"], *(r for extra in EXTRAS.split(",")
                                                       for r in metadata["project"]["optional-dependencies"][extra])]
    wanted += [*metadata["build-system"]["requires"], "uv", "pip"]
    folder.mkdir(parents=True, exist_ok=True)
    requirements = folder / "requirements.txt"
    requirements.write_text("".join(r.split("#")[0].strip() + "\n" for r in wanted))
    for name in platforms:
        for version in pythons:
            tags = [f"--platform={tag}" for tag in PLATFORMS[name]]
            print(f"{name}, Python {version}:", flush=True)
            if run([project.python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary=:all:",
                    *tags, f"--python-version={version}", "--implementation=cp", "--dest", folder, "-r", requirements],
                   project.root):
                return 1
    wheels = list(folder.glob("*.whl"))
    size = sum(w.stat().st_size for w in wheels)
    print(f"{folder}: {len(wheels)} wheels, {size / 1e6:,.0f} MB, for {', '.join(platforms)} on Python {', '.join(pythons)}; "
          f"install from it with no network: python course.py setup --wheelhouse {folder}")
    return 0


def main(argv: list, root: Path = ROOT) -> int:
    project = Project(root)
    step, args = (argv[0], argv[1:]) if argv else ("help", [])
    if step == "setup":
        house = Path(args[args.index("--wheelhouse") + 1]) if "--wheelhouse" in args else None
        return setup(project, house)
    if step not in ("test", "demo", "lab", "progress", "serve", "wheelhouse"):
        print(__doc__)
        return 0 if step in ("help", "-h", "--help") else 2
    if setup(project):  # every step runs in .venv, made first if need be
        return 1
    if Path(sys.executable).resolve() != project.python.resolve() and step == "wheelhouse":
        return run([project.python, __file__, *argv], root)  # tomllib: the venv's Python reads pyproject.toml
    if step == "test":
        return test(project, *(args or ["all"]))
    if step == "demo":
        return run([project.python, "-m", "minimal_runtime", "demo", *args], root, environment())
    if step == "progress":
        return run([project.python, "tests/exercise_check.py", "progress", *args], root, environment())
    if step == "serve":
        return run([project.python, "-m", "minimal_runtime", "serve", *args], root, environment())
    if step == "lab":
        return lab(project, *args)
    import argparse

    parser = argparse.ArgumentParser(prog="course.py wheelhouse")
    parser.add_argument("folder", nargs="?", type=Path, default=root / "wheelhouse")
    parser.add_argument("--platforms", default=",".join(PLATFORMS), help=f"of {', '.join(PLATFORMS)}")
    parser.add_argument("--pythons", default=",".join(PYTHONS))
    chosen = parser.parse_args(args)
    return wheelhouse(project, chosen.folder, chosen.platforms.split(","), chosen.pythons.split(","))

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
