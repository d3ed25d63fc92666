"""Preserved thinking: every thinking block is bound to the conversation it was produced in.

From https://platform.claude.com/docs/en/build-with-claude/preserved-thinking ([PT], API-2026.md §1):

- A block's *prefix* is the top-level ``system``, the (non-deferred) ``tools`` and every message
  before it. Earlier thinking blocks are not part of it; ``cache_control`` is not; JSON key order
  is not ("the values do"). A cleared turn-scoped system message left in place is part of it, so
  dropping or rewording one is an edit.
- Each block also records the block before it, across turns. Removing blocks from the start, the
  end, or all of them is fine; a gap in the middle, a moved block or a block put back fails.
- An invalid block invalidates every later thinking block.
- The *model check*: a block made by a model the requested model may not read is always dropped,
  silently, whatever the request asks for.
- With server-side compaction the checked prefix starts at the newest compaction block.

The signature we hand out is our own format (the real one is opaque): a signed record of the
producing model and account, a digest of the prefix, the id of the block before it, a digest of the
block's reasoning and how many tokens it took. The real signature "carries the encrypted full
thinking"; "the server decrypts the signature to reconstruct the original thinking for prompt
construction" and the block is billed as that thinking, whatever ``display`` showed ([TH]
https://platform.claude.com/docs/en/build-with-claude/thinking, "Controlling thinking display"):
ours carries the reasoning's token count for the same purpose (``reasoning_tokens``). The signature
is the same under every ``display`` [TH]. Changing the signature, or text the API returned, is a
different 400 ("tampered"); text put into a block returned empty ("omitted") "is ignored" [TH].
A ``redacted_thinking`` block carries the same record in its ``data`` [TH "Redacted thinking blocks"].

Speed: a body's per-message digests and per-block verdicts are kept with the parsed body, so a
request that repeats an earlier one's messages only checks what is new (turn 1000 costs what turn
300 does).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ..provider.content import in_one_form
from ..provider.models import MODELS, ModelSpec

_KEY = b"emulated-messages-api-signing-key"  # fixed: a resumed process still verifies its blocks
THINKING_TYPES = ("thinking", "redacted_thinking")
SKIPPED = (*THINKING_TYPES, "compaction")

Reason = Literal["prefix_binding_mismatch", "model_binding_mismatch", "organization_binding_mismatch"]


def digest_of(*parts: bytes) -> bytes:
    """One 16-byte digest of the parts, kept apart by a separator (what every binding and seed is made of)."""
    return hashlib.blake2b(b"\x00".join(parts), digest_size=16).digest()


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):  # a tool_result's one text block is its text (provider/content.py)
        return {k: _canonical(v) for k, v in in_one_form(value).items() if k != "cache_control"}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def canon(value: Any) -> bytes:
    """The bytes a binding compares: values, not formatting (sorted keys, no cache_control)."""
    return json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "surrogatepass")


def _blocks(content: Any) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def message_digest(message: dict, deferred: dict | None = None) -> bytes:
    """A message as its later blocks' prefix sees it: thinking blocks (and a compaction block, which
    the check starts from instead) left out. A ``tool_addition`` that references a deferred tool
    (``deferred``: name -> definition) brings that definition into the prefix from there on: only a
    deferred tool "that nothing has referenced yet" may change freely [PT]."""
    blocks = [b for b in _blocks(message.get("content")) if not (isinstance(b, dict) and b.get("type") in SKIPPED)]
    rest = {k: v for k, v in message.items() if k != "content"}
    referenced = [deferred[name] for name in _references(blocks) if name in deferred] if deferred else []
    return digest_of(canon(rest), canon(blocks), *([canon(referenced)] if referenced else []))


def _references(blocks: list) -> list[str]:
    return [b["tool"].get("name") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_addition"
            and isinstance(b.get("tool"), dict) and b["tool"].get("type") == "tool_reference"]


def deferred_tools(request: dict) -> dict:
    """The ``defer_loading`` tools, by name: outside the prefix until a tool_addition references one."""
    return {t["name"]: t for t in request.get("tools") or [] if isinstance(t, dict) and t.get("defer_loading")
            and isinstance(t.get("name"), str)}


def seed(request: dict) -> bytes:
    """``system`` and the non-deferred ``tools``: a deferred tool added later is not an edit [PT]."""
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and not t.get("defer_loading")]
    system = request.get("system")
    return digest_of(b"seed", canon(tools), canon(_blocks(system) if system else []))


# -- signatures ---------------------------------------------------------------------------------

def sign(record: dict) -> str:
    body = base64.urlsafe_b64encode(json.dumps(record, separators=(",", ":"), sort_keys=True).encode()).decode()
    mac = hmac.new(_KEY, body.encode(), hashlib.sha256).hexdigest()[:24]
    return f"emu1.{body}.{mac}"


def read(signature: Any) -> dict | None:
    """The signed record, or None for a signature that is empty, garbled or altered."""
    if not isinstance(signature, str) or signature.count(".") != 2:
        return None
    tag, body, mac = signature.split(".")
    if tag != "emu1" or not hmac.compare_digest(mac, hmac.new(_KEY, body.encode(), hashlib.sha256).hexdigest()[:24]):
        return None
    try:
        record = json.loads(base64.urlsafe_b64decode(body.encode()))
    except (ValueError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def text_digest(block: dict) -> str:
    return digest_of(canon(block.get("thinking", block.get("data", "")))).hex()[:16]


def signature_of(block: dict) -> Any:
    """Where a thinking block keeps its signed record: ``signature``, or a redacted block's ``data``."""
    return block.get("data") if block.get("type") == "redacted_thinking" else block.get("signature")


