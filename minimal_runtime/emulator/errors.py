"""API errors with the provider's status codes and body shape.

The body is ``{"type": "error", "error": {"type": ..., "message": ...}}`` as documented at
https://platform.claude.com/docs/en/api/errors, so the SDK raises its own exception classes
(``BadRequestError``, ``RateLimitError``, ``InternalServerError``, ``OverloadedError`` ...).
"""

from __future__ import annotations

import json

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class ApiError(Exception):
    """Raised anywhere inside the emulator; turned into an HTTP error response at the edge."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}

    def body(self) -> bytes:
        error = {"type": ERROR_TYPES.get(self.status, "api_error"), "message": self.message}
        return json.dumps({"type": "error", "error": error}).encode()


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)
