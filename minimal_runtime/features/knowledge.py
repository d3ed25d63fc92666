"""The knowledge manager (KM): a second agent that reads the working agents' trajectories in the
background and writes short notes into their batches.

Three rules carry the design:

- **It never runs inline.** After a working agent's call, a trigger may schedule a KM run on a
  snapshot of the request that call sent; the run happens on a worker thread, and its output lands
  on a board. The working agent's next pre-call hook takes what is there, if anything. It never
  waits for a run.
- **Its limits are code, not prompt.** At most 6 guidance bullets per role, a guidance block older
  than 90 s is not injected, a nudge is taken off the board once, triggers are rate-limited on an
  injectable clock. The KM's own agent (role ``other``) gets nothing injected and triggers nothing.
- **What it writes is untrusted, and placed as such.** The KM read pages and tool output, so a
  note of its may carry what a page asked, restated in words no filter can recognise. Its notes
  are injected ``untrusted``: on the current layout they are text in the new user turn, after the
  tool results they came from, never a system message (which carries operator authority, and
  which the provider says must never hold untrusted content, API-2026.md §2). They stay in the
  history, read on every later call.

What a filter on the notes can do, it does: a lint refuses self-reference, headers, attribution,
"you", instruction overrides, claims of authority, chat-turn labels and the model's first person
on every reading of a line (``reading.readings``: look-alike letters, invisible characters, a
right-to-left override, HTML entities, base64, base32, hex and percent-escapes decoded, digits for
letters, letters spelled apart); what it does not try is in ``lint``'s docstring, so a note reads as the agent's own plain statement of fact; the board keeps every tool output the KM read, in any shape,
in a raw section that is never injected, and refuses a note that repeats six consecutive words of
it, one note at a time and the notes of a block read together. The characters no one sees (tag
characters, zero-width and bidi controls) never reach the model: ``inject_untrusted`` removes them
(``core.visible``), and the lint judges the note as the model will read it. What no string filter can do is
tell a restated instruction from a fact; the placement is the answer to that (chapter 07).
"""

from __future__ import annotations

import atexit
import json
import logging
import re
import threading
import weakref
from collections import deque
from concurrent.futures import Executor, Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from typing import Callable, Literal

from pydantic import BaseModel, Field, field_validator

from ..core.context import injected_source, last_note
from ..view.request import batch_of
from ..core.hooks import HookEvent, HookRegistry, Point
from ..core.visible import visible
from ..provider.cost import CallRecord
from .reading import readings, words

log = logging.getLogger(__name__)

Role = Literal["planner", "executor", "other"]
MAX_BULLETS = 6  # guidance lines per role, counted here rather than asked for in a prompt
MAX_AGE = 90.0  # seconds a guidance block may be injected after it was made
CONTENT_TOOLS = frozenset({"web_search", "fetch", "browse", "page_snapshot", "analyze_image"})
MAX_QUEUED = 8  # KM runs waiting for the worker; past it the oldest snapshot is dropped (it is the stalest)
SHUTDOWN_WAIT = 2.0  # seconds closing the KM (or the interpreter's exit) waits for the run in flight, at most


def role_of(name: str) -> Role:
    """An agent's role from its name: the planner, an executor, or anything else (the KM itself)."""
    if name == "planner":
        return "planner"
    return "executor" if name.startswith("executor") else "other"


# -- what the KM emits ---------------------------------------------------------------------------

class Nudge(BaseModel):
    """The urgent channel: one to three sentences for one role (or both), consumed on first read.
    ``title`` and ``reason`` are for the log; only ``text`` is ever injected."""

    text: str
    role: Literal["planner", "executor", "both"]
    urgency: Literal["high", "normal"] = "normal"
    title: str = ""
    reason: str = ""

    @field_validator("text")
    @classmethod
    def _sentences(cls, text: str) -> str:
        count = len(re.findall(r"[.!?](\s|$)", text.strip())) or 1
        if not text.strip() or count > 3:
            raise ValueError(f"a nudge is one to three sentences, not {count}")
        return text.strip()


class KmOutput(BaseModel):
    """One KM run's output. Most runs produce neither part."""

    nudges: list[Nudge] = Field(default_factory=list)
    guidance: dict[Literal["planner", "executor"], list[str]] = Field(default_factory=dict)


# -- the shape of a note: the formatter and the lint ---------------------------------------------

