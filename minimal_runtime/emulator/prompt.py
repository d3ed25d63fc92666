"""A request flattened into the sequence the prompt cache sees.

Prefix order is ``tools``, then ``system``, then ``messages`` [caching: "Cache prefixes are
created in the following order: tools, system, then messages"]. Each tool definition, each system
block and each message content block is one *block position*; positions are what the 20-block
lookback counts. Each position carries a digest of everything up to and including it, so two
requests share a cached prefix exactly when they share a digest: byte-identical prefixes.

What renders is not always what was sent (``Render`` says how a request renders):
- a cleared turn-scoped system message renders nothing and costs nothing, but stays one
  zero-token position whose digest is its content, so dropping or rewording it still misses the
  cache from there [MCSM]; a model that ignores system messages (Sonnet 5) treats every one so;
- a deferred tool is not in the prompt until a ``tool_addition`` brings it in, where it renders;
- content before the newest compaction block is ignored [CT];
- thinking blocks the binding check dropped, and on models before Opus 4.5 the thinking of earlier
  turns, are not rendered [PT; context-windows];
- ``tool_choice``, ``thinking``, ``output_config`` (effort, task budget) and the set of images shape
  how the messages are read, so a change to any of them misses the messages cache but keeps tools
  and system [caching: "What invalidates the cache"; TB]. Thinking and effort count as *resolved*:
  "setting a parameter explicitly to its default value is equivalent to omitting it", and
  ``display`` and ``block_binding`` are not part of it ([TH] "Thinking and prompt caching"; the
  signature "is identical whichever display value you set"; the cache restarts at an edit only
  where ``drop_block`` drops a block [PT]). ``Render.params`` carries the resolved form;
- turning citations on or off "modifies the system prompt": the system cache and everything after
  it miss, tools stay [caching: "What invalidates the cache", "Citations toggle"];
- requests at different speeds "do not share cached prefixes" [fast-mode], and when every tool is
  deferred the first tool defined by value "changes the start of the rendered prompt and costs one
  full cache miss" [MCSM, as issue 37 quotes it]: both change the seed the digests start from.

[caching] = https://platform.claude.com/docs/en/build-with-claude/prompt-caching
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .models import MAX_BREAKPOINTS, TTL_SECONDS
from .errors import bad_request
from .binding import signature_of
from ..provider.content import as_text, in_one_form
from ..provider.models import lookup
from .tokens import STANDARD_IMAGES, block_tokens, defined_tool_tokens

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
        value = in_one_form(value)  # a tool_result's one text block is its text (provider/content.py)
        return {k: (v if k in VERBATIM_KEYS else _canonical(v)) for k, v in sorted(value.items()) if k != "cache_control"}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def render_block(block: dict, role: str = "") -> str:  # pragma: no mutate (the role is a label)
    """The block as the model reads it. ``cache_control`` is a marker, not content, so it is dropped.
    The common shapes take a fast path; this runs for every block of every emulated call."""
    kind = block.get("type")
    if kind == "text" and block.keys() <= _PLAIN_TEXT_KEYS:
        return f"{role}|text|{block['text']}"
    if kind == "tool_result" and block.keys() <= _PLAIN_RESULT_KEYS:
        content = as_text(block.get("content"))  # a string is shorthand for one text block (provider/content.py)
        if isinstance(content, str):
            return f"{role}|tool_result|{block['tool_use_id']}|{block.get('is_error', False)}|{content}"
    if kind == "tool_use" and block.keys() <= _PLAIN_TOOL_USE_KEYS:
        return f"{role}|tool_use|{block['id']}|{block['name']}|{json.dumps(block['input'], ensure_ascii=False)}"
    if kind in UNCACHEABLE_TYPES:
        # The model reads the reasoning the signature carries, not the text shown: a block sent back
        # with or without its (summarized) text is the same prompt [TH "Controlling thinking display"].
        return f"{role}|{kind}|{signature_of(block)}"
    return role + "|" + json.dumps(_canonical(block), separators=(",", ":"), ensure_ascii=False)


def _digest(prev: bytes, data: str) -> bytes:
    return hashlib.blake2b(prev + data.encode("utf-8", "surrogatepass"), digest_size=16).digest()  # pragma: no mutate


@dataclass
class Render:
    """How a request renders (see the module docstring). The defaults render it as sent."""

    start: tuple[int, int] = (0, -1)  # the newest compaction block (message, block); (0, -1): none
    drop: frozenset = frozenset()  # (message, block) of thinking blocks not shown
    last_user: int = -1  # turn-scoped system messages before this message are cleared
    prior_thinking_before: int = -1  # thinking in messages before this one is not counted (old models)
    system_messages: str = "yes"  # "ignored": every system message renders as a cleared one
    tools: dict = field(default_factory=dict)  # name -> definition, for tool_addition by reference
    params: dict | None = None  # the resolved parameters that shape how messages are read (None: as sent)
    head: str = ""  # what changes the start of the rendered prompt (speed; the all-deferred tools trap)
    citations: bool = False  # citations are on: the rendered system prompt differs

    def cleared(self, m: int, message: dict) -> bool:
        if self.system_messages == "ignored":
            return True
        return message.get("clear_at") == "next_user_message" and m < self.last_user  # pragma: no mutate (<=: last_user is a user message)

    def shows(self, m: int, i: int, block: dict) -> bool:
        if block.get("type") in UNCACHEABLE_TYPES:
            return (m, i) not in self.drop and m >= self.prior_thinking_before
        return True


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
    msg_ends: list[int] = field(default_factory=list)  # position of each message's last block
    explicit_breakpoints: list[tuple[int, int]] = field(default_factory=list)
    messages_seed: bytes = b""  # digest just before the first message block
    head: int = 0  # positions of tools and system
    images: list[int] = field(default_factory=list)  # images in messages 0..i (cumulative)
    auto_target: int = -1  # the last position automatic caching may use
    auto_upto: list[int] = field(default_factory=list)  # auto_target after each message
    head_of: tuple = ()  # (model, tools, system) as parsed: a request with the same objects has this head
    marker_at: dict = field(default_factory=dict)  # position of an explicit breakpoint -> where it was sent
    image_limits: tuple[int, int] = STANDARD_IMAGES  # the model's [VIS] limits
    tokenizer: float = 1.0  # the model's tokens per token of Sonnet 4.6's tokenizer [TOK]
    tool_prompt: int = 0  # the tool-use system prompt's tokens, at the start of the prompt
    _unplaced: int = 0  # of those, not yet in ``cum``

    def _append(self, prev: bytes, rendered: str, block: dict, where: Any, tokens: int | None = None,
                cacheable: bool = True) -> bytes:  # pragma: no mutate (the default serves tools and system only)
        digest = _digest(prev, rendered)
        n = block_tokens(block, rendered, self.image_limits, self.tokenizer) if tokens is None else tokens
        self.tokens.append(n)
        self.cum.append((self.cum[-1] if self.cum else 0) + n + self._unplaced)
        self._unplaced = 0
        self.digests.append(digest)
        if "cache_control" in block:
            self.explicit_breakpoints.append((len(self.tokens) - 1, _cache_ttl(block["cache_control"], where)))
            self.marker_at[len(self.tokens) - 1] = where
        if cacheable:
            self.auto_target = len(self.tokens) - 1
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
    """The TTL of a marker; ``where`` is the block's place ("" for the top-level parameter)."""
    # "scope" is checked (and needs its beta) in validate.py; it does not change the TTL.
    if not isinstance(cc, dict) or cc.get("type") != "ephemeral" or not cc.keys() <= {"type", "ttl", "scope"}:
        raise bad_request(f"{_field(where)}: expected {{'type': 'ephemeral'}} (and optionally 'ttl')")
    ttl = cc.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise bad_request(f"{_field(where)}.ttl: must be '5m' or '1h', got {ttl!r}")
    return TTL_SECONDS[ttl]


