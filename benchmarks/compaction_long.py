"""Chapter 09's main table over the long run: 500 pages, about 1,000 calls (the notebook shows 130).

    .venv/bin/python benchmarks/compaction_long.py [PAGES]

The strategies, limits and reader are the notebook's (``minimal_runtime/example/compaction.py``);
only the length changes, so *none* overflows the window here instead of being projected to. The
reader and the server's summaries are SIMULATED; the accounting is the emulator's. Several minutes
on one core: a benchmark, not part of ``make test``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.example.compaction import figures, run, show  # noqa: E402

NAMES = ["none", "offload", "ladder", "rungs", "server compaction", "on demand", "simple + handoff",
         "offload + server compaction"]


def main(pages: int = 500, limit: int = 60_000) -> None:
    started = time.perf_counter()
    table, trims = {}, ""
    for name in NAMES:
        r = run(name, pages, limit)
        table[name] = figures(r)
        if name == "rungs":  # rung 2 leaves exchanges out only past the limit: a long run's figure
            trims = f"rungs: trim before send acted on {r['features'][0].trimmed} of {table[name]['calls']} calls"
        print(f"  {name}: {table[name]['calls']} calls", file=sys.stderr, flush=True)
    print(f"{len(NAMES)} runs of {pages} pages (limits at {limit:,} tokens) in {time.perf_counter() - started:.0f} s")
    show(table, table["none"]["cost"])
    print(trims)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