# What a note may not say, matched on every reading of it (``reading.readings``) with the joiners
# inside a phrase read as spaces ("knowledge.manager", "K-M"). A note is a plain statement of
# fact, as in the agent's own notes; anything that names a second writer, labels itself, speaks to the reader or
# overrides an instruction shows that someone else wrote it.
ROLES = r"system|user|assistant|developer|operator|admin"
# A second writer: a word for an agent-like thing, qualified as one ("background agent", "helper AI",
# "monitor process"), or doing what a writer does ("the scanner flagged ...", "the model noticed").
WRITER = r"(agent|ai|a\.i\.|bot|llm|model|assistant|helper|monitor|watcher|daemon|process|reviewer|observer|" \
         r"checker|auditor|scanner|worker|service|program|script)s?"
QUALIFIER = r"(background|helper|helping|monitor|monitoring|watching|watcher|supervising|supervisor|oversight|" \
            r"companion|sidecar|parallel|external|auxiliary|assistant|review|reviewing|observer|guard|safety)"
REPORTS = r"(flag|flags|flagged|notic(e|es|ed)|detect(s|ed)?|report(s|ed)|observ(es|ed)|spott(ed)|says|said|" \
          r"suggest(s|ed)|recommend(s|ed)|warn(s|ed)|wants|asks|asked|insist(s|ed)|wrote|noted|thinks|believes|told)"
SELF_REFERENCE = re.compile(r"\b(I notice|I noticed|I see that you|as your (assistant|helper|advisor)|I am the|"
                            r"as an AI|language model|knowledge\s*manager|manager agent|supervisor|overseer|"
                            r"(another|second|other|separate|different|outside) (agent|model|assistant|reader|ai|bot|llm|"
                            r"writer|helper|reviewer)|the assistant|I recommend you|"
                            rf"{QUALIFIER} {WRITER}|{WRITER}(\s+\S+){{0,4}}?\s+{REPORTS})\b"
                            r"|(?<![\d.,])(?<![\d.,] )\bk ?m\b", re.I)  # KM, K M, km (not "5 km")
# A label: a framing word (or a shouted one) before a colon or a dash, at the start or after a sentence.
LABELS = (rf"guidance|steering|note from|advice|reminder|tip|hint|{ROLES}|important|attention|update|instructions?|"
          r"notes?|notice|nb|n\.b|ps|p\.s|fyi|psa|warning|caution|alert|urgent|critical|priority|heads up|"
          r"action required|security|notification|memo|directive|disclaimer")
DASH = r"[:\-\u2010-\u2015|]"  # a colon, a hyphen, the dashes (en, em ...), a bar
HEADER = re.compile(r"^\s*(>\s*)*(#+\s|\*\*|__|~~|==|\[[^\]]*\]|<[^>]*>|"
                    rf"({LABELS})\b(\s+\w+){{0,2}}\s*{DASH})"  # markup or a label at the start
                    rf"|(?-i:^\s*(>\s*)*[A-Z]{{3,}}(\s+[A-Z]{{2,}}){{0,2}}\s*{DASH})"  # a shouted label ("URGENT:")
                    rf"|</?\s*({ROLES}|human|instructions?|tool[ _]?(result|use)|function[ _]?results?)\b[^>]*>"  # a role tag
                    rf"|\[\s*({ROLES}|instructions?|important|update)\s*\]"  # a bracketed role
                    rf"|([.!?;)\]>]\s+|\s[-|]\s+)({ROLES})(\s+(instructions?|message|note|prompt|override|update|mode))?\s*:"
                    rf"|[.!?;)\]>]\s+({LABELS})\s*[:\u2013\u2014]"
                    rf"|(?-i:\b(SYSTEM|USER|ASSISTANT|DEVELOPER|OPERATOR|ADMIN)\b\s*[:\]>])", re.I)  # a label mid-line
# "you" however it is spelled: the pronoun and its forms, run together ("Youre"), archaic ("thou"),
# texting ("u", "ur", before a word: not "U.S.").
ATTRIBUTION = re.compile(r"\b(from the (KM|manager|supervisor|planner)|says the|(suggested|written|sent) by|"
                         r"according to (the )?(KM|manager|supervisor)|per the (KM|manager|supervisor)|"
                         r"you|your|yours|yourself|yourselves|you(re|r|ve|ll|d|s)|y'?all|"
                         r"thou|thee|thy|thine|thyself|ye|yous|youse|yinz|"
                         r"(u|ur|urs)(?=\s+[^\W\d_]{2,}))\b", re.I)
