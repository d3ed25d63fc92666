"""The request's headers: which API version it speaks, who sends it, and the top-level fields each
version accepts.

[VER] https://platform.claude.com/docs/en/api/versioning, with third-party write-ups that agree
(codersera.com and apidog.com "Anthropic API version 2026-10-21", a Qiita post measuring Sonnet 4.6
and Sonnet 5.5 on both versions; API-2026.md section 10):

- ``anthropic-version`` is a required header. ``2026-10-21`` (sent by default by the Python SDK
  2.x and the TypeScript SDK 1.x) removes ``temperature``, ``top_p`` and ``top_k``: each is a 400
  "Extra inputs are not permitted" even at its default value ("temperature: 1.0 fails"). It also
  refuses a ``document`` block in an ``assistant`` message and non-empty ``citations`` on a user
  ``text`` block (those two are checked in ``validate.py``, on the walk over the messages).
  ``2023-06-01`` accepts all of them as before.
- The key comes as ``x-api-key`` or, from the 2.x/1.x SDKs, as ``Authorization: Bearer``. Offline
  any key is accepted; a request with neither header is a 401.

Unknown top-level fields: the API's validation refuses extra inputs by name, e.g.
"response_format: Extra inputs are not permitted" (github.com/amrit110/oli/issues/7),
"temperature: Extra inputs are not permitted" under 2026-10-21 [VER]. The fields it knows are the
SDK's ``MessageCreateParams`` (anthropic 2.14, beta), minus what the SDK sends as headers (``betas``,
``user_profile_id``, ``workspace_id``), plus ``stream``, the deprecated ``output_format`` (accepted
"for a transition period", structured-outputs page) and ``safeguards`` (Claude Code's auto mode,
captured against the emulator, API-2026.md section 10). ``count_tokens`` takes the same set: a
subset there would refuse what some client sends and we have no probe of it [our reading].
"""

from __future__ import annotations

from .errors import ApiError, bad_request

V2023, V2026 = "2023-06-01", "2026-10-21"
SAMPLING = ("temperature", "top_p", "top_k")  # removed in 2026-10-21
FIELDS = frozenset({
    "max_tokens", "messages", "model", "billing_policy", "cache_control", "compaction", "container",
    "context_management", "diagnostics", "fallback_credit_token", "fallbacks", "inference_geo", "mcp_servers",
    "metadata", "output_config", "output_format", "service_tier", "speed", "stop_sequences", "stream", "system",
    "thinking", "thread", "tool_choice", "tools", "safeguards",
})


def api_version(headers: dict[str, str]) -> str:
    """The version a request speaks (``headers`` lower-cased), or the 400 the API answers.

    Both messages as the real API words them, quoted from its answers in public issues: a missing
    header is ``invalid_request_error`` "anthropic-version: header is required" (PipedreamHQ/pipedream
    issue 9697, 2024; Pasta-Devs/Marinara-Engine issue 120 and envoyproxy/ai-gateway pull 1909, 2026),
    an unknown value "anthropic-version: \"2023-06-01, 2023-06-01\" is not a valid version"
    (decolua/9router issues 1475 and 2357, 2026)."""
    version = headers.get("anthropic-version", "").strip()
    if not version:
        raise bad_request("anthropic-version: header is required")
    if version not in (V2023, V2026):
        raise bad_request(f'anthropic-version: "{version}" is not a valid version')
    return version


def authenticate(headers: dict[str, str]) -> None:
    """Offline any key will do, but one must be sent, either way the SDKs send it."""
    bearer = headers.get("authorization", "")
    if not headers.get("x-api-key") and not (bearer.lower().startswith("bearer ") and bearer[7:].strip()):
        raise ApiError(401, "authentication required: send an x-api-key header or Authorization: Bearer <key> "
                            "(offline any key is accepted)")


def check_fields(request: dict, version: str) -> None:
    """Refuse a top-level field the version does not know, by name, as the API does."""
    for key in request:
        if key not in FIELDS and not (key in SAMPLING and version == V2023):
            raise bad_request(f"{key}: Extra inputs are not permitted")
    if version == V2023:
        for key in SAMPLING:
            value = request.get(key)
            if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0
                                      or (key != "top_k" and value > 1)):
                raise bad_request(f"{key}: must be a number {'of 0 or more' if key == 'top_k' else 'from 0 to 1'}")
