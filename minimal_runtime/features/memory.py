"""The provider's memory tool, run by the runtime: files under ``/memories`` that outlive a session.

The memory tool (``{"type": "memory_20250818", "name": "memory"}``) is client-side: the model asks
for ``view``, ``create``, ``str_replace``, ``insert``, ``delete`` or ``rename`` on paths under
``/memories`` and the application runs them on storage it chooses [MEM:
https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool]. The SDK ships the
commands already (``anthropic.tools.BetaLocalFilesystemMemoryTool``: files under
``<folder>/memories``, each command's result and error text as the model is meant to read them), so
this module writes none of them again. It adds what the runtime needs:

- **It is a runtime tool.** ``MemoryTool`` is a ``Tool`` a ``ToolBox`` offers: its definition is the
  provider's two fields, its errors come back as error results, never raised.
- **It is durable.** A tool killed while it ran runs again on resume, with the same
  ``tool_use_id()`` (``core/tools.py``). The SDK's ``create`` refuses a file that exists, so a
  ``create`` killed after its write would answer "already exists" the second time; an ``insert``
  would insert twice. So each changing command first keeps what it will change (the files as they
  were, or that they were absent) in a journal named by its tool_use id, and stores its result
  there when it ends. Run again, a command whose result is stored answers it; one killed half-way
  puts the files back as they were and runs again. Once.
- **It is confined.** Which check holds where (``tests/runtime/test_memory_tool.py`` tries each
  against the SDK's class alone): a ``..`` that leaves the folder, an absolute path elsewhere
  ("/etc/passwd") and a symlink that leads out are refused by the SDK's own ``_validate_path``; the
  runtime adds a path that only begins with the word (``/memories_old/x``, which the SDK maps to
  ``<folder>/memories/_old/x``) and the size of a file after a write (the page: "consider tracking
  memory file sizes and preventing files from growing too large"), which the SDK does not check.
- **Nothing in it is lost.** The journal keeps every file as it was before each change (outside
  ``/memories``: the model never sees it): ``versions(path)`` lists them and ``restore(tool_use_id)``
  puts back the files one call changed, as ``filesystem.py``'s offloads keep every large output.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from anthropic.lib.tools._beta_functions import ToolError
from anthropic.tools import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from pydantic import ValidationError

from ..core.tools import ToolOutput, tool_use_id

ROOT = "/memories"
JOURNAL = ".memory-journal"  # next to memories/, never under it: no path the model sends reaches it
MAX_FILE_BYTES = 64 * 1024  # a memory file is read whole into the context: a bound keeps it a note
COMMANDS = {
    "view": BetaMemoryTool20250818ViewCommand, "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand, "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand, "rename": BetaMemoryTool20250818RenameCommand,
}


class MemoryTool(BetaLocalFilesystemMemoryTool):
    """The memory tool over ``folder`` (its files in ``folder/memories``), as a runtime ``Tool``."""

    description = "The provider's memory tool (memory_20250818): files under /memories that outlive the session."
    reads_outside = False  # what it returns, the model (or the operator) wrote

    def __init__(self, folder: str | Path, max_file_bytes: int = MAX_FILE_BYTES):
        super().__init__(base_path=str(folder))
        self.folder, self.max_file_bytes = Path(folder), max_file_bytes
        self.journal = self.folder / JOURNAL
        self._lock = threading.Lock()

    def definition(self) -> dict[str, Any]:
        return dict(self.to_dict())  # {"type": "memory_20250818", "name": "memory"}: the provider's, nothing added

    def run(self, raw_input: dict[str, Any]) -> ToolOutput:
        try:
            command = COMMANDS[raw_input.get("command")].model_validate(raw_input)
        except (KeyError, TypeError):
            return ToolOutput(content=f"Unknown memory command {raw_input.get('command')!r}: one of "
                                      f"{', '.join(COMMANDS)}.", is_error=True)
        except ValidationError as e:
            problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
            return ToolOutput(content=f"Invalid input for memory {command_name(raw_input)}: {problems}", is_error=True)
        with self._lock:
            try:
                paths = [self._confined(p) for p in touched(command)]
            except ToolError as e:
                return ToolOutput(content=str(e), is_error=True)
            key = tool_use_id()
            if command.command == "view" or key is None:  # a view changes nothing; outside a run, nothing to resume
                return self._execute(command)
            return self._once(key, command, paths)

    # -- confinement: what the runtime adds to the SDK's checks -------------------------------------

    def _confined(self, path: str) -> Path:
        if path.startswith(ROOT) and path != ROOT and not path.startswith(ROOT + "/"):
            # the SDK takes "/memories_old/x" for "/memories/_old/x"; any other path it words itself
            raise ToolError(f"Path must be /memories or start with /memories/, got: {path}")
        return self._validate_path(path)  # the SDK's: "..", absolute paths elsewhere, symlinks out

    def _check_size(self, command: Any) -> None:
        """A write that would leave a file over ``max_file_bytes`` is refused before it is made."""
        if command.command == "create":
            size = len(command.file_text.encode("utf-8"))
        elif command.command in ("str_replace", "insert"):
            full = self._validate_path(command.path)
            if not full.is_file():
                return  # the SDK answers that one
            added = (len(command.new_str.encode()) - len(command.old_str.encode()) if command.command == "str_replace"
                     else len(command.insert_text.encode()) + 1)
            size = full.stat().st_size + added
        else:
            return
        if size > self.max_file_bytes:
            raise ToolError(f"File {command.path} would be {size:,} bytes, over the {self.max_file_bytes:,}-byte "
                            "limit of a memory file. Keep memory files short: split it, or summarize what it holds.")

    def _execute(self, command: Any) -> ToolOutput:
        try:
            self._check_size(command)
            return ToolOutput(content=self.execute(command))
        except ToolError as e:
            return ToolOutput(content=str(e), is_error=True)
        except OSError as e:  # a file system error is the tool's answer, not the run's end
            return ToolOutput(content=f"memory {command.command} failed: {e.strerror or e}", is_error=True)

    # -- durability: a changing command runs once, whatever kills it -------------------------------

    def _once(self, key: str, command: Any, paths: list[Path]) -> ToolOutput:
        entry = self.journal / safe_name(key)
        if (entry / "result.json").is_file():  # it ran to its end: the result the record lost
            return ToolOutput.model_validate_json((entry / "result.json").read_text())
        if (entry / "before").is_dir():  # killed half-way: the files as they were, then again
            self._put_back(entry / "before")
        else:
            self._keep(entry, command, paths)
        output = self._execute(command)
        _write_atomically(entry / "result.json", output.model_dump_json())
        return output

    def _keep(self, entry: Path, command: Any, paths: list[Path]) -> None:
        """The files ``command`` may change, as they are now (or that they are absent), kept under
        ``entry/before``: written aside, then renamed, so a kill while keeping leaves nothing half-kept."""
        staging = entry / "before.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "files").mkdir(parents=True)
        root = self.memory_root.resolve()
        kept: dict[str, str] = {}
        for full in paths:
            rel = full.relative_to(root).as_posix()
            if full.is_symlink() or not full.exists():
                kept[rel] = "absent"
            elif full.is_dir():
                kept[rel] = "dir"
                shutil.copytree(full, staging / "files" / rel, symlinks=True, dirs_exist_ok=True)
            else:
                kept[rel] = "file"
                (staging / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(full, staging / "files" / rel)
        (staging / "kept.json").write_text(json.dumps({"command": command.model_dump(), "paths": kept}))
        os.replace(staging, entry / "before")

    def _put_back(self, before: Path) -> None:
        root = self.memory_root.resolve()
        for rel, kind in json.loads((before / "kept.json").read_text())["paths"].items():
            target = root / rel if rel != "." else root
            if target == root and kind != "dir":
                continue
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            if kind == "file":
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(before / "files" / rel, target)
            elif kind == "dir":
                shutil.copytree(before / "files" / rel, target, symlinks=True)

    # -- nothing lost ------------------------------------------------------------------------------

    def versions(self, path: str) -> list[tuple[str, str]]:
        """Every earlier content of ``path`` the journal keeps: (the tool_use id of the call that
        changed it, the content before that call), oldest first."""
        rel = self._confined(path).relative_to(self.memory_root.resolve()).as_posix()
        found = []
        for entry in sorted(self.journal.glob("*/before"), key=lambda p: p.stat().st_mtime_ns):
            kept = json.loads((entry / "kept.json").read_text())["paths"]
            if kept.get(rel) == "file":
                found.append((entry.parent.name, (entry / "files" / rel).read_text(encoding="utf-8")))
        return found

    def restore(self, key: str) -> None:
        """Put back the files the call ``key`` changed, as they were before it."""
        with self._lock:
            self._put_back(self.journal / safe_name(key) / "before")


def touched(command: Any) -> list[str]:
    """The /memories paths ``command`` reads or changes."""
    return [command.old_path, command.new_path] if command.command == "rename" else [command.path]


def command_name(raw_input: dict) -> str:
    return str(raw_input.get("command"))


def safe_name(key: str) -> str:
    """A tool_use id as one file name (the API's ids are letters, digits and ``_``; anything else goes)."""
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in key)
    return cleaned or "_"


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
