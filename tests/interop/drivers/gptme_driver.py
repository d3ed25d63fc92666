"""gptme 0.35.1 as its docs start it non-interactively: ``gptme -n --name NAME -m anthropic/MODEL PROMPT - PROMPT``
(two user turns chained with ``-``), its default tools (its "markdown" format: code blocks, ```shell to run a
command, ```complete to end; none in the API's ``tools``) and system prompt, the Anthropic SDK pointed at
serve by ``ANTHROPIC_BASE_URL``; its data, config and state folders in the run's own folder.

Model: claude-sonnet-5-5, which gptme's bundled model table knows offline and prices.
Its own record: the conversation log (``logs/NAME/conversation.jsonl``): each assistant message's
``metadata.usage`` (input, output, cache read, cache creation tokens) and ``metadata.cost``. Its title call
(claude-haiku-4-5) is a conversation of its own that the log does not keep: the tokens compared are the
main model's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from common import main

TURNS = ("List the files in this folder with the shell tool and say how many there are.",
         "Now count the lines of a.py.")
NAME = "interop"


def run(model: str, base_url: str) -> dict:
    work = Path(os.environ.get("INTEROP_WORKDIR", "."))
    (work / "a.py").write_text("print(1)\nprint(2)\n")
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url,
           **{f"XDG_{k}_HOME": str(work / "xdg" / k.lower()) for k in ("DATA", "CONFIG", "STATE", "CACHE")}}
    gptme = Path(sys.executable).parent / "gptme"
    done = subprocess.run([str(gptme), "-n", "--name", NAME, "-m", f"anthropic/{model}", TURNS[0], "-", TURNS[1]],
                          cwd=work, env=env, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    logs = list((work / "xdg" / "data").glob(f"gptme/logs/*{NAME}*/conversation.jsonl"))
    if done.returncode != 0 or not logs:
        raise RuntimeError(f"gptme exited {done.returncode}: {done.stdout[-1500:]} {done.stderr[-2000:]}")
    messages = [json.loads(x) for x in logs[0].read_text().splitlines() if x.strip()]
    answers = [m for m in messages if m["role"] == "assistant"]
    kept = [m.get("metadata") or {} for m in answers]
    if not all("usage" in k for k in kept):
        raise RuntimeError(f"{sum('usage' not in k for k in kept)} of {len(kept)} answers have no usage recorded")
    names = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
             "cache_read_tokens": "cache_read_input_tokens", "cache_creation_tokens": "cache_creation_input_tokens"}
    usage = {ours: sum(k["usage"].get(theirs) or 0 for k in kept) for theirs, ours in names.items()}
    tools = sum(1 for m in messages if m["role"] == "system" and m["content"].startswith("Ran "))  # "Ran command: `ls`"
    return {"tool_calls": tools, "usage": usage, "usage_models": sorted({k["model"].split("/")[-1] for k in kept}), "cost_usd": sum(k.get("cost") or 0 for k in kept),
            "record": "conversation.jsonl: each answer's metadata.usage and cost", "answers": len(answers)}


if __name__ == "__main__":
    main(run)
