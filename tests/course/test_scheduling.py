"""make test's two workers (conftest.py): what goes to one worker together."""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]


def scope(nodeid: str) -> str:
    """The scope conftest.py's scheduler gives a test: tests of one scope go to one worker."""
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    return conftest.NotebooksWhole._split_scope(SimpleNamespace(config=SimpleNamespace(rootpath=ROOT)), nodeid)


def test_a_module_whose_fixture_is_built_once_goes_to_one_worker_whole():
    """Split, each worker built test_fork.py's fresh venv and fork again."""
    assert scope("tests/runtime/test_fork.py::test_the_fork_command_writes_a_package_from_any_folder") == \
        "tests/runtime/test_fork.py"
    assert scope("tests/replay/test_house.py::test_each_format_module_imports_first_and_alone[codex]") == \
        "tests/replay/test_house.py"


def test_a_notebook_is_one_scope_and_any_other_test_its_own():
    assert scope("chapters/04_plan.ipynb::Cell 3") == "chapters/04_plan.ipynb"
    alone = "tests/runtime/test_knowledge_rules.py::test_a_km_call_that_never_returns_does_not_keep_the_process_alive"
    assert scope(alone) == alone
