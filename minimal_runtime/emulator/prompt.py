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

from ..provider.models import MAX_BREAKPOINTS, TTL_SECONDS
from .errors import bad_request
from .tokens import block_tokens
# Blocks that cannot carry a breakpoint themselves; automatic caching skips past them.
UNCACHEABLE_TYPES = {"thinking", "redacted_thinking"}
# Values under these keys are arbitrary JSON rendered verbatim, so their key order is part of the
# prompt (non-deterministic serialization of tool input really does break the cache).
VERBATIM_KEYS = {"input", "input_schema"}
_PLAIN_TEXT_KEYS = {"type", "text", "cache_control"}
_PLAIN_RESULT_KEYS = {"type", "tool_use_id", "content", "is_error", "cache_control"}
_PLAIN_TOOL_USE_KEYS = {"type", "id", "name", "input", "cache_control"}


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (v if k in VERBATIM_KEYS else _canonical(v)) for k, v in sorted(value.items()) if k != "cache_control"}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def render_block(block: dict, role: str = "") -> str:
    """The block as the model reads it. ``cache_control`` is a marker, not content, so it is dropped.
    The common shapes take a fast path; this runs for every block of every emulated call."""
    kind = block.get("type")
    if kind == "text" and block.keys() <= _PLAIN_TEXT_KEYS:
        return f"{role}|text|{block['text']}"
    if kind == "tool_result" and isinstance(block.get("content"), str) and block.keys() <= _PLAIN_RESULT_KEYS:
        return f"{role}|tool_result|{block['tool_use_id']}|{block.get('is_error', False)}|{block['content']}"
    if kind == "tool_use" and block.keys() <= _PLAIN_TOOL_USE_KEYS:
        return f"{role}|tool_use|{block['id']}|{block['name']}|{json.dumps(block['input'], ensure_ascii=False)}"
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
    msg_ends: list[int] = field(default_factory=list)  # position of each message's last block
    explicit_breakpoints: list[tuple[int, int]] = field(default_factory=list)
    messages_seed: bytes = b""  # digest just before the first message block

    def _append(self, prev: bytes, rendered: str, block: dict, where: Any) -> bytes:
        digest = _digest(prev, rendered)
        n = block_tokens(block, rendered)
        self.tokens.append(n)
        self.cum.append((self.cum[-1] if self.cum else 0) + n)
        self.digests.append(digest)
        if "cache_control" in block:
            self.explicit_breakpoints.append((len(self.tokens) - 1, _cache_ttl(block["cache_control"], where)))
        return digest

    @property
    def total(self) -> int:
        return self.cum[-1] if self.cum else 0

    def prefix_tokens(self, position: int) -> int:
        return self.cum[position] if position >= 0 else 0


def as_blocks(content: Any) -> list[dict]:
    """String content is shorthand for one text block; the API treats the two the same."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _cache_ttl(cc: Any, where: Any) -> int:
    where = _path(where)  # built only when needed: most blocks never use it
    if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
        raise bad_request(f"{where}.cache_control: expected {{'type': 'ephemeral'}}")
    ttl = cc.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise bad_request(f"{where}.cache_control.ttl: must be '5m' or '1h', got {ttl!r}")
    return TTL_SECONDS[ttl]


def flatten(request: dict, reuse: tuple["Prompt", int] | None = None) -> Prompt:
    """Render, digest and find the breakpoints of a (structurally valid) request.

    ``reuse=(earlier, k)`` says the first ``k`` messages are byte-identical to those of the request
    ``earlier`` was made from; if tools, system and parameters match too, their blocks are taken
    from ``earlier`` instead of being rendered again (agent calls share almost all their prefix).
    """
    p = Prompt()
    prev = _digest(b"", "model:" + request["model"])
    system = request.get("system")
    for segment, blocks in (("tools", request.get("tools") or []), ("system", as_blocks(system) if system else [])):
        hasher = hashlib.blake2b(digest_size=16)
        for i, block in enumerate(blocks):
            rendered = render_block(block)
            hasher.update(rendered.encode("utf-8", "surrogatepass"))
            prev = p._append(prev, rendered, block, f"{segment}.{i}")
        setattr(p, f"{segment}_fp", hasher.digest())

    # tool_choice and thinking shape how messages are rendered, so a change to either invalidates
    # the messages cache but keeps tools and system cached [caching: "What invalidates the cache"].
    params = json.dumps({k: request.get(k) for k in ("tool_choice", "thinking")}, sort_keys=True)
    p.params_fp = _digest(b"", params)
    prev = p.messages_seed = _digest(prev, "params:" + params)

    messages, first = request["messages"], 0
    if reuse and reuse[1] and reuse[0].messages_seed == prev:
        earlier, first = reuse
        head, upto = len(p.tokens), earlier.msg_ends[first - 1] + 1
        p.tokens, p.cum, p.digests = earlier.tokens[:upto], earlier.cum[:upto], earlier.digests[:upto]
        p.explicit_breakpoints = [b for b in earlier.explicit_breakpoints if b[0] < upto]
        p.msg_ends = earlier.msg_ends[:first]
        if upto > head:  # else the reused messages were all empty and prev is still the seed
            prev = p.digests[-1]
    for m in range(first, len(messages)):
        role = messages[m]["role"]
        for i, block in enumerate(as_blocks(messages[m]["content"])):
            prev = p._append(prev, render_block(block, role), block, (m, i))
        p.msg_ends.append(len(p.tokens) - 1)
    # A message's fingerprint is the chained digest at its last block: equal fingerprints mean
    # equal messages up to and including that one.
    p.message_fps = [p.digests[end] if end >= 0 else b"" for end in p.msg_ends]

    p.breakpoints = sorted(p.explicit_breakpoints)
    _add_automatic_breakpoint(request, p)
    _check_breakpoints(p)
    return p


def _add_automatic_breakpoint(request: dict, p: Prompt) -> None:
    """Top-level ``cache_control`` puts a breakpoint on the last cacheable block [caching:
    "Automatic caching"]. It uses one of the four slots. If that block already carries an explicit
    breakpoint with the same TTL the two are one breakpoint; with a different TTL the request is
    ambiguous and we refuse it (our reading of the documented conflict rule)."""
    cc = request.get("cache_control")
    if cc is None:
        return
    ttl = _cache_ttl(cc, "cache_control")
    system = request.get("system")
    blocks = [*(request.get("tools") or []), *(as_blocks(system) if system else []),
              *(b for m in request["messages"] for b in as_blocks(m["content"]))]
    pos = next((i for i in range(len(blocks) - 1, -1, -1) if blocks[i].get("type") not in UNCACHEABLE_TYPES), None)
    if pos is None:
        return
    existing = dict(p.breakpoints)
    if pos in existing:
        if existing[pos] != ttl:
            raise bad_request(f"cache_control: conflicts with the TTL of the breakpoint on block {pos}")
        return
    p.breakpoints.append((pos, ttl))
    p.breakpoints.sort()


def _path(where: Any) -> str:
    return f"messages.{where[0]}.content.{where[1]}" if isinstance(where, tuple) else where


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
