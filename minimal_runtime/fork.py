"""``python -m minimal_runtime fork DEST [--name PKG]``: the forkable loop as a package of your own.

Writes ``DEST/PKG/``: ``core/`` and ``provider/`` as they are here, an ``__init__.py`` giving their
public names, and a README of its own; and ``DEST/test_PKG.py``, its tests (``fork_suite.py``): offline,
through a scripted server inside the SDK's own HTTP client, and a live subset against the server in
``ANTHROPIC_BASE_URL`` when it is set. The package and its tests need ``anthropic`` and ``pydantic`` only.
Paths are found from this file, so it works from any directory. It never overwrites and never
shadows: everything is written into a fresh hidden folder in DEST (on DEST's file system, so the
finished package moves into place by a rename), and moved into place only if nothing there would be
replaced, nor shadowed (``DEST/agent.py`` and a package ``DEST/agent/``: ``import agent`` finds only
one of them). The last move cannot replace a file created in DEST meanwhile: the package's folder
and the test file are each created anew (``mkdir``, ``open(..., "x")``), never renamed over a name.
"""

from __future__ import annotations

import errno
import importlib.machinery
import keyword
import os
import re
import shutil
import sys
import tempfile
import textwrap
import unicodedata
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
COPIED = ("core", "provider")

INIT = '''"""{name}: an agent loop for the Messages API (forked from minimal_runtime's core/ and provider/).

    core/      the loop: agent, config, context (the note queue, the layouts), hooks, tools, messages,
               store (the crash-safe run record and the state hooks keep)
    provider/  facts about the models: the per-model table, dollars from usage

It needs anthropic and pydantic only. README.md says how to start.
"""

from .core import (
{core})
from .provider.cost import CallRecord
from .provider.models import ModelSpec, model_spec

__all__ = [
{names}]
'''

README = '''# {name}

An agent loop for the Messages API: a durable history, a batch of notes for each call that the
model reads on that call only, hooks around every step, and a run record on disk that a killed
process resumes from. It needs `anthropic` and `pydantic` only.

```python
import anthropic
from {name} import Agent, RunStore


def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


agent = Agent(anthropic.Anthropic(), model="claude-sonnet-5-5", system="You are a careful assistant.",
              tools=[add], store=RunStore("runs/1"))
result = agent.run("What is 2 + 3?")
print(result.status, result.final_text)  # done, max_steps, max_cost, max_time, truncated, refused or error
```

- **Tools**: a plain function (its typed parameters are the input schema, its docstring the
  description, as `anthropic.beta_tool` makes them), a `FunctionTool(name, description, Model, fn)`
  taking one pydantic model, or any object with `name`, `description`, `definition()` and `run(input)`.
- **Request options**: `Agent(..., max_tokens=..., thinking=..., output_config=..., metadata=...,
  service_tier=..., context_management=..., betas=[...])`, checked against the model table before
  anything is sent; `agent.configure(max_tokens=...)` changes them between runs.
- **Hooks**: `HookRegistry().register(Point.PRE_LLM_CALL, hook)`; a hook reads `event.agent` and adds
  a note for the next call with `event.agent.inject_turn_scoped(source, text)`. `Point.END` runs once
  per `run()`, whatever its status, with `event.result`. A hook that raises is logged and skipped.
  A hook killed while it ran runs again on resume: `hook_run_id()` (inside the hook) is the same both
  times and different for every other run of it, so a side effect keyed on it happens once.
- **Notes are kept in the record**: on the current models a call's notes are one system entry that
  the model reads on that call only (`clear_at`), then resent untouched with the history, so they are
  in `agent.messages` and on disk. Put nothing in a note you would not keep in the run record.
- **State across crashes**: `event.agent.state.set(key, value)` / `.get(key)`; a value lands in the
  record with the turn that carried its step's notes, so "once" means once however often it dies.
- **Resume**: make the agent again on the same `RunStore` and call `agent.run()`, or run the same
  script again: `agent.run(task)` with the killed run's own task resumes it rather than asking it twice
  (another task is refused in one line until that run has ended). A record started with another model, system prompt or tools is refused unless
  `agent.run(new_segment=True)`. A call answered just before the kill, whose turn never landed, is
  resumed from its reply, not made again. A step is a durable transaction: the request is recorded as
  sent, the reply (with its tool inputs) stored before any tool runs, each tool's result as it
  completes, then the turn; a resume never re-sends a call whose reply is stored and runs only the
  tools and hooks that had not run. A tool killed while it ran runs again: `tool_use_id()` (inside
  the tool) is the same both times, so a side effect keyed on it happens once. A call in flight at the
  kill is sent again and listed in `agent.unanswered_calls` (possibly billed). `agent.bill()` is what
  the record cost: `agent.calls`, `agent.lost_calls`, and an estimate for each unanswered call (its
  `str` says how much of it is an estimate).
- **Limits**: `Agent(..., max_steps=50, max_cost_usd=5.0, max_seconds=3600)`. No call is sent that
  could take the bill past `max_cost_usd` (its prompt as uncached input, `max_tokens` of output), and
  none once `max_seconds` have passed since the run's task (`clock=` injects the clock): the run ends
  `max_cost` or `max_time`, in the record and at the END hook; raise the limit with
  `agent.configure(...)` and `run()` goes on, here or after a restart (`run()` with no task: the
  stopped run has ended, so `run(task)` would ask its task again as a new run).
- **Steering**: `agent.steer(text)` queues a user message (durable at once) for the next call, from any
  thread. A server that takes `POST /steer` is an add-on outside the loop (`minimal_runtime/steering.py`:
  copied into the package as `steering.py` it runs as it is, importing only `.core`).

`test_{name}.py` is what tells you when a change broke the loop: `python -m unittest test_{name}`, offline
(a scripted Messages API server inside the SDK's own HTTP client). It checks every stop status and the
step cap at its boundary, hook isolation and order, each request, the history and the record to the
block (the cache breakpoints, the turn-scoped notes, the order of parallel tool results, append-only
requests), exact call counts, each call's dollars worked out by hand from the price table on a server
that reports cache writes and reads, a thread's create, continue, expiry and replay, a failed call's
notes given to the next, a steer accepted only once it is on disk, a kill at each boundary of a step
and its resume (each tool and hook once, the state a tool keeps, two hooks at a point), a torn or
unterminated last line, every kind of tool result as sent back (errors, no text, unknown, blocks,
undecodable bytes), the tool offer (masked, deferred, announced, a final tool), what taints a run,
settings refused before any call, each threaded call's record, and the registry's names for failures. With `ANTHROPIC_BASE_URL` (the real API with `ANTHROPIC_API_KEY`, or a stand-in
such as `python -m minimal_runtime serve`) a live subset also runs against that server.
'''

