"""A SIMULATED long reader for chapter 09 (not Claude: fixed rules), and the pages it reads.

The task: reference pages ``0`` to ``pages - 1``, each fetched (``chars`` characters) and noted to
``notes/page-N.md``: two calls a page. A few pages carry an access code in the middle of the page
(``Access code for page P: ...``), past what a head-and-tail preview shows; at the end the task
asks for those codes. The reader's rules:

1. **It knows only what it can see.** A page is done when its note's path appears anywhere in
   what it reads (its own write, a compact form, a summary, an appendix); the next page is the
   first one not done. Nothing is remembered between calls.
2. **It recovers through paths only.** At the end it answers each asked code it can see; for one
   it cannot see it reads back (``read_file``, once per path) a saved copy of that page or its
   handoff note, if their path is in view. It never fetches a page again to find a code.
3. **It writes notes when asked.** When its batch asks for a handoff note or for notes at a new
   tenth of its window, it writes ``notes/handoff.md``: every code it can see, the pages done, its
   next page. If an earlier note exists that it cannot see in full, it reads it back first.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path

from pydantic import BaseModel

from ..core.tools import FunctionTool, ToolBox
from ..emulator.policies import Turn, text
from ..features.compaction import HANDOFF_PATH
from ..features.recall import appendix_lines, grouped_texts, texts_of
from .web import fetch_text
from .work import act, batch

CODE = "Access code for page {page}: {code}"
_CODE = re.compile(r"Access code for page (\d+): ([A-Z0-9-]+)")
_NOTE = re.compile(r"notes/page-(\d+)\.md")
_SAVED = re.compile(r"saved at (\S+?);")
_PAIRED = re.compile(r"https://docs\.example/page/(\d+)[^\s;]*(?: |\n- )(\.observations/[^\s;\]]+)")
_DONE = re.compile(r"Done: pages 0 to (\d+)\b")


def code_for(page: int) -> str:
    return "AC-" + hashlib.sha256(f"code {page}".encode()).hexdigest()[:6].upper()


def task_text(pages: int, planted: list[int]) -> str:
    return (f"Read https://docs.example/page/0 to https://docs.example/page/{pages - 1}; save a short note on each "
            f"to notes/page-N.md. At the end, report the access codes given on pages "
            f"{', '.join(map(str, planted))}.")


class Url(BaseModel):
    url: str


def long_pages(chars: int, planted: list[int]) -> FunctionTool:
    """``fetch`` over the docs pages, ``chars`` characters each; a planted page carries its access
    code in the middle."""
    def fetch(args: Url) -> str:
        page = fetch_text(f"{args.url.split('?')[0]}?chars={chars}")
        found = re.search(r"/page/(\d+)", args.url)
        if found and int(found.group(1)) in planted:
            n = int(found.group(1))
            middle = len(page) // 2
            page = page[:middle] + f" {CODE.format(page=n, code=code_for(n))}. " + page[middle:]
        return page
    return FunctionTool("fetch", "Fetch a URL over HTTP and return the page as text.", Url, fetch, reads_outside=True)


class LongReader:
    def __init__(self, pages: int, planted: list[int]):
        self.pages, self.planted = pages, planted
        self.last_seen: list[dict] = []  # the messages the model read on its last call
        self._info: dict[int, tuple[dict, dict]] = {}
        self._last: tuple[list, tuple] = ([], ())  # the last request's messages and what they added up to

    def __call__(self, request: dict) -> Turn:
        messages = self.last_seen = request["messages"]
        seen = self._gather(messages)
        notes = batch(request)
        asked = any(HANDOFF_PATH in t for t in notes.values())  # HANDOFF_ASK, or NOTES_ASK at a new tenth
        last = seen["calls"][-1] if seen["calls"] else None
        if last and last[0] == "read_file" and last[1].get("path") == HANDOFF_PATH:
            return self._handoff(seen)
        if asked:
            if seen["handoff_written"]:
                return act("Reading my handoff note before I update it.", "read_file", path=HANDOFF_PATH)
            return self._handoff(seen)
        n = next((k for k in range(self.pages) if k not in seen["done"]), None)
        if n is None:
            return self._answer(seen)
        fetched = [(args, result, error) for name, args, result, error in seen["calls"]
                   if name == "fetch" and re.search(rf"/page/{n}$", args.get("url", ""))]
        if fetched and not fetched[-1][2] and last and last[0] == "fetch":
            return act(f"Saving page {n}.", "write_file", path=f"notes/page-{n}.md", content=fetched[-1][1][:200])
        return act(f"Reading page {n}.", "fetch", url=f"https://docs.example/page/{n}")

    def _handoff(self, seen: dict) -> Turn:
        upto = next((k for k in range(self.pages) if k not in seen["done"]), self.pages) - 1
        lines = ["Confirmed facts:", *(f"- {CODE.format(page=p, code=c)}" for p, c in sorted(seen["codes"].items())),
                 f"Done: pages 0 to {upto} (notes in notes/page-N.md)" if upto >= 0 else "Done: nothing yet",
                 f"Next: page {upto + 1}"]
        return act("Writing my handoff note.", "write_file", path=HANDOFF_PATH, content="\n".join(lines))

    def _answer(self, seen: dict) -> Turn:
        missing = [p for p in self.planted if p not in seen["codes"]]
        # what it has found so far goes into its reply, which no masking touches
        found = "".join(f"{CODE.format(page=p, code=c)}. " for p, c in sorted(seen["codes"].items()) if p in self.planted)
        read = {args.get("path") for name, args, _, _ in seen["calls"] if name == "read_file"}
        for p in missing:
            path = seen["saved"].get(p)
            if path and path not in read:
                return act(f"{found}Reading my saved copy of page {p}.", "read_file", path=path)
        for path in seen["appendix_files"]:
            if missing and path not in read:
                return act(f"{found}Reading the saved appendix for the pages' copies.", "read_file", path=path)
        if missing and seen["handoff_written"] and HANDOFF_PATH not in read:
            return act(f"{found}Reading my handoff note for the codes.", "read_file", path=HANDOFF_PATH)
        answers = ", ".join(f"page {p}: {seen['codes'].get(p, 'unknown')}" for p in self.planted)
        return Turn(content=[text(f"All {self.pages} pages are noted. Access codes: {answers}.")])

    def _gather(self, messages: list[dict]) -> dict:
        """What the reader can see, message by message (each message read once: the emulator hands
        an unchanged message back as the same object, so a request that extends the last one goes on
        from what the last one added up to)."""
        last, summed = self._last
        if last and len(last) <= len(messages) and all(a is b for a, b in zip(last, messages)):
            uses, calls, done, codes, saved, files, handoff_written = (
                dict(summed[0]), list(summed[1]), set(summed[2]), dict(summed[3]), dict(summed[4]), list(summed[5]), summed[6])
        else:
            last, uses, calls, done, codes, saved, files, handoff_written = [], {}, [], set(), {}, {}, [], False
        for message in messages[len(last):]:
            cached = self._info.get(id(message))
            if cached is None or cached[0] is not message:
                cached = (message, _message_info(message))
                self._info[id(message)] = cached
            info = cached[1]
            done |= info["done"]
            saved.update(info["saved"])
            files += [f for f in info["appendix_files"] if f not in files]
            codes.update(info["codes"])
            handoff_written |= info["handoff"]
            uses.update(info["uses"])
            for use_id, result, error, path in info["results"]:
                if use_id in uses:
                    name, args, page = uses[use_id]
                    calls.append((name, args, result, error))
                    if page is not None and path:
                        saved[page] = path
        self._last = (list(messages), (uses, calls, done, codes, saved, files, handoff_written))
        return {"appendix_files": files, "calls": calls, "done": done, "codes": codes, "saved": saved, "handoff_written": handoff_written}


class PairingReader(LongReader):
    """The same reader, but the server's summary is written as a model told to keep each page next
    to its saved copy might write it (SIMULATED too: the emulator asks the policy for the summary
    when it has a ``summarize``). The emulator's own summary lists the URLs and the paths apart."""

    def summarize(self, seen: dict, instructions: str | None = None) -> str:
        lines = appendix_lines(grouped_texts([m for m in seen["messages"] if m.get("role") in ("user", "assistant")]))
        return "\n".join(["[SIMULATED summary: each page with its saved copy, one line each]", *lines])


