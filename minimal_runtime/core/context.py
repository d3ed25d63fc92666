"""One call's context: the durable history, the turn-scoped batch, and how they are laid out.

The history is what the run remembers; the batch is what this one call needs right now (the plan
position, the budget, a note): the model reads it on its own call only. The batch goes at the
*tail*, after everything the previous call sent, so the provider's prompt cache can serve the whole
history from the last call's entry, and the cache breakpoint goes on the last *durable* block (an
entry is the prefix ending at its breakpoint: one that ends in a batch is never read again).

Two generations of the same idea, chosen from the model's facts (``layout_for``):

- ``turn_scoped_layout`` (the current models, 2026): the batch is one ``role: "system"`` message
  with ``clear_at: "next_user_message"`` after the last user turn. The API shows it on this call
  only and keeps it on the wire; it joins the durable history with its turn and is resent verbatim
  for ever (cleared: no tokens). Every request is then an append-only extension of the one before,
  which is what preserved thinking checks. Tool availability changes by ``tool_addition`` /
  ``tool_removal`` in a plain system message, with ``tools`` untouched. Two exceptions keep to the
  provider's rules for system messages [MCSM]: text that came from outside (``untrusted``:
  a page, a tool's output, a note written by an agent that read them) never rides in a system
  message: it goes as text in the new user turn, and stays there (``outside_notes``); and on a
  model that may read a system entry right after a tool_result as tool output (Haiku 5.5), a
  short ``BOUNDARY`` text block goes between them.
- ``tail_layout`` (models without system messages: 4.x, Sonnet 5, local servers; 2025): the batch
  rides as extra blocks at the end of the final user turn, in this call's *copy* of that turn, and
  is gone on the next call. On a model that binds thinking to its prefix that removal is an edit:
  never use it there. Older models that accept a trailing assistant message (Haiku 4.5, Opus 4.5)
  take the batch as one, all but its untrusted part: a prefill is the model's own words, so that
  part stays user text, at the end of the user turn before it (``append_batch``).

And a third, the same request carried differently: ``threaded_layout`` sends the turn-scoped request
on a message thread ([MT], the sources' keys in ``provider/models.py``). The server holds the conversation under each response's id,
so a call sends only what is new (``continuation``): the bytes sent and the client's work per call
stop growing with the run; what the model reads and what it is billed do not change. The history
stays the runtime's (a thread is lost after 5 idle minutes, or at the server's whim), and a message
sent on a thread cannot be un-sent: only an append-only layout can ride one.

``first_edit`` says where a request is not an append-only extension of the previous one.

[MCSM] https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
"""

from __future__ import annotations

import threading
from collections.abc import MutableMapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel

from ..provider.content import in_one_form
from ..provider.models import CLEAR_AT_BETA, INLINE_TOOLS_BETA, LOOKBACK_BLOCKS, THREADS_BETA, ModelSpec
from .messages import blocks_of, text_block, user

if TYPE_CHECKING:
    from .protocols import Layout


class Injection(BaseModel):
    """One entry of the batch: who produced it and what it says, in the agent's first person.
    ``untrusted``: the text came from outside (a page, a file, a tool's output) or was written by
    an agent that read it (the knowledge manager's notes); it never rides in a system message."""

    source: str
    text: str
    untrusted: bool = False

    def block(self) -> dict:
        # The marker lets anyone grep a transcript for every injection of a kind.
        return text_block(f"<!-- {self.source} -->\n{self.text}")


def injected_source(block: dict) -> str | None:
    """The source of an injected block (``plan`` for ``<!-- plan -->``), None for anything else."""
    text = block.get("text", "") if block.get("type") == "text" else ""
    if not text.startswith("<!-- ") or " -->" not in text:
        return None
    return text[5:text.index(" -->")]


