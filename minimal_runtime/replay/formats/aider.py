"""Aider's chat history, ``.aider.chat.history.md``: Markdown (``# aider chat started at ...``, the
user's lines as ``#### ...``, the model's answers as prose, tool output in blockquotes). It holds no
usage and no per-call boundaries (Aider's own token report is printed, not written here), so there
is nothing to price a replay against: it is refused by name, with where the usage can be had."""

from __future__ import annotations

from ..recorded import RecordedRun, TrajectoryError
from ..source import Source

NAME = "Aider's .aider.chat.history.md"
REFUSED = True
WHY = ("Aider's Markdown chat history (.aider.chat.history.md): it records no usage and no call boundaries, so "
       "nothing here can price it; point aider at serve (its Anthropic base URL) "
       "and replay serve's --log instead")


def recognise(source: Source) -> bool:
    return source.first is None and source.text_head.lstrip().startswith("# aider chat started at")


def read(source: Source) -> list[RecordedRun]:
    raise TrajectoryError(str(source.path), None, WHY)
