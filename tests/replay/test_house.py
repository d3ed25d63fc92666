"""The house of ``replay``: one module per format behind one registry, each with the same small
interface over the one builder, and no private name crossing a module (``cline.py`` once imported
``importers._Builder`` inside its functions to dodge an import circle)."""

from __future__ import annotations

import ast
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


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_each_format_module_imports_first_and_alone(fmt):
    """No circle: a format module is importable before anything else of replay."""
    done = subprocess.run([sys.executable, "-c", f"import {fmt.__name__}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-400:]
