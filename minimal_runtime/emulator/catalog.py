"""``GET /v1/models`` and ``GET /v1/models/{id}``: the model table in the shapes of the SDK's
``ModelInfo`` and its page (``types/model_info.py``, ``model_capabilities.py``; API-2026.md §13).

``capabilities`` says only what a source states. The SDK's type has every key always present; where
no source we hold states a fact, the key is left out rather than guessed (the comments say which),
so a client reads "unknown" as a missing key, never as a false ``supported``. Sources:

[BP]  batch-processing page (Sep 2026): batches serve "all active models".
[EFF] effort page (Sep 2026 copy): effort on Fable 5, Mythos 5, Opus 5, Opus 4.8, Mythos Preview,
      Opus 4.7, Opus 4.6, Sonnet 5, Sonnet 4.6 and Opus 4.5; ``max`` on all of them but Opus 4.5;
      ``xhigh`` on Fable 5, Mythos 5, Opus 5, Opus 4.8, Opus 4.7 and Sonnet 5. The page predates the
      5.1, 5.2 and 5.5 models: API-2026.md §7 gives their default effort (so effort is supported),
      not which of ``max`` / ``xhigh`` they take.
[TT]  thinking-troubleshooting (Sep 2026): ``adaptive`` is refused by Opus 4.5, Haiku 4.5 and Sonnet
      4.5; ``enabled`` by every 4.7+ and 5.x model; ``disabled`` by Fable/Mythos 5.x.
[PAI] API-2026.md §7 (verified live): Fable/Mythos 5.x and Opus 5.5 refuse ``disabled`` and
      ``between_tools``; Sonnet 5.5 turns thinking off only with ``between_tools`` (so it refuses
      ``disabled``); manual ``enabled`` is a 400 on 4.7+ and all 5.x. Whether the other models take
      ``between_tools``, and whether Haiku 5.5 (newer than TT) takes ``disabled``, no source says:
      left out.
[CT]  the table's ``compaction`` (compact_20260112). Which models take ``clear_tool_uses_20250919``
      and ``clear_thinking_20251015`` is not in our sources: left out.

Not stated by any source we hold, so left out on every model: ``citations``, ``code_execution``,
``image_input``, ``pdf_input``, ``server_tools``, ``structured_outputs``. ``lifecycle`` is the
table's status (``legacy`` models are still ``active``); no source gives ``deprecated_at`` or
``retires_at`` as dates except Opus 4.5's (deprecated 2026-11-23, retiring 2027-01-22 [UNCERTAIN],
API-2026.md §7).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from urllib.parse import parse_qs

from ..provider.models import MODELS, ModelSpec, lookup
from .errors import ApiError, bad_request

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
EFFORT = {"claude-fable-5", "claude-mythos-5", "claude-opus-5", "claude-opus-4-8", "claude-opus-4-7",
          "claude-opus-4-6", "claude-sonnet-5", "claude-sonnet-4-6", "claude-opus-4-5"}  # [EFF]
EFFORT_MAX = EFFORT - {"claude-opus-4-5"}  # [EFF]
EFFORT_XHIGH = {"claude-fable-5", "claude-mythos-5", "claude-opus-5", "claude-opus-4-8", "claude-opus-4-7",
                "claude-sonnet-5"}  # [EFF]
EFFORT_LATER = {"claude-fable-5-2", "claude-mythos-5-2", "claude-fable-5-1", "claude-mythos-5-1", "claude-opus-5-5",
                "claude-sonnet-5-5", "claude-haiku-5-5"}  # a default effort in API-2026.md §7
NO_ADAPTIVE = {"claude-opus-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"}  # [TT]
ENABLED = {"claude-opus-4-6", "claude-sonnet-4-6", *NO_ADAPTIVE}  # [TT], [PAI]: refused on 4.7+ and all 5.x
# thinking.type "disabled" and "between_tools", where a source says (None: it does not, left out)
NO_DISABLED = "fable mythos opus-5-5 sonnet-5-5"  # [TT] [PAI] (Sonnet 5.5 turns it off only with between_tools)
BETWEEN_TOOLS = {"claude-sonnet-5-5": True, "claude-opus-5-5": False}  # [PAI], and Fable/Mythos 5.x: False
LATER_THAN_TT = {"claude-haiku-5-5"}  # released after the TT page: whether it takes "disabled" is not stated
DATES = {"claude-opus-4-5": ("2026-11-23T00:00:00Z", "2027-01-22T00:00:00Z")}  # [UNCERTAIN] API-2026.md §7


def _yes(flag: bool) -> dict:
    return {"supported": flag}


def capabilities(spec: ModelSpec) -> dict:
    name = spec.id
    fable_or_mythos = name.startswith(("claude-fable-", "claude-mythos-"))
    types = {"adaptive": _yes(name not in NO_ADAPTIVE), "enabled": _yes(name in ENABLED)}
    if name not in LATER_THAN_TT:
        types["disabled"] = _yes(not any(name.startswith(f"claude-{n}") for n in NO_DISABLED.split()))
    if fable_or_mythos or name in BETWEEN_TOOLS:
        types["between_tools"] = _yes(BETWEEN_TOOLS.get(name, False))
    out: dict = {"batch": _yes(True),  # [BP]
                 "thinking": {"supported": True, "types": types}}  # every model in the table thinks [models]
    if name in EFFORT:
        out["effort"] = {"supported": True, **{k: _yes(True) for k in ("low", "medium", "high")},
                         "max": _yes(name in EFFORT_MAX), "xhigh": _yes(name in EFFORT_XHIGH)}
    elif name in EFFORT_LATER:  # supported; which of max and xhigh no source says: left out
        out["effort"] = {"supported": True, **{k: _yes(True) for k in ("low", "medium", "high")}}
    elif spec.released is None or spec.released.year < 2026:  # Haiku 4.5, Sonnet 4.5: not in [EFF]'s list
        out["effort"] = {"supported": False, **{k: _yes(False) for k in ("low", "medium", "high", "max")}}
    if spec.compaction:  # [CT]; the clearing strategies per model are not in our sources
        out["context_management"] = {"supported": True, "compact_20260112": _yes(True)}
    return out


def model_info(spec: ModelSpec) -> dict:
    """The SDK's ``types/model_info.py`` shape."""
    released = datetime(spec.released.year, spec.released.month, spec.released.day, tzinfo=timezone.utc) \
        if spec.released else _EPOCH  # "May be set to an epoch value if the release date is unknown"
    family = spec.id.removeprefix("claude-").split("-")
    line = family[0] if family[0] in ("haiku", "sonnet", "opus", "fable", "mythos") else None
    version = ".".join(p for p in family[1:] if p.isdigit())
    deprecated_at, retires_at = DATES.get(spec.id, (None, None))
    return {
        "type": "model", "id": spec.id,
        "display_name": f"Claude {family[0].capitalize()} {version}".strip(),
        "created_at": released.isoformat().replace("+00:00", "Z"),
        "lifecycle": "deprecated" if spec.status == "deprecated" else "active",
        "deprecated_at": deprecated_at, "retires_at": retires_at, "line": line,
        "max_input_tokens": spec.context_window, "max_tokens": spec.max_output,
        "capabilities": capabilities(spec) if spec.known else None,
    }