OVERRIDE = re.compile(r"\b(ignore|disregard|forget|override|discard|bypass) ((all|any|the|your|my|every|these|those|of) )*"
                      r"(previous|prior|earlier|above|preceding|system|original|former|initial|old|existing) "
                      r"(instruction|rule|prompt|message|direction|guidance|order|command|context|policy|guideline)s?\b"
                      r"|\b(ignore|disregard|forget) (everything|anything|all) (above|before|earlier|so far)\b", re.I)
# A claim of authority, however it is labelled: the operator, the developer, the system, an admin ...
# next to what such a one issues or does ("Operator policy (ticket 4411) requires", "Developer
# instruction in force", "approved by the admin", "per the system prompt"). A note states facts; an
# order from someone is not one, and it is what a page that wants to be obeyed writes.
AUTHORITY_WHO = r"(operators?|developers?|dev team|devs|admins?|administrators?|sysadmins?|root|owners?|maintainers?|" \
                r"management|security team|it department|anthropic|openai|compliance|legal)"
AUTHORITY_WHAT = r"(polic(y|ies)|instructions?|directives?|orders?|rules?|requirements?|mandates?|commands?|" \
                 r"requests?|messages?|prompts?|notes?|notices?|overrides?|mode|authori[sz]ations?|approvals?|" \
                 r"permissions?|decisions?|update|guidance|says|said|wants|asks|asked|requires?|required|orders|" \
                 r"ordered|instructs|instructed|authori[sz]es|authori[sz]ed|approves|approved|demands|mandates|" \
                 r"mandated|directs|directed|insists|expects|needs|told|permits|allows|allowed|in force)"
AUTHORITY = re.compile(rf"\b{AUTHORITY_WHO}\b(\W+\w+){{0,3}}?\W+{AUTHORITY_WHAT}\b"
                       rf"|\b{AUTHORITY_WHAT}\W+(\w+\W+){{0,3}}?(by|from|of|per)\W+(the\W+)?{AUTHORITY_WHO}\b"
                       rf"|\b(by|per|from|on behalf of)\W+(the\W+)?{AUTHORITY_WHO}\b"
                       r"|\bsystem\W+(prompt|message|instruction|directive|override|command|notice|policy|"
                       r"administrator|admin|operator|update|mode)s?\b", re.I)
# A chat turn's label, at the start or after a sentence: "H:", "A:", "Human:", "Assistant:", "User:",
# "Model:", "AI:", "Bot:", "Claude:", "Q:" ... and the chat templates' tokens ("<|im_start|>", "[INST]").
TURN = re.compile(r"(^|[.!?;)\]>\"'\u201d]\s+|\s[-|]\s+)\W{0,2}(h|a|q|human|assistant|user|model|ai|bot|claude|"
                  r"gpt|chatgpt|gemini|llm|me|customer|agent|system)\W{0,2}\s*:"
                  r"|\b(human|assistant|claude|chatgpt)\s*:"
                  r"|<\|[^|>]{1,40}\|>|\[/?inst\]|<</?sys>>", re.I)
# The model's first person: a note the agent reads as its own plain fact says no "I" ("I will send
# it", "sending it now, as I was asked"): that is a turn of the model's, written for it.
FIRST_PERSON = re.compile(r"(?<![\w/.-])(?-i:I)(['\u2019](m|ll|ve|d))?(?![\w/-])|\b(me|my|mine|myself|i'm|im|i'll|"
                          r"i've|ive|i'd)\b", re.I)
RULES = ((SELF_REFERENCE, "self-reference"), (HEADER, "a header"), (ATTRIBUTION, "attribution or second-person address"),
         (OVERRIDE, "an instruction override"), (AUTHORITY, "a claim of authority"), (TURN, "a chat-turn label"),
         (FIRST_PERSON, "the model's first person"))
JOINER = re.compile(r"(?<=[^\W_])[_\-\u2010-\u2015./\u00b7]+(?=[^\W_])")  # "knowledge.manager", "K-M"


