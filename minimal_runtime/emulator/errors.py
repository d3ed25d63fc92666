"""API errors with the provider's status codes and body shape.

The body is ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": "req_..."}``
as documented at https://platform.claude.com/docs/en/api/errors, so the SDK raises its own exception
classes (``BadRequestError``, ``RateLimitError``, ``InternalServerError``, ``OverloadedError`` ...).
Some 400s also carry ``error.details.error_code`` (``tool_reference_unresolved``,
``compaction_block_misplaced`` ...), as the 2026 features document them.
"""

from __future__ import annotations

import json

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


class ApiError(Exception):
    """Raised anywhere inside the emulator; turned into an HTTP error response at the edge."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None,
                 details: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.details = details

    def body(self, request_id: str = "") -> bytes:
        error: dict = {"type": ERROR_TYPES.get(self.status, "api_error"), "message": self.message}
        if self.details:
            error["details"] = self.details
        return json.dumps({"type": "error", "error": error, "request_id": request_id}).encode()


def bad_request(message: str, error_code: str | None = None) -> ApiError:
    return ApiError(400, message, details={"error_code": error_code} if error_code else None)


FAULTS = {429: "Number of request tokens has exceeded your rate limit (emulated fault).",
          529: "Overloaded (emulated fault).", 500: "Internal server error (emulated fault)."}


def fault(status: int, retry_after: float = 0.01, message: str | None = None, error_code: str | None = None) -> ApiError:
    """An error answered on demand (``Emulator.inject_fault``, ``serve --faults`` / ``--script``), with a
    ``retry-after`` so the client's own retry logic runs (``retry-after-ms`` is what the SDKs read first)."""
    return ApiError(status, message or FAULTS.get(status, "emulated fault"), {
        "retry-after": str(max(1, round(retry_after))),
        "retry-after-ms": str(int(retry_after * 1000)),
    }, details={"error_code": error_code} if error_code else None)