def _message_info(message: dict) -> dict:
    strings = texts_of([message])
    joined = "\n".join(strings)
    done = {int(m) for m in _NOTE.findall(joined)}
    for upto in _DONE.findall(joined):
        done |= set(range(int(upto) + 1))
    saved = {int(p): path for p, path in _PAIRED.findall(joined)}  # an appendix line: a page and its saved copy
    appendix_files = re.findall(r"\.observations/appendix-[0-9a-f]+\.txt", joined)
    written = any(b.get("type") == "tool_use" and (b.get("input") or {}).get("path") == HANDOFF_PATH
                  for b in message.get("content") if isinstance(message.get("content"), list)) \
        or f"My handoff note ({HANDOFF_PATH})" in joined or f"in {HANDOFF_PATH}]" in joined
    info = {"appendix_files": appendix_files, "saved": saved, "done": done, "codes": {int(p): c for p, c in _CODE.findall(joined)}, "handoff": written,
            "uses": {}, "results": []}
    for block in message.get("content") if isinstance(message.get("content"), list) else []:
        if block.get("type") == "tool_use":
            args = block.get("input") or {}
            page = re.search(r"/page/(\d+)$", args.get("url", "")) if block["name"] == "fetch" else None
            info["uses"][block["id"]] = (block["name"], args, int(page.group(1)) if page else None)
        elif block.get("type") == "tool_result":
            content = block.get("content", "")
            if isinstance(content, list):
                content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
            path = _SAVED.search(content[:400])  # a placeholder naming where the whole output was saved
            info["results"].append((block.get("tool_use_id"), content, bool(block.get("is_error")), path and path.group(1)))
    return info


