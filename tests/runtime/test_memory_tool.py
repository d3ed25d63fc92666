"""The memory tool as the runtime runs it (``features/memory.py``): every command through a ToolBox, its
folder confined (each check tried against the SDK's class alone, to say who holds it), and durable under a
kill inside ``create`` and after it, through an Agent, the real SDK and the emulator."""

from __future__ import annotations

import json
import os

import pytest
from anthropic.lib.tools._beta_functions import ToolError
from anthropic.tools import BetaLocalFilesystemMemoryTool

from minimal_runtime.core.agent import Agent
from minimal_runtime.core.messages import dumps
from minimal_runtime.core.store import MemoryStore
from minimal_runtime.core.tools import ToolBox
from minimal_runtime.emulator import Emulator, Turn
from minimal_runtime.features.memory import MAX_FILE_BYTES, MemoryTool

MODEL = "claude-sonnet-5-5"


def call(box: ToolBox, n: int, **input) -> dict:
    return box.call({"type": "tool_use", "id": f"toolu_{n:02d}", "name": "memory", "input": input})


def test_every_command_runs_through_a_toolbox_with_the_sdks_words(tmp_path):
    box = ToolBox([MemoryTool(tmp_path)])
    assert box.definitions == [{"type": "memory_20250818", "name": "memory"}]
    assert call(box, 1, command="create", path="/memories/progress.md", file_text="a\nb\n")["content"] == \
        "File created successfully at: /memories/progress.md"
    assert not call(box, 2, command="str_replace", path="/memories/progress.md", old_str="b", new_str="B").get("is_error")
    assert not call(box, 3, command="insert", path="/memories/progress.md", insert_line=0, insert_text="top").get("is_error")
    assert (tmp_path / "memories/progress.md").read_text() == "top\na\nB\n"
    assert "2 levels deep in /memories" in call(box, 4, command="view", path="/memories")["content"]
    assert call(box, 5, command="rename", old_path="/memories/progress.md", new_path="/memories/done/p.md")["content"] == \
        "Successfully renamed /memories/progress.md to /memories/done/p.md"
    assert call(box, 6, command="delete", path="/memories/done")["content"] == "Successfully deleted /memories/done"
    assert list((tmp_path / "memories").iterdir()) == []
    bad = call(box, 7, command="forget", path="/memories")
    assert bad["is_error"] and "Unknown memory command 'forget'" in bad["content"]
    missing = call(box, 8, command="create", path="/memories/x.md")
    assert missing["is_error"] and "file_text" in missing["content"]


# -- confinement: (the command, who refuses it: "sdk" means the SDK's class alone already does) -------------

def _outside(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text("secret")
    return outside


CASES = {
    "traversal": ({"command": "create", "path": "/memories/../../outside/x.txt", "file_text": "x"}, "sdk", "escape"),
    "absolute path elsewhere": ({"command": "view", "path": "/etc/passwd"}, "sdk", "must start with /memories"),
    "a name that only begins with memories": (
        {"command": "create", "path": "/memories_old/x.md", "file_text": "x"}, "runtime", "start with /memories/"),
    "symlinked folder out": ({"command": "create", "path": "/memories/out/x.txt", "file_text": "x"}, "sdk", "escape"),
    "symlinked file out": ({"command": "view", "path": "/memories/leak.txt"}, "sdk", "escape"),
    "oversized create": ({"command": "create", "path": "/memories/big.md", "file_text": "x" * (MAX_FILE_BYTES + 1)},
                         "runtime", "limit of a memory file"),
    "oversized str_replace": ({"command": "str_replace", "path": "/memories/note.md", "old_str": "note",
                               "new_str": "y" * MAX_FILE_BYTES}, "runtime", "limit of a memory file"),
    "oversized insert": ({"command": "insert", "path": "/memories/note.md", "insert_line": 1,
                          "insert_text": "z" * MAX_FILE_BYTES}, "runtime", "limit of a memory file"),
}


def _folder(tmp_path):
    outside = _outside(tmp_path)
    memories = tmp_path / "app" / "memories"
    memories.mkdir(parents=True)
    (memories / "note.md").write_text("a note\n")
    os.symlink(outside, memories / "out")
    os.symlink(outside / "secret.txt", memories / "leak.txt")
    return tmp_path / "app", outside


def _snapshot(root):
    return sorted((str(p.relative_to(root)), p.read_bytes() if p.is_file() and not p.is_symlink() else None)
                  for p in root.rglob("*") if ".memory-journal" not in p.parts)


@pytest.mark.parametrize("case", CASES)
def test_the_folder_is_confined_and_each_check_is_held_by_the_sdk_or_the_runtime(tmp_path, case):
    command, holder, words = CASES[case]
    app, outside = _folder(tmp_path)
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(app))
    try:
        sdk.call(command)
        sdk_refused = False
    except ToolError as e:
        sdk_refused = words in str(e)
    assert sdk_refused == (holder == "sdk")  # who holds the check: the SDK's class alone, or not
    app, outside = _folder(tmp_path / "again")
    before = _snapshot(tmp_path / "again")
    result = call(ToolBox([MemoryTool(app)]), 1, **command)
    assert result["is_error"] and words in result["content"]
    assert _snapshot(tmp_path / "again") == before  # nothing written, inside or out
    assert (outside / "secret.txt").read_text() == "secret"


