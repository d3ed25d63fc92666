"""SIMULATED executors for chapters 05 and 06. Not Claude: fixed rules, stated here.

``PagesExecutor`` reads the reference pages of its objective ("Read pages A to B and save their key
figures to PATH"), one per call, writes the note, and reports done. What it does near its cap
depends only on what its batch says:

- the runtime's max-steps warning (``<!-- steps -->``, which asks for a structured partial
  report): unless every page is already read, it reports ``partial`` with the pages it has not
  read as what remains;
- a generic wrap-up note (``<!-- wrapup -->``): it obeys, and stops with a plain "Wrapped up."
  answer, which looks exactly like finishing;
- nothing: it keeps reading until the cap stops it.

``FilesystemExecutor`` reads its pages and keeps notes. Under the naive reminder ("I persist
important state to disk.") it has two habits, each a seeded coin per page: it saves the same
content again under a second name (probability 0.4), and it re-reads its latest note before moving
on (0.5). Under the refined rules it does neither.
"""

from __future__ import annotations

import random
import re

from ..emulator.policies import Turn, text
from ..features.filesystem import NAIVE_RULES
from .work import act, batch, exchanges


def pages_objective(first: int, last: int, path: str) -> str:
    return f"Read pages {first} to {last} and save their key figures to {path}"


def _parse(objective: str) -> tuple[int, int, str]:
    m = re.search(r"Read pages (\d+) to (\d+) and save their key figures to (\S+)", objective)
    return int(m.group(1)), int(m.group(2)), m.group(3)


def _objective(request: dict) -> str:
    first = request["messages"][0]["content"]
    return first if isinstance(first, str) else first[0]["text"]


class PagesExecutor:
    def __init__(self, page_chars: int = 500):
        self.page_chars = page_chars

    def __call__(self, request: dict) -> Turn:
        first, last, path = _parse(_objective(request))
        done = exchanges(request["messages"])
        read = [i["url"] for n, i, *_ in done if n == "fetch"]
        figures = [m.group(0) for n, _, r, _ in done if n == "fetch"
                   for m in [re.search(r"Key figure for section \d+: \d+", r)] if m]
        notes = batch(request)
        unread = last - (first + len(read)) + 1
        if "steps" in notes and unread > 0:  # all read: the three calls left suffice to finish
            return act("Out of steps: reporting what is left.", "report", status="partial",
                        did=f"Read {len(read)} pages: {'; '.join(figures)}",
                        remains=pages_objective(first + len(read), last, path))
        if "wrapup" in notes:
            return Turn(content=[text("Wrapped up.")])
        if first + len(read) <= last:
            page = first + len(read)
            return act(f"Reading page {page}.", "fetch", url=f"https://docs.example/page/{page}?chars={self.page_chars}")
        if not any(n == "write_file" for n, *_ in done):
            return act("Saving the key figures.", "write_file", path=path, content="\n".join(figures) + "\n")
        return act("Reporting back.", "report", status="done", did=f"Read {len(read)} pages: {'; '.join(figures)}")


class FilesystemExecutor:
    def __init__(self, seed: int = 0, page_chars: int = 500, duplicate_rate: float = 0.4, reread_rate: float = 0.5):
        self.rng, self.page_chars = random.Random(seed), page_chars
        # the two habits' rates under the naive reminder: chosen, not measured (a SIMULATED agent)
        self.duplicate_rate, self.reread_rate = duplicate_rate, reread_rate
        self.habits: dict[tuple[str, int], tuple[bool, bool]] = {}  # (objective, page) -> (duplicate, re-read)

    def __call__(self, request: dict) -> Turn:
        objective = _objective(request)
        first, last, path = _parse(objective)
        naive = batch(request).get("filesystem") == NAIVE_RULES
        done = exchanges(request["messages"])
        reads = [i["url"] for n, i, *_ in done if n == "fetch"]
        page = first + len(reads) - 1  # the page in hand
        if reads:
            duplicate, reread = self.habits.setdefault((objective, page), (self.rng.random() < self.duplicate_rate,
                                                                              self.rng.random() < self.reread_rate))
            note, copy = f"notes/page-{page}.md", f"notes/page-{page}-saved.md"
            since = [(n, i) for n, i, *_ in done[max(i for i, d in enumerate(done) if d[0] == "fetch"):]]
            written = [i["path"] for n, i in since if n == "write_file"]
            content = next(r for n, i, r, _ in reversed(done) if n == "fetch")
            if note not in written:
                return act("Saving the page.", "write_file", path=note, content=content)
            if naive and duplicate and copy not in written:
                return act("Persisting it somewhere safe too.", "write_file", path=copy, content=content)
            if naive and reread and not any(n == "read_file" for n, _ in since):
                return act("Checking my note is still there.", "read_file", path=note)
        if first + len(reads) <= last:
            page = first + len(reads)
            return act(f"Reading page {page}.", "fetch", url=f"https://docs.example/page/{page}?chars={self.page_chars}")
        return act("Reporting back.", "report", status="done", did=f"Read pages {first} to {last}; notes in notes/.")