def thinking_block(spec: ModelSpec, account: str, prefix: bytes, previous: str | None, reasoning: str,
                   shown: str, tokens: int, redacted: bool = False) -> dict:
    """A new signed thinking block for a response whose request ended with ``prefix``: its record
    names the ``reasoning`` and its ``tokens``; the block shows ``shown`` (empty when omitted)."""
    ident = digest_of(prefix, (previous or "").encode(), reasoning.encode("utf-8", "surrogatepass")).hex()[:16]
    signature = sign({"k": "thinking", "m": spec.id, "a": account, "p": prefix.hex(), "c": previous or "",
                      "i": ident, "t": text_digest({"thinking": reasoning}), "n": tokens})
    if redacted:
        return {"type": "redacted_thinking", "data": signature}
    return {"type": "thinking", "thinking": shown, "signature": signature}


def reasoning_tokens(block: dict) -> int | None:
    """The tokens of the reasoning a thinking block stands for, from its record (no HMAC check: the
    binding check has refused a forged one before anything is billed), or None if unreadable."""
    signature = signature_of(block)
    if not isinstance(signature, str) or signature.count(".") != 2:
        return None
    try:
        record = json.loads(base64.urlsafe_b64decode(signature.split(".")[1].encode()))
    except (ValueError, UnicodeDecodeError):
        return None
    n = record.get("n") if isinstance(record, dict) else None
    return n if isinstance(n, int) else None


def _text_ok(block: dict, record: dict, omitted: Any) -> bool:
    """A thinking block's text passes if it is empty, is the reasoning the record names, or the block
    was returned empty (text put into an omitted block "is ignored" [TH]). A redacted block has none."""
    if block.get("type") == "redacted_thinking":
        return True
    text = block.get("thinking")
    return not text or record.get("t") == text_digest(block) or record.get("i") in omitted


# -- which model may read whose blocks [PT model check] -----------------------------------------

def can_read(reader: str, producer: str) -> bool:
    """Fable/Mythos 5.1 read each other, earlier models and Opus 5.5; Opus 5.5 reads Opus 5 and earlier
    Opus, Sonnet and Haiku, no Fable or Mythos; only Fable/Mythos 5.2 read 5.2 blocks [PT, F52].
    Sonnet 5.5 and Haiku 5.5 are not described: we let them read their own blocks and older
    non-Fable/Mythos ones (our reading)."""
    if reader == producer:
        return True
    five_two = {"claude-fable-5-2", "claude-mythos-5-2"}
    if producer in five_two:
        return reader in five_two
    if reader in five_two:
        return True
    fable_mythos = producer.startswith(("claude-fable", "claude-mythos"))
    if reader in ("claude-fable-5-1", "claude-mythos-5-1"):
        return producer not in ("claude-sonnet-5-5", "claude-haiku-5-5")
    if reader in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"):
        return not fable_mythos and producer not in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5")
    # A model without the check reads older blocks, not those of the models that bind them: [PT] names
    # who reads whose blocks, and no model without the check is among the readers of a 5.1, 5.2 or 5.5
    # block; an unreadable block is dropped silently and unbilled (issue 23's read: Fable 5.1 -> Opus 5,
    # Opus 5.5 -> Opus 5). Between older models we let blocks through, as before.
    made = MODELS.get(producer)
    return made is None or made.prefix_check == "none"


# -- the check ----------------------------------------------------------------------------------

@dataclass
class Verdict:
    message: int
    block: int
    ident: str
    reason: Reason | None  # None: valid
    tampered: bool = False
    alone: bool = True  # False: valid on its own, invalid only because an earlier block failed

    @property
    def path(self) -> str:
        return f"messages.{self.message}.content.{self.block}"