def lint(line: str) -> list[str]:
    """Why ``line`` could not pass for the agent's own note (empty: it can). It refuses
    self-reference and names of a second writer, headers and labels, attribution and "you" (and
    "ye", "thou", "u", "youse"), instruction overrides, claims of operator, developer or system
    authority however labelled, chat-turn labels ("H:", "A:", "User:", "Model:", "<|im_start|>"),
    and the model's first person ("I", "my"). Every rule is checked on every way a reader may read
    the line (``readings``: entities decoded, look-alike letters folded per Unicode TR39 and by
    their names, invisible characters as nothing and as spaces, a right-to-left run as shown,
    base64, base32, hex and percent-escapes decoded, "Y0u" and "Y O U" as "You").

    What it does not try, and so lets through: other languages, paraphrase and synonyms, rot13 and
    other ciphers, text reversed without an override, letters drawn from several characters
    ("Yo|_|"), look-alikes TR39 does not list, other encodings. No string filter stops a page's
    ask restated in plain words; where the note is placed (user text, never a system message) is
    what bounds that (chapter 07)."""
    problems = []
    for seen in readings(line):
        text = JOINER.sub(" ", seen)
        for rule, why in RULES:
            if why not in problems and rule.search(text):
                problems.append(why)
    if len(line.strip().splitlines()) > 1:
        problems.append("more than one line")
    return problems


def bullet(line: str) -> str:
    """A bare bullet: one line, one leading "- ", no other marker."""
    text = re.sub(r"\s+", " ", line).strip()
    text = re.sub(r"^([-*\u2022]|\d+[.)])\s*", "", text)
    return f"- {text}"


def format_block(nudges: list[str], guidance: list[str]) -> str:
    """Nudges first, then guidance, as one flat list of bare bullets: nothing says which is which
    or where they came from. Guidance is cut to ``MAX_BULLETS`` here, whatever the KM sent."""
    return "\n".join(bullet(line) for line in [*nudges, *guidance[:MAX_BULLETS]] if line.strip())


# -- untrusted text --------------------------------------------------------------------------------

def _shingles(text: str, n: int) -> set[str]:
    return {" ".join(seq[i:i + n]) for seq in words(text) for i in range(len(seq) - n + 1)}


class RawSection:
    """External content the KM read (every tool result, whatever its shape): kept, never injected.
    ``quotes(line)`` is true when a line repeats ``span`` (six) or more consecutive words of it, on
    any reading of either (``reading.words``: look-alikes folded, punctuation inside a word dropped
    or read as a space)."""

    def __init__(self, span: int = 6) -> None:
        self.span = span
        self._seen: set[str] = set()
        self._added: set[str] = set()  # every KM run re-reads the whole history: shingle each text once
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        with self._lock:
            if text not in self._added:
                self._added.add(text)
                self._seen |= _shingles(text, self.span)

    def quotes(self, line: str) -> bool:
        with self._lock:
            return bool(_shingles(line, self.span) & self._seen)


def texts_in(value) -> list[str]:
    """Every text inside a tool result's content, however it is shaped: a string, a list of text
    blocks, blocks nested in blocks (a search result's ``content``, a document's text ``source``),
    with a search result's title; an image or other binary gives nothing."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in texts_in(v)]
    if not isinstance(value, dict):
        return []
    out = [value[key] for key in ("title", "text") if isinstance(value.get(key), str)]
    source = value.get("source")
    if isinstance(source, dict) and source.get("type") == "text":
        out += texts_in(source.get("data"))
    elif isinstance(source, dict) and source.get("type") == "content":
        out += texts_in(source.get("content"))
    return out + texts_in(value.get("content"))


def tool_output(block: dict) -> str | None:
    """The text of a tool's result block (a client tool's ``tool_result`` or a server tool's
    ``*_tool_result``), as the KM's transcript shows it; None for any other block."""
    kind = str(block.get("type", ""))
    if kind != "tool_result" and not kind.endswith("_tool_result"):
        return None
    content = block.get("content", "")
    return content if isinstance(content, str) else " ".join(" ".join(texts_in(b)) for b in
                                                             (content if isinstance(content, list) else [content]))


# -- the board: where runs leave notes and hooks take them -----------------------------------------

@dataclass
class _Guidance:
    bullets: list[str]
    made_at: float


