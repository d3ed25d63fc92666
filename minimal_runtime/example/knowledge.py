"""A SIMULATED knowledge manager (not Claude: fixed rules), for the emulator to answer KM calls with.

It reads the transcript the KM is sent and reacts to five things, each at most once per subject:

1. repeated failure: the same tool failed twice in a row -> a high-urgency nudge for both roles;
2. unsaved findings: three content-heavy calls (fetch, browse) since the last ``write_file`` -> a
   high-urgency nudge;
3. an action outside the step: an executor's task names one site and its last call went to another
   -> a nudge for the executor;
4. missed persistence: a pricing page was read and the run moved to the next competitor without a
   note about it -> a nudge;
5. goal drift on a reference task ("reference pages A to B"): the last page fetched is not the
   next one without a note -> a high-urgency nudge naming the next page.

And guidance for the step about to be taken, once per competitor's pricing page: a page that only
says "Loading prices" renders client-side (bullets about using the browser); a page read in full
gets two bullets about what the note should keep. Anything else: nothing (most runs).

``quote_rate``: with that probability a guidance run also tries to pass a sentence of the page it
read straight into a bullet, as a careless KM would; the board must refuse it (chapter 07 counts
the attempts and the refusals). ``paraphrase_rate``: with that probability a guidance run restates
what the page asks in its own word order instead (``paraphrase``), as a KM taken in by an injected
instruction would: no six words in a row are the page's, so the board's quote filter cannot see it
(chapter 07 measures what gets through); ``paraphrase_run``: the most words of the page it keeps in a
row (4; 1 restates word by word). ``delay``: seconds each answer takes, a slow KM model.
"""

from __future__ import annotations

import json
import random
import re
import time

from ..emulator.policies import Turn, text, tool_use
from ..features.delegation import TASK_LINE
from .web import COMPETITORS

NEXT_PAGE = "The next page is "  # the phrase of the goal-drift nudge; chapter 08's reader reacts to it

CONTENT = {"fetch", "browse"}
UNSAVED = "go into a note"  # the phrase of the unsaved-findings nudge; LongRunPolicy reacts to it


def _calls(transcript: str) -> list[tuple[str, dict, str, bool]]:
    """(tool, input, result, is_error) from the transcript's [call] / [result] lines."""
    out, pending = [], None
    for line in transcript.splitlines():
        if line.startswith("[call] "):
            name, _, args = line[7:].partition(" ")
            pending = (name, json.loads(args or "{}"))
        elif line.startswith("[result") and pending:
            out.append((*pending, line.split("] ", 1)[-1], line.startswith("[result ERROR")))
            pending = None
    return out


def _site(url: str) -> str:
    return url.split("//", 1)[-1].split("/", 1)[0]


def paraphrase(page: str, words: int = 16, run: int = 4) -> str:
    """What a page asks, restated: its first ``words`` words, tags aside, in runs of at most ``run``
    words joined by "then" (so no ``run + 2`` consecutive words are the page's), as a plain
    statement of the next steps."""
    chunks, chunk, count = [], [], 0
    for token in re.findall(r"\S+", re.sub(r"<[^>]+>", " ", page)):
        n = len(re.findall(r"\w+", token))
        if chunk and count + n > run:
            chunks.append(" ".join(chunk))
            chunk, count = [], 0
        chunk.append(token)
        count += n
        words -= n
        if words <= 0:
            break
    chunks.append(" ".join(chunk))
    return "Next, in order, " + ", then ".join(c.strip(".") for c in chunks if c) + "."


