"""The Files API, in memory, one store per API key [FILES].

[FILES] https://platform.claude.com/docs/en/build-with-claude/files: ``POST /v1/files`` (multipart,
field ``file``) uploads and answers the file's metadata; ``GET /v1/files`` lists (newest first),
``GET /v1/files/{id}`` retrieves the metadata, ``DELETE /v1/files/{id}`` deletes, ``GET
/v1/files/{id}/content`` downloads. "To use the Files API, you'll need to include the beta feature
header: anthropic-beta: files-api-2025-04-14": without it these endpoints are a 400 (our words; the
``anthropic`` 2.17 SDK does not add it by itself, so a client passes ``betas=[...]``). "You can only
download files that were created by skills or the code execution tool. Files that you uploaded cannot
be downloaded": nothing here runs code, so every file is an upload and a download is a 400 (our words).
A ``file_id`` nobody uploaded (or one deleted) is "File not found (404)", with the page's words
"File not found: file_...", on these endpoints and in a Messages request alike.

Files are "scoped to the workspace of the API key"; offline one key is one workspace. A ``file``
source in a document or image block is resolved to the file's content (``resolved``) before the
request is checked further and counted, so it costs what the same content sent inline costs; the
file type must match the block ("Invalid file type (400)": a PDF or plain text in a document, an
image in an image block). Not emulated: ``expires_in_seconds``, scopes, the 500 MB and 100 GB limits.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import json
import mimetypes
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import parse_qs

from .errors import ApiError, bad_request

BETA = "files-api-2025-04-14"
PATH = "/v1/files"
DOCUMENT_TYPES = ("application/pdf", "text/plain")
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
# Who is asking, for the request being answered (``Emulator.handle`` sets it): a file belongs to a key.
CALLER: ContextVar[str] = ContextVar("files_caller", default="")


@dataclass
class StoredFile:
    id: str
    filename: str
    mime_type: str
    data: bytes
    created_at: float

    def metadata(self) -> dict:
        created = datetime.fromtimestamp(self.created_at, timezone.utc).isoformat().replace("+00:00", "Z")
        return {"id": self.id, "type": "file", "filename": self.filename, "mime_type": self.mime_type,
                "size_bytes": len(self.data), "created_at": created, "downloadable": False}


def not_found(file_id: str) -> ApiError:
    return ApiError(404, f"File not found: {file_id}")


class Files:
    """Every key's uploads, newest last."""

    def __init__(self, clock=time.time):
        self.clock = clock
        self._by_key: dict[str, dict[str, StoredFile]] = {}
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str],
               betas: set[str]) -> tuple[int, dict[str, str], bytes]:
        if BETA not in betas:
            raise bad_request(f"The Files API requires the anthropic-beta header {BETA}")
        key = CALLER.get()
        rest = path[len(PATH):].strip("/")
        if rest == "" and method == "POST":
            return 200, {}, json.dumps(self.upload(key, headers.get("content-type", ""), body).metadata()).encode()
        if rest == "" and method == "GET":
            return 200, {}, json.dumps(self.listing(key, query)).encode()
        file_id, _, tail = rest.partition("/")
        found = self.get(key, file_id)
        if tail == "" and method == "GET":
            return 200, {}, json.dumps(found.metadata()).encode()
        if tail == "" and method == "DELETE":
            with self._lock:
                self._by_key[key].pop(file_id, None)
            return 200, {}, json.dumps({"id": file_id, "type": "file_deleted"}).encode()
        if tail == "content" and method == "GET":
            raise bad_request(f"File {file_id} cannot be downloaded: only files created by skills or the code "
                              "execution tool can be, and files that you uploaded cannot")
        raise ApiError(404, f"{method} {path}: no such endpoint")

    def upload(self, key: str, content_type: str, body: bytes) -> StoredFile:
        if not content_type.lower().startswith("multipart/form-data"):
            raise bad_request("Invalid content-type: a file is uploaded as multipart/form-data")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode("latin-1") + body)
        part = next((p for p in message.iter_parts() if p.get_param("name", header="content-disposition") == "file"),
                    None) if message.is_multipart() else None
        if part is None:
            raise bad_request("file: Field required")
        data = part.get_payload(decode=True) or b""
        filename = (part.get_filename() or "").rsplit("/", 1)[-1] or "unnamed"
        kind = part.get_content_type()
        if kind in ("application/octet-stream", "text/plain") and mimetypes.guess_type(filename)[0]:
            kind = mimetypes.guess_type(filename)[0] or kind
        with self._lock:
            files = self._by_key.setdefault(key, {})
            digest = hashlib.blake2b(f"{key}|{len(files)}|{filename}".encode() + data, digest_size=12).hexdigest()
            stored = StoredFile(f"file_{digest}", filename, kind, data, self.clock())
            files[stored.id] = stored
        return stored

    def listing(self, key: str, query: str) -> dict:
        """Newest first; ``limit`` (1..1000, 20) and the opaque ``page`` cursor the SDK's ``SyncPageCursor`` follows."""
        params = {k: v[-1] for k, v in parse_qs(query).items()}
        with self._lock:
            newest = list(reversed(self._by_key.get(key, {}).values()))
        try:
            limit, start = int(params.get("limit", 20)), int(params.get("page", "page_0").removeprefix("page_"))
        except ValueError:
            raise bad_request("limit and page: an integer from 1 to 1000, and a page cursor this API returned") from None
        if not 1 <= limit <= 1000:
            raise bad_request("limit: must be an integer from 1 to 1000")
        end = start + limit
        return {"data": [f.metadata() for f in newest[start:end]], "next_page": f"page_{end}" if end < len(newest) else None}

    def get(self, key: str, file_id: str) -> StoredFile:
        with self._lock:
            found = self._by_key.get(key, {}).get(file_id)
        if found is None:
            raise not_found(file_id)
        return found

    def resolved(self, block: dict, where: str) -> dict:
        """``block`` (a document or an image) with its ``file`` source replaced by the file's content."""
        stored = self.get(CALLER.get(), (block.get("source") or {}).get("file_id", ""))
        if block["type"] == "image":
            if stored.mime_type not in IMAGE_TYPES:
                raise bad_request(f"{where}: Invalid file type: {stored.id} is {stored.mime_type}, not an image")
            source = {"type": "base64", "media_type": stored.mime_type, "data": base64.b64encode(stored.data).decode()}
        elif stored.mime_type == "application/pdf":
            source = {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(stored.data).decode()}
        elif stored.mime_type == "text/plain":
            source = {"type": "text", "media_type": "text/plain", "data": stored.data.decode("utf-8", "replace")}
        else:
            raise bad_request(f"{where}: Invalid file type: {stored.id} is {stored.mime_type}; a document takes "
                              f"{' or '.join(DOCUMENT_TYPES)}")
        return {**block, "source": source}
