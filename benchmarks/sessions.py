"""Issue 70's comparison, before chapter 11 exists: chapter 09's long reading task done (a) in one
session with chapter 09's cheapest compaction that keeps every code (simple + handoff), (b) in
sessions of a fixed size handed over through the progress file (``features/handoff.py``), (c) in
sessions with the memory tool alone (``features/memory.py``).

    .venv/bin/python benchmarks/sessions.py [PAGES] [SESSION_CALLS ...]

At 130 pages and sessions of 40 and 80 calls (the defaults) it writes ``benchmarks/sessions.json``
(``KEPT``), which chapter 11 reads; ``tests/course/test_kept_figures.py`` runs ``measure`` at a small
size and holds the kept file to its shape.

The reader is SIMULATED (chapter 09's rules, plus ending a session as asked: ``example/sessions.py``);
the accounting is the emulator's, exact. Its rules draw no coin, so there are no seeds to hold out:
a rerun prints the same table. Columns: cost; sessions; the cache written by the sessions' first
calls and its price (a fresh session writes its prefix again, unless it is the same bytes as an
earlier one's: the progress file rides in the task and changes it, the memory tool's task does not);
tokens of memory read (the memory tool's view results); codes recalled; pages fetched twice.

Measured (130 pages, sessions of 40 and 80 calls, 51 s): one session with simple + handoff $2.51;
sessions of 40: progress file $2.02 (7 sessions, 7,124 tokens written at the starts), memory tool
$1.95 (8 sessions, 608 written, 1,047 read from memory); sessions of 80: $3.00 and $2.93 (a session
that long carries its pages uncompacted: dearer than one compacted session). 8/8 codes and no page
redone in every row.
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.emulator.tokens import estimate_tokens  # noqa: E402
from minimal_runtime.example.compaction import figures, run  # noqa: E402
from minimal_runtime.example.sessions import fetched_pages, recalled, run_in_sessions  # noqa: E402
from minimal_runtime.provider.models import model_spec  # noqa: E402

MODEL, CHARS, LIMIT, WINDOW = "claude-sonnet-5-5", 8000, 60_000, 1_000_000  # chapter 09's
PAGES, SIZES = 130, [40, 80]
KEPT = Path(__file__).with_suffix(".json")


def memory_read(sessions) -> int:
    """Tokens of the memory tool's view results the sessions read (offline estimate)."""
    ids = {b["id"] for a, _, _ in sessions for m in a.messages if m["role"] == "assistant" for b in m["content"]
           if b.get("type") == "tool_use" and b["name"] == "memory" and b["input"].get("command") == "view"}
    return sum(estimate_tokens(b["content"] if isinstance(b["content"], str) else str(b["content"]))
               for a, _, _ in sessions for m in a.messages if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result" and b["tool_use_id"] in ids)


def session_row(name: str, r: dict) -> dict:
    sessions = r["sessions"]
    write_price = model_spec(MODEL).prices[0].write_5m / 1e6  # a 5-minute cache write
    starts = sum(a.calls[0].cache_creation_input_tokens for a, _, _ in sessions)
    fetched = fetched_pages(sessions)
    return {"strategy": name, "cost": sum(c.cost for a, _, _ in sessions for c in a.calls), "sessions": len(sessions),
            "per session": [round(sum(c.cost for c in a.calls), 3) for a, _, _ in sessions],
            "start writes": starts, "start $": starts * write_price, "memory read": memory_read(sessions),
            "recalled": recalled(sessions, r["reader"].planted), "redone": sum(n > 1 for n in collections.Counter(fetched).values())}


def measure(pages: int = PAGES, sizes: list[int] = SIZES) -> dict:
    """Every strategy's row at ``pages`` pages, sessions of each of ``sizes`` calls."""
    one = figures(run("simple + handoff", pages, LIMIT, window=WINDOW, chars=CHARS, model=MODEL))
    rows = [{"strategy": "one session, simple + handoff", "cost": one["cost"], "sessions": 1, "per session": [],
             "start writes": 0, "start $": 0.0, "memory read": 0, "recalled": one["recalled"], "redone": 0}]
    for size in sizes:
        for memory in (False, True):
            with tempfile.TemporaryDirectory() as work:
                r = run_in_sessions(pages, size, Path(work), chars=CHARS, model=MODEL, memory=memory, max_sessions=200)
                rows.append(session_row(f"sessions of {size}, {'memory tool' if memory else 'progress file'}", r))
    for r in rows:
        r["cost"], r["start $"] = round(r["cost"], 4), round(r["start $"], 4)
    return {"pages": pages, "chars": CHARS, "sizes": sizes, "model": MODEL, "rows": rows}


def text(data: dict) -> str:
    """The kept file's text: what a rerun writes, byte for byte."""
    return json.dumps(data, indent=1) + "\n"


def main(pages: int, sizes: list[int]) -> None:
    started = time.perf_counter()
    data = measure(pages, sizes)
    rows = data["rows"]
    if (pages, sizes) == (PAGES, SIZES):
        KEPT.write_text(text(data))
    print(f"{pages} pages, {MODEL}; the reader SIMULATED, the accounting exact ({time.perf_counter() - started:.0f} s)")
    print(f"{'strategy':<36} {'cost':>7} {'sessions':>8} {'start writes':>12} {'start $':>8} {'memory read':>11} "
          f"{'codes':>5} {'redone':>6}")
    for r in rows:
        print(f"{r['strategy']:<36} ${r['cost']:>6.2f} {r['sessions']:>8} {r['start writes']:>12,} ${r['start $']:>7.4f} "
              f"{r['memory read']:>11,} {r['recalled']:>3}/8 {r['redone']:>6}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(args[0] if args else PAGES, args[1:] or SIZES)
