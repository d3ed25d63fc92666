"""How a call shows itself: the prompt as the model saw it, with its regions told apart.

Each block is placed in a region by where it falls in the prompt's token count against the call's
usage: the first ``cache_read_input_tokens`` were *read* from the cache, the next
``cache_creation_input_tokens`` were *written* to it, the rest was *uncached*; injected blocks
(they open with a ``<!-- source -->`` marker) are the *batch*. Per-block sizes are estimated in
proportion to their serialized length, so a boundary can be off by a block; the usage figures in
the header are the provider's (or the emulator's) exact ones. In Jupyter a ``CallView`` renders as
HTML; ``str()`` gives the one-line summary the demo prints.

    CallView(agent.last_request, agent.calls[-1])   # the agent records; this shows
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from ..core.context import batch_of
from ..provider.cost import CallRecord

COLOURS = {"cache read": "#c8e6c9", "cache write": "#fff9c4", "uncached": "#eeeeee", "batch": "#ffe0b2",
           "cleared": "#ffffff"}


@dataclass
class CallView:
    request: dict[str, Any]  # system, tools, messages: as laid out for this call
    usage: CallRecord
    batch_size: int | None = None  # blocks in the call's batch (``len(agent.last_batch)``): found by place
    last: int | None = None  # show only the last rows (the tail is where a call differs); None: every row

    @property
    def batch(self) -> list[dict]:
        return batch_of(self.request, self.batch_size)

    def _blocks(self) -> list[tuple[str, dict, str, str | None]]:
        """(where, block, preview, fixed region) in prompt order. The batch is found by its place
        (``batch_of``), never by its text; a turn-scoped entry of an earlier call is cleared."""
        out = [(f"tools.{i}", tool, tool.get("name", ""), None) for i, tool in enumerate(self.request.get("tools") or [])]
        out += [(f"system.{i}", b, b.get("text", ""), None) for i, b in enumerate(self.request.get("system") or [])]
        messages = self.request["messages"]
        batch = {id(b) for b in self.batch}
        last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
        for m, msg in enumerate(messages):
            content = msg["content"] if isinstance(msg["content"], list) else [{"type": "text", "text": msg["content"]}]
            cleared = msg["role"] == "system" and msg.get("clear_at") == "next_user_message" and m < last_user
            for i, block in enumerate(content):
                preview = block.get("text") or block.get("content") or block.get("thinking") or json.dumps(block.get("input", ""))
                region = "batch" if id(block) in batch else "cleared" if cleared else None
                out.append((f"messages.{m}.{i} {msg['role']} {block.get('type')}", block, str(preview), region))
        return out

    def rows(self) -> list[tuple[str, str, str, bool]]:
        """(region, where, preview, has a breakpoint) for every block, in prompt order."""
        blocks = self._blocks()
        weights = [0 if fixed == "cleared" else len(json.dumps(b, ensure_ascii=False)) for _, b, _, fixed in blocks]
        scale = self.usage.prompt_tokens / max(1, sum(weights))
        read, written = self.usage.cache_read_input_tokens, self.usage.cache_creation_input_tokens
        out, seen = [], 0.0
        for (where, block, preview, fixed), weight in zip(blocks, weights):
            middle = seen + weight * scale / 2
            seen += weight * scale
            region = fixed or ("cache read" if middle <= read else "cache write" if middle <= read + written else "uncached")
            out.append((region, where, preview, "cache_control" in block))
        return out

    def __str__(self) -> str:
        u = self.usage
        return (f"read {u.cache_read_input_tokens:>7,}  write {u.cache_creation_input_tokens:>6,}  "
                f"uncached {u.input_tokens:>5,}  out {u.output_tokens:>4,}  ${u.cost:.4f}  batch {len(self.batch)}")

    def _repr_html_(self) -> str:
        u = self.usage
        legend = " ".join(f'<span style="background:{c};padding:0 6px">{k}</span>' for k, c in COLOURS.items())
        every = self.rows()
        shown = every[-self.last:] if self.last and len(every) > self.last else every
        hidden = every[: len(every) - len(shown)]
        rows = "".join(
            f'<tr style="background:{COLOURS[region]}"><td><code>{html.escape(where)}</code>'
            f'{" &#9873; breakpoint" if breakpoint else ""}</td>'
            f'<td style="white-space:pre-wrap;font-family:monospace">{html.escape(_shorten(preview))}</td></tr>'
            for region, where, preview, breakpoint in shown)
        if hidden:  # one line for the head: how many blocks, in which regions, how many breakpoints
            counts = ", ".join(f"{sum(r == k for r, *_ in hidden)} {k}" for k in COLOURS if any(r == k for r, *_ in hidden))
            marks = sum(row[3] for row in hidden)
            rows = (f'<tr><td colspan="2"><i>{len(hidden)} earlier blocks not shown ({counts}; {marks} &#9873; '
                    f'breakpoint{"s" * (marks != 1)}): CallView(..., last=None) shows every block</i></td></tr>') + rows
        return (f"<div><b>call</b>: {u.prompt_tokens:,} prompt tokens, cache read {u.cache_read_input_tokens:,} "
                f"({u.cache_read_share:.0%}), written {u.cache_creation_input_tokens:,}, uncached {u.input_tokens:,}, "
                f"output {u.output_tokens:,}; cost ${u.cost:.4f} (without caching ${u.cost_without_cache:.4f})"
                f"<br>{legend} &#9873; = cache breakpoint (regions by estimated block size)<table>{rows}</table></div>")


def _shorten(text: str, limit: int = 160) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 40] + " … " + text[-30:]
