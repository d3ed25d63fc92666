"""Chapter 06 exercise: offload large observations, keep head, tail and path.

A tool result longer than ``threshold`` characters is written, exactly, to a file in the workspace
and replaced in the history by a placeholder that gives its size, its path and its first and last
characters. Nothing is lost: ``restore(path)`` gives back the very same string. Test with
``.venv/bin/pytest tests/ch06_filesystem_first --impl exercises``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["Offloader", "placeholder"]

OBSERVATIONS = ".observations"


def placeholder(content: str, path: str, head: int, tail: int) -> str:
    """The text the history keeps. It must contain the size as ``{len(content):,} characters``, the
    ``path``, the first ``head`` and the last ``tail`` characters of ``content``. The prompt must be
    valid UTF-8, so in the preview, characters that came from undecodable bytes (lone surrogates,
    from ``bytes.decode("utf-8", "surrogateescape")``) must be replaced by U+FFFD."""
    raise NotImplementedError("ch06: placeholder")


class Offloader:
    def __init__(self, workspace: str | Path, threshold: int = 4000, head: int = 600, tail: int = 300):
        self.root = Path(workspace).resolve()
        self.threshold, self.head, self.tail = threshold, head, tail

    def path_for(self, tool_use_id: str) -> str:
        """Given: a file name per tool call, readable, short and collision-free."""
        safe = "".join(c for c in tool_use_id if c.isalnum() or c in "_-")[:48] or "result"
        digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        return f"{OBSERVATIONS}/{safe}-{digest}.txt"

    def __call__(self, tool_use: dict, result: dict) -> dict:
        """The tool_result block the history keeps: unchanged when its content is not a string or is
        at most ``threshold`` characters; otherwise a copy whose content is ``self.offload(...)`` at
        ``self.path_for(tool_use["id"])``."""
        raise NotImplementedError("ch06: Offloader.__call__")

    def offload(self, content: str, relative_path: str) -> str:
        """Write ``content`` under the workspace so that ``restore`` gives it back exactly (encode with
        ``"surrogateescape"``), refuse (PermissionError) a path that resolves outside the workspace,
        and return the placeholder."""
        raise NotImplementedError("ch06: Offloader.offload")

    def restore(self, relative_path: str) -> str:
        """The content exactly as it was offloaded."""
        raise NotImplementedError("ch06: Offloader.restore")
