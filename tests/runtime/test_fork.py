"""The fork, done as the README says: ``python -m minimal_runtime fork DEST`` run from another folder,
and the package it writes run in one fresh venv holding only ``anthropic`` and ``pydantic`` (the
project's own versions), against the emulator over HTTP. Each test below runs a script in that venv
(issue 40: each failed on the runtime before its item was built).

``python tests/runtime/test_fork.py`` prints the size of what a fork copies.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Iterator

import pytest

from minimal_runtime.emulator import Emulator, Turn, tool_use
from tests.support import fork_suite_size as suite_size

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from core_lines import line_report  # noqa: E402  (the one line counter: benchmarks/core_lines.py)
MODEL = "claude-sonnet-5-5"
COURSE_WORDS = re.compile(r"\b(course|chapters?|exercises?|notebooks?|solutions|planner|learners?)\b|API-2026|report tool",
                          re.IGNORECASE)


def fork_snippet() -> tuple[str, str]:
    """The fork section of docs/runtime-and-fork.md: its shell line and its Python snippet."""
    section = (ROOT / "docs" / "runtime-and-fork.md").read_text().split("## Forking the runtime", 1)[1]
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return shell, python


def fresh_venv(where: Path) -> Path:
    """A venv with only anthropic and pydantic, at this project's versions; from uv's cache when it can."""
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))  # the course's venv has one
    if uv is None:
        pytest.skip("uv is not installed")
    pins = [f"anthropic=={version('anthropic')}", f"pydantic=={version('pydantic')}"]
    subprocess.run([uv, "venv", "-q", str(where), "--python", sys.executable], check=True, capture_output=True)
    python = where / "bin" / "python"
    for offline in (["--offline"], []):
        done = subprocess.run([uv, "pip", "install", "-q", *offline, "--python", str(python), *pins],
                              capture_output=True, text=True)
        if done.returncode == 0:
            return python
    pytest.skip(f"could not install {' '.join(pins)} (no cache, no registry): {done.stderr.strip()[-200:]}")


# Runs in the fork's venv: imports the SDK and the package once, then runs each script it is sent in a
# forked copy of itself (as tests/runtime/test_store.py does), so a script costs its run, not an
# interpreter's start and the SDK's import, and a script that SIGKILLs itself dies like any process.
SERVER = """
import json, os, sys, traceback
import anthropic, {name}
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.environ.update(job["env"])
        sys.argv = ["-c", *job["args"]]
        out = os.open(job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1), os.dup2(out, 2)
        code = 0
        try:
            exec(compile(job["script"], "<script>", "exec"), {{"__name__": "__main__"}})
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status), flush=True)
"""


@dataclass
class Fork:
    python: Path  # the fresh venv's
    dest: Path  # the folder the README's command wrote: the package and its test
    name: str
    server: subprocess.Popen  # SERVER, in the fresh venv, from dest

    def run(self, emu: Emulator, script: str, *args: str, killed: bool = False) -> dict:
        """``script`` in the fork's venv, from ``dest``, against ``emu``; what it printed last, as JSON
        (``killed``: it must die by SIGKILL, and prints nothing)."""
        with emu.serve() as base_url:
            return self.run_at(base_url, script, *args, killed=killed)

    def run_at(self, base_url: str, script: str, *args: str, killed: bool = False) -> dict:
        out = self.dest.parent / "script.out"
        env = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "offline-emulator"}
        job = {"script": PRELUDE.format(name=self.name) + script, "args": list(args), "env": env, "out": str(out)}
        self.server.stdin.write(json.dumps(job) + "\n")
        self.server.stdin.flush()
        status, printed = int(self.server.stdout.readline()), out.read_text()
        if killed:
            assert status == -9, printed
            return {}
        assert status == 0, printed
        return json.loads(printed.strip().splitlines()[-1])


PRELUDE = """
import json, os, signal, sys
import anthropic
import {name} as package
from {name} import *

def client():
    return anthropic.Anthropic(max_retries=0)