class Board:
    """What KM runs left for the working agents. Thread-safe: runs post from worker threads while
    the agents' hooks take. Every refusal is counted (``refused``) and logged, never injected."""

    def __init__(self, clock: Callable[[], float], raw: RawSection | None = None, *,
                 lint: Callable[[str], list[str]] = lint, format_block: Callable[[list[str], list[str]], str] = format_block):
        self.clock, self.raw = clock, raw or RawSection()
        self.lint, self.format_block = lint, format_block  # the chapter's exercise swaps in its own
        self._nudges: list[Nudge] = []
        self._guidance: dict[str, _Guidance] = {}
        self._lock = threading.Lock()
        self.refused: list[tuple[str, str]] = []  # (line, why)
        # for measurement: (when, role, block, the guidance's age or None) per delivery; nudge counts
        self.delivered: list[tuple[float, Role, str, float | None]] = []
        self.nudges_posted = self.nudges_consumed = 0

    def _problems(self, line: str) -> list[str]:
        """Why ``line`` is unfit to deliver: the lint on every reading of it (``readings``: so a
        lint that knows only plain letters still sees through look-alikes), as proposed, as it
        would be delivered (the formatter joins lines, turns a no-break space into a space) and as
        the model will read it (``inject_untrusted`` removes the characters no one sees:
        ``core.visible``), and the quote check on each."""
        delivered = re.sub(r"^- ", "", self.format_block([line], []))
        forms = list(dict.fromkeys([line, delivered, visible(delivered)[0]]))  # the last: what the model reads
        why = [w for form in forms for seen in readings(form) for w in self.lint(seen)]
        why += ["quotes external content"] if any(self.raw.quotes(form) for form in forms) else []
        return list(dict.fromkeys(why))

    def _refuse(self, line: str, why: list[str]) -> None:
        self.refused.append((line, ", ".join(why)))
        log.info("KM note refused (%s): %.80s", ", ".join(why), line)

    def _acceptable(self, line: str) -> bool:
        why = self._problems(line)
        if why:
            self._refuse(line, why)
        return not why

    def _refused_together(self, lines: list[str]) -> set[int]:
        """The lines that pass one by one but not read together, as the block shows them: a quote,
        a name or an override split over neighbouring notes. The whole block is checked joined
        (one check when it passes, the usual case); when it fails, the shortest run of lines that
        fails is refused whole (counted once, joined), and the rest is checked again."""
        left = list(range(len(lines)))
        joined = lambda run: " ".join(lines[i] for i in run)  # noqa: E731
        out: set[int] = set()
        while len(left) > 1 and self._problems(joined(left)):
            end = next(e for e in range(2, len(left) + 1) if self._problems(joined(left[:e])))
            start = max(s for s in range(end - 1) if self._problems(joined(left[s:end])))
            run, left = left[start:end], left[:start] + left[end:]
            out |= set(run)
            self._refuse(joined(run), [*self._problems(joined(run)), "read together"])
        return out

    def post(self, output: KmOutput) -> None:
        now = self.clock()
        nudges = [n for n in output.nudges if self._acceptable(n.text)]
        guidance = {role: [b for b in lines if self._acceptable(b)][:MAX_BULLETS] for role, lines in output.guidance.items()}
        for n in nudges:
            log.info("KM nudge for %s (%s): %s; %s", n.role, n.urgency, n.title, n.reason)  # logged, not injected
        with self._lock:
            self._nudges.extend(nudges)
            self.nudges_posted += len(nudges)
            for role, lines in guidance.items():
                if lines:
                    self._guidance[role] = _Guidance(lines, now)

    def take(self, role: Role) -> str:
        """The block for one call of an agent in ``role``: its nudges (high urgency first, each
        consumed here and only here) then its guidance if younger than ``MAX_AGE``. "" if none."""
        if role == "other":
            return ""
        now = self.clock()
        with self._lock:
            mine = [n for n in self._nudges if n.role in (role, "both")]
            self._nudges = [n for n in self._nudges if n.role not in (role, "both")]
            self.nudges_consumed += len(mine)
            current = self._guidance.get(role)
            fresh = current.bullets if current and now - current.made_at <= MAX_AGE else []
            age = now - current.made_at if fresh else None
        mine.sort(key=lambda n: n.urgency != "high")  # stable: high first, then in arrival order
        lines = [n.text for n in mine] + fresh
        refused = self._refused_together(lines)
        if refused:
            mine = [n for k, n in enumerate(mine) if k not in refused]
            fresh = [g for k, g in enumerate(fresh, start=len(lines) - len(fresh)) if k not in refused]
            with self._lock:  # a refused guidance line is not offered again
                if self._guidance.get(role) is current and current is not None:
                    current.bullets = fresh
        block = self.format_block([n.text for n in mine], fresh)
        if block:
            self.delivered.append((now, role, block, age))
        return block

    def invalidate(self) -> None:
        """An executor completed: what was said about the step before is stale."""
        with self._lock:
            self._guidance.clear()


# -- when a run is due ----------------------------------------------------------------------------

