"""A 300-turn message thread through ``python -m minimal_runtime serve``: what a thread saves on the
wire, and that it costs the same.

The Python SDK's tool runner, as its docstring shows it (threads on by default), runs a 300-tool-call
loop against the ``serve`` command (default policy, ``--tool-rounds 300``: SIMULATED behaviour), with
a system prompt and top-level ``cache_control`` as the message-threads page's example has it; then
the same loop with ``thread=False`` against a fresh ``serve``. Printed: the request bytes of the
first call and of the later ones (each measured as sent, on the wire), and both bills from the
``serve`` log's usage. Expected: the threaded calls after the first stay flat, the unthreaded grow
with the history, and the two bills are equal (a thread changes what is sent, not what is billed).

    python benchmarks/thread_300.py [TURNS]
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import anthropic
import httpx2
from anthropic import beta_tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from minimal_runtime.provider.cost import CallRecord  # noqa: E402

MODEL = "claude-sonnet-5-5"
SYSTEM = "You look up the weather, one city at a time, and answer briefly. " * 40


@beta_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}, 21 degrees, light wind from the west"


def run(turns: int, threaded: bool, folder: Path) -> tuple[list[int], list[CallRecord]]:
    log = folder / f"{'thread' if threaded else 'plain'}.jsonl"
    server = subprocess.Popen([sys.executable, "-m", "minimal_runtime", "serve", "--port", "0", "--model", MODEL,
                               "--tool-rounds", str(turns), "--log", str(log)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    sizes: list[int] = []
    try:
        server.stdout.readline()
        url = server.stdout.readline().strip().removeprefix("export ANTHROPIC_BASE_URL=")
        hook = {"request": [lambda request: sizes.append(len(request.read()))]}
        client = anthropic.Anthropic(base_url=url, api_key="dummy", http_client=httpx2.Client(event_hooks=hook))
        runner = client.beta.messages.tool_runner(
            model=MODEL, max_tokens=1024, system=SYSTEM, cache_control={"type": "ephemeral"}, tools=[get_weather],
            messages=[{"role": "user", "content": "What is the weather in each city on my list?"}],
            **({} if threaded else {"thread": False}))
        replies = list(runner)
        assert replies[-1].stop_reason == "end_turn", replies[-1]
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=60)
    records = [CallRecord.from_usage(json.loads(line)["usage"], MODEL) for line in log.read_text().splitlines()]
    return sizes, records


def main(turns: int = 300) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sizes, bill = run(turns, True, folder)
        plain_sizes, plain_bill = run(turns, False, folder)
    later = sizes[1:]
    cost, plain_cost = sum(r.cost for r in bill), sum(r.cost for r in plain_bill)
    print(f"{len(sizes)} calls each ({turns} tool rounds, then the answer), {MODEL}, through `serve`")
    print(f"request bytes, threaded:   first {sizes[0]:,}; later {min(later):,} to {max(later):,} "
          f"(mean {sum(later) / len(later):,.0f}); total {sum(sizes):,}")
    print(f"request bytes, unthreaded: first {plain_sizes[0]:,}; last {plain_sizes[-1]:,}; total {sum(plain_sizes):,} "
          f"({sum(plain_sizes) / sum(sizes):.0f}x the threaded total)")
    print(f"bill, threaded ${cost:.6f}; unthreaded ${plain_cost:.6f}; "
          f"per-call usage identical: {[r.model_dump() for r in bill] == [r.model_dump() for r in plain_bill]}")
    print(f"prompt tokens {sum(r.prompt_tokens for r in bill):,} of which read from cache "
          f"{sum(r.cache_read_input_tokens for r in bill) / sum(r.prompt_tokens for r in bill):.1%}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
