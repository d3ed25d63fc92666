"""How ``make test`` shares one session between two workers (``-n 2 --dist loadscope``).

A notebook's cells must run in order in one kernel, so a notebook is one scope; so is a test module
with a fixture built once per module (split, each worker would build it); every other test of the
suites is a scope of its own. xdist hands out the largest scopes first (the notebooks), and single
tests fill in whichever worker is free, so neither worker idles while the other finishes. The
chapter and emulator suites (hundreds of tests under a second each) are collected last, so the
session ends on short units rather than on a learner-path or fork test.
(``--dist loadgroup`` would say this with marks, but xdist 3.8 writes the group into a field this
pytest no longer reads.)
"""

import functools
import os
import re
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

# One hypothesis storage for this project and the copies its tests make and run pytest in (the
# learner-path tests): a first st.text() in a new folder spends seconds tabling what UTF-8 encodes.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path(__file__).resolve().parent / ".hypothesis"))


@functools.cache
def builds_a_shared_fixture(path: str) -> bool:
    """A test module with a module- or session-scoped fixture (test_fork.py's fresh venv, a folder replayed
    once): its tests go to one worker together."""
    return path.endswith(".py") and re.search(r"scope=[\"'](module|session)", Path(path).read_text()) is not None


class NotebooksWhole(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::")[0]
        return path if path.endswith(".ipynb") or builds_a_shared_fixture(str(self.config.rootpath / path)) else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: absent where a run says -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") == "loadscope":
        return NotebooksWhole(config, log)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """Under -q, xdist writes `bringing up nodes...` (twice where the output is not a terminal: make test's
    own, in CI): a line a newcomer cannot place, about workers they did not ask for. Its progress line on a
    terminal stays."""
    reporter = session.config.pluginmanager.getplugin("terminaldistreporter")
    if reporter is not None and session.config.option.verbose < 0:
        reporter.ensure_show_status = lambda: None


QUICK_LAST = ("tests/ch", "tests/emulator/")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.nodeid.startswith(QUICK_LAST))  # stable: the order within each part stays
