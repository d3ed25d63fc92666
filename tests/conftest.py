"""The course switch: ``--impl exercises|solutions`` (default solutions, or ``COURSE_IMPL``).

A chapter suite lives in ``tests/chNN_topic/`` and gets the chosen implementation of
``chNN_topic`` through the ``impl`` fixture.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

# tests/ui/ drives a browser (Playwright, Debian's chromium): `make ui-test` runs it with UI_TEST=1; make
# test and a bare pytest leave it out, uncollected (Playwright is not installed for them)
collect_ignore = [] if os.environ.get("UI_TEST") else ["ui"]

# OTEL_* variables in the shell (a developer's own collector) would have every serve and agent of the suite
# send it spans: the suite's spans go only to the receivers its own tests start (tests/tracing)
for name in [n for n in os.environ if n.startswith("OTEL_")]:
    del os.environ[name]


def pytest_addoption(parser):
    parser.addoption("--impl", default=os.environ.get("COURSE_IMPL", "solutions"), choices=["exercises", "solutions"],
                     help="which implementation the chapter suites test")


@pytest.fixture
def impl(request):
    chapter = Path(request.node.fspath).parent.name
    if not chapter.startswith("ch"):
        raise RuntimeError(f"the impl fixture is for chapter suites, not {chapter}")
    return importlib.import_module(f"{request.config.getoption('--impl')}.{chapter}")