def test_module(name: str) -> str:
    """``fork_suite.py`` as the fork's own ``test_NAME.py``: importing the fork instead of this core."""
    source = (HERE / "fork_suite.py").read_text()
    for old, new in (("from minimal_runtime.core.", f"from {name}.core."),
                     ("from minimal_runtime.core import", f"from {name} import"), ("test_PKG", f"test_{name}")):
        assert old in source, old
        source = source.replace(old, new)
    return source


def write_fork(dest: Path, name: str = "agent") -> list[Path]:
    """Write the fork; returns what it wrote. Refuses a name that is not a package name, and any
    file or folder (or link) there already that the fork would replace or shadow (``clash``).
    Written whole or not at all: everything goes into a hidden folder in ``dest`` first and is moved
    into place at the end, each piece created anew so that nothing made meanwhile is replaced (a
    full disk, or a clash found at the last moment, leaves nothing behind)."""
    check_name(name)
    dest = Path(dest).expanduser().resolve()
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(dest))  # before anything is written
    package, test = dest / name, dest / f"test_{name}.py"
    if (found := clash(dest, name)) is not None:
        raise FileExistsError(found)
    dest.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=dest))
    moved: list[Path] = []
    try:
        _write_package(staging / name, name)
        (staging / test.name).write_text(test_module(name))
        if (found := clash(dest, name)) is not None:  # made while the fork was writing
            raise FileExistsError(found)
        _create(test, staging / test.name, moved)
        _create(package, staging / name, moved)
        if (found := clash(dest, name, mine=moved)) is not None:  # made between the last look and the moves
            raise FileExistsError(found)
    except BaseException:
        for path in reversed(moved):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [package, test]


def clash(dest: Path, name: str, mine: list[Path] = ()) -> str | None:
    """One line naming what in ``dest`` the fork would replace or shadow, or None. The package
    ``name/`` shadows (or is shadowed by) a module of that name: ``name.py``, ``name.pyc``, an
    extension ``name.*.so``; so does the test ``test_name.py`` with a folder or another module
    ``test_name``. A link counts, dangling or not: writing through it would write outside ``dest``.
    ``mine``: what the fork made itself (for the last look, once everything is in place)."""
    suffixes = importlib.machinery.all_suffixes()  # .py, .pyc, .so, .cpython-312-x86_64-linux-gnu.so ...
    for stem, ours in ((name, f"the package {name}/"), (f"test_{name}", f"the test test_{name}.py")):
        for path in [dest / stem, *(dest / f"{stem}{suffix}" for suffix in suffixes)]:
            if not os.path.lexists(path) or path in mine:
                continue
            if path.name in (name, f"test_{name}.py"):
                return f"{path} exists: choose another DEST or --name"
            return (f"{path} exists: the fork's {ours} would shadow it (import {stem} finds only one of them); "
                    "choose another DEST or --name")
    return None


