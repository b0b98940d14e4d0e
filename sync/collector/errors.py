"""The errors the collector answers with: an HTTP status, a stable code, one clear line."""

from __future__ import annotations

__all__ = ["ApiError"]


class ApiError(Exception):
    """Rendered as `{"error": code, "message": message, "field": field}` with `status`."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers or {}

    def body(self) -> dict[str, str | None]:
        return {"error": self.code, "message": self.message, "field": self.field}
