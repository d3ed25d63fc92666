"""SIMULATED model behaviour for the running example. Not Claude: a fixed set of rules.

``SimulatedResearcher`` reads the request it is sent (only the request, like a model) and decides
the next action from the tool results it can see (the moves are in ``work.py``):

1. acknowledge the user with ``message_user``;
2. for each competitor: ``fetch`` its pricing page; on a 404, try the ``/plans`` URL; on a page
   that says "Loading prices", ``browse`` it instead; then write the price lines to ``notes/``;
3. write ``report.md`` (a table and the gaps) from the notes in view, message the user, answer.

That is 14 calls for the four competitors, including one failed fetch and its recovery.
``LongRunPolicy`` is the synthetic workload for long runs: it reads ``docs.example`` pages, one per
call, and now and then saves their key figures to a note, for a fixed number of turns, then answers.
"""

from __future__ import annotations

import random
import re

from ..emulator.policies import Turn, text
from .knowledge import UNSAVED
from .work import SingleAgent, act, batch, exchanges, pricing_items

TASK = "Compare the pricing pages of our four competitors (Acme, Globex, Initech, Umbrella) and write up the gaps."


class SimulatedResearcher(SingleAgent):
    """Simulated policy: completes the pricing comparison in 14 calls (see the module docstring)."""

    ack = "On it: I'll read the four pricing pages, compare the tiers and write up the gaps."
    done_message = "Done: report.md has the tier table and the gaps (free tier, SSO entry price, SLA)."
    answer = "The comparison is in report.md."

    def __init__(self) -> None:
        super().__init__(TASK, pricing_items())


class LongRunPolicy:
    """Simulated policy for long runs. Each call reads the next reference page; every
    ``note_every`` pages it writes the key figures read since its last note to ``notes/``; when the
    budget warning or a knowledge manager's unsaved-findings note is in its batch, it writes them
    at once. After ``turns`` calls it answers.
    Pages are about ``page_chars`` characters (500: 1,000 turns fit a 200K window). ``reasoning``:
    the tokens of (simulated) thinking it writes each call, on models that think; 0 by default. The
    API bills that reasoning as output, and again as input on every later call that sends its block
    back, whatever the block shows. With a ``seed`` each page's length is drawn once, from half to one
    and a half times ``page_chars``: real pages vary, and where a warning or a compaction falls
    against the reader's cadence moves with them, so a sweep over seeds shows how much of a result
    is that coincidence."""

    def __init__(self, turns: int, page_chars: int = 500, note_every: int = 10, reasoning: int = 0,
                 seed: int | None = None):
        self.turns, self.page_chars, self.note_every, self.seed = turns, page_chars, note_every, seed
        self.reasoning = ("Which page next, and which figures are worth a note? " * (reasoning // 10 + 1))[:reasoning * 4]

    def _chars(self, page: int) -> int:
        if self.seed is None:
            return self.page_chars
        # one draw per (seed, page), whatever the order of calls: a page keeps its length when re-asked
        return int(self.page_chars * (0.5 + random.Random(f"{self.seed}:{page}").random()))

    def __call__(self, request: dict) -> Turn:
        turn = self._act(request)
        return turn.model_copy(update={"thinking": self.reasoning}) if self.reasoning else turn

    def _act(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        n = len(done)
        if n >= self.turns:
            return Turn(content=[text(f"I have worked through {n} steps.")])
        since = [r for name, _, r, _ in done[next((i + 1 for i in range(n - 1, -1, -1) if done[i][0] == "write_file"), 0):]
                 if name == "fetch"]
        figures = [m.group(0) for r in since for m in [re.search(r"Key figure for section \d+: \d+", r)] if m]
        notes = batch(request)
        warned = "budget" in notes
        nudged = UNSAVED in notes.get("notes", "")  # a knowledge manager's note (chapter 07)
        if figures and (len(since) >= self.note_every or warned or nudged):
            why = "Saving before my context is compressed." if warned else "Saving what I have so far."
            return act(why, "write_file", path=f"notes/upto-{n}.md", content="\n".join(figures) + "\n")
        page = sum(name == "fetch" for name, *_ in done)
        return act(f"Reading page {page}.", "fetch", url=f"https://docs.example/page/{page}?chars={self._chars(page)}")
