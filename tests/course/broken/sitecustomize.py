"""Loaded at interpreter start (this folder goes first on PYTHONPATH) by the broken-feature check:
``COURSE_BREAK=module:name`` or ``module:Class.method`` replaces that shipped function or method with
one that raises, before any notebook imports it. Used only by tests/course/test_broken_features.py."""

import importlib
import os

target = os.environ.get("COURSE_BREAK")
if target:
    module_name, _, path = target.partition(":")
    owner = importlib.import_module(module_name)
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    getattr(owner, name)  # a name that is not there is a mistake in the check, not a break

    def broken(*args, **kwargs):
        raise RuntimeError(f"{target} broken on purpose (tests/course/test_broken_features.py)")

    setattr(owner, name, broken)