def reader_agent(workdir: Path, reader: LongReader, *, chars: int, model: str, layout=None, hooks=None,
                 offload: int | None = None, client=None, online: bool | None = None, **agent_kwargs):
    """An executor-role agent for the reader: the long pages and the workspace's file tools.
    ``online``: a model answers instead of the reader (``make experiment CHAPTER=09``).
    Returns (agent, emulator or None online, the workspace root)."""
    from ..core.agent import Agent
    from ..features.filesystem import Offloader
    from .agents import SteppingClock
    from .backend import make_client
    from .tools import Workspace, pricing_tools
    workspace = Path(workdir) / "workspace"
    made, emulator = make_client(reader, model=model, clock=SteppingClock(), online=online)
    files = [t for t in pricing_tools(Workspace(workspace), []) if t.name in ("read_file", "write_file")]
    agent_kwargs.setdefault("max_steps", 2 * reader.pages + 40)
    agent = Agent(client(made) if client else made, model=model, toolbox=ToolBox([long_pages(chars, reader.planted), *files]),
                  name="executor", layout=layout,
                  hooks=hooks, offloader=Offloader(workspace, offload) if offload else None, **agent_kwargs)
    return agent, emulator, workspace


class TailCompaction:
    """PRE_LLM_CALL: past ``limit`` tokens, everything before the last ``keep_last`` tool calls is
    summarized (the mechanical summary and the appendix of every URL and path it names) and the
    history becomes ``rewrite(task, messages, summary, keep_last)``: the chapter's exercise
    (``compact_keeping_tail``). Whether the model accepts the result is the API's to say."""

    def __init__(self, rewrite, limit: int, keep_last: int = 5):
        self.rewrite, self.limit, self.keep_last = rewrite, limit, keep_last
        self.task: str | None = None
        self.rewrites = 0

    def install(self, hooks) -> None:
        from ..core.hooks import Point
        hooks.register(Point.PRE_LLM_CALL, self.before_call)

    def before_call(self, event) -> None:
        from ..features.compaction import APPENDIX_HEAD, SUMMARY_HEAD, answered_calls, context_tokens, mechanical_summary
        agent = event.agent
        if self.task is None:
            self.task = "\n".join(texts_of(agent.messages[:1]))
        if context_tokens(agent) < self.limit:
            return
        calls = answered_calls(agent.messages)
        cut = calls[-self.keep_last][0] if len(calls) >= self.keep_last else len(agent.messages)
        gone = agent.messages[:cut]
        summary = "\n".join([SUMMARY_HEAD, mechanical_summary(gone), APPENDIX_HEAD,
                             *appendix_lines(grouped_texts(gone))])
        agent.replace_history(self.rewrite(self.task, agent.messages, summary, self.keep_last))
        self.rewrites += 1