def _create(target: Path, staged: Path, moved: list[Path]) -> None:
    """Move ``staged`` to ``target``, which must not exist: a folder is made with ``mkdir`` and its
    contents renamed into it, a file is created with ``open(..., "x")``; both fail, and nothing is
    replaced, when something took the name first."""
    if staged.is_dir():
        os.mkdir(target)  # FileExistsError if anything is there now
        moved.append(target)
        for entry in staged.iterdir():
            os.rename(entry, target / entry.name)  # into the folder made just now: nothing of anyone's there
    else:
        with open(target, "xb") as out:  # FileExistsError if anything is there now (a link too)
            moved.append(target)
            out.write(staged.read_bytes())


def check_name(name: str) -> None:
    """A ValueError unless ``name`` is a package name the fork's own test can import as written."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a Python package name")
    if unicodedata.normalize("NFKC", name) != name:  # Python reads identifiers in NFKC: the folder's name is not it
        raise ValueError(f"{name!r} is read by Python as {unicodedata.normalize('NFKC', name)!r}: choose a name "
                         "that is written as Python reads it (plain ASCII letters, digits and underscores)")
    if name.startswith("__") and name.endswith("__"):  # __main__, __init__ ...: names Python gives a meaning
        raise ValueError(f"{name!r} is a name Python keeps for itself: choose another --name")
    if name in needed_modules():  # next to the test, `import json` (or the SDK's own imports) would find the fork
        raise ValueError(f"{name!r} is the name of a module the package needs (the standard library's, or "
                         "anthropic's, pydantic's or one they import): choose another --name")


def _write_package(package: Path, name: str) -> None:
    from .core import __all__ as core_names
    for folder in COPIED:
        for source in sorted((HERE / folder).rglob("*")):
            if "__pycache__" in source.parts or not source.is_file():
                continue
            target = package / folder / source.relative_to(HERE / folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)  # the first error is raised as it is (copytree gathers them all)
    names = [*core_names, "CallRecord", "ModelSpec", "model_spec"]
    lines = lambda words: textwrap.fill(", ".join(words), 100, initial_indent="    ", subsequent_indent="    ")  # noqa: E731
    (package / "__init__.py").write_text(INIT.format(name=name, core=lines(core_names), names=lines(f'"{n}"' for n in names)))
    (package / "README.md").write_text(README.format(name=name))


def needed_modules() -> set[str]:
    """The top-level modules a fork imports: the standard library's, and those of anthropic, pydantic
    and every distribution they require, as installed here."""
    wanted, todo = set(), ["anthropic", "pydantic"]
    while todo:
        dist = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if dist in wanted:
            continue
        wanted.add(dist)
        try:
            todo += [re.match(r"[\w.-]+", r)[0] for r in metadata.requires(dist) or [] if "extra ==" not in r]
        except metadata.PackageNotFoundError:
            pass
    return {"anthropic", "pydantic", *sys.stdlib_module_names} | {
        module for module, dists in metadata.packages_distributions().items()
        if any(re.sub(r"[-_.]+", "-", d).lower() in wanted for d in dists)}


def main(args) -> None:
    try:
        package, test = write_fork(Path(args.dest), args.name)
    except (ValueError, FileExistsError) as e:
        raise SystemExit(f"fork: {e}")
    except OSError as e:  # not a folder, no permission, a full disk: one line, not a traceback; nothing left behind
        why = e.strerror or str(e).splitlines()[0][:200]
        raise SystemExit(f"fork: cannot write into {Path(args.dest).expanduser().resolve()}: {why}")
    pins = " ".join(f"{name}=={metadata.version(name)}" for name in ("anthropic", "pydantic"))  # what it was tested on
    print(f"wrote {package}/ (README.md inside) and {test}\n"
          f"  it needs anthropic and pydantic: python -m venv .venv && .venv/bin/pip install {pins}\n"
          f"  test it (offline; with ANTHROPIC_BASE_URL set, also against that server): python -m unittest test_{args.name}")
