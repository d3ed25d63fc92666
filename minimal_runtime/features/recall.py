"""Restorable compression: what a compaction drops stays one path away, byte for byte.

Nobody knows which observation will matter ten steps later, so nothing leaves the context without
a path that gives it back:

- every tool call has a compact form (``compact_call``): a written file keeps its path, anything
  else its source and the path of a saved copy (``Keeper``, in the run's workspace);
- a summary carries the verbatim ``appendix`` of every URL and path the summarized messages named,
  a tool call's URL and saved copy on one line (``appendix_lines``);
- ``restorable`` checks the promise: of everything a run produced (``Produced``) and no longer
  shows in full, how much a path in view gives back exactly.

``features.compaction`` decides when and how to shrink; this module is what keeps it honest.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core.hooks import HookEvent, HookRegistry, Point
from .filesystem import OBSERVATIONS, OffloadRecord, append_inside, read_inside, write_whole

RECALL = "read_file"
COMPACTED = f"{OBSERVATIONS}/compacted.jsonl"  # which calls the runtime compacted (``CompactedRecord``)
APPENDIX_FILE = "appendix"  # a long appendix is saved as .observations/appendix-<hash>.txt
THINKING = ("thinking", "redacted_thinking")


class CompactedRecord:
    """The run's own record of the calls it compacted: one JSON line per compact form written
    (tool_use id, sha256 of the form), in the workspace's ``.observations`` where only the runtime
    writes. A call is compact when this record says the runtime made its current form, never
    because its text looks like one: a tool can print ``[compacted: ...`` too."""

    def __init__(self, root: Path):
        self.root = root
        self._forms: dict[str, str] | None = None  # tool_use id -> digest, read from the file once

    def add(self, tool_use_id: str, form: str) -> None:
        digest = _digest(form)
        if self._read().get(tool_use_id) == digest:
            return  # a layout that compacts at every assembly writes each form once
        append_inside(self.root, COMPACTED, json.dumps({"id": tool_use_id, "sha256": digest}).encode() + b"\n")
        self._read()[tool_use_id] = digest

    def made(self, tool_use_id: str, form: str) -> bool:
        """Did the runtime write exactly ``form`` as this call's compact form?"""
        return self._read().get(tool_use_id) == _digest(form)

    def _read(self) -> dict[str, str]:
        if self._forms is None:
            self._forms = {}
            try:
                lines = read_inside(self.root, COMPACTED).splitlines()
            except OSError:
                lines = []
            for line in lines:
                try:
                    entry = json.loads(line)
                    self._forms[entry["id"]] = entry["sha256"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut by a kill names nothing
        return self._forms


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class Keeper:
    """Where dropped content stays readable, byte for byte: the run's workspace, and nowhere else
    (a ``.observations`` that is a link is refused, as the offloader refuses it, even one swapped in
    mid-write: see ``filesystem.write_whole``)."""

    def __init__(self, workspace: str | Path):
        self.root = Path(workspace).resolve()
        self.offloads = OffloadRecord(self.root)  # what the offloader saved, from its own record
        self.compacted = CompactedRecord(self.root)  # which calls this runtime compacted, from its own record

    def holds(self, path: str, content: str) -> bool:
        """Is the file at ``path`` exactly ``content``?"""
        try:
            return read_inside(self.root, path) == content.encode("utf-8", "surrogateescape")
        except OSError:  # not there, not a file, outside the workspace or through a link
            return False

    def keep(self, content: str, kind: str = "compacted") -> str:
        """Save ``content`` (once: the name is its hash) and return its path in the workspace. A file
        already under that name is reused only if its bytes still match the hash in its name (a
        copy cut short by a kill or a full disk is written again), and every write is whole
        (``write_whole``): what the history points at is never a part of what was dropped."""
        data = content.encode("utf-8", "surrogateescape")
        digest = hashlib.sha256(data).hexdigest()[:16]
        path = f"{OBSERVATIONS}/{kind}-{digest}.txt"
        try:
            kept = hashlib.sha256(read_inside(self.root, path)).hexdigest()[:16] == digest
        except FileNotFoundError:
            kept = False
        if not kept:
            write_whole(self.root, path, data)
        return path

    def offloaded(self, tool_use_id: str) -> str | None:
        """Where the offloader saved this call's whole output, if it did (``OffloadRecord``)."""
        return self.offloads.saved(tool_use_id)


def compact_call(tool_use: dict, result: dict, keeper: Keeper) -> tuple[dict, dict]:
    """The compact representation of one tool call: what can be rebuilt from outside is replaced by
    where it is. A write keeps its path and loses its content (the file has it; if the file has
    changed since, a copy is saved); any other result becomes a line naming its source and a saved
    path (an offloaded result's own file, or a new one)."""
    if is_compacted(tool_use, result, keeper):
        return tool_use, result
    args = tool_use.get("input") or {}
    if tool_use.get("name") == "write_file" and isinstance(args.get("content"), str):
        written, path = args["content"], str(args.get("path"))
        where = path if keeper.holds(path, written) else keeper.keep(written)
        form = f"[{len(written):,} characters, in {where}]"
        keeper.compacted.add(str(tool_use.get("id")), form)
        return {**tool_use, "input": {**args, "content": form}}, result
    content = result_text(result.get("content"))
    saved = keeper.offloaded(str(tool_use.get("id"))) or keeper.keep(content)
    source = args.get("url") or args.get("path") or ""
    note = (f"[compacted: {tool_use.get('name')} {source}".rstrip() +
            f"; the full result is saved at {saved}; {RECALL} {saved} to see it again]")
    keeper.compacted.add(str(tool_use.get("id")), note)
    return tool_use, {**result, "content": note}


def is_compacted(tool_use: dict, result: dict, keeper: Keeper) -> bool:
    """Is this call in the compact form the runtime gave it (a write's content replaced by its
    path, or any other result by its saved path)? Asked of the run's record (``CompactedRecord``),
    never of the text: a result a tool printed to look compact is still compacted, and saved."""
    written = (tool_use.get("input") or {}).get("content")
    form = written if tool_use.get("name") == "write_file" and isinstance(written, str) else \
        result_text(result.get("content"))
    return keeper.compacted.made(str(tool_use.get("id")), form)


# -- the verbatim appendix --------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
_PATH = re.compile(r"(?<![\w/.:-])(?:\.{1,2}/|/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8}(?![\w/])")


def appendix(texts: list[str]) -> list[str]:
    """Every URL and every file path in ``texts``, verbatim, once each, in the order first seen.

    A URL starts with ``http://`` or ``https://`` and runs to whitespace, a quote or a closing
    bracket; a trailing ``.``, ``,``, ``;`` or ``:`` is punctuation, not part of it. A path is a
    file name with an extension, optionally behind folders (``notes/page-3.md``,
    ``/tmp/run/out.txt``, ``.observations/a-1.txt``, ``report.md``); the parts of a URL are not paths."""
    found: list[str] = []
    for text in texts:
        hits = []
        for m in _URL.finditer(text):
            hits.append((m.start(), m.group(0).rstrip(".,;:")))
        rest = _URL.sub(lambda m: " " * len(m.group(0)), text)
        for m in _PATH.finditer(rest):
            token = m.group(0).rstrip(".")
            if re.search(r"[A-Za-z]", token.rsplit(".", 1)[-1]):  # "3.14" is a number, not a file
                hits.append((m.start(), token))
        for _, hit in sorted(hits):
            if hit not in found:
                found.append(hit)
    return found


def grouped_texts(messages: list[dict]) -> list[str]:
    """``texts_of``, with each tool call's input and result joined into one text: what belongs
    together (a page's URL and the path of its saved copy) stays together in an appendix line."""
    results = {b.get("tool_use_id"): b for m in messages if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result"}
    ids = _ids(messages)
    out: list[str] = []
    for message in messages:
        if not isinstance(message.get("content"), list):
            out += texts_of([message])
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in ids:
                continue  # joined with its tool_use
            if block.get("type") == "tool_use" and block.get("id") in results:
                out.append(" ".join(texts_of([{"content": [block, results[block["id"]]]}])))
            else:  # prose, or an earlier summary: line by line, so its appendix lines stay lines
                out += [line for text in texts_of([{"content": [block]}]) for line in text.splitlines()]
    return out


def _ids(messages: list[dict]) -> set:
    return {b.get("id") for m in messages if isinstance(m.get("content"), list) for b in m["content"]
            if b.get("type") == "tool_use"}


def appendix_lines(texts: list[str]) -> list[str]:
    """The appendix as a summary shows it: one line per text that named something new, so what
    one text named together stays together."""
    seen: set[str] = set()
    lines = []
    for text in texts:
        new = [x for x in appendix([text]) if x not in seen]
        seen.update(new)
        if new:
            lines.append("- " + " ".join(new))
    return lines


def texts_of(messages: list[dict]) -> list[str]:
    """Every string a model reads in ``messages``: text, tool inputs, tool results, summaries."""
    out: list[str] = []

    def walk(value) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict) and "type" in value:  # a content block
            if value["type"] in THINKING or value["type"] in ("tool_addition", "tool_removal"):
                return
            for key in ("text", "input", "content"):
                if key in value:
                    walk(value[key])
        elif isinstance(value, dict):  # a tool's input: every value
            for v in value.values():
                walk(v)
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            walk(content)
            continue
        for block in content:  # text and string results first, without a call: most blocks are one
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str) and "input" not in block and "content" not in block:
                out.append(block["text"])
            elif kind == "tool_result" and isinstance(block.get("content"), str) and "text" not in block \
                    and "input" not in block:
                out.append(block["content"])
            else:
                walk(block)
    return out


def result_text(content) -> str:
    """A tool result's text, whether it came as a string or as text blocks."""
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content if isinstance(content, str) else ""


@dataclass
class Produced:
    """POST_TOOL_CALL: what a run produced that a compaction must not lose: every write's content
    and every other successful result, whole (an offloaded one read back from its file), by
    tool_use id."""

    keeper: Keeper
    contents: dict[str, str] = field(default_factory=dict)

    def install(self, hooks: HookRegistry) -> None:
        hooks.register(Point.POST_TOOL_CALL, self.record)

    def record(self, event: HookEvent) -> None:
        call, result = event.tool_call, event.tool_result
        if result.get("is_error"):
            return
        if call["name"] == "write_file":
            self.contents[call["id"]] = str((call.get("input") or {}).get("content", ""))
        else:
            content = result_text(result.get("content"))
            saved = self.keeper.offloaded(call["id"])  # the run's record, never the result's own say-so
            self.contents[call["id"]] = (self.keeper.root / saved).read_bytes().decode("utf-8", "surrogateescape") \
                if saved else content


def restorable(outputs: dict[str, str], seen: list[dict], keeper: Keeper) -> tuple[int, int]:
    """Of the contents (``Produced``) no longer in full in ``seen`` (the messages the model last
    read), how many a path named in ``seen`` gives back exactly: (restorable, dropped)."""
    texts = texts_of(seen)
    whole = "\n".join(texts)
    dropped = [raw for raw in outputs.values() if raw and raw not in whole]
    held, named = set(), [p for p in appendix(texts) if not p.startswith("http")]
    visited: set[str] = set()
    while named:  # a path in view, or in a saved appendix in view, or in one that names, ...
        path = named.pop()
        if path in visited:
            continue
        visited.add(path)
        try:
            data = read_inside(keeper.root, path)
        except OSError:  # not a file in the workspace (or reached through a link): gives nothing back
            continue
        held.add(hashlib.sha256(data).digest())
        if path.startswith(f"{OBSERVATIONS}/{APPENDIX_FILE}-"):
            named += [p for p in appendix([data.decode("utf-8", "replace")]) if not p.startswith("http")]
    return sum(hashlib.sha256(raw.encode("utf-8", "surrogateescape")).digest() in held for raw in dropped), len(dropped)