def is_models_path(path: str) -> bool:
    return path == "/v1/models" or path.startswith("/v1/models/")


def answer(path: str, query: str = "") -> bytes:
    """``GET /v1/models[/{id}]``: newest first, paged by ``limit`` (1..1000, default 20), ``after_id``
    and ``before_id`` [https://platform.claude.com/docs/en/api/models-list]; errors are raised."""
    model_id = path.removeprefix("/v1/models").strip("/")
    if "/" in model_id:
        raise ApiError(404, f"GET {path}: no such endpoint")
    if model_id:
        spec = lookup(model_id)
        if spec is None:
            raise ApiError(404, f"model: {model_id}")
        return json.dumps(model_info(spec)).encode()
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    try:
        limit = int(params.get("limit", 20))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 1000:
        raise bad_request("limit: must be an integer from 1 to 1000")
    ordered = sorted(MODELS.values(), key=lambda m: (m.released or _EPOCH.date(), m.id), reverse=True)
    ids = [m.id for m in ordered]
    for key in ("after_id", "before_id"):
        if key in params and params[key] not in ids:
            raise bad_request(f"{key}: no model {params[key]!r}")
    if "before_id" in params:
        end = ids.index(params["before_id"])
        start = max(0, end - limit)
    else:
        start = ids.index(params["after_id"]) + 1 if "after_id" in params else 0
        end = min(len(ordered), start + limit)
    page = [model_info(m) for m in ordered[start:end]]
    more = start > 0 if "before_id" in params else end < len(ordered)
    return json.dumps({"data": page, "first_id": page[0]["id"] if page else None,
                       "last_id": page[-1]["id"] if page else None, "has_more": more}).encode()
