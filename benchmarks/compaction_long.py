"""Chapter 09's main table over the long run: 500 pages, about 1,000 calls (the notebook shows 130).

    .venv/bin/python benchmarks/compaction_long.py [PAGES]

The strategies, limits and reader are the notebook's (``minimal_runtime/example/compaction.py``);
only the length changes, so *none* overflows the window here instead of being projected to. Then
the chapter's second summary form: offload + server compaction again, with the reader writing a
summary that pairs each page with its saved copy. The reader and the server's summaries are
SIMULATED; the accounting is the emulator's. No rule draws a coin, so a rerun writes the same file.

At 500 pages it writes ``benchmarks/compaction_long.json`` (``KEPT``), which chapter 09 reads
(``make bench`` regenerates it); another length prints only. Several minutes on one core: a
benchmark, not part of ``make test``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_runtime.example.compaction import PairingReader, code_for, figures, planted_pages, run, show  # noqa: E402

NAMES = ["none", "offload", "ladder", "rungs", "server compaction", "on demand", "simple + handoff",
         "offload + server compaction"]
PAIRED = "offload + server compaction"  # the strategy the chapter reruns with the paired summary
PAGES, LIMIT = 500, 60_000
KEPT = Path(__file__).with_suffix(".json")


def row(r: dict) -> dict:
    """A run's table row, plus the planted pages it missed and its server compactions."""
    f = figures(r)
    f.update(restorable=list(f["restorable"]), cost=round(f["cost"], 4), peak=round(f["peak"], 4), read=round(f["read"], 4))
    f["missed"] = [p for p in r["reader"].planted if code_for(p) not in r["result"].final_text]
    f["compactions"] = sum(len(c.compactions) for c in r["agent"].calls)
    return f


def measure(pages: int = PAGES, limit: int = LIMIT, progress=None) -> dict:
    """Every strategy over ``pages`` pages, then the paired-summary rerun: the kept file's content."""
    rows, trims = {}, ""
    for name in NAMES:
        r = run(name, pages, limit)
        rows[name] = row(r)
        if name == "rungs":  # rung 2 leaves exchanges out only past the limit: a long run's figure
            trims = f"rungs: trim before send acted on {r['features'][0].trimmed} of {rows[name]['calls']} calls"
        if progress:
            progress(f"{name}: {rows[name]['calls']} calls")
    paired = row(run(PAIRED, pages, limit, reader=PairingReader(pages, planted_pages(pages))))
    return {"made by": f".venv/bin/python benchmarks/compaction_long.py {pages}", "pages": pages, "limit": limit,
            "rows": rows, "paired": {PAIRED: paired}, "trims": trims}


def text(data: dict) -> str:
    """The kept file's bytes for ``data`` (one writer, so a test can compare them)."""
    return json.dumps(data, indent=1) + "\n"


def report(data: dict) -> None:
    rows = data["rows"]
    show(rows, rows["none"]["cost"])
    print(data["trims"])
    for name, f in {**{n: rows[n] for n in data["paired"]}, **{f"{n}, paired summary": f for n, f in data["paired"].items()}}.items():
        print(f"{name}: {f['recalled']}/{f['codes']} codes (missed pages {f['missed']}), "
              f"{f['compactions']} server compactions, ${f['cost']:.2f}")


def main(pages: int = PAGES, limit: int = LIMIT) -> dict:
    started = time.perf_counter()
    data = measure(pages, limit, progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    print(f"{len(NAMES) + 1} runs of {pages} pages (limits at {limit:,} tokens) in {time.perf_counter() - started:.0f} s")
    report(data)
    if pages == PAGES and limit == LIMIT:
        KEPT.write_text(text(data))
        print(f"wrote {KEPT.relative_to(Path.cwd()) if KEPT.is_relative_to(Path.cwd()) else KEPT} (chapter 09 reads it)")
    return data


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else PAGES)
