"""Server-side compaction: on a threshold (``compact_20260112``) and on demand (``compaction``).

[CT] https://platform.claude.com/docs/en/build-with-claude/compaction-threshold (beta compact-2026-01-12):
a ``context_management.edits`` entry; when the prompt reaches ``trigger`` (default 150,000 input
tokens, at least 50,000) the API summarizes it into a ``compaction`` block at the start of the
response, then continues the response from the summary (or stops there, ``stop_reason:
"compaction"``, with ``pause_after_compaction``). Content before the newest block is ignored on
later requests. The summarization is billed as a ``compaction`` entry of ``usage.iterations`` and
left out of the top-level usage.

[COD] .../compaction-on-demand (beta compact-2026-09-04): top-level ``compaction: {"type":
"summarize"}`` summarizes all of ``messages`` and returns only the block (``stop_reason:
"compaction"``, top-level usage 0). The block then goes *first* in ``messages``, in place of what it
summarizes; anything in front of it is ``compaction_block_misplaced``; one block per request.

Neither is an edit for the prefix check; the checked prefix restarts at the newest block [PT].

The summary comes from the policy when it has a ``summarize(request, instructions)`` method;
otherwise it is a deterministic stand-in, labelled SIMULATED: the first line of every turn and,
verbatim, every URL and path the summarized messages mention.
"""

from __future__ import annotations

import re
from typing import Any

from ..provider.models import COMPACT_ON_DEMAND_BETA as ON_DEMAND_BETA, COMPACT_THRESHOLD_BETA as THRESHOLD_BETA
from . import binding
from .errors import bad_request
EDIT = "compact_20260112"
DEFAULT_TRIGGER, MIN_TRIGGER = 150_000, 50_000
BLOCK_FIELDS = {"type", "content", "encrypted_content", "signature", "tool_changes", "cache_control"}
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
_PATH = re.compile(r"(?<![\w/.:])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|(?<![\w/])[\w-]+\.(?:md|txt|json|py|csv|html)\b")


def threshold_edit(request: dict) -> dict | None:
    """The request's ``compact_20260112`` edit, validated, or None.

    UNVERIFIED: a threshold edit on a request that resends signed thinking blocks is accepted (and
    the blocks stay valid: [PT] says threshold compaction "doesn't count as an edit"). Whether the
    real API refuses or changes anything there is not in a source we found. Searched (2026-12-01):
    the docs corpus ([CT], [CTB] compaction-thinking-blocks, which covers on-demand compaction only,
    [PT]), GitHub issues (compact_20260112 with thinking signatures) and the SDKs' code; kept as is."""
    edits = (request.get("context_management") or {}).get("edits") or []
    found = [(k, e) for k, e in enumerate(edits) if isinstance(e, dict) and e.get("type") == EDIT]
    if not found:
        return None
    k, edit = found[0]
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": DEFAULT_TRIGGER}
    if not isinstance(trigger, dict) or trigger.get("type") != "input_tokens":
        raise bad_request(f"context_management.edits.{k}.trigger.type: only input_tokens is supported")
    if not isinstance(trigger.get("value"), int) or trigger["value"] < MIN_TRIGGER:
        raise bad_request(f"context_management.edits.{k}.trigger.value: must be at least {MIN_TRIGGER}")
    if not isinstance(edit.get("pause_after_compaction", False), bool):
        raise bad_request(f"context_management.edits.{k}.pause_after_compaction: must be a boolean")
    if not isinstance(edit.get("instructions"), (str, type(None))):
        raise bad_request(f"context_management.edits.{k}.instructions: must be a string")
    return {"trigger": trigger["value"], "pause": bool(edit.get("pause_after_compaction")),
            "instructions": edit.get("instructions")}


def find_blocks(messages: list) -> list[tuple[int, int, dict]]:
    """Every compaction block in the request, in order: (message, block, the block)."""
    out = []
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            out += [(i, j, b) for j, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "compaction"]
    return out


