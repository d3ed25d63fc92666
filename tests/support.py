"""Shared builders for runtime and chapter tests: the running example on the emulator, always
offline whatever the environment says. Chapter suites whose idea depends on the API generation run
on both: ``on_both_generations`` gives a test a ``model`` of each."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from minimal_runtime.example import TASK, long_agent as _long_agent, pricing_agent as _pricing_agent

__all__ = ["TASK", "CURRENT_MODEL", "LEGACY_MODEL", "on_both_generations", "pricing_agent", "long_agent", "progress_hooks"]

LEGACY_MODEL = "claude-sonnet-4-6"  # the 2025 generation: the batch ends the last user turn, no prefix check
CURRENT_MODEL = "claude-sonnet-5-5"  # today's: turn-scoped system entries, thinking bound to its prefix
on_both_generations = pytest.mark.parametrize("model", [LEGACY_MODEL, CURRENT_MODEL])


def progress_hooks():
    """A PRE_LLM_CALL hook that injects a per-call note, so every call has a batch."""
    from minimal_runtime.core.hooks import HookRegistry, Point
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("progress", f"Calls made so far: {len(e.agent.calls)}."))
    return hooks


def pricing_agent(tmp_path: Path, policy=None, model: str = LEGACY_MODEL, **kwargs):
    return _pricing_agent(tmp_path, policy=policy, model=model, online=False, **kwargs)


def long_agent(tmp_path: Path, turns: int, model: str = LEGACY_MODEL, **kwargs):
    return _long_agent(tmp_path, turns, model=model, online=False, **kwargs)


def course_module():
    """course.py, where make test's steps are written down (the lint's folders, the notebooks' flags)."""
    spec = importlib.util.spec_from_file_location("course", Path(__file__).resolve().parents[1] / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fork_suite_size() -> int:
    """How many tests the fork's own suite holds (fork_suite.py, counted as unittest loads it), so the figure a
    test expects grows with the suite instead of being typed into every test that runs it."""
    import unittest

    import minimal_runtime.fork_suite as suite
    return unittest.defaultTestLoader.loadTestsFromModule(suite).countTestCases()