def die(event):
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture(scope="module")
def fork(tmp_path_factory) -> Iterator[Fork]:
    """One fresh venv, and the fork as the README's command writes it from a folder outside the project."""
    where = tmp_path_factory.mktemp("fork")
    python = fresh_venv(where / "venv")
    elsewhere = where / "elsewhere"
    elsewhere.mkdir()
    shell, _ = fork_snippet()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # the course's venv, active
    subprocess.run(["sh", "-e", "-c", shell], cwd=elsewhere, env=env, check=True, capture_output=True)
    (dest,) = [p for p in elsewhere.iterdir() if p.is_dir()]
    (package,) = [p for p in dest.iterdir() if p.is_dir()]
    server = subprocess.Popen([str(python), "-E", "-s", "-c", SERVER.format(name=package.name)], cwd=dest, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": os.environ["PATH"]})
    yield Fork(python, dest, package.name, server)
    server.stdin.close()
    server.wait(timeout=30)


RAMBLE = Turn.of("Let me think about the numbers first. " * 30)  # cut at a max_tokens of 60


def answering(tool_rounds: int = 0, seen: list | None = None, ramble_below: int = 0, **by_system: Turn):
    """Simulated: ``tool_rounds`` calls of the first tool offered (``add``), then an answer; a system
    prompt containing a key of ``by_system`` gets that turn instead, a ``max_tokens`` under
    ``ramble_below`` a reply too long for it. Keeps what it was sent in ``seen``."""
    def policy(request: dict) -> Turn:
        if seen is not None:
            seen.append(request)
        if request["max_tokens"] < ramble_below:
            return RAMBLE
        system = json.dumps(request.get("system"))
        for key, turn in by_system.items():
            if key in system:
                return turn
        results = sum(1 for m in request["messages"] if isinstance(m["content"], list)
                      for b in m["content"] if b.get("type") == "tool_result")
        if request.get("tools") and results < tool_rounds:
            return Turn.of([tool_use(request["tools"][0]["name"], {"a": results, "b": 1})])
        return Turn.of(f"Done after {results} tool calls.")
    return policy


def notes(messages: list[dict], source: str) -> int:
    """How many times a note of ``source`` is in a history (turn-scoped entries are kept in it)."""
    return json.dumps(messages).count(f"<!-- {source} -->")


# item 6: the front door ----------------------------------------------------------------------------

def test_the_fork_command_writes_a_package_from_any_folder_that_runs_the_readme_and_its_own_test(fork):
    from minimal_runtime.serve.policy import ToolThenAnswer
    written = [p for p in fork.dest.rglob("*") if p.is_file()]
    assert {p.relative_to(fork.dest).as_posix() for p in written} >= {
        f"{fork.name}/__init__.py", f"{fork.name}/README.md", f"test_{fork.name}.py", f"{fork.name}/core/agent.py"}
    worded = {p.name: m.group(0) for p in written if (m := COURSE_WORDS.search(p.read_text()))}
    assert worded == {}, f"course words in what the fork writes: {worded}"
    _, snippet = fork_snippet()
    emu = Emulator(model=MODEL, policy=ToolThenAnswer(rounds=2))  # serve's default: a tool per round, then text
    with emu.serve() as base_url:
        readme = fork.run_at(base_url, snippet.replace("print(result.status, result.final_text)",
                                                       "print(json.dumps([result.status, package.__all__]))"))
        assert readme[0] == "done"
        assert {"Agent", "RunStore", "RequestOptions", "RunState", "EndEvent", "tool_use_id"} <= set(readme[1])
        offline = subprocess.run([str(fork.python), "-E", "-s", "-m", "unittest", f"test_{fork.name}"], cwd=fork.dest,
                                 env={"PATH": os.environ["PATH"]}, capture_output=True, text=True, timeout=600)
        assert offline.returncode == 0 and f"Ran {suite_size()} tests" in offline.stderr, offline.stderr[-3000:]
        assert "skipped" not in offline.stderr  # its own suite, with nothing but anthropic and pydantic: no server
        before = len(emu.calls)
        env = {"PATH": os.environ["PATH"], "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "offline-emulator"}
        live = subprocess.run([str(fork.python), "-E", "-s", "-m", "unittest", "-v", f"test_{fork.name}.LiveSubset"],
                              cwd=fork.dest, env=env, capture_output=True, text=True, timeout=120)
    assert live.returncode == 0 and "Ran 2 tests" in live.stderr and "skipped" not in live.stderr, live.stderr
    assert len(emu.calls) > before  # the live subset ran against the server named
    print(line_report(fork.dest / fork.name))


# item 1: the run's state in the store ---------------------------------------------------------------

BUDGET = """
from {name}.features.budget import BudgetMonitor
kill_at = int(sys.argv[1])
hooks = HookRegistry().install(BudgetMonitor(budget=100, threshold=0.5))  # over the threshold from the first call
if kill_at:
    hooks.register(Point.POST_LLM_CALL, die, when=lambda e: len(e.agent.calls) == kill_at)
store = RunStore(sys.argv[2])
agent = Agent(client(), model="{model}", system="You add.", tools=[FunctionTool.of(lambda_add)], hooks=hooks, store=store)
result = agent.run("Add some numbers.") if not store.load().messages else agent.run()
print(json.dumps({{"status": result.status, "warnings": agent.messages and json.dumps(agent.messages).count("<!-- budget -->"),
                  "state": agent.state.values}}))
"""
ADD = '''
def lambda_add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)
'''


def test_a_warning_given_once_stays_once_across_two_kills(fork, tmp_path):
    features = fork.dest / fork.name / "features"  # a forker takes the feature it needs: it imports core/ only
    if not features.exists():
        features.mkdir()
        (features / "__init__.py").write_text("")
        shutil.copy(ROOT / "minimal_runtime" / "features" / "budget.py", features)
    emu = Emulator(model=MODEL, policy=answering(tool_rounds=5))
    script = ADD + BUDGET.format(name=fork.name, model=MODEL)
    with emu.serve() as url:
        fork.run_at(url, script, "3", str(tmp_path / "run"), killed=True)  # after the warned call's turn landed
        fork.run_at(url, script, "5", str(tmp_path / "run"), killed=True)  # resumed, and killed again
        run = fork.run_at(url, script, "0", str(tmp_path / "run"))
    assert run["status"] == "done" and run["warnings"] == 1 and run["state"] == {"budget.warned_at": 2}


PLANNED = """
from {name}.features.plan import PlanHook, PlanState, plan_tool
kill_at = int(sys.argv[1])
plan = PlanState()
hooks = HookRegistry().install(PlanHook(plan))
if kill_at:
    hooks.register(Point.POST_TOOL_CALL, die, when=lambda e: len(e.agent.calls) == kill_at)
store = RunStore(sys.argv[2])
agent = Agent(client(), model="{model}", system="You plan.", tools=[plan_tool(plan)], hooks=hooks, store=store)
plan.kept_in(agent.state)
result = agent.run("Append three lines.")
history = json.dumps(agent.messages)
print(json.dumps({{"status": result.status, "recited": history.count("<!-- plan -->"), "refused": history.count("no plan yet"),
                  "phases": [p.status for p in plan.plan.phases]}}))
"""


def test_the_plan_after_a_kill_is_the_uninterrupted_runs_on_a_fork_with_features_copied(fork, tmp_path):
    """Issue 50 item 3: PlanState lived in memory, so after a kill the plan was recited 3 times where
    the clean run recited it 13, and later updates failed with "there is no plan yet"."""
    from tests.runtime.test_durable_step import planning_policy
    features = fork.dest / fork.name / "features"
    features.mkdir(exist_ok=True)
    (features / "__init__.py").touch()
    shutil.copy(ROOT / "minimal_runtime" / "features" / "plan.py", features)
    script = PLANNED.format(name=fork.name, model=MODEL)
    with Emulator(model=MODEL, policy=planning_policy).serve() as url:
        clean = fork.run_at(url, script, "0", str(tmp_path / "clean"))
        fork.run_at(url, script, "2", str(tmp_path / "run"), killed=True)  # after the plan and one update
        resumed = fork.run_at(url, script, "0", str(tmp_path / "run"))
    assert clean == {"status": "done", "recited": 4, "refused": 0, "phases": ["done"] * 3}
    assert resumed == clean


SEGMENT = """
store = RunStore(sys.argv[1])
agent = Agent(client(), model="{model}", system=sys.argv[2], tools=[FunctionTool.of(lambda_add)], store=store)
result = agent.run("Add some numbers.") if not store.load().messages else agent.run(new_segment=sys.argv[3] == "new")
print(json.dumps({{"status": result.status, "error": result.error, "start": store.load().start}}))
"""


def test_a_resume_with_another_system_prompt_is_refused_in_one_line_or_goes_on_as_a_new_segment(fork, tmp_path):
    emu = Emulator(model=MODEL, policy=answering(tool_rounds=3))
    script = ADD + SEGMENT.format(model=MODEL)
    kill = script.replace("store=store)", "store=store, hooks=HookRegistry())\n"
                          "agent.hooks.register(Point.POST_LLM_CALL, die, when=lambda e: len(e.agent.calls) == 2)")
    with emu.serve() as url:
        fork.run_at(url, kill, str(tmp_path / "run"), "You add.", "", killed=True)
        calls = len(emu.calls)
        refused = fork.run_at(url, script, str(tmp_path / "run"), "You add, carefully.", "")
        assert len(emu.calls) == calls  # refused before any call
        assert refused["status"] == "error" and "\n" not in refused["error"]
        assert "another system prompt" in refused["error"] and "new_segment=True" in refused["error"]
        first = refused["start"]
        segment = fork.run_at(url, script, str(tmp_path / "run"), "You add, carefully.", "new")
    assert segment["status"] == "done", segment["error"]  # no 400 for thinking bound to the old prompt
    assert first["model"] == MODEL and first["options"] == {"max_tokens": 16_000, "betas": []}  # the default
    assert segment["start"]["system"] != first["system"] and segment["start"]["tools"] == first["tools"]


# item 2: an unfinished call's notes --------------------------------------------------------------------

NOTES = """
def once(event):  # a note given once per run, kept in the run's state
    if not event.agent.state.get("told"):
        event.agent.state.set("told", True)
        event.agent.inject_turn_scoped("once", "The figures are in thousands.")

hooks = HookRegistry()
hooks.register(Point.START, lambda e: e.agent.state.set("told", False))
hooks.register(Point.PRE_LLM_CALL, once)
hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("step", f"Step {{e.agent.steps + 1}}."))
store = RunStore(sys.argv[1])
agent = Agent(client(), model="{model}", system="You add.", tools=[FunctionTool.of(lambda_add)], hooks=hooks, store=store,
              max_tokens=int(sys.argv[2]))
if sys.argv[3] == "kill-before-send":
    hooks.register(Point.PRE_LLM_CALL, die)
statuses = [agent.run("Add some numbers.").status] if not store.load().messages else []
if sys.argv[3] == "cut":  # the reply is cut: the documented remedy is a larger cap, and run() again
    agent.configure(max_tokens=4096)
    statuses.append(agent.run().status)
elif sys.argv[3] == "kill-after-cut":
    die(None)
elif sys.argv[3] != "new":
    statuses.append(agent.run().status)
store.close()
saved = load_run(sys.argv[1])
print(json.dumps({{"statuses": statuses, "history": agent.messages, "record": saved.messages}}))
"""


@pytest.mark.parametrize("how", ["cut", "kill-after-cut", "kill-before-send"])
def test_an_unfinished_calls_notes_go_back_on_the_queue_in_order_exactly_once(fork, tmp_path, how):
    emu = Emulator(model=MODEL, policy=answering(tool_rounds=2, ramble_below=100))
    script = ADD + NOTES.format(model=MODEL)
    with emu.serve() as url:
        if how == "cut":  # cut at max_tokens, then a larger cap and run() again, in the same process
            run = fork.run_at(url, script, str(tmp_path / "run"), "60", "cut")
            assert run["statuses"] == ["truncated", "done"]
        else:
            fork.run_at(url, script, str(tmp_path / "run"), "60", how, killed=True)
            run = fork.run_at(url, script, str(tmp_path / "run"), "4096", "again")
            assert run["statuses"] == ["done"]
    assert run["history"] == run["record"]
    assert notes(run["history"], "once") == 1 and notes(run["history"], "step") == 3  # one per call that landed
    first = next(m for m in run["history"] if m.get("clear_at"))
    assert [b["text"].split("\n")[0] for b in first["content"]] == ["<!-- once -->", "<!-- step -->"]  # in order


def test_a_failed_calls_notes_go_back_once_and_a_fresh_note_of_the_same_source_wins(fork, tmp_path):
    emu = Emulator(model=MODEL, policy=answering(tool_rounds=1))
    emu.inject_fault(529)  # the first call fails (no retries in the script)
    script = ADD + NOTES.format(model=MODEL)
    run = fork.run(emu, script, str(tmp_path / "run"), "4096", "again")
    assert run["statuses"] == ["error", "done"]
    assert notes(run["history"], "once") == 1 and notes(run["history"], "step") == 2


# item 3: one end for every status ---------------------------------------------------------------------

ENDS = """
ended = []
hooks = HookRegistry()
hooks.register(Point.END, lambda e: ended.append([e.result.status, e.result.steps, bool(e.result.error)]))
def agent(system, **settings):
    return Agent(client(), model="{model}", system=system, tools=[FunctionTool.of(lambda_add)], hooks=hooks, **settings)
results = [agent("You add.").run("Add."), agent("You add.", max_steps=1).run("Add."),
           agent("You ramble.", max_tokens=60).run("Add."), agent("You refuse.").run("Add."),
           Agent(anthropic.Anthropic(base_url="http://127.0.0.1:9", max_retries=0), model="{model}", hooks=hooks).run("Hi.")]
print(json.dumps({{"ended": ended, "returned": [[r.status, r.steps, bool(r.error)] for r in results]}}))
"""


def test_every_status_ends_at_one_end_point_with_its_result(fork):
    refuse = Turn(content=[{"type": "text", "text": "I can't help with that."}], stop_reason="refusal")
    emu = Emulator(model=MODEL, policy=answering(tool_rounds=1, ramble=RAMBLE, refuse=refuse))
    run = fork.run(emu, ADD + ENDS.format(model=MODEL))
    assert [s for s, *_ in run["ended"]] == ["done", "max_steps", "truncated", "refused", "error"]
    assert run["ended"] == run["returned"]


# item 4: the request a forker needs ---------------------------------------------------------------------

OPTIONS = """
ran = []
hooks = HookRegistry()
hooks.register(Point.START, lambda e: ran.append("start"))
refusals = []
for bad in ({{"max_tokens": 200_000}}, {{"thinking": {{"type": "disabled"}}}}, {{"thinking": {{"type": "adaptive", "dispaly": "x"}}}}):
    try:
        Agent(client(), model="{model}", hooks=hooks, **bad)
    except ValueError as e:
        refusals.append(str(e))
agent = Agent(client(), model="{model}", hooks=hooks, thinking={{"type": "adaptive", "display": "summarized"}},
              output_config={{"effort": "low"}}, metadata={{"user_id": "u-1"}}, service_tier="auto",
              context_management={{"edits": [{{"type": "clear_thinking_20251015", "keep": "all"}}]}},
              betas=["context-management-2025-06-27"])
first = agent.run("Hi.").status
try:
    agent.configure(max_tokens=200_000)
except ValueError as e:
    refusals.append(str(e))
agent.configure(max_tokens=64_000, output_config={{"effort": "high"}})
second = agent.run("Again.").status
print(json.dumps({{"refusals": refusals, "ran": ran, "statuses": [first, second]}}))
"""


def test_request_options_are_one_typed_setting_checked_against_the_model_before_any_hook(fork):
    seen: list[dict] = []
    emu = Emulator(model=MODEL, policy=answering(seen=seen))
    run = fork.run(emu, OPTIONS.format(model=MODEL))
    assert run["statuses"] == ["done", "done"] and run["ran"] == ["start", "start"]  # no hook of a refused agent ran
    too_many, disabled, typo, reconfigured = run["refusals"]
    assert "200,000" in too_many and "128,000" in too_many and "200,000" in reconfigured
    assert "'disabled'" in disabled and "dispaly" in typo
    first, second = seen
    assert first["thinking"] == {"type": "adaptive", "display": "summarized"} and first["output_config"] == {"effort": "low"}
    assert first["metadata"] == {"user_id": "u-1"} and first["service_tier"] == "auto"
    assert first["context_management"]["edits"][0]["type"] == "clear_thinking_20251015"
    assert second["max_tokens"] == 64_000 and second["output_config"] == {"effort": "high"}


# item 5: plain functions as tools --------------------------------------------------------------------------

TOOLS = """
def add(a: int, b: int) -> str:
    '''Add two integers.

    Args:
        a: the first
        b: the second
    '''
    return str(a + b)

agent = Agent(client(), model="{model}", tools=[add])
result = agent.run("Add.")
try:
    Agent(client(), model="{model}", tools=[42])
    refused = None
except TypeError as e:
    refused = str(e)
print(json.dumps({{"status": result.status, "definitions": agent.tool_definitions, "history": agent.messages,
                  "refused": refused}}))
"""


def test_a_plain_function_is_a_tool_and_anything_else_is_told_what_a_tool_is(fork):
    def policy(request: dict) -> Turn:
        sent = sum(1 for m in request["messages"] if m["role"] == "assistant")
        return Turn.of([[tool_use("add", {"a": 2, "b": "two"})], [tool_use("add", {"a": 2, "b": 3})], "5."][sent])
    run = fork.run(Emulator(model=MODEL, policy=policy), TOOLS.format(model=MODEL))
    (definition,) = run["definitions"]
    assert definition["description"] == "Add two integers."
    assert definition["input_schema"]["properties"]["a"] == {"description": "the first", "title": "A", "type": "integer"}
    results = [b for m in run["history"] if m["role"] == "user" for b in m["content"] if b["type"] == "tool_result"]
    assert results[0]["is_error"] and results[0]["content"].startswith("Invalid input for add: b:")
    assert results[1]["content"] == "5" and run["status"] == "done"
    assert run["refused"].startswith("42 is not a tool: a tool is a plain function")


# item 7: names that say what happens ----------------------------------------------------------------------

NAMES = """
hooks = HookRegistry()
hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("step", f"Step {{e.agent.steps + 1}}."))
agent = Agent(client(), model="{model}", tools=[FunctionTool.of(lambda_add)], hooks=hooks)
agent.run("Add.")
names = [*package.__all__, *dir(Agent), *vars(agent)]
print(json.dumps({{"names": names, "record": agent.store.load().messages, "last": agent.last_request["messages"]}}))
"""


def test_turn_scoped_notes_are_named_so_kept_in_the_record_and_cleared_after_their_turn(fork):
    run = fork.run(Emulator(model=MODEL, policy=answering(tool_rounds=1)), ADD + NAMES.format(model=MODEL))
    assert [n for n in run["names"] if "ephemeral" in n.lower()] == []
    assert "inject_turn_scoped" in run["names"] and "TurnScopedQueue" in run["names"]
    entries = [m for m in run["record"] if m.get("clear_at") == "next_user_message"]
    assert [b["text"] for m in entries for b in m["content"]] == ["<!-- step -->\nStep 1.", "<!-- step -->\nStep 2."]
    assert entries[0] in run["last"]  # resent with the history, cleared: the model reads it on its own call only


# bad input to the fork command: one line, nothing written ------------------------------------------------

@pytest.mark.parametrize("name", ["json", "anthropic", "pydantic", "typing"])
def test_a_package_name_that_hides_a_module_the_fork_imports_is_refused(tmp_path, capsys, name):
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit, match=f"fork: '{name}' is the name of a module the package needs"):
        main(["fork", str(tmp_path / "out"), "--name", name])  # `import json` in the fork would import itself
    assert not (tmp_path / "out").exists()


def test_a_dest_that_is_a_file_is_one_line_not_a_traceback(tmp_path):
    from minimal_runtime.__main__ import main
    (tmp_path / "afile").write_text("mine")
    with pytest.raises(SystemExit, match=r"^fork: cannot write into .*afile: Not a directory$"):
        main(["fork", str(tmp_path / "afile")])
    assert (tmp_path / "afile").read_text() == "mine"


@pytest.mark.parametrize("name, why", [("__main__", "a name Python keeps for itself"),
                                       ("\uff4d\uff59agent", "is read by Python as 'myagent'"),
                                       ("\ufb01le_agent", "is read by Python as 'file_agent'")])
def test_a_name_the_forks_own_test_could_not_import_is_refused(tmp_path, name, why):
    """Issue 52 item 12: ``--name __main__`` and names Python normalises (NFKC) were accepted, and the
    fork's own test could not import them."""
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit) as refused:
        main(["fork", str(tmp_path / "out"), "--name", name])
    assert why in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_a_dangling_link_at_the_test_file_is_not_followed(tmp_path):
    from minimal_runtime.__main__ import main
    outside = tmp_path / "outside.py"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "test_agent.py").symlink_to(outside)
    with pytest.raises(SystemExit, match=r"^fork: .*test_agent\.py exists: choose another DEST or --name$"):
        main(["fork", str(tmp_path / "out")])
    assert not outside.exists() and not (tmp_path / "out" / "agent").exists()


