"""The moves every SIMULATED agent of the running example shares (not Claude: fixed rules).

A simulated agent reads only the request it is sent, like a model: ``exchanges`` recovers the tool
calls it can see and what they returned, and ``next_work_step`` decides the next call for one
objective. Three kinds of objective exist:

- a competitor's pricing page: fetch it; on a 404 try the ``/plans`` URL; on a page that only says
  "Loading prices" (rendered client-side) browse it instead; then write the price lines to a note;
- a reference page: fetch it, then write a short note;
- the write-up: from the four notes (read back with ``read_file`` only those it cannot see in its
  own context), write ``report.md``: a tier table and the gaps.
"""

from __future__ import annotations

import re

from ..core.context import injected_source
from ..view.request import batch_of
from ..emulator.policies import Turn, text, tool_use
from .web import COMPETITORS

WRITE_UP = "Read the four notes in notes/ and write report.md: a tier table and the gaps"


def exchanges(messages: list[dict]) -> list[tuple[str, dict, str, bool]]:
    """(tool name, input, result text, is_error) for every answered tool call in the request."""
    calls, out = {}, []
    for message in messages:
        content = message["content"] if isinstance(message["content"], list) else []
        for block in content:
            if block.get("type") == "tool_use":
                calls[block["id"]] = block
            elif block.get("type") == "tool_result" and block["tool_use_id"] in calls:
                call, result = calls[block["tool_use_id"]], block.get("content", "")
                if isinstance(result, list):
                    result = "\n".join(b.get("text", "") for b in result)
                out.append((call["name"], call["input"], result, bool(block.get("is_error"))))
    return out


def act(thought: str, name: str, **inputs) -> Turn:
    """A turn that says what it is doing, then calls one tool."""
    return Turn(content=[text(thought), tool_use(name, inputs)])


def batch(request: dict) -> dict[str, str]:
    """This call's injected notes as the model sees them at the tail of the prompt: {source: text}."""
    return {injected_source(b): b["text"].split("\n", 1)[-1] for b in batch_of(request) if injected_source(b)}


class PolicyError(RuntimeError):
    """A simulated policy did not find a runtime sentence it reacts to: the sentence was reworded
    or removed, so the simulation would silently stop reacting. Fails loudly instead."""


def after(phrase: str, text: str) -> str:
    """The rest of the line that starts with ``phrase`` in ``text``."""
    for line in text.splitlines():
        if line.startswith(phrase):
            return line[len(phrase):]
    raise PolicyError(f"the simulated policy expects a line starting {phrase!r} and found none in: {text[:200]!r}")


def reference_items(n: int) -> list[tuple[str, str]]:
    """The long synthetic task: (phase title, objective) for ``n`` reference pages."""
    return [(f"Summarise reference page {i}", f"Read https://docs.example/page/{i} and save a summary to notes/page-{i}.md")
            for i in range(n)]


def pricing_items() -> list[tuple[str, str]]:
    """The running example as phases: one per competitor, then the write-up."""
    items = [(f"Collect {name}'s pricing", f"Read {name}'s pricing page at {url} and save the tiers to notes/{name.lower()}.md")
             for name, url in COMPETITORS.items()]
    return items + [("Write up the gaps", WRITE_UP)]


def objective_for(title: str) -> str | None:
    """The objective behind a phase title, for the phases these policies know how to do."""
    page = re.fullmatch(r"Summarise reference page (\d+)", title)
    if page:
        return reference_items(int(page.group(1)) + 1)[-1][1]
    return next((o for t, o in pricing_items() if t == title), None)


def target(objective: str) -> tuple[str | None, str | None]:
    """The URL and the note path an objective names."""
    url = re.search(r"https://\S+", objective)
    path = re.search(r"notes/[\w.-]+\.md|report\.md", objective)
    return (url.group(0) if url else None), (path.group(0) if path else None)


def beyond(exchange: tuple, objective: str) -> bool:
    """Is this tool call outside the objective (another page, another note)?"""
    name, inputs, *_ = exchange
    url, path = target(objective)
    where = inputs.get("url") or inputs.get("path")
    if name not in ("fetch", "browse", "write_file") or where is None:
        return False
    own = {u for u in (url, path) if u} | ({url.replace("/pricing", "/plans")} if url else set())
    return where not in own


