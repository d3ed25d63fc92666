"""``GET /v1/models`` and ``GET /v1/models/{id}``: the model table in the shapes of the SDK's
``ModelInfo`` and its page (``types/model_info.py``, ``model_capabilities.py``; API-2026.md §13).

``capabilities`` describes what this server accepts, so a client that reads it is never refused
for following it: the thinking types and effort levels are the emulator's own checks
(``validate.check_thinking``) and its model facts (``models.py``, each with its source there, the
[UNCERTAIN] extensions to the 5.5 and 5.2 models among them). ``batch``: "all active models" [BP:
batch-processing page, Sep 2026]. ``context_management``: the table's ``compaction``
(compact_20260112), and the two clearing strategies, which this server runs on every model ("all
supported Claude models" [CE]). Every key is always present (API-2026.md §13; the SDK types each as
required, so a missing one is ``None`` to a client that reads ``capabilities.image_input.supported``):
where no source we hold says which models take a feature, the key says what this server does with
it: images, PDFs, citations and structured outputs are accepted on every model; server tools
(``web_search``, ``code_execution``) are not run here, so they are listed as unsupported.
``lifecycle`` is the table's status (``legacy`` models are still ``active``); no source gives
``deprecated_at`` or ``retires_at`` as dates except Opus 4.5's (deprecated 2026-11-23, retiring
2027-01-22 [UNCERTAIN], API-2026.md §7).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from ..provider.models import MODELS, ModelSpec, lookup
from . import paging
from .errors import ApiError
from .models import EFFORTS, EmulatedSpec, emulated
from .validate import check_thinking

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
DATES = {"claude-opus-4-5": ("2026-11-23T00:00:00Z", "2027-01-22T00:00:00Z")}  # [UNCERTAIN] API-2026.md §7
THINKING_TYPES = {"adaptive": {"type": "adaptive"}, "enabled": {"type": "enabled", "budget_tokens": 2048},
                  "disabled": {"type": "disabled"}, "between_tools": {"type": "between_tools"}}


def _yes(flag: bool) -> dict:
    return {"supported": flag}


def _accepted(thinking: dict, spec: EmulatedSpec) -> bool:
    try:
        check_thinking({"thinking": thinking, "max_tokens": 4096}, spec, set())
    except ApiError:
        return False
    return True


def capabilities(spec: ModelSpec) -> dict:
    spec = emulated(spec)
    types = {name: _yes(_accepted(thinking, spec)) for name, thinking in THINKING_TYPES.items()}
    out: dict = {"batch": _yes(True), "thinking": {"supported": True, "types": types}}  # every model thinks [models]
    out["effort"] = {"supported": bool(spec.efforts), **{k: _yes(k in spec.efforts) for k in EFFORTS}}
    out["context_management"] = {"supported": True, "clear_thinking_20251015": _yes(True),
                                 "clear_tool_uses_20250919": _yes(True), "compact_20260112": _yes(spec.compaction)}
    out.update({k: _yes(True) for k in ("citations", "image_input", "pdf_input", "structured_outputs")})
    out.update(code_execution=_yes(False), server_tools={"supported": False, "web_search": _yes(False),
                                                          "code_execution": _yes(False)})
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
    ordered = sorted(MODELS.values(), key=lambda m: (m.released or _EPOCH.date(), m.id), reverse=True)
    return json.dumps(paging.page(ordered, [m.id for m in ordered], query, "model", model_info)).encode()
