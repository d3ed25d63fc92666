"""The house of ``replay``: one module per format behind one registry, each with the same small
interface over the one builder, and no private name crossing a module (``cline.py`` once imported
``importers._Builder`` inside its functions to dodge an import circle)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from minimal_runtime.replay.formats import FORMATS

REPLAY = Path(__file__).resolve().parents[2] / "minimal_runtime" / "replay"


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_every_format_is_a_module_with_a_name_recognise_and_read(fmt):
    assert isinstance(fmt.NAME, str) and callable(fmt.recognise) and callable(fmt.read)
    assert fmt.__name__.startswith("minimal_runtime.replay.formats.")


def test_no_private_name_crosses_a_module_of_replay():
    crossing = []
    for path in sorted(REPLAY.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("minimal_runtime")):
                crossing += [f"{path.relative_to(REPLAY)}: {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_")]
    assert crossing == []


# Each format module imported first, in a child forked from one interpreter that has imported the SDK and
# pydantic and nothing of minimal_runtime: third-party code cannot import replay, so a circle in replay fails
# the child as it fails a fresh interpreter, and a child costs replay's own modules, not the SDK's import again
# (3 CPU s each, thirteen times, where each module had an interpreter of its own).
ALONE = """
import json, os, sys, traceback
import anthropic, pydantic
assert not [m for m in sys.modules if m.startswith("minimal_runtime")], "the parent must not import the runtime"
failed = {}
for name in sys.argv[1:]:
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        try:
            __import__(name)
        except BaseException:
            os.write(write, traceback.format_exc()[-400:].encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as said:
        failed[name] = said.read()
    os.wait()
print(json.dumps(failed))
"""


@pytest.fixture(scope="module")
def imported_alone() -> dict[str, str]:
    """Each format module's traceback when imported first and alone ('' when it imports)."""
    done = subprocess.run([sys.executable, "-c", ALONE, *(f.__name__ for f in FORMATS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-400:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_each_format_module_imports_first_and_alone(fmt, imported_alone):
    """No circle: a format module is importable before anything else of replay."""
    assert imported_alone[fmt.__name__] == "", imported_alone[fmt.__name__]