def _field(where: Any) -> str:
    return f"{_path(where)}.cache_control" if where else "cache_control"  # built only when needed


def _images(message: dict) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    n = 0
    for b in content:
        if isinstance(b, dict):
            if b.get("type") == "image":
                n += 1
            elif b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                n += sum(isinstance(x, dict) and x.get("type") == "image" for x in b["content"])
    return n


def _head(p: "Prompt", model: str, tools: list | None, system: Any, citations: bool = False,
          spec_id: str | None = None) -> bytes:
    """Render tools, then system, into ``p``; returns the digest after them."""
    prev = _digest(b"", "model:" + model)  # pragma: no mutate (a label inside a digest)
    tools = [t for t in tools or [] if not t.get("defer_loading")]
    for segment, blocks in (("tools", tools), ("system", as_blocks(system) if system else [])):
        if segment == "system" and citations:
            prev = _digest(prev, "citations:on")  # pragma: no mutate (a label inside a digest)
        hasher = hashlib.blake2b(digest_size=16)  # pragma: no mutate (a label inside a digest)
        for i, block in enumerate(blocks):
            rendered = render_block(block)
            hasher.update(rendered.encode("utf-8", "surrogatepass"))  # pragma: no mutate (a label inside a digest)
            defined = defined_tool_tokens(block, spec_id) if segment == "tools" else None  # Anthropic-defined
            prev = p._append(prev, rendered, block, f"{segment}.{i}", defined)
        setattr(p, f"{segment}_fp", hasher.digest())
    p.head = len(p.tokens)
    return prev


