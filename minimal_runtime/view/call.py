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

from .request import batch_of
from ..provider.cost import CallRecord

# Tints, not colours: laid over the page's own background, each reads as a pale shade in a light theme
# and a dark one in a dark theme, and the text keeps the theme's colour (JupyterLab's dark theme has
# white text: on opaque pastels it was white on pale). A cleared block has no tint; the row is faded.
# No CSS variables (--jp-...): JupyterLab's sanitizer drops a var() from the style of an output it
# does not trust (any notebook it did not run itself, the course's as committed among them), and
# classic Notebook and nbconvert's HTML do not define them; the values below read the same everywhere.
COLOURS = {"cache read": "rgba(76, 175, 80, 0.3)", "cache write": "rgba(255, 214, 0, 0.3)",
           "uncached": "rgba(128, 128, 128, 0.2)", "batch": "rgba(255, 140, 0, 0.3)", "cleared": "transparent"}
FADED = "opacity:0.75"
BORDER = "rgba(128, 128, 128, 0.8)"  # mid grey: an outline on white and on near-black alike
# JupyterLab typesets $...$ in HTML outputs as TeX ("cost $0.0061 (without caching $0.0531)" came out as
# italic maths): MathJax 3 skips an element of class mathjax_ignore, MathJax 2 (classic, nbconvert) one
# of class tex2jax_ignore; every sign is written &#36;, so nothing that scans the source sees a $.
NO_MATHS = "tex2jax_ignore mathjax_ignore"
CELL = "text-align:left;vertical-align:top"  # JupyterLab right-aligns table cells


@dataclass
class CallView:
    request: dict[str, Any]  # system, tools, messages: as laid out for this call
    usage: CallRecord
    batch_size: int | None = None  # blocks in the call's batch (``len(event.batch)`` at POST_LLM_CALL): found by place
    last: int | None = None  # show only the last rows (the tail is where a call differs); None: every row

    @property
    def batch(self) -> list[dict]:
        return batch_of(self.request, self.batch_size)

    def rows(self) -> list[tuple[str, str, str, bool]]:
        """(region, where, preview, has a breakpoint) for every block, in prompt order; a block of the
        call's batch shows as the batch, whatever its cache region."""
        return [("batch" if b.batch else b.region, b.where, b.preview, b.breakpoint)
                for b in placed(self.request, self.usage, self.batch_size)]

    def __str__(self) -> str:
        u = self.usage
        return (f"read {u.cache_read_input_tokens:>7,}  write {u.cache_creation_input_tokens:>6,}  "
                f"uncached {u.input_tokens:>5,}  out {u.output_tokens:>4,}  ${u.cost:.4f}  batch {len(self.batch)}")

    def _repr_html_(self) -> str:
        u = self.usage
        legend = " ".join(f'<span style="background:{c};padding:0 6px;border:1px {"dashed" if k == "cleared" else "solid"} '
                          f'{BORDER}">{k}</span>' for k, c in COLOURS.items())
        every = self.rows()
        shown = every[-self.last:] if self.last and len(every) > self.last else every
        hidden = every[: len(every) - len(shown)]
        rows = "".join(
            f'<tr style="background:{COLOURS[region]}{f";{FADED}" * (region == "cleared")}">'
            f'<td style="{CELL}"><code style="background:none;color:inherit">{html.escape(where)}</code>'
            f'{" &#9873; breakpoint" if breakpoint else ""}</td>'
            f'<td style="{CELL};white-space:pre-wrap;font-family:monospace">{html.escape(_shorten(preview))}</td></tr>'
            for region, where, preview, breakpoint in shown)
        if hidden:  # one line for the head: how many blocks, in which regions, how many breakpoints
            counts = ", ".join(f"{sum(r == k for r, *_ in hidden)} {k}" for k in COLOURS if any(r == k for r, *_ in hidden))
            marks = sum(row[3] for row in hidden)
            rows = (f'<tr><td colspan="2" style="{CELL}"><i>{len(hidden)} earlier blocks not shown ({counts}; {marks} &#9873; '
                    f'breakpoint{"s" * (marks != 1)}): CallView(..., last=None) shows every block</i></td></tr>') + rows
        page = (f'<div class="{NO_MATHS}"><b>call</b>: {u.prompt_tokens:,} prompt tokens, cache read {u.cache_read_input_tokens:,} '
                f"({u.cache_read_share:.0%}), written {u.cache_creation_input_tokens:,}, uncached {u.input_tokens:,}, "
                f"output {u.output_tokens:,}; cost ${u.cost:.4f} (without caching ${u.cost_without_cache:.4f})"
                f"<br>{legend} &#9873; = cache breakpoint (regions by estimated block size)<table>{rows}</table></div>")
        return page.replace("$", "&#36;")  # the header's amounts and any in a block's preview


