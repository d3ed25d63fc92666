"""A request flattened into the sequence the prompt cache sees.

Prefix order is ``tools``, then ``system``, then ``messages`` [caching: "Cache prefixes are
created in the following order: tools, system, then messages"]. Each tool definition, each system
block and each message content block is one *block position*; positions are what the 20-block
lookback counts. Each position carries a digest of everything up to and including it, so two
requests share a cached prefix exactly when they share a digest: byte-identical prefixes.

[caching] = https://platform.claude.com/docs/en/build-with-claude/prompt-caching
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .errors import bad_request
from .tokens import estimate_tokens

MAX_BREAKPOINTS = 4  # [caching] "You can define up to 4 cache breakpoints"
TTL_SECONDS = {"5m": 300, "1h": 3600}  # [caching] default 5 minutes; "ttl": "1h" option
# Blocks that cannot carry a breakpoint themselves; automatic caching skips past them.
UNCACHEABLE_TYPES = {"thinking", "redacted_thinking"}
# Values under these keys are arbitrary JSON rendered verbatim, so their key order is part of the
# prompt (non-deterministic serialization of tool input really does break the cache).
VERBATIM_KEYS = {"input", "input_schema"}
_PLAIN_TEXT_KEYS = {"type", "text", "cache_control"}


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (v if k in VERBATIM_KEYS else _canonical(v)) for k, v in sorted(value.items()) if k != "cache_control"}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def render_block(block: dict, role: str = "") -> str:
    """The block as the model reads it. ``cache_control`` is a marker, not content, so it is dropped."""
    if block.keys() <= _PLAIN_TEXT_KEYS and block.get("type") == "text":  # fast path: the common case
        return f"{role}|text|{block['text']}"
    return role + "|" + json.dumps(_canonical(block), separators=(",", ":"), ensure_ascii=False)


def _digest(prev: bytes, data: str) -> bytes:
    return hashlib.blake2b(prev + data.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class Prompt:
    """The flattened request: tokens, prefix digests and breakpoints per block position."""

    tokens: list[int] = field(default_factory=list)
    cum: list[int] = field(default_factory=list)  # prefix tokens through position i
    digests: list[bytes] = field(default_factory=list)
    breakpoints: list[tuple[int, int]] = field(default_factory=list)  # (position, ttl seconds)
    tools_fp: bytes = b""
    system_fp: bytes = b""
    params_fp: bytes = b""
    message_fps: list[bytes] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.cum[-1] if self.cum else 0

    def prefix_tokens(self, position: int) -> int:
        return self.cum[position] if position >= 0 else 0


def as_blocks(content: Any) -> list[dict]:
    """String content is shorthand for one text block; the API treats the two the same."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _cache_ttl(cc: Any, where: str) -> int:
    if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
        raise bad_request(f"{where}.cache_control: expected {{'type': 'ephemeral'}}")
    ttl = cc.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise bad_request(f"{where}.cache_control.ttl: must be '5m' or '1h', got {ttl!r}")
    return TTL_SECONDS[ttl]


def flatten(request: dict) -> Prompt:
    """Render, digest and find the breakpoints of a (structurally valid) request."""
    p = Prompt()
    seed = _digest(b"", "model:" + request["model"])
    items: list[tuple[str, dict, str]] = []  # (segment, block, where)
    for i, tool in enumerate(request.get("tools") or []):
        items.append(("tools", tool, f"tools.{i}"))
    system = request.get("system")
    for i, block in enumerate(as_blocks(system) if system else []):
        items.append(("system", block, f"system.{i}"))
    msg_ends: list[int] = []
    for m, message in enumerate(request["messages"]):
        for i, block in enumerate(as_blocks(message["content"])):
            items.append((message["role"], block, f"messages.{m}.content.{i}"))
        msg_ends.append(len(items) - 1)

    # tool_choice and thinking shape how messages are rendered, so a change to either invalidates
    # the messages cache but keeps tools and system cached [caching: "What invalidates the cache"].
    params = json.dumps({k: request.get(k) for k in ("tool_choice", "thinking")}, sort_keys=True)
    p.params_fp = _digest(b"", params)
    prev, total, in_messages = seed, 0, False
    hasher = {"tools": hashlib.blake2b(digest_size=16), "system": hashlib.blake2b(digest_size=16)}
    for pos, (segment, block, where) in enumerate(items):
        role = segment if segment in ("user", "assistant") else ""
        rendered = render_block(block, role)
        if role and not in_messages:
            prev, in_messages = _digest(prev, "params:" + params), True
        if segment in hasher:
            hasher[segment].update(rendered.encode("utf-8", "surrogatepass"))
        prev = _digest(prev, rendered)
        total += estimate_tokens(rendered)
        p.tokens.append(total - (p.cum[-1] if p.cum else 0))
        p.cum.append(total)
        p.digests.append(prev)
        if "cache_control" in block:
            p.breakpoints.append((pos, _cache_ttl(block["cache_control"], where)))
    p.tools_fp, p.system_fp = hasher["tools"].digest(), hasher["system"].digest()
    start = 0
    for end in msg_ends:
        p.message_fps.append(_digest(b"", "".join(d.hex() for d in p.digests[start:end + 1])) if end >= start else b"")
        start = end + 1

    _add_automatic_breakpoint(request, items, p)
    _check_breakpoints(p)
    return p


def _add_automatic_breakpoint(request: dict, items: list, p: Prompt) -> None:
    """Top-level ``cache_control`` puts a breakpoint on the last cacheable block [caching:
    "Automatic caching"]. It uses one of the four slots. If that block already carries an explicit
    breakpoint with the same TTL the two are one breakpoint; with a different TTL the request is
    ambiguous and we refuse it (our reading of the documented conflict rule)."""
    cc = request.get("cache_control")
    if cc is None:
        return
    ttl = _cache_ttl(cc, "cache_control")
    for pos in range(len(items) - 1, -1, -1):
        if items[pos][1].get("type") not in UNCACHEABLE_TYPES:
            break
    else:
        return
    existing = dict(p.breakpoints)
    if pos in existing:
        if existing[pos] != ttl:
            raise bad_request(f"{items[pos][2]}.cache_control: conflicts with the top-level cache_control TTL")
        return
    p.breakpoints.append((pos, ttl))
    p.breakpoints.sort()


def _check_breakpoints(p: Prompt) -> None:
    if len(p.breakpoints) > MAX_BREAKPOINTS:
        raise bad_request(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(p.breakpoints)}."
        )
    # [caching] "Cache entries with longer TTL must appear before shorter TTLs"
    seen_short = False
    for _, ttl in p.breakpoints:
        if ttl == TTL_SECONDS["5m"]:
            seen_short = True
        elif seen_short:
            raise bad_request("cache_control: a 1h breakpoint cannot come after a 5m breakpoint")
