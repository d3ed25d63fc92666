"""The runtime's house: the core imports alone, features install themselves, one behaviour for an
unknown model, and a simulated policy that loses a runtime sentence says which."""

from __future__ import annotations

import math
import subprocess
import sys
import uuid
import warnings

import pytest

from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.provider.cost import CallRecord
from minimal_runtime.provider.models import UnknownModelWarning, model_spec


def test_the_core_imports_without_the_emulator_plotting_the_example_or_replay():
    probe = ("import sys, minimal_runtime.core, minimal_runtime; "
             "bad = [m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'IPython') "
             "or m.startswith(('minimal_runtime.emulator', 'minimal_runtime.example', 'minimal_runtime.replay', "
             "'minimal_runtime.features', 'minimal_runtime.view'))]; print(bad)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_core_imports_nothing_of_the_project_but_provider():
    import ast
    from pathlib import Path
    core = Path(__file__).resolve().parents[2] / "minimal_runtime" / "core"
    for path in core.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:  # from ..x import y
                assert node.module.split(".")[0] == "provider", f"{path.name} imports ..{node.module}"


def test_every_package_the_runtime_imports_comes_with_its_own_dependencies():
    """What installing the project brings (its dependencies and what they require in turn) covers
    every import in minimal_runtime/. The course's extras do not count: ``serve``'s proxy once
    imported httpx, which only the jupyter metapackage of the course extra happened to bring. An
    optional extra's own package may be imported where the import is guarded (``try`` ... ``except
    ImportError``, saying how to install it): ``replay DIR --engine dask``."""
    import ast
    import re
    import tomllib
    from importlib.metadata import packages_distributions, requires
    from pathlib import Path

    from packaging.requirements import Requirement

    def name(text: str) -> str:
        return re.sub(r"[-_.]+", "-", text).lower()

    root = Path(__file__).resolve().parents[2]
    brought, todo = set(), [Requirement(r).name for r in tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]]
    while todo:
        dist = name(todo.pop())
        if dist not in brought:
            brought.add(dist)
            wanted = (Requirement(r) for r in requires(dist) or [])
            todo += [r.name for r in wanted if r.marker is None or r.marker.evaluate({"extra": ""})]
    extras = {name(Requirement(r).name) for group in tomllib.loads((root / "pyproject.toml").read_text())["project"]
              .get("optional-dependencies", {}).values() for r in group}
    providers = packages_distributions()
    missing = set()
    for path in (root / "minimal_runtime").rglob("*.py"):
        tree = ast.parse(path.read_text())
        guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") for h in t.handlers)
            for stmt in t.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for top in {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names) - {"minimal_runtime"}:
                if id(node) in guarded and name(top) in extras:
                    continue
                if not {name(d) for d in providers.get(top, [top])} & brought:
                    missing.add(f"{path.relative_to(root)} imports {top}")
    assert not missing, sorted(missing)


def test_a_feature_registers_its_own_hooks_named_after_what_they_are():
    from minimal_runtime.features.budget import BudgetMonitor, MaxStepsWarning
    hooks = HookRegistry().install(BudgetMonitor(budget=100), MaxStepsWarning())
    assert hooks.names(Point.PRE_LLM_CALL) == ["BudgetMonitor.warn", "MaxStepsWarning.warn"]
    assert hooks.names(Point.POST_LLM_CALL) == ["BudgetMonitor.record"]


def test_registering_a_feature_as_a_hook_is_refused_with_the_way_to_do_it():
    from minimal_runtime.features.budget import MaxStepsWarning
    with pytest.raises(TypeError, match="hooks.install"):
        HookRegistry().register(Point.PRE_LLM_CALL, MaxStepsWarning())


def test_an_unknown_model_warns_once_refuses_prefill_and_has_an_unknown_cost():
    name = f"my-local-llama-{uuid.uuid4().hex}"  # never looked up before in this process: the warning is once per name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = model_spec(name)
        again = model_spec(name)
    assert [w.category for w in caught] == [UnknownModelWarning]
    assert spec == again and not spec.known and not spec.supports_prefill
    assert spec.min_cacheable_tokens is None and spec.context_window is None
    record = CallRecord(model=name, input_tokens=100, output_tokens=10)
    assert math.isnan(record.cost) and math.isnan(record.cost_without_cache)


def test_an_agent_on_an_unknown_model_runs_and_reports_unknown_cost(tmp_path):
    from minimal_runtime.emulator import Emulator
    from minimal_runtime.core.agent import Agent
    name = f"my-local-model-{uuid.uuid4().hex}"
    with pytest.warns(UnknownModelWarning):
        emu = Emulator(model=name)
    agent = Agent(emu.client(), model=name, system="hi")
    result = agent.run("hello")
    assert result.status == "done" and math.isnan(agent.calls[0].cost)


def test_the_emulator_answers_404_for_a_model_it_does_not_serve():
    import anthropic
    from minimal_runtime.emulator import Emulator
    client = Emulator().client(max_retries=0)
    with pytest.raises(anthropic.NotFoundError, match="model: nobody-knows-me"):
        client.messages.create(model="nobody-knows-me", max_tokens=10, messages=[{"role": "user", "content": "x"}])


def test_a_reworded_task_line_fails_loudly_naming_the_phrase(tmp_path, monkeypatch):
    from minimal_runtime.example import planning_team
    from minimal_runtime.example.planning import reference_items
    from minimal_runtime.features import delegation

    class Errors:
        seen: list[str] = []

        def install(self, hooks):
            hooks.register(Point.ERROR, lambda e: self.seen.append(str(e.error)))

    expected = delegation.TASK_LINE  # what the simulated executor reads (bound when it was imported)
    monkeypatch.setattr(delegation, "TASK_LINE", "My assignment: ")
    team = planning_team(tmp_path, "Summarise", reference_items(1), online=False, executor_features=(Errors(),))
    team.planner.run("Summarise page 0.")
    assert team.executors and all(e.calls == [] for e in team.executors)  # refused before answering: nothing billed
    assert Errors.seen and f"expects a line starting {expected!r}" in Errors.seen[0]
