"""mini-swe-agent 2.4.6 as its docs start it: the ``mini`` command (``-y``: no confirmations,
``--exit-immediately``: no follow-up prompt), its default config (``mini.yaml``: the ``bash`` tool
through litellm's Anthropic route, ``ANTHROPIC_BASE_URL`` pointing it at serve), one task. It ends
when the model runs its documented submit command (``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``).

Model: claude-sonnet-5-5, which the cost map litellm ships (read offline) prices, as mini-swe-agent needs
(it stops on a model the map does not price); the map's cache-read price for it is not serve's (the table).
Its own record: the trajectory it saves (``-o``): ``info.model_stats`` (calls, ``instance_cost``) and
each assistant message's ``extra.response.usage`` (litellm's counts, read back into the API's names).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from common import main

TASK = "Count the Python files in this folder and report the number."


def api_usage(u: dict) -> dict:
    """litellm's usage of an Anthropic answer in the API's names: its ``prompt_tokens`` adds the cache's."""
    read, write = u.get("cache_read_input_tokens") or 0, u.get("cache_creation_input_tokens") or 0
    return {"input_tokens": u["prompt_tokens"] - read - write, "output_tokens": u["completion_tokens"],
            "cache_read_input_tokens": read, "cache_creation_input_tokens": write}


def run(model: str, base_url: str) -> dict:
    work = Path(os.environ.get("INTEROP_WORKDIR", "."))
    (work / "a.py").write_text("print(1)\n")
    trajectory = work / "trajectory.json"
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "MSWEA_CONFIGURED": "true", "MSWEA_SILENT_STARTUP": "1",
           "MSWEA_GLOBAL_CONFIG_DIR": str(work / "config")}
    done = subprocess.run([sys.executable, "-m", "minisweagent.run.mini", "-y", "--exit-immediately", "-m",
                           f"anthropic/{model}", "-t", TASK, "-o", str(trajectory)],
                          cwd=work, env=env, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    if not trajectory.exists():
        raise RuntimeError(f"mini exited {done.returncode} with no trajectory: {done.stdout[-1500:]} {done.stderr[-1500:]}")
    saved = json.loads(trajectory.read_text())
    info = saved["info"]
    if info["exit_status"] != "Submitted":
        raise RuntimeError(f"mini did not finish by its submit command: exit status {info['exit_status']!r}")
    usages = [api_usage(m["extra"]["response"]["usage"]) for m in saved["messages"]
              if m.get("role") == "assistant" and (m.get("extra") or {}).get("response")]
    if len(usages) != info["model_stats"]["api_calls"]:
        raise RuntimeError(f"{len(usages)} answers kept for {info['model_stats']['api_calls']} calls")
    tools = sum(len(m["extra"].get("actions") or []) for m in saved["messages"] if m.get("role") == "assistant")
    return {"tool_calls": tools, "usage": {k: sum(u[k] for u in usages) for k in usages[0]},
            "cost_usd": info["model_stats"]["instance_cost"], "record": "trajectory: messages' usage, model_stats"}


if __name__ == "__main__":
    main(run)