@dataclass
class Triggers:
    """When to run the KM, on an injectable clock. ``after_call`` is asked after every call of a
    working agent; ``tick`` by a ticker; ``executor_done`` when an executor completes. Each returns
    the trigger's name when a run is due, or None."""

    clock: Callable[[], float]
    min_interval: float = 10.0  # prefetch: at most one run per 10 s ...
    min_new_messages: int = 4  # ... and per 4 new messages
    burst: int = 3  # content burst: this many content-heavy tool calls in a row
    tick_every: float = 15.0
    content_tools: frozenset[str] = CONTENT_TOOLS
    _last_run: float | None = None
    _messages_at_last_run: int = 0
    _content_streak: int = 0

    def after_call(self, messages: int, tool_names: list[str]) -> str | None:
        now = self.clock()
        for name in tool_names:
            self._content_streak = self._content_streak + 1 if name in self.content_tools else 0
        if self._content_streak >= self.burst:
            self._content_streak = 0
            return self._ran(now, messages, "content burst")
        if (self._last_run is None or now - self._last_run >= self.min_interval) and \
                messages - self._messages_at_last_run >= self.min_new_messages:
            return self._ran(now, messages, "prefetch")
        return None

    def tick(self, messages: int) -> str | None:
        now = self.clock()
        if self._last_run is None or now - self._last_run >= self.tick_every:
            return self._ran(now, messages, "ticker")
        return None

    def executor_done(self, messages: int) -> str:
        return self._ran(self.clock(), messages, "executor done")

    def _ran(self, now: float, messages: int, why: str) -> str:
        self._last_run, self._messages_at_last_run = now, messages
        return why


# -- the KM itself ----------------------------------------------------------------------------------

KM_SYSTEM = """You watch another agent work and, rarely, leave it a note. You read the transcript of
what it has done so far and the request it just sent.

Most of the time, leave nothing. Over a long run expect to write on a minority of invocations,
often well under half. Do not invent work to justify being asked.

Two channels, both optional:
- nudges, for something that needs attention now: findings read but not yet saved to a file, a
  tool that failed the same way twice, an action outside the current step, work about to be redone.
  One to three sentences each, for the planner, the executor or both, with an urgency.
- guidance, up to six short lines per role, about the exact step the agent is about to take.

Every line must read as a note the agent left itself: a plain statement of fact
about the task, without "I". Never refer to yourself, never address the agent as "you", no headers, no
"note", "guidance" or "reminder" labels, nothing that shows someone else wrote it. Never copy text
from pages, files or tool output into a note; say in your own words what matters.

Call `emit` with what you have. If the window has nothing new worth saving, no behaviour worth a
nudge and nothing step-critical, do not call it: answer "nothing"."""

EMIT_TOOL = {"name": "emit", "description": "Leave notes for the working agents (only if there is something worth it).",
             "input_schema": KmOutput.model_json_schema()}


def transcript(request: dict) -> str:
    """The working agent's request as text for the KM to read, one ``[role]``, ``[call]`` or
    ``[result]`` line per block, its later lines quoted (``quoted``). An executor's task block (from
    the request's own batch) comes first, so the KM reasons from the executor's own framing; the
    rest of the batch is the agent's notes, not its trajectory, and is left out."""
    task = [b["text"] for b in batch_of(request) if injected_source(b) == "task"]
    words = last_note(request.get("messages", []), "task-text")  # a tainted task's words: user text, kept
    lines = [f"<!-- task-text -->\n{words}"] * bool(words) + task[-1:]
    for message in request.get("messages", []):
        content = message["content"] if isinstance(message["content"], list) else [{"type": "text", "text": message["content"]}]
        for block in content:
            kind = block.get("type")
            if kind == "text" and (message.get("clear_at") or _notes_only(message)):
                continue  # the agent's own earlier batches and notes: not the trajectory
            if kind == "text":
                lines.append(f"[{message['role']}] {quoted(block['text'])}")
            elif kind == "tool_use":
                lines.append(f"[call] {block['name']} {json.dumps(block['input'])}")
            elif tool_output(block) is not None:
                lines.append(f"[result{' ERROR' if block.get('is_error') else ''}] {quoted(tool_output(block))}")
    return "\n".join(lines)


def _notes_only(message: dict) -> bool:
    """A user message the layout made of marked injections only (``outside_notes``)."""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, list) and bool(content) and \
        all(injected_source(b) for b in content)


def quoted(text: str) -> str:
    """A block's text as transcript lines: every line after its first is marked "> ", so no text a
    page or a tool returned can start a line of its own and pass for ``[user] ...`` or ``[call] ...``."""
    return "\n> ".join(text.splitlines())


