"""Every error leaves the service as RFC 9457 `application/problem+json`, rendered here only.

A problem names the failing input in `errors[].field` (`query.limit`, `body.model.layers`, ...)
so a client can point at it.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from wheretorun.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    MalformedFile,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    PreconditionRequired,
    Unauthorized,
    Unavailable,
    UpstreamError,
    WheretorunError,
)

__all__ = ["PROBLEM_JSON", "install_error_handlers", "problem_response"]

PROBLEM_JSON = "application/problem+json"

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
}
_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    413: "Payload too large",
    422: "Invalid input",
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
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON)


def _field_path(location: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in location)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"field": _field_path(error["loc"]), "reason": error["msg"]} for error in exc.errors()]
    detail = "; ".join(f"{error['field']}: {error['reason']}" for error in errors)
    return problem_response(request, 422, "Invalid input", detail, errors)


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, WheretorunError)
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
    return response


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    title = _TITLES.get(exc.status_code, "Error")
    response = problem_response(request, exc.status_code, title, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _database_down(request: Request, exc: Exception) -> JSONResponse:
    return problem_response(request, 503, "Service unavailable", "the catalog database cannot be reached")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(WheretorunError, _domain_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(OperationalError, _database_down)