class SimulatedKM:
    def __init__(self, seed: int = 0, quote_rate: float = 0.0, paraphrase_rate: float = 0.0, delay: float = 0.0,
                 paraphrase_run: int = 4):
        self.rng, self.quote_rate, self.paraphrase_rate, self.delay = random.Random(seed), quote_rate, paraphrase_rate, delay
        self.paraphrase_run = paraphrase_run
        self.said: set[str] = set()
        self.quotes: list[str] = []  # the pastes it tried
        self.paraphrases: list[str] = []  # the restated instructions it tried

    def __call__(self, request: dict) -> Turn:
        if self.delay:
            time.sleep(self.delay)
        transcript = request["messages"][-1]["content"][0]["text"]
        calls = _calls(transcript)
        nudges = [n for n in self._nudges(transcript, calls) if n["title"] not in self.said]
        guidance = self._guidance(calls)
        self.said |= {n["title"] for n in nudges}
        if not nudges and not guidance:
            return Turn(content=[text("nothing")])
        return Turn(content=[tool_use("emit", {"nudges": nudges, "guidance": guidance})])

    def _nudges(self, transcript: str, calls: list) -> list[dict]:
        out = []
        if len(calls) >= 2 and calls[-1][3] and calls[-2][3] and calls[-1][0] == calls[-2][0]:
            tool, where = calls[-1][0], calls[-1][1].get("url", "")
            out.append({"title": f"repeated failure: {tool} {where}", "reason": "two errors in a row", "role": "both",
                        "urgency": "high", "text": f"{tool} failed twice in a row on {where or 'this input'}; "
                                                   "a different route comes before a third try."})
        last_write = max((i for i, c in enumerate(calls) if c[0] == "write_file"), default=-1)
        read_since = [c for c in calls[last_write + 1:] if c[0] in CONTENT and not c[3]]
        if len(read_since) >= 3:
            out.append({"title": f"unsaved findings after call {len(calls)}", "reason": f"{len(read_since)} pages unsaved",
                        "role": "both", "urgency": "high",
                        "text": f"{len(read_since)} pages read since the last note: their figures {UNSAVED} "
                                "before the next page."})
        task = re.search(re.escape(TASK_LINE) + r".*?(https?://\S+)", transcript)
        if task and calls and calls[-1][0] in CONTENT and _site(calls[-1][1].get("url", "")) != _site(task.group(1)):
            out.append({"title": f"outside the step: {calls[-1][1].get('url')}", "reason": "another site than the task's",
                        "role": "executor", "urgency": "normal",
                        "text": f"This step is about {_site(task.group(1))}; {_site(calls[-1][1]['url'])} belongs to "
                                "another step."})
        pages = re.search(r"reference pages (\d+) to (\d+)", transcript)
        if pages and calls and calls[-1][0] in CONTENT:  # goal drift on the reference task
            noted = {int(m.group(1)) for c in calls if c[0] == "write_file" and not c[3]
                     for m in [re.fullmatch(r"notes/page-(\d+)\.md", c[1].get("path", ""))] if m}
            step = next((k for k in range(int(pages.group(1)), int(pages.group(2)) + 1) if k not in noted), None)
            went = re.search(r"/page/(\d+)", calls[-1][1].get("url", ""))
            if step is not None and went and int(went.group(1)) != step:
                out.append({"title": f"goal drift: page {went.group(1)} at step {step}", "reason": "off the step",
                            "role": "both", "urgency": "high",
                            "text": f"{NEXT_PAGE}{step}; page {went.group(1)} is not part of this step."})
        read = [c for c in calls if c[0] in CONTENT and not c[3] and "$" in c[2]]
        for earlier, later in zip(read, read[1:]):
            a, b = _site(earlier[1]["url"]), _site(later[1]["url"])
            between = calls[calls.index(earlier) + 1:calls.index(later)]
            if a != b and not any(c[0] == "write_file" for c in between):
                out.append({"title": f"missed persistence: {a}", "reason": f"moved on to {b} without a note",
                            "role": "both", "urgency": "normal",
                            "text": f"The prices read on {a} are not in a note yet; that note comes before more reading."})
        return out

    def _guidance(self, calls: list) -> dict[str, list[str]]:
        if not calls or calls[-1][0] not in CONTENT or calls[-1][3]:
            return {}
        url, page = calls[-1][1].get("url", ""), calls[-1][2]
        if f"guidance {url}" in self.said:
            return {}
        self.said.add(f"guidance {url}")
        name = next((n for n, u in COMPETITORS.items() if _site(u) == _site(url)), None)
        bullets = []  # only the pricing pages have step-critical advice worth a line
        if name and "Loading prices" in page:
            bullets = [f"{name}'s page renders its prices in the browser: browse shows them, fetch does not.",
                       "One browse of the same address is enough; the note follows right after."]
        elif name:
            bullets = [f"The {name} note keeps each tier's name, price and what it includes, as the page states them.",
                       "Prices are per user per month unless the page says otherwise."]
        if self.quote_rate and self.rng.random() < self.quote_rate:
            words = re.findall(r"\S+", page)
            self.quotes.append(" ".join(words[:14]))
            bullets.append(self.quotes[-1])  # a careless KM pastes the page itself
        if self.paraphrase_rate and self.rng.random() < self.paraphrase_rate:
            self.paraphrases.append(paraphrase(page, run=self.paraphrase_run))
            bullets.append(self.paraphrases[-1])  # a KM taken in by the page restates its instruction
        if not bullets:
            return {}
        return {"executor": bullets, "planner": bullets[:1]}