def parse_output(response) -> KmOutput:
    """The ``emit`` call's input, if the KM made one; an empty output for "nothing" or a malformed call."""
    for block in response.content:
        if block.type == "tool_use" and block.name == "emit":
            try:
                return KmOutput.model_validate(block.input)
            except ValueError as e:  # a malformed emit is the KM's failure, never the working agent's
                log.warning("KM emit refused: %s", e)
    return KmOutput()


class KmWorker(Executor):
    """The KM's worker: one daemon thread, one job at a time in arrival order, from a bounded queue.

    One at a time, so KM runs queue rather than pile up. Past ``max_queued`` waiting jobs the oldest
    is dropped (its future cancelled, ``dropped`` counted): a newer snapshot says all it said. The
    thread is a daemon, started when a job arrives and gone when the queue is empty, so nothing it
    does can hold the process: a ``ThreadPoolExecutor``'s workers are joined at interpreter exit
    with no bound, and a KM call that never returns then keeps the process alive for good."""

    def __init__(self, max_queued: int = MAX_QUEUED):
        self.max_queued, self.dropped = max_queued, 0
        self._queue: deque[tuple[Future, Callable, tuple, dict]] = deque()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the KM worker is shut down")
            self._queue.append((future, fn, args, kwargs))
            while len(self._queue) > self.max_queued:
                self._queue.popleft()[0].cancel()
                self.dropped += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="km", daemon=True)
                self._thread.start()
        return future

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._thread = None
                    return
                future, fn, args, kwargs = self._queue.popleft()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as e:  # noqa: BLE001  (the future carries it to whoever waits)
                    future.set_exception(e)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more jobs; ``cancel_futures``: the queued ones are dropped. Never joins the thread:
        the caller waits on the futures it cares about, with its own bound."""
        with self._lock:
            self._closed = True
            queued = list(self._queue) if cancel_futures else []
            if cancel_futures:
                self._queue.clear()
        for future, *_ in queued:
            future.cancel()


class KnowledgeManager:
    """The feature: install it on the planner and the executors. It owns the board, the triggers and
    a one-worker queue (``KmWorker``); ``client``/``model`` are the KM's own model (role ``other``).

    ``close()`` (and the interpreter's exit, for a KM never closed) cancels the queued runs and
    waits for the run in flight at most ``shutdown_wait`` seconds: a hung KM model costs its notes,
    never the process."""

    def __init__(self, client, model: str, clock: Callable[[], float], *, max_tokens: int = 1024,
                 pool: Executor | None = None, board: Board | None = None, triggers: Triggers | None = None,
                 max_queued: int = MAX_QUEUED, shutdown_wait: float = SHUTDOWN_WAIT):
        self.client, self.model, self.max_tokens, self.clock = client, model, max_tokens, clock
        self.board, self.triggers = board or Board(clock), triggers or Triggers(clock)
        # A test or a deterministic measurement may pass a pool that runs each job as it is
        # submitted (``SerialPool``); the hooks do not change.
        self.pool = pool or KmWorker(max_queued)
        self.shutdown_wait = shutdown_wait
        self.runs: list[dict] = []  # (when, why, produced anything) per run, for measurement
        self.calls: list[CallRecord] = []  # the KM's own calls, priced
        self._pending: list[Future] = []
        self._lock = threading.Lock()
        _OPEN.add(self)

    @property
    def dropped(self) -> int:
        """Scheduled runs dropped unrun because the queue was full (the oldest snapshot goes first)."""
        return getattr(self.pool, "dropped", 0)

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.PRE_LLM_CALL, self.inject)
        hooks.register(Point.POST_LLM_CALL, self.after_call)
        hooks.register(Point.POST_TOOL_CALL, self.after_delegation, when=lambda e: e.tool_call["name"] == "delegate")

    # hooks (on the working agent's thread: they never wait for a run) -----------------------------

    def inject(self, event: HookEvent) -> None:
        block = self.board.take(role_of(event.agent.name))
        if block:
            event.agent.inject_untrusted("notes", block)  # written after reading pages: never a system message

    def after_call(self, event: HookEvent) -> None:
        if role_of(event.agent.name) == "other" or event.request is None:
            return  # the KM's own calls trigger nothing
        uses = [b for b in event.response.content if b.type == "tool_use"]
        why = self.triggers.after_call(len(event.request["messages"]), [b.name for b in uses])
        if why:
            self.schedule(why, event.request)

    def after_delegation(self, event: HookEvent) -> None:
        """POST_TOOL_CALL of the planner's ``delegate``: an executor completed."""
        self.board.invalidate()
        request = event.agent.last_request
        why = self.triggers.executor_done(len(request["messages"]) if request else 0)
        if request is not None:
            self.schedule(why, request)

    def tick(self, agent) -> None:
        """The ticker's entry (a timer, or the emulated clock): a run on the agent's latest request
        if no run started in the last 15 s."""
        request = agent.last_request
        if role_of(agent.name) != "other" and request is not None and self.triggers.tick(len(request["messages"])):
            self.schedule("ticker", request)

    # the run (on the worker thread) ---------------------------------------------------------------

    def schedule(self, why: str, request: dict) -> Future:
        future = self.pool.submit(self._run, why, snapshot(request))
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()] + [future]
        return future

    def _run(self, why: str, snapshot: dict) -> None:
        started = self.clock()
        for message in snapshot.get("messages", []):  # the outside text it is about to read: raw, never injected
            for block in message["content"] if isinstance(message["content"], list) else []:
                text = tool_output(block) if isinstance(block, dict) else None
                if text:
                    self.board.raw.add(text)
        try:
            response = self.client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=KM_SYSTEM, tools=[EMIT_TOOL],
                messages=[{"role": "user", "content": [{"type": "text", "text": transcript(snapshot)}]}])
        except Exception as e:  # noqa: BLE001  (a failed KM run costs its notes, never the working agent's run)
            log.warning("KM run (%s) failed: %s", why, e)
            self.runs.append({"at": started, "why": why, "output": False, "error": str(e)})
            return
        self.calls.append(CallRecord.from_usage(response.usage, self.model))
        output = parse_output(response)
        self.board.post(output)
        run = {"at": started, "why": why, "output": bool(output.nudges or output.guidance)}
        if getattr(response, "stop_reason", None) == "max_tokens":  # thinking counts toward the cap on 5.x
            log.warning("KM run (%s) cut at max_tokens (%d): what it had not emitted is lost; raise max_tokens",
                        why, self.max_tokens)
            run["cut"] = True
        self.runs.append(run)

    def wait(self) -> None:
        """For measurement and tests only: let every scheduled run finish (a dropped one is not run)."""
        with self._lock:
            pending, self._pending = self._pending, []
        for future in pending:
            if not future.cancelled():
                future.result()

    def close(self) -> None:
        """Stop: the queued runs are cancelled, the one in flight gets at most ``shutdown_wait``
        seconds. ``wait()`` first to let every run finish."""
        wait_for(self._stop(), timeout=self.shutdown_wait)

    def _stop(self) -> list[Future]:
        """No more runs; the queued ones cancelled. Returns the run still in flight, if any."""
        _OPEN.discard(self)
        self.pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            pending, self._pending = self._pending, []
        return [f for f in pending if not f.done()]