@dataclass
class Binding:
    """One request's binding state: per-message digests and per-block verdicts, reusable by a later
    request that repeats this one's first messages."""

    key: tuple  # (seed, model, account, start): a later request reuses the state only if equal
    start: int  # the newest compaction block's message: the check starts there
    chain: list[bytes] = field(default_factory=list)  # digest through message i (index from 0)
    verdicts: list[Verdict] = field(default_factory=list)
    state: list[tuple[str | None, bool]] = field(default_factory=list)  # (last block id, failed) after message i

    def prefix(self, upto: int) -> bytes:
        """The digest of everything before message ``upto``."""
        return self.chain[upto - 1] if upto > 0 else self.base

    base: bytes = b""


def check(request: dict, spec: ModelSpec, account: str, start: int, start_digest: bytes | None,
          earlier: Binding | None = None, shared: int = 0, omitted: Any = ()) -> Binding:
    """Verdicts for every thinking block from message ``start`` on (``start_digest``: what the
    compaction block there stands for, if any). Reuses ``earlier`` for the first ``shared`` messages."""
    messages = request["messages"]
    s = seed(request)
    deferred = deferred_tools(request)
    b = Binding(key=(s, spec.id, account, start, start_digest, canon(deferred) if deferred else b""), start=start)
    b.base = start_digest if start_digest is not None else digest_of(s)
    first = start
    if earlier is not None and earlier.key == b.key and shared > start:
        n = min(shared, len(earlier.chain))
        b.chain, b.state = earlier.chain[:n], earlier.state[:n]
        b.verdicts = [v for v in earlier.verdicts if v.message < n]
        first = n
    else:
        b.chain = [b.base] * start  # messages before a compaction block are ignored
        b.state = [(None, False)] * start
    last, failed = b.state[first - 1] if first > 0 and b.state else (None, False)
    if first == start:
        last, failed = None, False
    ids_in_request = None
    for i in range(first, len(messages)):
        message = messages[i]
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and message.get("role") == "assistant":
            before = b.prefix(i)
            kept: list = []
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") in THINKING_TYPES:
                    record = read(signature_of(block))
                    if record is None or not _text_ok(block, record, omitted):
                        b.verdicts.append(Verdict(i, j, "", "prefix_binding_mismatch", tampered=True))
                        continue
                    ident = record.get("i", "")
                    here = digest_of(before, canon(kept)) if kept else before
                    if not can_read(spec.id, record.get("m", "")):
                        b.verdicts.append(Verdict(i, j, ident, "model_binding_mismatch"))
                        continue
                    if record.get("a") != account and spec.prefix_check != "none":
                        b.verdicts.append(Verdict(i, j, ident, "organization_binding_mismatch"))
                        failed = True
                        continue
                    if last is None:  # the first block: blocks removed before it are fine, a moved one is not
                        if ids_in_request is None:
                            ids_in_request = _ids(messages)
                        chained = record.get("c", "") not in ids_in_request
                    else:
                        chained = record.get("c", "") == last
                    own = chained and record.get("p") == here.hex()
                    ok = not failed and own
                    failed = failed or not ok
                    b.verdicts.append(Verdict(i, j, ident, None if ok else "prefix_binding_mismatch", alone=not own))
                    last = ident
                elif not (isinstance(block, dict) and block.get("type") == "compaction"):
                    kept.append(block)
        if i == start and start_digest is not None and _only(message, "compaction"):
            b.chain.append(b.base)  # the block stands for what it summarized: kept turns chain on from there
        else:
            b.chain.append(digest_of(b.prefix(i), message_digest(message, deferred)) if isinstance(message, dict) else b.prefix(i))
        b.state.append((last, failed))
    return b


def _only(message: dict, kind: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and bool(content) and all(isinstance(b, dict) and b.get("type") == kind
                                                                for b in content)


def _ids(messages: list) -> set[str]:
    out = set()
    for message in messages:
        for block in message.get("content") or [] if isinstance(message, dict) and isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") in THINKING_TYPES:
                record = read(signature_of(block))
                if record:
                    out.add(record.get("i", ""))
    return out


def response_prefix(binding: Binding, n_messages: int) -> bytes:
    """The prefix a response's first block is bound to: everything the request sent."""
    return binding.prefix(n_messages)


def last_kept(binding: Binding, dropped: set[tuple[int, int]]) -> str | None:
    """The id of the last thinking block the model saw: a new block records it as its predecessor."""
    for v in reversed(binding.verdicts):
        if (v.message, v.block) not in dropped and v.ident and not v.tampered and v.message >= binding.start:
            return v.ident
    return None


def error_message(verdict: Verdict, beta: bool, changed: str | None) -> str:
    """The documented 400 for an enforced prefix failure [PT], verbatim, with its optional tail."""
    text = (f"{verdict.path}: Invalid `signature` in `thinking` block. The block is bound to a different "
            "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\".")
    if not beta:
        text += " That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header."
    if changed:
        text += f" Content that preceded this block when it was created is missing from this request, starting at `{changed}`."
    return text
