"""The fork, done as the README says: ``core/`` and ``provider/`` copied into a package of their own,
in a fresh venv holding only ``anthropic`` and ``pydantic`` (the project's own versions), running the
README's snippet and a small agent (a tool, a hook, a store) against the emulator over HTTP.

``python tests/runtime/test_fork.py`` prints the size of what a fork copies.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("core", "provider")

AGENT = '''
from pydantic import BaseModel
from myagent import Agent, FunctionTool, HookRegistry, Point, RunStore

class Pair(BaseModel):
    a: int
    b: int

seen = []
hooks = HookRegistry()
hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_ephemeral("steps", f"I am at step {e.agent.steps + 1}."))
hooks.register(Point.POST_TOOL_CALL, lambda e: seen.append(e.tool_result["content"]))
add = FunctionTool("add", "Add two numbers.", Pair, lambda p: str(p.a + p.b))
agent = Agent(anthropic.Anthropic(), model="claude-sonnet-5-5", tools=[add], hooks=hooks, store=RunStore("runs/2"))
result = agent.run("Add 2 and 3.")
agent.store.close()
saved = RunStore("runs/2").load()
print(json.dumps({"status": result.status, "text": result.final_text, "seen": seen, "steps": result.steps,
                  "stored": len(saved.messages), "held": len(agent.messages), "layout": agent.layout.__name__}))
'''


def fork_snippet() -> tuple[str, str]:
    """The README's fork section: its shell lines and its Python snippet."""
    section = (ROOT / "README.md").read_text().split("### Forking the runtime", 1)[1]
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return shell, python


def policy(request: dict) -> "object":
    """Simulated: call ``add`` once when it is offered, then answer with what it returned."""
    from minimal_runtime.emulator import Turn, tool_use
    last = request["messages"][-1]
    results = [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    if request.get("tools") and not results:
        return Turn.of([tool_use("add", {"a": 2, "b": 3})])
    if results:
        return Turn.of(f"The sum is {results[-1]['content']}.")
    return Turn.of(f"Hello ({len(json.dumps(last))} bytes read).")


def fresh_venv(where: Path) -> Path:
    """A venv with only anthropic and pydantic, at this project's versions; from uv's cache when it can."""
    if shutil.which("uv") is None:
        pytest.skip("uv is not installed")
    pins = [f"anthropic=={version('anthropic')}", f"pydantic=={version('pydantic')}"]
    subprocess.run(["uv", "venv", "-q", str(where), "--python", sys.executable], check=True, capture_output=True)
    python = where / "bin" / "python"
    for offline in (["--offline"], []):
        done = subprocess.run(["uv", "pip", "install", "-q", *offline, "--python", str(python), *pins],
                              capture_output=True, text=True)
        if done.returncode == 0:
            return python
    pytest.skip(f"could not install {' '.join(pins)} (no cache, no registry): {done.stderr.strip()[-200:]}")


def test_a_fork_of_core_and_provider_runs_alone_on_a_current_model(tmp_path):
    from minimal_runtime.emulator import Emulator
    python = fresh_venv(tmp_path / "venv")
    shell, snippet = fork_snippet()
    work = tmp_path / "work"
    (work / "minimal_runtime").mkdir(parents=True)
    for name in COPIED:
        shutil.copytree(ROOT / "minimal_runtime" / name, work / "minimal_runtime" / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["sh", "-e", "-c", shell], cwd=work, check=True)
    shutil.rmtree(work / "minimal_runtime")  # the fork must not lean on the course's package
    emu = Emulator(model="claude-sonnet-5-5", policy=policy)
    with emu.serve() as base_url:
        env = {"PATH": os.environ["PATH"], "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "offline-emulator"}
        script = f"import anthropic, json\n{snippet}\n{AGENT}"
        done = subprocess.run([str(python), "-E", "-s", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    first, agent = done.stdout.strip().splitlines()[-2:]
    assert first.startswith("done Hello (")  # the README's snippet, as printed
    run = json.loads(agent)
    assert run == {"status": "done", "text": "The sum is 5.", "seen": ["5"], "steps": 2, "stored": run["held"],
                   "held": run["held"], "layout": "turn_scoped_layout"}
    assert len(emu.calls) == 3
    print(line_report())


def line_counts(path: Path) -> dict[str, int]:
    """Non-blank lines of one module: code, comments (whole-line), docstrings."""
    source = path.read_text()
    doc_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                doc_lines.update(range(first.lineno, first.end_lineno + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    code_lines = {n for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip
                  for n in range(t.start[0], t.end[0] + 1)} - doc_lines
    lines = source.splitlines()
    comments = {i for i, line in enumerate(lines, 1) if line.strip().startswith("#")} - code_lines - doc_lines
    return {"code": len(code_lines), "comments": len(comments), "docstrings": len(doc_lines),
            "blank": sum(1 for line in lines if not line.strip()), "total": len(lines)}


def line_report() -> str:
    rows, total = [], dict.fromkeys(("code", "comments", "docstrings", "blank", "total"), 0)
    for name in COPIED:
        for path in sorted((ROOT / "minimal_runtime" / name).glob("*.py")):
            counts = line_counts(path)
            total = {k: total[k] + counts[k] for k in total}
            rows.append(f"  {name}/{path.name:<14} " + "  ".join(f"{k} {v:>4}" for k, v in counts.items()))
    return "\n".join(["what a fork copies (core/ + provider/):", *rows,
                      "  all                 " + "  ".join(f"{k} {v:>4}" for k, v in total.items())])


if __name__ == "__main__":
    print(line_report())