class TurnScopedQueue:
    """Injections for the next call only. ``drain`` hands them over and empties the queue.
    Thread-safe: a background process may inject while the agent works."""

    def __init__(self) -> None:
        self._items: list[Injection] = []
        self._lock = threading.Lock()

    def inject(self, source: str, text: str, untrusted: bool = False) -> None:
        with self._lock:
            self._items.append(Injection(source=source, text=text, untrusted=untrusted))

    def drain(self) -> list[Injection]:
        with self._lock:
            items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        return len(self._items)

    def since(self, length: int) -> list[Injection]:
        """What was injected after the queue had ``length`` items."""
        with self._lock:
            return list(self._items[length:])

    def truncate(self, length: int) -> None:
        """Forget what was injected after the queue had ``length`` items (a hook that failed halfway)."""
        with self._lock:
            del self._items[length:]

    def remove(self, taken: list[Injection]) -> None:
        """Forget these very injections (now carried by the step's record); by identity, not by count,
        so a note another thread injected meanwhile stays queued."""
        with self._lock:
            self._items = [i for i in self._items if not any(i is t for t in taken)]

    def requeue(self, batch: list[Injection]) -> None:
        """Put back a batch whose call never reached the model (it failed past the SDK's retries), so
        a one-shot note is not lost. A note of the same source injected afresh replaces it."""
        with self._lock:
            fresh = {i.source for i in self._items}
            self._items = [i for i in batch if i.source not in fresh] + self._items


@dataclass(frozen=True)
class ThreadAt:
    """Where a message thread stands before a call: the response the call continues (None: the call
    creates the thread, sending the whole history), how many messages of the history the server
    holds (everything up to and with that response's reply), and which history: the agent's own
    list. A layout handed another list (a copy it rewrote) cannot continue the thread."""

    previous_id: str | None = None
    held: int = 0
    history: list | None = field(default=None, compare=False, repr=False)


@dataclass
class CallParts:
    """Everything one call is made of, before layout."""

    system: list[dict]
    tools: list[dict]
    durable: list[dict]  # the history; never modified by a layout
    batch: list[Injection] = field(default_factory=list)
    prefill_ok: bool = False  # may the request end in an assistant message?
    previous_durable_len: int | None = None  # history length at the previous call
    tool_choice: dict | None = None
    tool_changes: list[dict] = field(default_factory=list)  # tool_addition / tool_removal blocks for this call
    boundary: bool = False  # the model may read a system entry right after a tool_result as tool output (BOUNDARY)
    thread: ThreadAt | None = None  # the message thread the call continues (a threaded layout's); None: none yet


def with_breakpoints(durable: list[dict], previous_len: int | None = None) -> list[dict]:
    """A copy of the history with a cache breakpoint on its last block, and on the last block of
    the previous call's history when that is more than the lookback away. Only the messages that
    get a marker are copied; the history itself is untouched."""
    messages = list(durable)
    # A read walks back at most LOOKBACK_BLOCKS positions from a breakpoint: a call that added more
    # blocks than that since the last entry would miss it, so the previous call's end is marked too.
    targets = {len(messages) - 1}
    if previous_len and sum(len(blocks_of(m)) for m in messages[previous_len:]) >= LOOKBACK_BLOCKS:
        targets.add(previous_len - 1)
    for target in targets:
        spot = _last_markable(messages, target)
        if spot is not None:
            i, k = spot
            content = list(blocks_of(messages[i]))
            content[k] = {**content[k], "cache_control": {"type": "ephemeral"}}
            messages[i] = {**messages[i], "content": content}
    return messages


def _last_markable(messages: list[dict], target: int) -> tuple[int, int] | None:
    """The last block at or before message ``target`` that can carry a breakpoint. The API refuses
    one on empty content (a tool that printed nothing): the entry then ends a block or two early,
    a few tokens at most."""
    for i in reversed(range(target + 1)):
        content = blocks_of(messages[i])
        for k in reversed(range(len(content))):
            if _markable(content[k]):
                return i, k
    return None


def _markable(block: dict) -> bool:
    if block.get("type") == "text":
        return bool(block.get("text"))
    if block.get("type") == "tool_result":
        return block.get("content", "") not in ("", [])
    return True


