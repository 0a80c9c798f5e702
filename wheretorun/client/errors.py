"""What the client raises. Every error is a `ClientError`:

    ClientError
    ├── TransportError        no HTTP answer: connection refused/reset, timeout (after retries)
    └── ProblemError          an HTTP error answer; carries the RFC 9457 problem+json body
        ├── AuthError         401, 403
        ├── NotFoundError     404
        ├── ConflictError     409, 412 (stale If-Match), 428 (If-Match missing)
        ├── ValidationError   422; `errors[].field` names the failing input
        ├── RateLimitedError  429; `retry_after` in seconds
        └── ServerError       5xx (after retries, for requests safe to retry)

Other 4xx answers (400, 405, 413) are plain `ProblemError`s.
"""

from __future__ import annotations

from typing import Any

import httpx

__all__ = [
    "AuthError",
    "ClientError",
    "ConflictError",
    "NotFoundError",
    "ProblemError",
    "RateLimitedError",
    "ServerError",
    "TransportError",
    "ValidationError",
    "problem_error",
]


class ClientError(Exception):
    """Base of everything the wheretorun client raises."""


class TransportError(ClientError):
    """The request got no HTTP answer (connection error or timeout), even after retries."""


class ProblemError(ClientError):
    """The service answered with an error status. `body` is the problem+json document as sent."""

    def __init__(self, status: int, body: dict[str, Any], response: httpx.Response | None = None) -> None:
        self.status = status
        self.body = body
        self.title: str = str(body.get("title") or "")
        self.detail: str = str(body.get("detail") or "")
        self.errors: list[dict[str, Any]] = list(body.get("errors") or [])
        self.response = response
        super().__init__(f"{status} {self.title}: {self.detail}" if self.detail else f"{status} {self.title}")


class AuthError(ProblemError):
    """401: no API key, or an unknown or revoked one. 403: the key's scope is too narrow."""


class NotFoundError(ProblemError):
    """404: no such id."""


class ConflictError(ProblemError):
    """409: conflicting state (an import running, an override already ended). 412: the If-Match
    version is no longer current. 428: If-Match is missing."""


class ValidationError(ProblemError):
    """422: the request is invalid; `errors` lists `{"field": "body.model.layers", "reason": ...}`."""


class RateLimitedError(ProblemError):
    """429: too many requests. `retry_after` is the server's Retry-After in seconds, when given."""

    def __init__(
        self,
        status: int,
        body: dict[str, Any],
        response: httpx.Response | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status, body, response)
        self.retry_after = retry_after


class ServerError(ProblemError):
    """5xx: the service failed or is unavailable."""


_BY_STATUS: dict[int, type[ProblemError]] = {
    401: AuthError,
    403: AuthError,
    404: NotFoundError,
    409: ConflictError,
    412: ConflictError,
    428: ConflictError,
    422: ValidationError,
}


def problem_error(response: httpx.Response) -> ProblemError:
    """The typed error for an error response. A body that is not problem+json (a proxy's HTML
    page, say) becomes a problem with the reason phrase as title and the text as detail."""
    status = response.status_code
    body = _problem_body(response)
    if status == 429:
        return RateLimitedError(status, body, response, _retry_after(response))
    if status >= 500:
        return ServerError(status, body, response)
    return _BY_STATUS.get(status, ProblemError)(status, body, response)


def _problem_body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        return body
    return {
        "type": "about:blank",
        "title": response.reason_phrase,
        "status": response.status_code,
        "detail": response.text[:500],
    }


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds; the HTTP-date form is not used by this service and is ignored."""
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None
