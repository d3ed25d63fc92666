"""The running example's tools: fetch, browse, read and write files, message the user."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from ..core.tools import FunctionTool
from ..features.filesystem import OBSERVATIONS, read_inside, write_whole
from . import web


class UrlInput(BaseModel):
    url: str = Field(description="an absolute https URL")


class ReadInput(BaseModel):
    path: str = Field(description="a path inside the workspace")


class WriteInput(BaseModel):
    path: str = Field(description="a path inside the workspace")
    content: str


class MessageInput(BaseModel):
    text: str = Field(description="what the user should read")


class Workspace:
    """The run's files. Paths are relative to the root; one leaving it (``..``) or passing through a
    link is refused: files are opened from a handle on their folder (``filesystem.write_whole``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def read(self, path: str) -> str:
        return read_inside(self.root, path).decode("utf-8")

    def write(self, path: str, content: str) -> str:
        if Path(os.path.normpath(self.root / path)).is_relative_to(self.root / OBSERVATIONS):  # relative or absolute
            raise PermissionError(f"{path!r} is in {OBSERVATIONS}/, where the runtime keeps offloaded outputs: read only")
        write_whole(self.root, path, content.encode("utf-8"))
        return f"Wrote {len(content)} characters to {path}."


def pricing_tools(workspace: Workspace, outbox: list[str]) -> list[FunctionTool]:
    def message_user(args: MessageInput) -> str:
        outbox.append(args.text)
        return "Delivered."

    return [
        FunctionTool("fetch", "Fetch a URL over HTTP and return the page as text. Scripts do not run.",
                     UrlInput, lambda a: web.fetch_text(a.url), reads_outside=True),
        FunctionTool("browse", "Open a URL in a headless browser, run its scripts, return the rendered text.",
                     UrlInput, lambda a: web.browse_text(a.url), reads_outside=True),
        FunctionTool("read_file", "Read a file from the workspace.", ReadInput, lambda a: workspace.read(a.path)),
        FunctionTool("write_file", "Write a file in the workspace (creates folders).", WriteInput,
                     lambda a: workspace.write(a.path, a.content)),
        FunctionTool("message_user", "Send the user a message. The only way to talk to the user.",
                     MessageInput, message_user),
    ]