def check_blocks(blocks: list[tuple[int, int, dict]], betas: set[str]) -> tuple[int, int, dict | None]:
    """Validate the request's compaction blocks; returns where the newest one is and what it stands
    for ({'kind', 'digest', 'seed'} from its signature), or (0, -1, None) when there is none."""
    if not blocks:
        return 0, -1, None
    newest = None
    on_demand = 0
    for i, j, block in blocks:
        where = f"messages.{i}.content.{j}"
        extra = set(block) - BLOCK_FIELDS
        if extra:
            raise bad_request(f"{where}.{sorted(extra)[0]}: Extra inputs are not permitted")
        if block.get("content") == "":
            raise bad_request(f"{where}.content: empty string content is not allowed (use null for a failed summary)")
        if block.get("content") is not None and not isinstance(block.get("content"), str):
            raise bad_request(f"{where}.content: must be a string or null")
        if block.get("content") is None:
            continue  # a failed summary round-trips as a no-op [CT]
        record = binding.read(block.get("signature"))
        if record is None or record.get("k") not in ("ct", "cod"):
            raise bad_request(f"{where}.signature: the compaction block's signature is invalid", "compaction_signature_invalid")
        if record.get("h") != binding.text_digest({"thinking": block["content"]}):
            raise bad_request(f"{where}.content: the compaction block's content does not match its signature",
                              "compaction_content_mismatch")
        needed = ON_DEMAND_BETA if record["k"] == "cod" else THRESHOLD_BETA
        if needed not in betas:
            raise bad_request(f"{where}: compaction blocks require anthropic-beta: {needed}")
        if record["k"] == "cod":
            on_demand += 1
            if (i, j) != (0, 0):
                raise bad_request(f"{where}: an on-demand compaction block must come first in messages",
                                  "compaction_block_misplaced")
        newest = (i, j, record)
    if on_demand > 1:
        raise bad_request("messages: at most one on-demand compaction block per request")
    return newest if newest else (0, -1, None)


def block(kind: str, summary: str, digest: bytes, seed: bytes, tool_changes: list | None = None) -> dict:
    """A signed compaction block. ``digest``: what the block stands for in the prefix check."""
    record = {"k": kind, "d": digest.hex(), "s": seed.hex(), "h": binding.text_digest({"thinking": summary})}
    out: dict[str, Any] = {"type": "compaction", "content": summary, "signature": binding.sign(record)}
    if tool_changes is not None:
        out["tool_changes"] = tool_changes
    return out


def start_digest(record: dict | None, seed: bytes) -> bytes | None:
    """The digest the prefix check starts from at the newest block: the block's own, unless
    ``system`` or ``tools`` changed since, in which case nothing kept after it can match [CTB]."""
    if record is None:
        return None
    digest = bytes.fromhex(record["d"])
    return digest if record.get("s") == seed.hex() else binding.digest_of(digest, seed)


def default_summary(messages: list, instructions: str | None = None) -> str:
    """The SIMULATED summary: deterministic, so runs repeat; never what a model would write."""
    lines, verbatim = [], []
    for message in messages:
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        for text in _texts(message.get("content") if isinstance(message, dict) else None):
            first = text.strip().splitlines()[0] if text.strip() else ""
            if first:
                lines.append(f"- {role}: {first[:160]}")
            for found in _URL.findall(text) + _PATH.findall(text):
                if found not in verbatim:
                    verbatim.append(found)
    head = "[SIMULATED summary by the offline emulator: first lines of each turn, then every URL and path verbatim]"
    if instructions and instructions.strip():
        head += f"\n(instructions given: {instructions.strip()[:200]})"
    return "\n".join([head, *lines, "", "URLs and paths:", *(f"- {v}" for v in verbatim)])


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            out.append(str(b.get("text", "")))
        elif b.get("type") == "tool_result":
            inner = b.get("content")
            out += [inner] if isinstance(inner, str) else _texts(inner)
        elif b.get("type") == "tool_use":
            out.append(f"{b.get('name')} {b.get('input')}")
        elif b.get("type") == "compaction" and b.get("content"):
            out.append(b["content"])
    return out


def tool_changes(before: list[dict], after: list[dict]) -> list[dict]:
    """The additions and removals that take the tools on offer ``before`` to those ``after``."""
    names_before, names_after = {t["name"] for t in before}, {t["name"] for t in after}
    return ([{"type": "tool_addition", "tool": {"type": "tool_reference", "name": n}} for n in sorted(names_after - names_before)]
            + [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": n}} for n in sorted(names_before - names_after)])
