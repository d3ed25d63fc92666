"""SIMULATED model behaviour for the running example. Not Claude: a fixed set of rules.

``SimulatedResearcher`` reads the request it is sent (only the request, like a model) and decides
the next action from the tool results it can see:

1. acknowledge the user with ``message_user``;
2. for each competitor: ``fetch`` its pricing page; on a 404, try the ``/plans`` URL; on a page
   that says "Loading prices", ``browse`` it instead; then write the price lines to ``notes/``;
3. write ``report.md`` (a table and the gaps) from its notes, message the user, answer.

That is 14 calls for the four competitors, including one failed fetch and its recovery.
``LongRunPolicy`` is the synthetic workload for long runs: it reads ``docs.example`` pages, one per
call, and now and then saves their key figures to a note, for a fixed number of turns, then answers.
"""

from __future__ import annotations

import re

from ..emulator.policies import Turn, text, tool_use
from .web import COMPETITORS

TASK = "Compare the pricing pages of our four competitors (Acme, Globex, Initech, Umbrella) and write up the gaps."


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


def _act(thought: str, name: str, **inputs) -> Turn:
    return Turn(content=[text(thought), tool_use(name, inputs)])


class SimulatedResearcher:
    """Simulated policy: completes the pricing comparison in 14 calls (see the module docstring)."""

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        written = {i["path"]: i["content"] for n, i, _, err in done if n == "write_file" and not err}
        if not any(n == "message_user" for n, *_ in done):
            return _act("I'll acknowledge the request first.", "message_user",
                        text="On it: I'll read the four pricing pages, compare the tiers and write up the gaps.")
        for company, url in COMPETITORS.items():
            note = f"notes/{company.lower()}.md"
            if note in written:
                continue
            attempts = [(n, i, r, e) for n, i, r, e in done if n in ("fetch", "browse") and company.lower() in i["url"]]
            if not attempts:
                return _act(f"Next: {company}'s pricing page.", "fetch", url=url)
            name, inputs, result, failed = attempts[-1]
            if failed and "404" in result:
                return _act(f"{company}'s page moved; trying their plans page.", "fetch",
                            url=inputs["url"].replace("/pricing", "/plans"))
            if "Loading prices" in result:
                return _act(f"{company} renders prices client-side, so fetch saw an empty shell. Browsing instead.",
                            "browse", url=inputs["url"])
            lines = [line.strip() for line in result.splitlines() if "$" in line]
            return _act(f"Saving {company}'s tiers.", "write_file", path=note,
                        content=f"# {company}\nsource: {inputs['url']}\n" + "".join(f"- {line}\n" for line in lines))
        if "report.md" not in written:
            return _act("All four collected; writing the comparison.", "write_file", path="report.md",
                        content=report({c: written[f"notes/{c.lower()}.md"] for c in COMPETITORS}))
        if sum(n == "message_user" for n, *_ in done) < 2:
            return _act("Telling the user where the report is.", "message_user",
                        text="Done: report.md has the tier table and the gaps (free tier, SSO entry price, SLA).")
        return Turn(content=[text("The comparison is in report.md.")])


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


def batch_text(request: dict) -> str:
    """The injected blocks of this call, as the model sees them (the tail of the prompt)."""
    last = request["messages"][-1]["content"]
    return "\n".join(b.get("text", "") for b in (last if isinstance(last, list) else [])
                     if b.get("type") == "text" and b.get("text", "").startswith("<!-- "))


class LongRunPolicy:
    """Simulated policy for long runs. Each call reads the next reference page; every
    ``note_every`` pages it writes the key figures read since its last note to ``notes/``; when the
    budget warning is in its batch, it writes them at once. After ``turns`` calls it answers.
    Pages are about ``page_chars`` characters (500: 1,000 turns fit a 200K window)."""

    def __init__(self, turns: int, page_chars: int = 500, note_every: int = 10):
        self.turns, self.page_chars, self.note_every = turns, page_chars, note_every

    def __call__(self, request: dict) -> Turn:
        done = exchanges(request["messages"])
        n = len(done)
        if n >= self.turns:
            return Turn(content=[text(f"I have worked through {n} steps.")])
        since = [r for name, _, r, _ in done[next((i + 1 for i in range(n - 1, -1, -1) if done[i][0] == "write_file"), 0):]
                 if name == "fetch"]
        figures = [m.group(0) for r in since for m in [re.search(r"Key figure for section \d+: \d+", r)] if m]
        warned = "<!-- budget -->" in batch_text(request)
        if figures and (len(since) >= self.note_every or warned):
            why = "Saving before my context is compressed." if warned else "Saving what I have so far."
            return _act(why, "write_file", path=f"notes/upto-{n}.md", content="\n".join(figures) + "\n")
        page = sum(name == "fetch" for name, *_ in done)
        return _act(f"Reading page {page}.", "fetch", url=f"https://docs.example/page/{page}?chars={self.page_chars}")