# -- durability: a kill inside create, and after it ------------------------------------------------------

class Killed(BaseException):
    """The process died here."""


class DyingMemory(MemoryTool):
    """Dies once: ``inside`` a create (after half its bytes reached the file) or ``after`` a command
    ended (its result not yet in the run record)."""

    def __init__(self, folder, where: str):
        super().__init__(folder)
        self.where = where

    def create(self, command):
        if self.where == "inside":
            self.where = ""
            with open(self._validate_path(command.path), "w") as f:
                f.write(command.file_text[: len(command.file_text) // 2])
            raise Killed
        return super().create(command)

    def run(self, raw_input):
        output = super().run(raw_input)
        if self.where == "after" and raw_input.get("command") != "view":
            self.where = ""
            raise Killed
        return output


PROGRESS = "# Progress\nDone: pages 0 to 9\nNext: page 10\n"


def writer(request: dict) -> Turn:
    """SIMULATED: view the memory, create the progress file, add a line to it, then answer."""
    results = [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    steps = [{"command": "view", "path": "/memories"},
             {"command": "create", "path": "/memories/progress.md", "file_text": PROGRESS},
             {"command": "insert", "path": "/memories/progress.md", "insert_line": 3, "insert_text": "Codes: none"}]
    if len(results) < len(steps):
        return Turn.of([{"type": "tool_use", "name": "memory", "input": steps[len(results)]}])
    return Turn.of("Saved.")


def run_until_killed(tmp_path, where: str):
    emu, store = Emulator(model=MODEL, policy=writer), MemoryStore()
    agent = Agent(emu.client(max_retries=0), model=MODEL, tools=[DyingMemory(tmp_path, where)], store=store)
    if where:
        with pytest.raises(Killed):
            agent.run("Save your progress.")
        resumed = MemoryStore()
        resumed._log = list(store._log)
        agent = Agent(emu.client(max_retries=0), model=MODEL, tools=[MemoryTool(tmp_path)], store=resumed)
    return agent.run("Save your progress."), agent


@pytest.mark.parametrize("where", ["inside", "after"])
def test_a_killed_create_runs_again_once_and_the_run_ends_as_if_never_killed(tmp_path, where):
    clean, clean_agent = run_until_killed(tmp_path / "clean", "")
    result, agent = run_until_killed(tmp_path / "killed", where)
    assert result.status == clean.status == "done"
    assert dumps(agent.messages) == dumps(clean_agent.messages)  # every result as the uninterrupted run's
    texts = [b["content"] for m in agent.messages if isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_result"]
    assert texts[1] == "File created successfully at: /memories/progress.md"  # not "already exists"
    assert (tmp_path / "killed/memories/progress.md").read_text() == PROGRESS.replace("page 10\n", "page 10\nCodes: none\n")


def test_the_sdks_class_alone_would_answer_already_exists_on_the_run_again(tmp_path):
    """Why the journal: the SDK's create refuses a file that exists, and a killed create left one."""
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    sdk.call({"command": "create", "path": "/memories/progress.md", "file_text": PROGRESS})
    with pytest.raises(ToolError, match="already exists"):
        sdk.call({"command": "create", "path": "/memories/progress.md", "file_text": PROGRESS})


def test_every_earlier_version_is_kept_and_restorable(tmp_path):
    tool = MemoryTool(tmp_path)
    box = ToolBox([tool])
    call(box, 1, command="create", path="/memories/p.md", file_text="one\n")
    call(box, 2, command="str_replace", path="/memories/p.md", old_str="one", new_str="two")
    call(box, 3, command="delete", path="/memories/p.md")
    assert [text for _, text in tool.versions("/memories/p.md")] == ["one\n", "two\n"]
    tool.restore("toolu_03")
    assert (tmp_path / "memories/p.md").read_text() == "two\n"
    assert "journal" not in call(box, 4, command="view", path="/memories")["content"]  # the model never sees it
    assert json.loads((tmp_path / ".memory-journal/toolu_02/result.json").read_text())["is_error"] is False
