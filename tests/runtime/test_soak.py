"""The soak test (slow: `make soak`, not part of `make test`): a 300-call run on a current model with
10% of requests failing (429, 500, 529), 30 kills (SIGKILL, before or after a call) each followed
by a resume, and random steers, some oversize (refused) and some with broken Unicode. Afterwards:
no turn lost or duplicated, every accepted steer in the history exactly once, and the cost in the
run record equals the cost of the calls the emulators actually answered."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minimal_runtime.core.messages import tool_uses
from minimal_runtime.core.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
TURNS, KILLS = 300, 30

CHILD = textwrap.dedent("""
    import json, os, random, signal, sys
    from pathlib import Path
    from minimal_runtime.core.steering import SteerTooLarge
    from minimal_runtime.core.store import RunStore
    from minimal_runtime.example import long_agent
    run_dir, life, kill_at, where, turns = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    rng = random.Random(life)
    agent, emu = long_agent(run_dir, turns, model="claude-sonnet-5-5", store=RunStore(run_dir / "run"))
    log = open(run_dir / "soak.jsonl", "a")

    def note(**event):
        log.write(json.dumps(event) + "\\n"); log.flush()

    def faults(event):  # one request in ten fails; the SDK retries it
        if rng.random() < 0.10:
            emu.inject_fault(rng.choice([429, 500, 529]))

    def billed(event):  # what the emulator answered, and so what was paid for
        note(kind="billed", cost=emu.calls[-1].cost)

    def steers(event):
        if rng.random() < 0.06:
            kind = rng.choice(["plain", "surrogate", "oversize"])
            text = {"plain": f"steer {life}-{len(event.agent.calls)}: keep going",
                    "surrogate": f"steer {life}-{len(event.agent.calls)}: caf\\udce9 \\ud800",
                    "oversize": "x" * 5_000_000}[kind]
            try:
                if event.agent.steer(text):
                    note(kind="steer", text=text[:40])
            except SteerTooLarge:
                note(kind="refused")

    def die(event):
        if len(event.agent.calls) + (where == "pre_llm_call") == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    agent.hooks.register("pre_llm_call", faults)
    agent.hooks.register("post_llm_call", billed)
    agent.hooks.register("post_llm_call", steers)
    if kill_at:
        agent.hooks.register(where, die)
    result = agent.run("Read the reference manual, page by page.") if life == 0 else agent.run()
    note(kind="end", status=result.status, error=result.error)
""")


def actions(messages: list[dict]) -> list[tuple[str, str]]:
    return [(c["name"], json.dumps(c["input"], sort_keys=True)) for m in messages if m["role"] == "assistant"
            for c in tool_uses(m)]


def reference(tmp_path: Path) -> list[dict]:
    """The same run, uninterrupted: no faults, no kills, no steers."""
    from minimal_runtime.example import long_agent
    agent, _ = long_agent(tmp_path / "reference", TURNS, model="claude-sonnet-5-5")
    agent.run("Read the reference manual, page by page.")
    return agent.messages


@pytest.mark.slow
def test_soak_300_calls_faults_kills_and_steers(tmp_path):
    rng = random.Random(2026)
    kills = sorted(rng.sample(range(2, TURNS), KILLS))
    lives = [(k, rng.choice(["pre_llm_call", "post_llm_call"])) for k in kills] + [(0, "")]
    for life, (kill_at, where) in enumerate(lives):
        for attempt in range(3):  # a life can end on an API error the SDK's retries could not absorb
            child = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), str(life), str(kill_at), where,
                                    str(TURNS)], cwd=ROOT, capture_output=True, text=True, timeout=600)
            if child.returncode == -9 or kill_at == 0 and child.returncode == 0:
                break
            assert child.returncode == 0, child.stderr[-3000:]
            saved = RunStore(tmp_path / "run").load()
            if kill_at and len(saved.calls) + 1 >= kill_at:  # its kill point is behind it: next life
                break
        else:
            pytest.fail(f"life {life} did not reach its kill point")

    saved = RunStore(tmp_path / "run").load()
    events = [json.loads(line) for line in (tmp_path / "soak.jsonl").read_text().splitlines()]
    pages = [int(c["input"]["url"].split("/page/")[1].split("?")[0])
             for m in saved.messages if m["role"] == "assistant" for c in tool_uses(m) if c["name"] == "fetch"]
    steered = [b["text"] for m in saved.messages if m["role"] == "user" for b in m["content"]
               if b.get("type") == "text" and b["text"].startswith("steer ")]
    accepted = [e["text"] for e in events if e["kind"] == "steer"]
    billed = sum(e["cost"] for e in events if e["kind"] == "billed")
    recorded = sum(c.cost for c in saved.calls) + sum(c.cost for c in saved.lost_calls)

    print(f"\nsoak: {len(saved.calls)} calls in the history, {len(saved.lost_calls)} paid for and lost to a kill, "
          f"{KILLS} kills, {len(lives)} lives; {len(accepted)} steers accepted, "
          f"{sum(e['kind'] == 'refused' for e in events)} oversize refused; pages read {len(pages)} "
          f"(distinct {len(set(pages))}); cost recorded ${recorded:.4f} vs answered ${billed:.4f}")
    assert saved.status == "done"
    assert actions(saved.messages) == actions(reference(tmp_path))  # no turn lost, none duplicated, in order
    assert pages == list(range(len(pages)))
    assert len(steered) == len(set(steered))  # no steer twice
    assert all(any(s.startswith(a.replace("\udce9", "\ufffd").replace("\ud800", "\ufffd")[:30]) for s in steered)
               for a in accepted)  # every accepted steer is in the history
    assert any("\ud800" in a for a in accepted)  # broken Unicode was among them ...
    assert not any("\ud800" in s or "\udce9" in s for s in steered)  # ... and arrives as U+FFFD
    assert recorded == pytest.approx(billed, rel=1e-9)
