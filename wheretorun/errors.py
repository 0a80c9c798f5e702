"""Domain errors, shared by every layer. `api/errors.py` renders them as RFC 9457 problems.

WheretorunError
├── NotFound          a resource id that does not exist (HTTP 404)
├── InvalidInput      a value that is well-formed but impossible or unknown (HTTP 422)
│   └── IdempotencyKeyReused  an Idempotency-Key sent again with a different request (HTTP 422)
├── MalformedFile     a price file that cannot be read; every problem has row, column, reason (HTTP 422)
├── Conflict          the request clashes with the current state (HTTP 409)
│   └── IdempotencyInProgress  the first request with this Idempotency-Key is still running (HTTP 409)
├── Unauthorized      no API key, or one that is unknown or revoked (HTTP 401)
├── Forbidden         an API key whose scope is too narrow for the action (HTTP 403)
├── PayloadTooLarge   an upload or fetched file above the size limit (HTTP 413)
├── UpstreamError     a price source URL that cannot be fetched (HTTP 502)
├── PreconditionRequired  an update without If-Match (HTTP 428)
├── PreconditionFailed    an update of a version that is no longer current (HTTP 412)
├── RateLimited       too many requests from one API key or client address (HTTP 429, Retry-After)
├── Unavailable       a dependency (the database) cannot be reached (HTTP 503)
└── NotSaved          the database refused to commit a write: nothing was saved (HTTP 500)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Conflict",
    "FileProblem",
    "Forbidden",
    "IdempotencyInProgress",
    "IdempotencyKeyReused",
    "InvalidInput",
    "MalformedFile",
    "NotFound",
    "NotSaved",
    "PayloadTooLarge",
    "PreconditionFailed",
    "PreconditionRequired",
    "RateLimited",
    "Unauthorized",
    "Unavailable",
    "UpstreamError",
    "WheretorunError",
]


class WheretorunError(Exception):
    """Base of every error the service raises on purpose."""

    title = "Error"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(WheretorunError):
    title = "Not found"

    def __init__(self, resource: str, identifier: object) -> None:
        super().__init__(f"no {resource} with id {identifier!r}")
        self.resource = resource
        self.identifier = identifier


class InvalidInput(WheretorunError):
    """`field` is the path of the offending input, e.g. `query.accelerator` or `body.model.layers`."""

    title = "Invalid input"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class Conflict(WheretorunError):
    title = "Conflict"


class IdempotencyKeyReused(InvalidInput):
    """The same Idempotency-Key with a different method, path or body than its first use."""

    title = "Idempotency key reused"

    def __init__(self) -> None:
        super().__init__(
            "header.idempotency-key",
            "this key was already used with a different request body; use a new key for a new request",
        )


class IdempotencyInProgress(Conflict):
    """A request with this Idempotency-Key is still being processed (by this or another replica)."""

    title = "Request in progress"

    def __init__(self, retry_after_seconds: int = 1) -> None:
        super().__init__(
            "a request with this Idempotency-Key is still being processed; retry after it has finished"
        )
        self.retry_after_seconds = retry_after_seconds


class RateLimited(WheretorunError):
    """Over the request budget of the current window; `retry_after_seconds` until the next one."""

    title = "Too many requests"

    def __init__(self, limit: int, retry_after_seconds: int) -> None:
        super().__init__(f"more than {limit} requests per minute; retry after {retry_after_seconds} s")
        self.limit = limit
        self.retry_after_seconds = retry_after_seconds


class Unavailable(WheretorunError):
    title = "Service unavailable"


class NotSaved(WheretorunError):
    """The handler's work was done but the commit failed (a constraint the database checks only at
    commit, say): the request changed nothing and must not be reported as a success (HTTP 500)."""

    title = "Not saved"

    def __init__(self) -> None:
        super().__init__("the database refused to commit the change, so nothing was saved; see the logs")


@dataclass(frozen=True, slots=True)
class FileProblem:
    """One thing wrong in a file. `row`: the line number in a CSV file (the header is line 1) or of
    a JSON syntax error; the entry's key in a JSON table; the position in a JSON list. `column`: the
    CSV header or JSON field (or the character position of a JSON syntax error)."""

    row: int | str | None
    column: str | None
    reason: str

    def __str__(self) -> str:
        where = ", ".join(
            part
            for part in (
                f"row {self.row}" if self.row is not None else "",
                f"column {self.column}" if self.column else "",
            )
            if part
        )
        return f"{where}: {self.reason}" if where else self.reason


class MalformedFile(WheretorunError):
    """A file rejected whole: nothing of it is imported. `problems` lists what is wrong (capped)."""

    title = "Malformed file"

    def __init__(self, problems: list[FileProblem], field: str = "body.content") -> None:
        shown = "; ".join(str(problem) for problem in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"the file was rejected, nothing was imported: {shown}{more}")
        self.problems = problems
        self.field = field


class Unauthorized(WheretorunError):
    """`token_given`: a key was sent but is unknown or revoked (vs. no key at all)."""

    title = "Unauthorized"

    def __init__(self, detail: str, token_given: bool = False) -> None:
        super().__init__(detail)
        self.token_given = token_given


class Forbidden(WheretorunError):
    title = "Forbidden"


class PayloadTooLarge(WheretorunError):
    title = "Payload too large"

    def __init__(self, what: str, limit_bytes: int) -> None:
        super().__init__(f"{what} is larger than the limit of {limit_bytes:,} bytes")
        self.limit_bytes = limit_bytes


class UpstreamError(WheretorunError):
    """A source URL answered with an error, timed out, or could not be reached (after retries)."""

    title = "Bad gateway"


class PreconditionRequired(WheretorunError):
    """An update that does not say which version it edits (no If-Match) (HTTP 428)."""

    title = "Precondition required"


class PreconditionFailed(WheretorunError):
    """An update of a version that is no longer current: someone else changed it (HTTP 412)."""

    title = "Precondition failed"