def next_work_step(objective: str, done: list) -> Turn | None:
    """The next tool call for one objective given the exchanges so far; None once it is done."""
    if objective == WRITE_UP:
        return _write_up(done)
    url, path = target(objective)
    company = re.match(r"Read (\w+)'s pricing page", objective)
    who = company.group(1) if company else None
    mine = [d for d in done if not beyond(d, objective)]
    fetched = [(n, i, r, e) for n, i, r, e in mine if n in ("fetch", "browse")]
    if not fetched:
        return act(f"Next: {who}'s pricing page." if who else f"Next: {url}.", "fetch", url=url)
    name, inputs, result, failed = fetched[-1]
    if failed and "404" in result:
        return act(f"{who or 'The'}'s page moved; trying their plans page.", "fetch",
                   url=inputs["url"].replace("/pricing", "/plans"))
    if "Loading prices" in result:
        return act(f"{who} renders prices client-side, so fetch saw an empty shell. Browsing instead.",
                   "browse", url=inputs["url"])
    if any(n == "write_file" for n, *_ in mine):
        return None
    lines = [line.strip() for line in result.splitlines() if "$" in line] or [result[:120]]
    header = f"# {who}\n" if who else ""
    return act(f"Saving {who}'s tiers." if who else "Saving a summary.", "write_file", path=path,
               content=f"{header}source: {inputs['url']}\n" + "".join(f"- {line}\n" for line in lines))


def _write_up(done: list) -> Turn | None:
    if any(n == "write_file" and i.get("path") == "report.md" for n, i, *_ in done):
        return None
    visible = {i["path"]: i["content"] for n, i, _, err in done if n == "write_file" and not err}
    visible.update({i["path"]: r for n, i, r, err in done if n == "read_file" and not err})
    for name in COMPETITORS:  # read back only the notes not already in view
        if f"notes/{name.lower()}.md" not in visible:
            return act(f"Reading my {name} note.", "read_file", path=f"notes/{name.lower()}.md")
    return act("All four collected; writing the comparison.", "write_file", path="report.md",
               content=report({c: visible[f"notes/{c.lower()}.md"] for c in COMPETITORS}))


def report(notes: dict[str, str]) -> str:
    rows, entry, sso = [], {}, {}
    for company, note in notes.items():
        for line in note.splitlines():
            match = re.match(r"- (\w+):? \$(\d+)(?: per user per month)?\s*\(?([^)]*)\)?", line)
            if match:
                tier, usd, rest = match.group(1), int(match.group(2)), match.group(3).strip()
                rows.append(f"| {company} | {tier} | ${usd} | {rest} |")
                entry[company] = min(entry.get(company, usd), usd)
                if "SSO" in rest:
                    sso[company] = min(sso.get(company, usd), usd)
    gaps = [f"- Entry price ranges from ${min(entry.values())} to ${max(entry.values())} per user per month.",
            f"- Free tier: {', '.join(c for c, v in entry.items() if v == 0) or 'nobody'}.",
            "- SSO starts at: " + ", ".join(f"{c} ${v}" for c, v in sorted(sso.items(), key=lambda kv: kv[1])) + "."]
    return "# Competitor pricing\n\n| company | tier | price | notes |\n|---|---|---|---|\n" + "\n".join(rows) + \
        "\n\n## Gaps\n" + "\n".join(gaps) + "\n"


class SingleAgent:
    """The shape of a one-agent simulated run: acknowledge, set up, work item by item (keeping a
    plan, if the subclass does), tell the user, answer. Subclasses change one step each."""

    ack = "On it."
    done_message = "Done: every item is finished; see notes/."
    answer = "All items are done."

    def __init__(self, goal: str, items: list[tuple[str, str]]):
        self.goal, self.items = goal, items

    def setup(self, done: list) -> Turn | None:
        return None

    def keep_plan(self, finished: int, done: list) -> Turn | None:
        return None

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        names = [n for n, *_ in done]
        if "message_user" not in names:
            return act("I'll acknowledge the request first.", "message_user", text=self.ack)
        step = self.setup(done)
        if step is not None:
            return step
        for finished, (title, objective) in enumerate(self.items):
            step = self.keep_plan(finished, done) or next_work_step(objective, done)
            if step is not None:
                return step
        step = self.keep_plan(len(self.items), done)
        if step is not None:
            return step
        if names.count("message_user") < 2:
            return act("Telling the user.", "message_user", text=self.done_message)
        return Turn(content=[text(self.answer)])
