"""How a call shows itself: the prompt as the model saw it, with its regions told apart.

Regions: the *cached prefix* (blocks up to the last breakpoint, which the provider served from or
wrote to its cache, as ``usage`` reports), and the *batch* (blocks that start with an injection
marker and ride after the last breakpoint). In Jupyter a ``CallView`` renders as HTML; ``str()``
gives the one-line summary the demo prints.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from .cost import CallRecord

COLOURS = {"head": "#eef3fb", "durable": "#e8f5e9", "breakpoint": "#c8e6c9", "batch": "#fff3cd", "uncached": "#f5f5f5"}


@dataclass
class CallView:
    request: dict[str, Any]  # system, tools, messages: as laid out for this call
    usage: CallRecord
    batch_size: int
    durable_len: int

    def rows(self) -> list[tuple[str, str, str]]:
        """(region, where, preview) for every block of the prompt, in prompt order."""
        out, after_breakpoint = [], False
        for i, tool in enumerate(self.request.get("tools") or []):
            out.append(("head", f"tools.{i}", tool["name"]))
        for i, block in enumerate(self.request.get("system") or []):
            out.append(("breakpoint" if "cache_control" in block else "head", f"system.{i}", block["text"]))
        last_bp = max((m for m, msg in enumerate(self.request["messages"])
                       if any("cache_control" in b for b in msg["content"])), default=-1)
        for m, msg in enumerate(self.request["messages"]):
            for i, block in enumerate(msg["content"]):
                preview = block.get("text") or block.get("content") or json.dumps(block.get("input", ""))
                is_batch = isinstance(preview, str) and preview.startswith("<!-- ")
                region = "batch" if is_batch else "breakpoint" if "cache_control" in block else (
                    "uncached" if after_breakpoint else "durable")
                if m == last_bp and "cache_control" in block:
                    after_breakpoint = True
                label = f"{msg['role']} {block.get('type')}"
                out.append((region, f"messages.{m}.{i} {label}", str(preview)))
        return out

    def __str__(self) -> str:
        u = self.usage
        return (f"read {u.cache_read_input_tokens:>7,}  write {u.cache_creation_input_tokens:>6,}  "
                f"uncached {u.input_tokens:>5,}  out {u.output_tokens:>4,}  ${u.cost:.4f}  batch {self.batch_size}")

    def _repr_html_(self) -> str:
        u = self.usage
        legend = " ".join(f'<span style="background:{COLOURS[k]};padding:0 6px">{k}</span>'
                          for k in ("head", "durable", "breakpoint", "batch", "uncached"))
        rows = "".join(
            f'<tr style="background:{COLOURS[region]}"><td><code>{html.escape(where)}</code></td>'
            f'<td style="white-space:pre-wrap;font-family:monospace">{html.escape(_shorten(preview))}</td></tr>'
            for region, where, preview in self.rows())
        return (f"<div><b>call</b>: {u.prompt_tokens:,} prompt tokens, cache read {u.cache_read_input_tokens:,} "
                f"({u.cache_read_share:.0%}), written {u.cache_creation_input_tokens:,}, uncached {u.input_tokens:,}, "
                f"output {u.output_tokens:,}; cost ${u.cost:.4f} (without caching ${u.cost_without_cache:.4f})"
                f"<br>{legend}<table>{rows}</table></div>")


def _shorten(text: str, limit: int = 160) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 40] + " … " + text[-30:]
