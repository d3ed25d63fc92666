"""Today's Claude Code files, made at test time: a headless session against the emulator.

    run = generate_claude_code_logs(dest, "claude-sonnet-5-5")
    run.streams    # dest/turn-1.stream.jsonl, dest/turn-2.stream.jsonl (--output-format stream-json --verbose)
    run.sessions   # the session files Claude Code wrote under dest/home/.claude/projects/
    run.exchanges  # what `python -m minimal_runtime serve` was sent and answered (dest/serve.jsonl)

Turn 1 asks a question the emulator's policy answers with two tool rounds (a ``Read`` of a file in
the project folder, then a ``Bash`` ``ls``), turn 2 resumes the session with a follow-up (two more
rounds), so the second process resends the whole history from Claude Code's own session file.
Nothing Claude Code sends or writes is committed: ``dest`` is a folder of the caller's choosing
(the suite's is ``.interop/last-run/``, gitignored). Claude Code runs with a throwaway HOME and
config folder, a dummy key, telemetry and nonessential traffic off, and every proxy variable
pointed at a closed loopback port, so it can reach nothing but the emulator.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .harness import Exchange, serve_emulator
from .policy import ToolRounds

TASK = "Look at notes.txt and the files next to it, then tell me what is there."
FOLLOW_UP = "Check them once more and summarize."
TIMEOUT = 300  # seconds per turn; a turn takes a few seconds


@dataclass
class ClaudeCodeRun:
    model: str
    dest: Path
    streams: list[Path] = field(default_factory=list)
    sessions: list[Path] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # a turn that exited non-zero or reported an error
    tool_uses: int = 0  # tool_use blocks Claude Code ran, both turns


def claude_env(base_url: str, home: Path) -> dict[str, str]:
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, any outside request fails at once
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-offline-interop",
        "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "HTTPS_PROXY": closed, "HTTP_PROXY": closed, "https_proxy": closed, "http_proxy": closed,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    }


def generate_claude_code_logs(dest: Path, model: str, claude: Path | None = None) -> ClaudeCodeRun:
    """Run Claude Code headless against a fresh emulator on ``model``, two turns; write its
    stream-json output and session files under ``dest``. ``claude``: the executable (default: the
    suite's pinned install, installed if missing)."""
    if claude is None:
        from .install import ensure_clients
        claude = ensure_clients().claude
    dest = Path(dest).resolve()
    home, project = dest / "home", dest / "project"
    project.mkdir(parents=True, exist_ok=True)
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (project / "notes.txt").write_text("The build passes. Next: the release notes.\n")
    policy = ToolRounds(rounds=2, prefer={"Read": {"file_path": str(project / "notes.txt")},
                                          "Bash": {"command": "ls", "description": "List the project files"}})
    run = ClaudeCodeRun(model=model, dest=dest)
    with serve_emulator(policy, model, log=dest / "serve.jsonl") as (base_url, exchanges):
        session = None
        for n, prompt in enumerate((TASK, FOLLOW_UP), start=1):
            command = [str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose", "--model", model,
                       "--allowedTools", "Read", "Bash(ls:*)"]
            if session:
                command += ["--resume", session]
            try:
                done = subprocess.run(command, cwd=project, env=claude_env(base_url, home), capture_output=True,
                                      text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as e:
                run.errors.append(f"turn {n}: no answer after {TIMEOUT} s")
                partial = e.stdout or ""
                out, code, stderr = partial.decode(errors="replace") if isinstance(partial, bytes) else partial, None, ""
            else:
                out, code, stderr = done.stdout, done.returncode, done.stderr
            stream = dest / f"turn-{n}.stream.jsonl"
            stream.write_text(out)
            (dest / f"turn-{n}.stderr.txt").write_text(stderr)
            run.streams.append(stream)
            events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            session = next((e.get("session_id") for e in events if e.get("session_id")), session)
            result = next((e for e in events if e.get("type") == "result"), None)
            run.tool_uses += sum(1 for e in events if e.get("type") == "assistant"
                                 for b in e["message"].get("content", []) if b.get("type") == "tool_use")
            if code not in (0, None) or result is None or result.get("is_error"):
                run.errors.append(f"turn {n}: exit {code}, result {json.dumps(result)[:500] if result else 'missing'}, "
                                  f"stderr {stderr[-500:]!r}")
    run.exchanges = list(exchanges)  # read from serve's log once it has stopped
    run.sessions = sorted((home / ".claude" / "projects").glob("**/*.jsonl"))
    return run
