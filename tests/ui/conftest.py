"""The browser harness of `make ui-test`: Debian's chromium driven by Playwright, and JupyterLab on
loopback serving copies of the chapters. A page's test takes ``browser`` (one Chromium for the
session) and ``artifacts`` (the folder its screenshots go to, kept, not committed); the notebook tests
also take ``lab``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BROWSER = os.environ.get("UI_BROWSER", "/usr/bin/chromium")
# headless, and nothing that reaches for the network on its own (updates, sync, first-run pages)
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def artifacts() -> Path:
    folder = ROOT / ".ui-artifacts"
    folder.mkdir(exist_ok=True)
    for old in [*folder.glob("*.png"), *folder.glob("*.json")]:  # this run's screenshots and figures only
        old.unlink()
    return folder


@pytest.fixture(scope="session")
def browser():
    if not os.access(BROWSER, os.X_OK):
        pytest.skip(f"no browser at {BROWSER} (make ui-test installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=BROWSER, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# What a learner's JupyterLab would do on its own and a check must not wait for or be covered by: the
# news pop-up, autosave (the served folder is a copy anyway), and windowing (every cell rendered, so
# the DOM holds the whole notebook)
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


@dataclass
class Lab:
    url: str
    folder: Path  # what it serves: copies of chapters/


@contextmanager
def running_lab(home: Path, folder: Path, **env: str) -> Iterator[Lab]:
    """JupyterLab on loopback serving ``folder``, started as course.py lab starts it (--allow-root where
    this runs as root), its settings and runtime files in ``home``; ``env`` reaches its kernels."""
    for name, values in LAB_SETTINGS.items():
        (home / "settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (home / "settings" / name).write_text(json.dumps(values))
    port = free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"), **env}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
               f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
               *(["--allow-root"] if os.geteuid() == 0 else [])]
    log = (home / "lab.log").open("w")
    server = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}):\n{(home / 'lab.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within 120 s:\n{(home / 'lab.log').read_text()[-3000:]}")
                time.sleep(0.5)  # a server starting: polled, not a fixed wait
        yield Lab(url, folder)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """Copies of the committed notebooks: nothing the lab does can write to chapters/."""
    home = tmp_path_factory.mktemp("lab")
    folder = home / "chapters"
    shutil.copytree(ROOT / "chapters", folder)
    with running_lab(home, folder) as served:
        yield served
