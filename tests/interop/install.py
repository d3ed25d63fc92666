"""Install the pinned clients into their own cached folders (``.interop/venv``, ``.interop/npm``).

The pins live in this folder: ``requirements.txt`` (compiled by ``uv pip compile requirements.in``)
and ``package.json`` + ``package-lock.json``. A folder is reinstalled only when its pin file
changed (a stamp holds the file's digest), so a warm run touches no registry. Before installing,
the registry is probed with a short timeout: an unreachable one is reported, not waited on.

    python tests/interop/install.py     # install (or confirm) and print what is where
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = Path(os.environ.get("INTEROP_CACHE", ROOT / ".interop"))
PYPI = os.environ.get("UV_INDEX_URL", "https://pypi.org/simple/")
PROBE_TIMEOUT = 5.0


class Unreachable(Exception):
    """A client that cannot be installed here: a registry it needs did not answer, or its pins did not install."""


@dataclass
class Clients:
    python: Path  # the venv's interpreter, with pydantic-ai, langchain-anthropic and litellm
    node_modules: Path  # @anthropic-ai/sdk and @anthropic-ai/claude-code
    claude: Path  # Claude Code's executable
    seconds: dict[str, float]  # install time per folder; 0.0 where the cache was current


def _digest(*files: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def _probe(url: str, what: str) -> None:
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=PROBE_TIMEOUT).close()
    except Exception as e:  # HTTP errors included: a registry that answers 4xx to HEAD still answered
        if getattr(e, "code", None):
            return
        raise Unreachable(f"{what} ({url}) cannot be reached: {type(e).__name__}: {e}") from None


def _npm_registry() -> str:
    out = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or "https://registry.npmjs.org/"


def _python_env(dest: Path, pins: Path = HERE / "requirements.txt") -> float:
    stamp = dest / ".pins"
    if stamp.exists() and stamp.read_text() == _digest(pins) and (dest / "bin" / "python").exists():
        return 0.0
    _probe(PYPI, "PyPI")
    start = time.perf_counter()
    shutil.rmtree(dest, ignore_errors=True)
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv:
        subprocess.run([uv, "venv", "-q", str(dest), "--python", sys.executable], check=True)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(dest / "bin" / "python"), "-r", str(pins)], check=True)
    else:  # no uv: the standard tools, slower
        subprocess.run([sys.executable, "-m", "venv", str(dest)], check=True)
        subprocess.run([str(dest / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(pins)], check=True)
    stamp.write_text(_digest(pins))
    return time.perf_counter() - start


def _node_env(dest: Path, pins: tuple[Path, ...] = (HERE / "package.json", HERE / "package-lock.json"),
              install: str = "ci") -> float:
    stamp = dest / ".pins"
    if stamp.exists() and stamp.read_text() == _digest(*pins) and (dest / "node_modules").exists():
        return 0.0
    if not shutil.which("npm"):
        raise Unreachable("npm is not installed")
    _probe(_npm_registry(), "the npm registry")
    start = time.perf_counter()
    dest.mkdir(parents=True, exist_ok=True)
    for f in pins:
        shutil.copy(f, dest / f.name)
    # npm ci installs exactly the lock; Claude Code's postinstall puts its native binary in place.
    subprocess.run(["npm", install, "--no-audit", "--no-fund", "--loglevel=error"], cwd=dest, check=True)
    stamp.write_text(_digest(*pins))
    return time.perf_counter() - start


def ensure_clients() -> Clients:
    """Install what is missing or out of date; raise ``Unreachable`` if a registry is needed and down."""
    seconds = {"python": _python_env(CACHE / "venv"), "npm": _node_env(CACHE / "npm")}
    modules = CACHE / "npm" / "node_modules"
    return Clients(python=CACHE / "venv" / "bin" / "python", node_modules=modules,
                   claude=modules / ".bin" / "claude", seconds=seconds)


def ensure_claude_code() -> Path:
    """Claude Code's executable alone (the npm folder), for a check that needs no Python client."""
    _node_env(CACHE / "npm")
    return CACHE / "npm" / "node_modules" / ".bin" / "claude"


def ensure_client(name: str) -> Path:
    """One client of ``clients/NAME/`` in its own folder ``.interop/NAME`` (its pins beside it: a
    ``requirements.txt``, or a ``package.json`` and ``package-lock.json``), so that clients whose
    dependencies disagree never share an environment: the folder, installed if missing or out of date."""
    pins, dest = HERE / "clients" / name, CACHE / name
    try:
        if (pins / "requirements.txt").exists():
            _python_env(dest, pins / "requirements.txt")
        else:
            # npm install, not ci: a lock made on Linux leaves out the other platforms' optional binaries
            # (cline's @cline/cli-darwin-*), which ci then calls out of sync; install keeps the locked versions
            _node_env(dest, (pins / "package.json", pins / "package-lock.json"), install="install")
    except subprocess.CalledProcessError as e:  # every caller lists the client as skipped, with this reason
        raise Unreachable(f"its pins did not install ({e})") from None
    return dest


if __name__ == "__main__":
    c = ensure_clients()
    print(f"python clients: {c.python}\nnode clients: {c.node_modules}\nclaude: {c.claude}\n"
          f"install seconds: {c.seconds}")