def flatten(request: dict, reuse: tuple["Prompt", int] | None = None, render: Render | None = None) -> Prompt:
    """Render, digest and find the breakpoints of a (structurally valid) request.

    ``reuse=(earlier, k)`` says the first ``k`` messages render exactly as those of the request
    ``earlier`` was made from; if tools, system and parameters match too, their positions are taken
    from ``earlier`` instead of being rendered again (agent calls share almost all their prefix).
    """
    render = render or Render()
    spec = lookup(request["model"]) if isinstance(request.get("model"), str) else None
    p = Prompt(image_limits=spec.image_limits if spec is not None else STANDARD_IMAGES,
               tokenizer=spec.tokenizer if spec is not None else 1.0)
    system = request.get("system")
    p.tool_prompt = tool_prompt_tokens(request, spec)
    seed = request["model"] + render.head + ("|citations" if render.citations else "") + f"|{p.tool_prompt}"
    p.head_of = (seed, request.get("tools"), system)
    same = reuse[0].head_of if reuse else ()
    if same and same[0] == p.head_of[0] and same[1] is p.head_of[1] and same[2] is system:
        # The body parser hands out the earlier parsed tools and system when their bytes are unchanged.
        earlier, p.head = reuse[0], reuse[0].head
        p.tokens, p.cum, p.digests = earlier.tokens[:p.head], earlier.cum[:p.head], earlier.digests[:p.head]
        p.explicit_breakpoints = [b for b in earlier.explicit_breakpoints if b[0] < p.head]
        p.marker_at = {k: v for k, v in earlier.marker_at.items() if k < p.head}
        p.tools_fp, p.system_fp, p.auto_target = earlier.tools_fp, earlier.system_fp, p.head - 1
        p._unplaced = 0 if p.head else p.tool_prompt  # the copied ``cum`` holds it (``seed`` names its size)
        prev = p.digests[-1] if p.head else _digest(b"", "model:" + request["model"] + render.head)  # pragma: no mutate
    else:
        p._unplaced = p.tool_prompt  # counted with the first position rendered (no block of its own)
        prev = _head(p, request["model"] + render.head, request.get("tools"), system, render.citations,
                     spec.id if spec is not None else None)
    head_breakpoints = list(p.explicit_breakpoints)

    messages, first = request["messages"], render.start[0]
    images_before = 0
    if reuse and reuse[1] > first:
        earlier, k = reuse
        images_before = earlier.images[k - 1]
    new_images = [_images(m) for m in messages[reuse[1] if reuse and reuse[1] > first else first:]]
    total_images = images_before + sum(new_images)
    # The parameters that shape how messages are read; the keys are labels inside a digest.
    shaping = render.params if render.params is not None else {
        "tool_choice": request.get("tool_choice"), "thinking": request.get("thinking"),  # pragma: no mutate
        "output_config": request.get("output_config")}  # pragma: no mutate
    params = json.dumps({**shaping, "images": total_images}, sort_keys=True, default=str)  # pragma: no mutate
    p.params_fp = _digest(b"", params)  # pragma: no mutate (a label inside a digest)
    prev = p.messages_seed = _digest(prev, "params:" + params)  # pragma: no mutate (a label inside a digest)

    if reuse and reuse[1] > first and reuse[0].messages_seed == prev:
        earlier, first = reuse
        upto = earlier.msg_ends[first - 1] + 1
        p.tokens, p.cum, p.digests = earlier.tokens[:upto], earlier.cum[:upto], earlier.digests[:upto]
        # The head was rendered above with this request's own breakpoints; only the messages' are reused.
        p.explicit_breakpoints = head_breakpoints + [b for b in earlier.explicit_breakpoints if p.head <= b[0] < upto]
        p.marker_at.update({b[0]: earlier.marker_at.get(b[0]) for b in p.explicit_breakpoints if b[0] >= p.head})
        p.msg_ends, p.images, p.auto_upto = earlier.msg_ends[:first], earlier.images[:first], earlier.auto_upto[:first]
        p.auto_target = p.auto_upto[-1]
        if upto > p.head:  # pragma: no mutate (>=: upto == head leaves prev the seed either way)
            prev = p.digests[-1]
            p._unplaced = 0  # the reused positions' ``cum`` holds it
    else:
        first = render.start[0]
        # Messages before a compaction block are ignored: they end where the head ends.
        p.msg_ends, p.images = [p.head - 1] * first, [0] * first  # pragma: no mutate
        p.auto_upto = [p.head - 1] * first  # pragma: no mutate
        p.auto_target = p.head - 1  # pragma: no mutate (the compaction block after them is always cacheable)
    count = images_before if first > render.start[0] else 0
    for m in range(first, len(messages)):
        message = messages[m]
        role = message["role"]
        blocks = as_blocks(message["content"])
        if role == "system" and render.cleared(m, message):
            # Zero tokens, but its content is in the digest: dropping or rewording it misses from here.
            cleared = json.dumps(_canonical(message), sort_keys=True, ensure_ascii=False)  # pragma: no mutate
            prev = p._append(prev, "cleared|" + cleared, {}, (m, 0), tokens=0, cacheable=False)  # pragma: no mutate
        else:
            turn_scoped = role == "system" and message.get("clear_at") == "next_user_message"
            skip_to = render.start[1] if m == render.start[0] else -1  # pragma: no mutate (-1 or -2: nothing skipped)
            for i, block in enumerate(blocks):
                if i < skip_to or not render.shows(m, i, block):
                    continue
                if block.get("type") in ("tool_addition", "tool_removal"):
                    rendered = _tool_change(block, role, render.tools)  # pragma: no mutate (the role is a label)
                    # cache_control "goes on the block or in the definition, not both, and counts toward
                    # the breakpoint limit" [MCSM]: a marker in the definition marks this block.
                    inner = ((block.get("tool") or {}).get("definition") or {}).get("cache_control")
                    if inner is not None:
                        block = {**block, "cache_control": inner}
                elif block.get("type") == "compaction":
                    rendered = f"{role}|compaction|{block.get('content') or ''}"
                else:
                    rendered = render_block(block, role)
                # A thinking block never ends a request, so whether it counts as cacheable never shows.
                prev = p._append(prev, rendered, block, (m, i),  # pragma: no mutate
                                 cacheable=not turn_scoped and block.get("type") not in UNCACHEABLE_TYPES)  # pragma: no mutate
        count += _images(message)
        p.msg_ends.append(len(p.tokens) - 1)
        p.images.append(count)
        p.auto_upto.append(p.auto_target)
    p.breakpoints = sorted(p.explicit_breakpoints)
    _add_automatic_breakpoint(request, p)
    _check_breakpoints(p)
    return p