# -- the chapter's runs: one function per strategy, shared by the notebook and the long benchmark ----

def planted_pages(pages: int, codes: int = 8) -> list[int]:
    """``codes`` pages spread evenly over the run (the middle of each stretch), so recall is measured
    early, late and in between, not at one position that happens to suit one strategy."""
    return [pages * (2 * k + 1) // (2 * codes) for k in range(codes)]


def strategy(name: str, keeper, limit: int, window: int):
    """(features, a layout wrapper: a function, "feature" for the first feature's own, or None; offload threshold)."""
    from ..features.compaction import ContextGauge, ManusLadder, SimpleCompaction, drop_block
    from ..features.compaction_rungs import CreateroleRungs
    from ..features.server_compaction import OnDemandCompaction, ServerClearing, ServerCompaction
    gauge = ContextGauge(window)
    table = {
        "none": lambda: ([], None, None),
        "offload": lambda: ([], None, 4000),
        "ladder": lambda: ([ManusLadder(keeper, limit, handoff=True), gauge], None, None),
        "ladder, drop_block": lambda: ([ManusLadder(keeper, limit, handoff=True, strip_thinking=False), gauge], drop_block, None),
        "ladder, thinking kept": lambda: ([ManusLadder(keeper, limit, handoff=True, strip_thinking=False), gauge], None, None),
        "rungs": lambda: ([CreateroleRungs(keeper, limit)], "feature", None),
        "rungs, thinking kept": lambda: ([CreateroleRungs(keeper, limit, strip_thinking=False)], "feature", None),
        "clearing, every call": lambda: ([ServerClearing(limit, keep=3)], "feature", None),
        "clearing, 30k at least": lambda: ([ServerClearing(limit, keep=3, clear_at_least=30_000)], "feature", None),
        "server compaction": lambda: ([ServerCompaction(limit)], "feature", None),
        "on demand": lambda: ([OnDemandCompaction(limit)], "feature", None),
        "simple + handoff": lambda: ([SimpleCompaction(keeper, limit, handoff=True), gauge], None, None),
        "offload + server compaction": lambda: ([ServerCompaction(limit), gauge], "feature", 4000),
    }
    return table[name]()


def run(name: str, pages: int, limit: int, *, window: int = 1_000_000, chars: int = 8000,
        model: str = "claude-sonnet-5-5", extra=(), wrap=None, reader: "LongReader | None" = None,
        online: bool | None = None, **agent_kwargs) -> dict:
    """One run of the long reader under strategy ``name``: ``extra`` features installed after the
    strategy's (or a function of the strategy's features that returns them: a feature that watches
    the strategy, as ``CompactionNotice`` does), ``wrap`` a further layout wrapper around the
    strategy's layout. ``online`` and ``agent_kwargs`` (``max_cost_usd``) as in ``reader_agent``."""
    from ..core.context import turn_scoped_layout
    from ..core.hooks import HookRegistry
    from ..features.compaction import ThinkingLedger
    from ..features.recall import Keeper, Produced
    from . import scratch_dir
    reader, work = reader or LongReader(pages, planted_pages(pages)), scratch_dir()
    keeper = Keeper(work / "workspace")
    features, own, offload = strategy(name, keeper, limit, window)
    features = [*features, *(extra(features) if callable(extra) else extra)]
    produced, ledger, hooks = Produced(keeper), ThinkingLedger(), HookRegistry()
    hooks.install(produced, ledger, *features)
    layout = turn_scoped_layout
    if own == "feature":
        layout = features[0].layout(layout)
    elif own is not None:
        layout = own(layout)
    if wrap is not None:
        layout = wrap(layout)
    agent, _, _ = reader_agent(work, reader, chars=chars, model=model, layout=layout, hooks=hooks, offload=offload,
                               max_steps=2 * pages + 200, online=online, **agent_kwargs)
    result = agent.run(task_text(pages, reader.planted))
    spent = [c for f in features for c in getattr(f, "spent", [])]  # the on-demand summaries' own calls
    return {"agent": agent, "result": result, "reader": reader, "keeper": keeper, "produced": produced,
            "ledger": ledger, "features": features, "extra": spent, "window": window}


def figures(r: dict) -> dict:
    """The chapter's table columns, from one run."""
    from ..features.recall import restorable
    calls = r["agent"].calls + r["extra"]
    prompt = sum(c.prompt_tokens for c in calls) + sum(k.prompt_tokens for c in calls for k in c.compactions)
    read = sum(c.cache_read_input_tokens for c in calls) + sum(k.cache_read_input_tokens for c in calls for k in c.compactions)
    back, dropped = restorable(r["produced"].contents, r["reader"].last_seen, r["keeper"])
    recalled = sum(code_for(p) in r["result"].final_text for p in r["reader"].planted)
    return {"status": r["result"].status, "calls": len(r["agent"].calls),
            "peak": max((c.prompt_tokens for c in r["agent"].calls), default=0) / r["window"],
            "read": read / max(1, prompt), "cost": r["agent"].bill().total + sum(c.cost for c in r["extra"]), "restorable": (back, dropped),
            "recalled": recalled, "codes": len(r["reader"].planted), "gone": len(r["ledger"].gone),
            "stripped": len(r["ledger"].stripped), "thinking": r["ledger"].produced,
            "error": r["result"].error}


SERVER_SUMMARY = ("server compaction", "on demand")  # strategies whose summary the server writes (offline: SIMULATED)


def show(table: dict[str, dict], base: float) -> None:
    """Print the table: one row per strategy, costs against ``base``. *thinking gone*: blocks of the
    run's thinking the model no longer read at the last call, of all it produced; *stripped*: those
    whose turn it still read. A row whose summary the server writes is marked *sim*: offline, that
    summary is the emulator's SIMULATED one, not the provider's."""
    print(f"{'strategy':<27} {'status':<5} {'calls':>5} {'peak':>4} {'read':>6} {'cost':>7} {'vs none':>7} "
          f"{'restorable':>10} {'codes':>5} {'thinking gone':>13} {'stripped':>8}")
    for name, f in table.items():
        back, dropped = f["restorable"]
        share = f"{back / dropped:.0%}" if dropped else "-"
        summary = " sim" if any(s in name for s in SERVER_SUMMARY) else ""
        # a run that stopped did not do the work: its smaller bill is no saving
        against = "stopped" if f["status"] != "done" else f"{f['cost'] / base - 1:>+7.0%}"
        print(f"{name:<27} {f['status']:<5} {f['calls']:>5} {f['peak']:>4.0%} {f['read']:>6.1%} ${f['cost']:>6.2f} "
              f"{against:>7} {share:>10} {f['recalled']:>2}/{f['codes']} "
              f"{f['gone']:>5} of {f['thinking']:>4} {f['stripped']:>8}{summary}")
    if any(s in name for name in table for s in SERVER_SUMMARY):
        print("sim: the summary is the server's; offline, the emulator's SIMULATED summary, not the provider's")
    if any(f["status"] != "done" for f in table.values()):
        print("stopped: the run ended before its work was done, so its cost is not compared")
    for name, f in table.items():
        if f["error"]:
            print(textwrap.fill(f"{name}: {first_sentences(f['error'])}", 100, subsequent_indent="  "))  # a notebook's width


def first_sentences(error: str, limit: int = 200) -> str:
    """The error's whole sentences within ``limit`` characters (at least its first sentence)."""
    if len(error) <= limit:
        return error
    cut = error.rfind(". ", 0, limit)
    return error[:cut + 1] if cut > 0 else error[:error.find(". ") + 1 or limit]
