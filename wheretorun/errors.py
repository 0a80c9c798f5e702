"""Domain errors, shared by every layer. `api/errors.py` renders them as RFC 9457 problems.

WheretorunError
├── NotFound          a resource id that does not exist (HTTP 404)
├── InvalidInput      a value that is well-formed but impossible or unknown (HTTP 422)
├── Conflict          the request clashes with the current state (HTTP 409)
└── Unavailable       a dependency (the database) cannot be reached (HTTP 503)
"""

from __future__ import annotations

__all__ = ["Conflict", "InvalidInput", "NotFound", "Unavailable", "WheretorunError"]


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


class Unavailable(WheretorunError):
    title = "Service unavailable"