def append_batch(messages: list[dict], batch: list[Injection], prefill_ok: bool) -> list[dict]:
    """The call's messages: ``messages`` with the batch at the tail, at the end of a copy of the final
    user turn, or, where the model takes a prefill, as a trailing assistant message. A prefill is the
    model's own words (it goes on from them as if it had written them), so the batch's untrusted
    part never goes there: it stays text of the user turn, just before the prefill. Never modifies
    ``messages``."""
    in_user = [i.block() for i in batch if i.untrusted or not prefill_ok]
    prefill = [i.block() for i in batch if prefill_ok and not i.untrusted]
    if in_user:
        last = messages[-1]
        messages = [*messages[:-1], {**last, "content": [*blocks_of(last), *in_user]}]
    return [*messages, {"role": "assistant", "content": prefill}] if prefill else messages


def system_with_breakpoint(system: list[dict]) -> list[dict]:
    """Tools and system are the stable head of every request; a breakpoint on the last system block
    keeps them cached even when the messages cache is invalidated (a ``tool_choice`` change)."""
    if not system:
        return system
    return [*system[:-1], {**system[-1], "cache_control": {"type": "ephemeral"}}]


def request_for(parts: CallParts, messages: list[dict], system: list[dict]) -> dict[str, Any]:
    """The request keywords of a call from its laid-out messages and system blocks."""
    request: dict[str, Any] = {"system": system, "messages": messages}
    if parts.tools:
        request["tools"] = parts.tools
    if parts.tool_choice:
        request["tool_choice"] = parts.tool_choice
    return request


@dataclass
class CallPlan(MutableMapping):
    """One call, laid out: what is sent, where, and what the history keeps of it.

        request  the ``messages.create`` keywords: system, tools, messages (tool_choice ...), whole
        betas    anthropic-beta values; with any, the call goes to the beta endpoint
        kept     how many of the request's messages are the history's own copy; the messages
                 after them (``entries``: the layout's own) join the history with the turn
        thread   set when the call goes on a message thread: ``wire()`` is then what is sent
                 (a create, or a continue with only what the server does not hold)

    A plan also reads and writes as the keywords it sends, ``betas`` included, so a layout that
    wraps another adds a keyword as it would to a dict (``plan["output_config"] = ...``); a layout
    may return such a dict too (``of``)."""

    request: dict[str, Any]
    betas: list[str] = field(default_factory=list)
    kept: int | None = None  # None: all but the trailing system messages (a history never ends in one)
    thread: ThreadAt | None = None
    continues_with: "Callable[[dict[str, Any], str, int], dict[str, Any]] | None" = None  # None: ``continuation``

    @classmethod
    def of(cls, layout_result: "CallPlan | dict[str, Any]") -> "CallPlan":
        if isinstance(layout_result, CallPlan):
            return layout_result
        request = dict(layout_result)
        return cls(request, list(request.pop("betas", [])))

    @property
    def entries(self) -> list[dict]:
        """The messages this call carries after the history (its system entries, its outside notes,
        a boundary): on the wire for good once the call is answered. A layout returning a plain
        dict says nothing of ``kept``: then its trailing system messages are its own. (A 2025 batch
        rides in a copied user turn or a trailing assistant message, and is not kept.)"""
        messages = self.request["messages"]
        kept = self.kept
        if kept is None:
            kept = len(messages)
            while kept and messages[kept - 1].get("role") == "system":
                kept -= 1
        return [m for m in messages[kept:] if m.get("role") in ("system", "user")]

    def sent(self) -> dict[str, Any]:
        """The keywords, betas included: the whole request (what hooks and ``first_edit`` read). On a
        thread it is what the server rebuilds from what it holds and what the call sends."""
        return {**self.request, "betas": self.betas} if self.betas else self.request

    def wire(self) -> dict[str, Any]:
        """The keywords as they go on the wire: ``sent()``, or on a thread its create or continue."""
        sent = self.sent()
        if self.thread is None:
            return sent
        if self.thread.previous_id is None:
            return {**sent, "thread": {"type": "create"}}
        return (self.continues_with or continuation)(sent, self.thread.previous_id, self.thread.held)

    def __getitem__(self, key: str) -> Any:
        return self.sent()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if key == "betas":
            self.betas = list(value)
        else:
            self.request[key] = value

    def __delitem__(self, key: str) -> None:
        if key == "betas" and self.betas:
            self.betas = []
        else:
            del self.request[key]

    def __iter__(self):
        return iter(self.sent())

    def __len__(self) -> int:
        return len(self.sent())