def _shorten(text: str, limit: int = 160) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 40] + " … " + text[-30:]


@dataclass(frozen=True)
class Placed:
    """One block of a prompt and the region its place in the prompt puts it in."""

    where: str  # "messages.3.0 user text": its path, role and type
    path: str  # "tools.0", "system.1", "messages.3.0"
    block: dict
    preview: str
    region: str  # "cache read", "cache write", "uncached", or "cleared" (turn-scoped, its turn over: renders nothing)
    breakpoint: bool  # carries a cache_control marker (a null one is none)
    batch: bool  # in the call's batch (``batch_of``, found by place)
    turn_scoped: bool  # in a system message with ``clear_at``: this turn's, or cleared
    tokens: float  # its estimated share of the prompt's tokens (0 when cleared)


def placed(request: dict[str, Any], usage: CallRecord, batch_size: int | None = None) -> list[Placed]:
    """Every block of ``request`` in prompt order (tools, system, messages) with its region: the first
    ``cache_read_input_tokens`` of the prompt were read, the next ``cache_creation_input_tokens``
    written, the rest uncached; a block falls where its middle falls, sizes estimated in proportion to
    the serialized length. The batch is found by its place (``batch_of``), never by its text; a
    turn-scoped entry of an earlier turn is cleared. What the notebooks' ``CallView`` and ``serve``'s
    page both draw."""
    blocks = _blocks(request, {id(b) for b in batch_of(request, batch_size)})
    weights = [0 if cleared else len(json.dumps(b, ensure_ascii=False)) for _, _, b, _, cleared, _, _ in blocks]
    scale = usage.prompt_tokens / max(1, sum(weights))
    read, written = usage.cache_read_input_tokens, usage.cache_creation_input_tokens
    out, seen = [], 0.0
    for (where, path, block, preview, cleared, batch, scoped), weight in zip(blocks, weights):
        middle = seen + weight * scale / 2
        seen += weight * scale
        region = "cleared" if cleared else "cache read" if middle <= read else \
            "cache write" if middle <= read + written else "uncached"
        out.append(Placed(where, path, block, preview, region, block.get("cache_control") is not None, batch, scoped,
                          weight * scale))  # a null marker is no breakpoint (the API ignores it)
    return out


def _blocks(request: dict[str, Any], batch: set[int]) -> list[tuple[str, str, dict, str, bool, bool, bool]]:
    """(where, path, block, preview, cleared, in the batch, turn-scoped) in prompt order. A string
    ``system`` or ``content`` is the one text block it stands for; anything that is not a block (a
    malformed request a server refused) is shown as the text it is."""
    system = request.get("system") or []
    system = [{"type": "text", "text": system}] if isinstance(system, str) else system
    out = [(f"tools.{i}", f"tools.{i}", _block(t), _block(t).get("name", ""), False, False, False)
           for i, t in enumerate(request.get("tools") or [])]
    out += [(f"system.{i}", f"system.{i}", _block(b), _block(b).get("text", ""), False, False, False)
            for i, b in enumerate(system)]
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    for m, msg in enumerate(messages):
        content = msg.get("content")
        content = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        scoped = msg.get("role") == "system" and "clear_at" in msg
        cleared = scoped and msg.get("clear_at") == "next_user_message" and m < last_user
        for i, raw in enumerate(content):
            block = _block(raw)
            preview = block.get("text") or block.get("content") or block.get("thinking") or json.dumps(block.get("input", ""))
            out.append((f"messages.{m}.{i} {msg.get('role')} {block.get('type')}", f"messages.{m}.{i}", block,
                        str(preview), cleared, id(raw) in batch, scoped))
    return out


def _block(value: Any) -> dict:
    return value if isinstance(value, dict) else {"type": "text", "text": str(value)}
