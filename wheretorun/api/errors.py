"""Every error leaves the service as RFC 9457 `application/problem+json`, rendered here only.

A problem names the failing input in `errors[].field` (`query.limit`, `body.model.layers`, ...)
so a client can point at it, and carries the `request_id` of the request (also in the
`X-Request-ID` header) so a report can be matched with the logs. The ASGI middlewares
(`api/middleware.py`) render their errors through `domain_error_response` too. The OpenAPI
document says so (`document_problems`): every 4xx/5xx response is `application/problem+json` with
the `Problem` schema.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from wheretorun.db import SQLITE_BUSY_TIMEOUT_S
from wheretorun.errors import (
    Conflict,
    Forbidden,
    IdempotencyInProgress,
    InvalidInput,
    MalformedFile,
    NotFound,
    NotSaved,
    PayloadTooLarge,
    PreconditionFailed,
    PreconditionRequired,
    RateLimited,
    Unauthorized,
    Unavailable,
    UpstreamError,
    WheretorunError,
)

__all__ = [
    "PROBLEM_JSON",
    "Problem",
    "database_busy",
    "document_problems",
    "domain_error_response",
    "install_error_handlers",
    "problem_response",
]

_log = logging.getLogger("wheretorun.errors")
PROBLEM_JSON = "application/problem+json"


class ProblemDetail(BaseModel):
    """One failing input: a parameter or body field, or a row and column of an imported file."""

    field: str | None = None
    reason: str
    row: int | str | None = None
    column: str | None = None


class Problem(BaseModel):
    """RFC 9457 problem details, as every error response carries them."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    errors: list[ProblemDetail] | None = None
    request_id: str | None = None


_STATUS_BY_ERROR: dict[type[WheretorunError], int] = {
    NotFound: 404,
    InvalidInput: 422,
    MalformedFile: 422,
    Conflict: 409,
    Unauthorized: 401,
    Forbidden: 403,
    PayloadTooLarge: 413,
    UpstreamError: 502,
    Unavailable: 503,
    PreconditionFailed: 412,
    PreconditionRequired: 428,
    RateLimited: 429,
    NotSaved: 500,
}
_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    413: "Payload too large",
    422: "Invalid input",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}


def problem_response(
    request: Request, status: int, title: str, detail: str, errors: list[dict[str, Any]] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    if errors:
        body["errors"] = errors
    request_id = request.scope.get("state", {}).get("request_id")
    if request_id:
        body["request_id"] = request_id
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON)


def _is_union_member(part: Any) -> bool:
    """Pydantic names the member of a union it tried (`str`, `constrained-str`,
    `ModelArchitectureIn`, `function-after[...]`) in an error's location; field names are
    snake_case, so these are told apart by their spelling."""
    if not isinstance(part, str) or not part:
        return False
    return part[0].isupper() or "-" in part or "[" in part or part in _BUILTIN_MEMBERS


_BUILTIN_MEMBERS = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple", "none"})


def _is_missing_if_match(error: Any) -> bool:
    """A conditional write without `If-Match` is 428 Precondition Required (RFC 6585), not 422:
    the header is required in the OpenAPI document, and its absence has its own status."""
    return error.get("type") == "missing" and tuple(error.get("loc", ())) == ("header", "if-match")


def _field_path(location: tuple[Any, ...] | list[Any]) -> str:
    """`body.model.layers`: the location of a failing input, without union member names."""
    return ".".join(str(part) for part in location if not _is_union_member(part))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    if any(_is_missing_if_match(error) for error in exc.errors()):
        return domain_error_response(
            request, PreconditionRequired("send If-Match with the version you edit (the ETag of GET)")
        )
    errors = [{"field": _field_path(error["loc"]), "reason": error["msg"]} for error in exc.errors()]
    detail = "; ".join(f"{error['field']}: {error['reason']}" for error in errors)
    return problem_response(request, 422, "Invalid input", detail, errors)


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, WheretorunError)
    return domain_error_response(request, exc)