def tail_layout(parts: CallParts) -> CallPlan:
    """The 2025 layout: breakpoints on durable blocks, the batch after them in the call's copy of
    the last user turn (or as a trailing assistant message where prefill is accepted)."""
    messages = append_batch(with_breakpoints(parts.durable, parts.previous_durable_len), parts.batch, parts.prefill_ok)
    return CallPlan(request_for(parts, messages, system_with_breakpoint(parts.system)), kept=len(messages))


def batch_entry(batch: list[Injection]) -> dict:
    """The call's batch as the provider's own turn-scoped entry: shown on this call only, kept on the
    wire, free once cleared. The same markers and text as the 2025 batch."""
    return {"role": "system", "clear_at": "next_user_message", "content": [i.block() for i in batch]}


def outside_notes(batch: list[Injection]) -> dict:
    """The batch's untrusted part as text blocks of the new user turn, after its tool results (a
    second user message is the same turn: the API merges them). A system message carries operator
    authority, and the provider's rule is that untrusted content never goes in one [MCSM]; a user
    turn is where the tool results it came from already are. It is durable: carried in every later
    call, as Claude Code's own reminders are, because dropping it would edit the history."""
    return {"role": "user", "content": [i.block() for i in batch]}


# A system entry right after a tool_result: Haiku 5.5 may read it as part of the tool's output; a
# short text block between the two raised its compliance from 12 to 64 of 64 runs in pydantic-ai's
# live measurement (profiles/anthropic.py; theirs, not one made here). The wording is ours. It is
# part of the user turn, so it stays in the history like any of its blocks.
BOUNDARY = "(End of tool results.)"


def _ends_in_tool_result(message: dict) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, list) and bool(content) \
        and content[-1].get("type") == "tool_result"


def turn_scoped_layout(parts: CallParts) -> CallPlan:
    """The 2026 layout: breakpoints on durable blocks; after them, this call's untrusted notes (text
    in the new user turn: ``outside_notes``), its tool changes (a plain system message: they must
    last) and the rest of its batch (a turn-scoped system message), with a ``BOUNDARY`` before the
    system entries where the model needs one. All join the durable history with the turn
    (``CallPlan.entries``), so the next request only appends."""
    messages = with_breakpoints(parts.durable, parts.previous_durable_len)
    kept = len(messages)
    outside = [i for i in parts.batch if i.untrusted]
    own = [i for i in parts.batch if not i.untrusted]
    if outside:
        messages = [*messages, outside_notes(outside)]
    system = ([{"role": "system", "content": list(parts.tool_changes)}] if parts.tool_changes else []) + \
             ([batch_entry(own)] if own else [])
    if system and parts.boundary and messages and _ends_in_tool_result(messages[-1]):
        messages = [*messages, user(BOUNDARY)]
    messages = [*messages, *system]
    # Always both betas: the history keeps every earlier entry, and each needs its beta on every request.
    return CallPlan(request_for(parts, messages, system_with_breakpoint(parts.system)), [CLEAR_AT_BETA, INLINE_TOOLS_BETA],
                    kept)


def threaded_layout(parts: CallParts, continuation: "Callable[[dict[str, Any], str, int], dict[str, Any]] | None" = None
                    ) -> CallPlan:
    """The third generation: ``turn_scoped_layout``'s request, on a message thread. With
    ``parts.thread`` the call continues it and sends only what the server does not hold (what
    ``continuation`` makes of the whole request, when the plan is sent: ``CallPlan.wire``);
    without, or when a wrapper hands it a rewritten copy of the history (the server holds what was
    sent, not the copy), it creates one with the whole history. A create drops the markers the history's own
    messages carry (a replay resends turns that each set theirs for itself, and a request on a
    thread takes 3), as the SDK does [PY ``_thread_state.py``]: only the layout's stay."""
    at = parts.thread
    if at is not None and parts.durable is not at.history and parts.durable != at.history:
        at = None  # a rewritten copy: the server holds what was sent (an equal copy continues)
    if at is None:
        parts = replace(parts, durable=unmarked(parts.durable))
    plan = turn_scoped_layout(parts)
    plan.betas.append(THREADS_BETA)
    plan.thread, plan.continues_with = at or ThreadAt(), continuation
    return plan


