"""The paging every list endpoint shares (``/v1/models``, ``/v1/messages/batches``): ``limit``
(1..1000, default 20), ``after_id`` and ``before_id`` over a newest-first list; the page is
``{"data", "has_more", "first_id", "last_id"}`` [https://platform.claude.com/docs/en/api/overview
"Pagination"; the SDK's ``batch_list_params.py``, ``models.py``]."""

from __future__ import annotations

from typing import Any, Callable, Sequence
from urllib.parse import parse_qs

from .errors import bad_request


def page(ordered: Sequence[Any], ids: Sequence[str], query: str, noun: str, view: Callable[[Any], dict]) -> dict:
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    try:
        limit = int(params.get("limit", 20))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 1000:
        raise bad_request("limit: must be an integer from 1 to 1000")
    for key in ("after_id", "before_id"):
        if key in params and params[key] not in ids:
            raise bad_request(f"{key}: no {noun} {params[key]!r}")
    if "before_id" in params:
        end = ids.index(params["before_id"])
        start = max(0, end - limit)
        more = start > 0
    else:
        start = ids.index(params["after_id"]) + 1 if "after_id" in params else 0
        end = min(len(ordered), start + limit)
        more = end < len(ordered)
    data = [view(item) for item in ordered[start:end]]
    return {"data": data, "has_more": more, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}