def tool_prompt_tokens(request: dict, spec: Any) -> int:
    """The system prompt the API adds when a request has tools: "When you use tools, the API also
    automatically includes a special system prompt for the model which enables tool use", its size
    per model and tool_choice, "added to your normal input"; "the table assumes at least 1 tool is
    provided. If no tools are provided, then a tool choice of none uses 0 additional system prompt
    tokens" ([TOOLS] in ``provider.models``; the sizes are the model table's ``tool_prompt``).

    Where it sits [INFERRED]: at the start of the prompt, the preamble the tool definitions are
    rendered into, so every cached prefix holds it. It is no block position (the 20-block lookback
    does not count it), and it is not in any digest: a ``tool_choice`` change, which changes its size,
    keeps the tools and system caches [caching: "What invalidates the cache"], so a read after one
    counts the new size.
    """
    tools = request.get("tools")
    if not tools or spec is None or spec.tool_prompt is None:
        return 0
    choice = request.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    return spec.tool_prompt[1 if forced else 0]


def _tool_change(block: dict, role: str, tools: dict) -> str:
    """A tool change renders as the definition it offers (or the name it withdraws)."""
    tool = block.get("tool") or {}
    if tool.get("type") == "tool_definition":
        return f"{role}|{block['type']}|" + json.dumps(_canonical(tool.get("definition")), ensure_ascii=False)
    name = tool.get("name")
    if block["type"] == "tool_addition" and name in tools:
        return f"{role}|tool_addition|" + json.dumps(_canonical(tools[name]), ensure_ascii=False)
    return f"{role}|{block['type']}|{name}"


def _add_automatic_breakpoint(request: dict, p: Prompt) -> None:
    """Top-level ``cache_control`` puts a breakpoint on the last cacheable block [caching:
    "Automatic caching"], skipping turn-scoped system messages [MCSM]. It uses one of the four
    slots. If that block already carries an explicit breakpoint with the same TTL the two are one
    breakpoint; with a different TTL the request is ambiguous and we refuse it (our reading of the
    documented conflict rule)."""
    cc = request.get("cache_control")
    if cc is None:
        return
    ttl = _cache_ttl(cc, "")
    pos = p.auto_target
    if pos < 0:
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
    # [caching] "Cache entries with longer TTL must appear before shorter TTLs"; the live words, naming
    # the 1h block, as quoted in github.com/cnighswonger/claude-code-cache-fix/issues/44 (2026).
    seen_short = False  # pragma: no mutate (None is as false)
    for pos, ttl in p.breakpoints:
        if ttl == TTL_SECONDS["5m"]:
            seen_short = True
        elif seen_short:
            where = p.marker_at.get(pos, "")
            raise bad_request(f"{_field(where)}.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' "
                              "cache_control block. Note that blocks are processed in the following order: "
                              "`tools`, `system`, `messages`.")