def continuation(request: dict[str, Any], previous_id: str, held: int) -> dict[str, Any]:
    """What a call on a thread sends: ``request`` (the whole request, as a create would send it) less
    what the server holds. The messages from ``held`` on; no ``system`` and no ``tools`` (the thread
    keeps its create's [MT]); ``thread: {"type": "continue", "previous_message_id": previous_id}``;
    every other keyword as it is (``tool_choice``, ``betas``, the request options: sent on every
    turn, as the SDK does). A breakpoint on a held message goes with it; one within
    ``LOOKBACK_BLOCKS`` blocks of the end of what is held (the previous call's end, marked when
    more than the lookback was added since, or the last durable block when what follows it cannot
    take one) moves to the first block sent that can carry it, from where a read still walks back
    to the previous call's entry; when none can (empty tool results), a top-level ``cache_control``
    asks the server to place it on the conversation's last block that can. Work in proportion to
    what is sent, not to the history."""
    messages = request["messages"]
    new = messages[held:]
    out = {k: v for k, v in request.items() if k not in ("system", "tools", "messages")}
    if _marked_near(messages, held):
        spot = _first_markable(new)
        if spot is None:  # nothing sent can carry it (empty tool results): the server places it [MT]
            out["cache_control"] = {"type": "ephemeral"}
        elif "cache_control" not in blocks_of(new[spot[0]])[spot[1]]:
            i, k = spot
            content = list(blocks_of(new[i]))
            content[k] = {**content[k], "cache_control": {"type": "ephemeral"}}
            new = [*new[:i], {**new[i], "content": content}, *new[i + 1:]]
    return {**out, "messages": new, "thread": {"type": "continue", "previous_message_id": previous_id}}


def unmarked(messages: list[dict]) -> list[dict]:
    """``messages`` with no ``cache_control`` on their blocks (only the messages that had one are copied)."""
    return [{**m, "content": [_without_marker(b) for b in m["content"]]} if _has_marker(m) else m for m in messages]


def _has_marker(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and "cache_control" in b for b in content)