@pytest.mark.parametrize("theirs", ["agent.py", f"agent{importlib.machinery.EXTENSION_SUFFIXES[0]}", "test_agent/", "agent"])
def test_a_fork_that_would_shadow_or_replace_what_dest_holds_is_refused_in_one_line(tmp_path, theirs):
    """Issue 61 item 6: with the user's ``agent.py`` in DEST, the fork's ``agent/`` package shadowed it."""
    from minimal_runtime.__main__ import main
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / theirs).mkdir() if theirs.endswith("/") else (tmp_path / "out" / theirs).write_text("mine")
    theirs = theirs.rstrip("/")
    with pytest.raises(SystemExit) as refused:
        main(["fork", str(tmp_path / "out")])
    assert str(refused.value).startswith(f"fork: {tmp_path / 'out' / theirs} exists")
    assert "\n" not in str(refused.value)
    assert ("would shadow it" in str(refused.value)) == (theirs != "agent")
    assert [p.name for p in (tmp_path / "out").iterdir()] == [theirs]


@pytest.mark.parametrize("when", ["while it writes", "after its last look"])
@pytest.mark.parametrize("theirs", ["test_agent.py", "agent", "agent.py"])
def test_a_file_made_in_dest_while_the_fork_writes_is_never_replaced(tmp_path, monkeypatch, theirs, when):
    """Issue 61 item 6: the fork's last step renamed over a file created in DEST while it wrote (3 of
    5 tries), and a user's agent.py made meanwhile was shadowed. The file is made while the fork
    writes its test file, or at the last moment the fork could see it (after its last look, before
    its moves): either way it is refused in one line, theirs is whole, nothing of the fork is left."""
    from minimal_runtime import fork
    from minimal_runtime.__main__ import main
    make = lambda: (tmp_path / "out" / theirs).write_text("mine")  # noqa: E731
    if when == "while it writes":
        monkeypatch.setattr(fork, "test_module", lambda name, real=fork.test_module: (make(), real(name))[1])
    else:
        looks = []

        def made_after_the_last_look(dest, name, real=fork.clash, **mine):
            found = real(dest, name, **mine)
            looks.append(found)
            if len(looks) == 2 and found is None:  # the look after writing, before the moves
                make()
            return found
        monkeypatch.setattr(fork, "clash", made_after_the_last_look)
    with pytest.raises(SystemExit) as refused:
        main(["fork", str(tmp_path / "out")])
    assert "exists" in str(refused.value) and "\n" not in str(refused.value)
    assert (tmp_path / "out" / theirs).read_text() == "mine"  # theirs, whole
    assert [p.name for p in (tmp_path / "out").iterdir()] == [theirs]  # nothing of the fork left


def test_a_full_disk_leaves_no_half_written_fork_and_says_so_in_one_line(tmp_path, monkeypatch):
    """On a full disk the fork was left half-written (the rerun said "exists") and the error was
    1,427 characters (shutil.copytree's list of every file)."""
    import errno as errnos
    import shutil as shutils

    from minimal_runtime.__main__ import main
    copy, copied = shutils.copyfile, []

    def full_after_five(source, target):
        if len(copied) == 5:
            raise OSError(errnos.ENOSPC, "No space left on device", str(target))
        copied.append(target)
        return copy(source, target)
    monkeypatch.setattr(shutils, "copyfile", full_after_five)
    with pytest.raises(SystemExit) as refused:
        main(["fork", str(tmp_path / "out")])
    assert str(refused.value) == f"fork: cannot write into {tmp_path / 'out'}: No space left on device"
    assert list((tmp_path / "out").iterdir()) == []  # nothing half-written, no staging folder
    monkeypatch.setattr(shutils, "copyfile", copy)
    main(["fork", str(tmp_path / "out")])  # the rerun writes it: nothing "exists"
    assert (tmp_path / "out" / "agent" / "core" / "agent.py").exists()


if __name__ == "__main__":
    print(line_report(ROOT / "minimal_runtime"))