def domain_error_response(request: Request, exc: WheretorunError) -> JSONResponse:
    """The problem+json response for a domain error, with its status and headers."""
    status = next((code for kind, code in _STATUS_BY_ERROR.items() if isinstance(exc, kind)), 400)
    errors: list[dict[str, Any]] | None = None
    if isinstance(exc, InvalidInput):
        errors = [{"field": exc.field, "reason": exc.reason}]
    elif isinstance(exc, MalformedFile):
        errors = [
            {"field": exc.field, "row": problem.row, "column": problem.column, "reason": problem.reason}
            for problem in exc.problems
        ]
    response = problem_response(request, status, exc.title, exc.detail, errors)
    # RFC 6750: a bearer-token challenge on 401, and the reason on 403.
    if isinstance(exc, Unauthorized):
        challenge = 'Bearer realm="wheretorun"'
        response.headers["WWW-Authenticate"] = challenge + (
            ', error="invalid_token"' if exc.token_given else ""
        )
    elif isinstance(exc, Forbidden):
        response.headers["WWW-Authenticate"] = 'Bearer realm="wheretorun", error="insufficient_scope"'
    elif isinstance(exc, RateLimited | IdempotencyInProgress):
        response.headers["Retry-After"] = str(exc.retry_after_seconds)
    return response


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    title = _TITLES.get(exc.status_code, "Error")
    response = problem_response(request, exc.status_code, title, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


# SQLSTATEs of PostgreSQL errors that mean "another transaction was in the way", not "unreachable":
# serialization failure, deadlock, lock not available (lock_timeout).
_PG_CONTENTION = {"40001", "40P01", "55P03"}


def database_busy(exc: OperationalError) -> bool:
    """Whether `exc` is contention (another writer held a lock too long), not an unreachable database."""
    if getattr(exc.orig, "sqlstate", None) in _PG_CONTENTION:
        return True
    message = str(exc.orig).lower()
    return "database is locked" in message or "database table is locked" in message


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    # 503 only when the database cannot be reached (server gone, connection refused, or a schema that
    # is not migrated): the client learns that much, the log keeps the driver's reason. Contention
    # (SQLite's write lock held past the busy timeout, a PostgreSQL deadlock) is a 409 to retry.
    assert isinstance(exc, OperationalError)
    if database_busy(exc):
        _log.info("database busy on %s %s: %s", request.method, request.url.path, exc)
        if getattr(exc.orig, "sqlstate", None) in _PG_CONTENTION:
            what = "the write collided with a concurrent one (a deadlock or a lock wait)"
        else:
            what = f"another write held the database's write lock for more than {SQLITE_BUSY_TIMEOUT_S:g} s"
        response = problem_response(request, 409, "Conflict", f"{what}; nothing was changed: retry")
        response.headers["Retry-After"] = "1"
        return response
    _log.warning("database error on %s %s: %s", request.method, request.url.path, exc)
    return problem_response(request, 503, "Service unavailable", "the catalog database cannot be reached")


def document_problems(openapi: dict[str, Any]) -> dict[str, Any]:
    """Make an OpenAPI document say what the handlers above send: every error response is
    `application/problem+json` with the `Problem` schema (not FastAPI's default `application/json`
    validation error), and an operation with a body can also answer 400 (a body that is not UTF-8)."""
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs", {}))
    schemas["Problem"] = problem
    content = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path_item in openapi.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            if "requestBody" in operation:
                responses.setdefault("400", {"description": "The body cannot be read (not UTF-8 JSON)"})
            for status, response in responses.items():
                if status.isdigit() and int(status) >= 400:
                    response["content"] = content
    return openapi


def install_error_handlers(app: FastAPI) -> None:
    """Render every error as problem+json, and document that in the app's OpenAPI document."""
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(WheretorunError, _domain_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(OperationalError, _database_error)
    default_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_problems(default_openapi())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