class RunClock:
    """Simulated seconds for a run with a KM: each working-agent call advances it by ``per_call``
    (a PRE_LLM_CALL hook), so the KM's 10 s, 15 s and 90 s limits play out the same on every run."""

    def __init__(self, per_call: float = 4.0):
        self.now, self.per_call = 0.0, per_call

    def __call__(self) -> float:
        return self.now

    def advance(self, event) -> None:
        self.now += self.per_call


# -- chapter 07's experiment: a long run with the KM or without (the chapter and ``make experiment CHAPTER=07``) --

KM_MODEL = "claude-haiku-5-5"
LONG_TASK = "Read the reference manual, page by page, and keep its key figures in notes."


def knowledge_manager(clock, *, pool=None, span: int = 6, kind=None, lint=None, format_block=None, triggers=None,
                      online: bool | None = None, **km_options):
    """The runtime's KM on ``KM_MODEL`` with a formatter, a lint and a ``Triggers`` class (the
    learner's, in the chapter; the runtime's where None), each run completing before the next
    working call unless ``pool`` says otherwise. ``span``: how many words of a page in a row make a
    quote; ``kind``: the KM's class; ``km_options``: the simulated KM's (``SimulatedKM``)."""
    from ..features import knowledge as feature
    from .backend import make_client
    client, _ = make_client(SimulatedKM(**km_options), model=KM_MODEL, online=online)
    board = feature.Board(clock, feature.RawSection(span), **({"lint": lint} if lint else {}),
                          **({"format_block": format_block} if format_block else {}))
    return (kind or feature.KnowledgeManager)(client, KM_MODEL, clock, pool=pool or feature.SerialPool(), board=board,
                                              triggers=(triggers or feature.Triggers)(clock))


def wired(clock, km=None):
    """A working agent's hooks: the run clock, and the KM's three hooks (inject, after-call triggers, the ticker)."""
    from ..core.hooks import HookRegistry, Point
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, clock.advance)
    if km is not None:
        hooks.install(km)
        hooks.register(Point.POST_LLM_CALL, lambda e: km.tick(e.agent))
    return hooks


def longest_unsaved(agent) -> int:
    """The most pages the agent fetched in a row without writing a note."""
    streak = best = 0
    for m in agent.messages:
        for b in m["content"] if m["role"] == "assistant" else []:
            if b.get("type") == "tool_use":
                streak = streak + 1 if b["name"] == "fetch" else 0 if b["name"] == "write_file" else streak
                best = max(best, streak)
    return best


def pages_read(agent) -> int:
    return sum(b.get("name") == "fetch" for m in agent.messages if m["role"] == "assistant" for b in m["content"])


def km_run(with_km: bool, *, turns: int = 120, model: str = "claude-sonnet-5-5", lint=None, format_block=None,
           triggers=None, online: bool | None = None, workdir=None, **agent_kwargs) -> dict:
    """One long run of the simulated executor (``LongRunPolicy``: a note every ten pages, or at once
    when a nudge says pages read are not in one), with the KM or without; the run clock advances 4 s
    a working call. ``online``: models answer instead of the simulated executor and KM. Returns the
    agent, the KM (None without), the batches by clock time, and the result."""
    import tempfile

    from ..core.hooks import Point
    from .agents import long_agent
    clock = RunClock(per_call=4.0)
    km = knowledge_manager(clock, lint=lint, format_block=format_block, triggers=triggers, online=online) if with_km else None
    batches = []
    hooks = wired(clock, km)
    hooks.register(Point.POST_LLM_CALL, lambda e: batches.append((clock(), e.batch)))
    agent, _ = long_agent(workdir or tempfile.mkdtemp(prefix="km-"), turns, model=model, online=online, hooks=hooks,
                          name="executor", **agent_kwargs)
    result = agent.run(LONG_TASK)
    return {"agent": agent, "km": km, "batches": batches, "result": result}