def snapshot(request: dict) -> dict:
    """The request as sent, frozen for a later KM run without a deep copy: the agent's later calls
    append to the history and build a new request each time, and never edit a message already sent
    (the history is append-only; a layout marks its own copies, a compaction builds new messages),
    so copying the containers that do change, the request and its lists, is enough."""
    return {key: list(value) if isinstance(value, list) else value for key, value in request.items()}


_OPEN: "weakref.WeakSet[KnowledgeManager]" = weakref.WeakSet()  # not yet closed


@atexit.register
def _close_at_exit() -> None:
    """The KMs left open when the interpreter exits are closed together: one wait, at most the
    longest ``shutdown_wait``, however many there are."""
    kms = list(_OPEN)
    in_flight = [future for km in kms for future in km._stop()]
    wait_for(in_flight, timeout=max((km.shutdown_wait for km in kms), default=0.0))


class Ticker:
    """The 15 s ticker as a daemon thread: every ``period`` seconds it offers the KM a run on the
    agent's latest request (the KM's triggers decide whether one is due). ``stop()`` ends it."""

    def __init__(self, km: KnowledgeManager, agent, period: float = 1.0):
        self.km, self.agent, self.period = km, agent, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="km-ticker", daemon=True)

    def start(self) -> "Ticker":
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self.km.tick(self.agent)
            except Exception as e:  # noqa: BLE001  (the ticker outlives a bad tick)
                log.warning("KM ticker: %s", e)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class SerialPool(Executor):
    """Runs each job when it is submitted: for deterministic measurement only (the working agent
    then does wait for the KM, which is what the real pool exists to avoid)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001
            future.set_exception(e)
        return future