def _without_marker(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def _marked_near(messages: list[dict], end: int) -> bool:
    """Is a block within ``LOOKBACK_BLOCKS`` positions before message ``end`` marked?"""
    seen = 0
    for message in reversed(messages[max(0, end - LOOKBACK_BLOCKS):end]):
        if _has_marker(message):
            return True
        seen += len(blocks_of(message))
        if seen >= LOOKBACK_BLOCKS:
            return False
    return False


def _first_markable(messages: list[dict]) -> tuple[int, int] | None:
    for i, message in enumerate(messages):
        for k, block in enumerate(blocks_of(message)):
            if _markable(block) and message.get("role") != "system":
                return i, k
    return None


def layout_for(spec: ModelSpec) -> tuple["Layout", str]:
    """The layout a model's facts call for, and why."""
    if spec.system_messages == "yes" and spec.threads:
        return threaded_layout, (f"{spec.id} accepts turn-scoped system messages and message threads, so the batch "
                                 "is one, appended with its turn, and each call sends only what the thread does not "
                                 "hold: every request only appends to the last one")
    if spec.system_messages == "yes":
        return turn_scoped_layout, (f"{spec.id} accepts turn-scoped system messages, so the batch is one, appended with "
                                    "its turn: every request only appends to the last one")
    if spec.prefix_check != "none":  # no such model today; if one comes, the 2025 layout would break it
        raise ValueError(f"{spec.id} binds thinking to its prefix but takes no system messages: no layout fits")
    why = "does not accept mid-conversation system messages" if spec.known else "is not in the model table"
    return tail_layout, f"{spec.id} {why}, so the batch rides at the end of the last user turn of each call's copy"


def last_note(history: list[dict], source: str) -> str | None:
    """The text of the latest note of ``source`` in user text (``messages``: a request's, where the
    call's own outside notes are, or the history, which keeps them on the current layout), or None."""
    for message in reversed(history):
        for block in reversed(message.get("content") if isinstance(message.get("content"), list) else []):
            if message.get("role") == "user" and injected_source(block) == source:
                return block["text"].split("\n", 1)[-1]
    return None


def first_edit(previous: dict[str, Any], current: dict[str, Any]) -> str | None:
    """Where ``current`` stops being an append-only extension of ``previous`` (None: it is one).

    What the prefix check of preserved thinking compares: ``system``, the non-deferred ``tools``,
    and every earlier message, by value; ``cache_control`` markers are not content. Thinking blocks
    may be left out at the start, at the end, or all of them, never in the middle."""
    if without_markers(_system_blocks(previous)) != without_markers(_system_blocks(current)):
        return "system: changed since the previous request"
    if without_markers(_sent_tools(previous)) != without_markers(_sent_tools(current)):
        return "tools: changed since the previous request"
    before, after = previous.get("messages", []), current.get("messages", [])
    if len(after) < len(before):
        return f"messages: {len(before) - len(after)} message(s) of the previous request are missing"
    kept = []  # each thinking block of the previous request: where it was, and is it sent again
    for i, (old, new) in enumerate(zip(before, after)):
        if not _only_thinking_left_out(old, new):
            return f"messages.{i}: edited (an earlier {old.get('role')} message is not sent as it was)"
        sent = {_thinking_id(b) for b in new.get("content") or [] if _is_thinking(b)}
        kept += [(f"messages.{i}.content.{j}", _thinking_id(b) in sent)
                 for j, b in enumerate(old.get("content") or []) if _is_thinking(b)]
    # Left out before the first kept block, after the last, or all of them: allowed; between two kept ones,
    # a gap, which breaks the chain [PT].
    sent_at = [n for n, (_, k) in enumerate(kept) if k]
    gap = next((where for where, k in kept[sent_at[0]:sent_at[-1]] if not k), None) if sent_at else None
    return f"{gap}: a thinking block left out between two that were kept" if gap else None


def _system_blocks(request: dict[str, Any]) -> list:
    system = request.get("system") or []
    return [text_block(system)] if isinstance(system, str) else system


def _sent_tools(request: dict[str, Any]) -> list:
    return [t for t in request.get("tools") or [] if not t.get("defer_loading")]  # deferred tools are not in the prefix


def without_markers(value: Any) -> Any:
    """``value`` as the cache sees it: no ``cache_control`` anywhere, a message's string content its
    text block, a tool result's one text block its text (the API's shorthand: ``provider/content.py``)."""
    if isinstance(value, dict):
        out = {k: without_markers(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(out.get("content"), str) and "role" in out:
            out["content"] = [{"type": "text", "text": out["content"]}]
        return in_one_form(out)
    if isinstance(value, list):
        return [without_markers(v) for v in value]
    return value


def _is_thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")


def _thinking_id(block: dict) -> str | None:
    return block.get("signature") or block.get("data")  # a redacted block carries no signature, only its data


def _only_thinking_left_out(old: dict, new: dict) -> bool:
    """``new`` is ``old``, or ``old`` with some of its thinking blocks left out (none added or replaced)."""
    if old == new:  # nearly every message of a request: the cheap answer first
        return True
    kept = {_thinking_id(b) for b in new.get("content") or [] if _is_thinking(b)}
    had = {_thinking_id(b) for b in old.get("content") or [] if _is_thinking(b)}
    return kept <= had and without_markers(without_thinking(old)) == without_markers(without_thinking(new))


def without_thinking(message: dict) -> dict:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    return {**message, "content": [b for b in content if not _is_thinking(b)]}

