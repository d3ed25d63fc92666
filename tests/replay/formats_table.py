"""The table of docs/replay.md "What each format records": every format ``replay`` reads, written at
test time by this project's fixtures (``cli_logs.py``, ``cline_logs.py``, ``replay.current``,
``replay.samples``), imported, and its ``recorded`` row set beside the log's own cost (where the log
carries one) and beside the log's own usage priced by the price table (``the log itself``).

    PYTHONPATH=. .venv/bin/python -m tests.replay.formats_table   # prints the table the page holds

``tests/replay/test_formats_table.py`` checks that the page holds exactly what this prints."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

# (format, what its file records, how recorded is priced); the writer is in ``fixtures``
ABOUT = {
    "serve --log": ("every request and response, usage per call",
                    "the model's table prices; the log's own split of each prompt"),
    "Claude Code session": ("messages, usage per call (output a placeholder)",
                            "table prices; output estimated from what each call wrote"),
    "Claude Code stream-json": ("messages, usage per call, the run's totals and total_cost_usd",
                                "table prices; output from modelUsage"),
    "pi session": ("a tree of entries, usage and cost per call", "table prices; failed requests left out"),
    "opencode export": ("messages of steps, tokens and cost per step", "table prices"),
    "Cline CLI 3 session": ("messages, metrics (usage, cost) per answer", "table prices"),
    "Cline task folder": ("history, usage and cost per request in ui_messages.json", "table prices"),
    "Cline ui_messages.json alone": ("usage and cost per request, no conversation",
                                     "table prices; placeholders sized to each prompt"),
    "Codex exec --json": ("items, usage per turn only, no model", "n/a unless --model (estimates)"),
    "Codex session rollout": ("Responses API items, a token_count per call (hits only)",
                              "n/a for OpenAI models; --model prices it"),
    "OpenHands output.jsonl": ("events, token_usages per response", "table prices"),
    "OpenHands event stream": ("events, llm_metrics (token_usages, accumulated_cost)", "table prices"),
    "mini-swe-agent (Anthropic)": ("chat messages, litellm usage per response, instance_cost",
                                   "table prices; the log's misses mirrored"),
    "mini-swe-agent (DeepSeek)": ("the same, DeepSeek's hit/miss usage", "DeepSeek's list of each call's time"),
    "Gemini CLI chat": ("messages, tokens per answer (input, cached, output, thoughts)", "Gemini's list (gemini.py)"),
}


def fixtures(directory: Path) -> dict[str, Path]:
    from minimal_runtime.replay.current import write_current
    from minimal_runtime.replay.samples import write_samples
    from tests.replay.cli_logs import (write_cline_cli, write_codex, write_codex_rollout, write_gemini_chat,
                                       write_mini_swe_agent, write_openhands_events, write_opencode, write_pi)
    from tests.replay.cline_logs import write_cline
    from tests.replay.test_serve_log import served_run
    current = write_current(directory / "current", "claude-sonnet-4-6", rounds=5)
    cline = write_cline(directory / "cline")
    alone = write_cline(directory / "cline-alone")
    alone.unlink()
    alone.with_name("task_metadata.json").unlink()
    served_run(directory / "serve.log")
    return {
        "serve --log": directory / "serve.log",
        "Claude Code session": current["session"],
        "Claude Code stream-json": current["stream"],
        "pi session": write_pi(directory / "pi"),
        "opencode export": write_opencode(directory / "opencode"),
        "Cline CLI 3 session": write_cline_cli(directory / "cline-cli"),
        "Cline task folder": cline,
        "Cline ui_messages.json alone": alone.with_name("ui_messages.json"),
        "Codex exec --json": write_codex(directory / "codex"),
        "Codex session rollout": write_codex_rollout(directory / "rollout", model="gpt-5-codex"),
        "OpenHands output.jsonl": write_samples(directory / "samples")["openhands"],
        "OpenHands event stream": write_openhands_events(directory / "openhands"),
        "mini-swe-agent (Anthropic)": write_mini_swe_agent(directory / "mini-a", "anthropic", miss_every=3),
        "mini-swe-agent (DeepSeek)": write_mini_swe_agent(directory / "mini-d", "deepseek", miss_every=3),
        "Gemini CLI chat": write_gemini_chat(directory / "gemini"),
    }


def _share(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or ours != ours or theirs != theirs or not theirs:
        return "n/a"
    return f"{ours / theirs - 1:+.1%}"


def measure() -> list[tuple[str, str, str, str, str]]:
    """(format, records, priced, recorded against the log's own cost, against its usage priced by the table)."""
    from minimal_runtime.replay import load, replay
    from minimal_runtime.replay.report import rows
    out = []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, path in fixtures(Path(tmp)).items():
            runs = load(path)  # a file's every run: a Claude Code log's sub-agents are in its own total
            recorded = sum(replay(run, "recorded").cost for run in runs)
            usage = [rows(run, [])[0]["cost"] for run in runs if any(c.usage for c in run.calls)]
            logged = None if not usage or None in usage else sum(usage)
            own = [run.cost_usd for run in runs if run.cost_usd is not None]
            out.append((name, *ABOUT[name], _share(recorded, sum(own) if own else None), _share(recorded, logged)))
    return out


def render(measured: list[tuple[str, str, str, str, str]]) -> str:
    lines = ["| format | what it records | how `recorded` is priced | recorded vs the log's own cost | "
             "recorded vs its usage priced |", "|---|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in measured]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(measure()))
