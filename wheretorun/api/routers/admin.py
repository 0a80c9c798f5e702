"""`/v1/admin`: price imports, price overrides and the audit log. Every route needs an API key:
reads any scope, catalog writes `write`, the audit log `admin`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from wheretorun.api.admin_schemas import (
    AuditEntryRead,
    ImportCreate,
    ImportRead,
    OverrideCreate,
    OverrideRead,
)
from wheretorun.api.deps import (
    AdminKey,
    ClockDep,
    FetcherDep,
    ReadKey,
    SessionDep,
    SettingsDep,
    WriteKey,
    WriteSessionDep,
)
from wheretorun.api.schemas import PageRead, RowId
from wheretorun.bounds import NO_NUL
from wheretorun.errors import InvalidInput, PayloadTooLarge
from wheretorun.fields import SAFE_INT_MAX
from wheretorun.pricing import imports, overrides
from wheretorun.security import list_audit_entries

router = APIRouter(prefix="/v1/admin", tags=["admin"])


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/problem+json": {}}}


AUTH: dict[int | str, dict[str, Any]] = {
    401: _problem("No API key, or an unknown or revoked one (`WWW-Authenticate: Bearer`)"),
    403: _problem("The key's scope is too narrow"),
}
Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=SAFE_INT_MAX)]
_STATUS = {"dry_run": 200, "unchanged": 200, "not_modified": 200, "applied": 201, "held": 202}


# --- reading an import request: JSON or multipart, size-limited ----------------------------------


@dataclass(frozen=True)
class ImportBody:
    fields: ImportCreate
    content: bytes | None  # the file, for uploads


async def import_body(request: Request, settings: SettingsDep) -> ImportBody:
    """The request as an `ImportBody`; 413 above `max_upload_bytes`, 422 (field `body.*`) when invalid."""
    body = await _read_limited(request, settings.max_upload_bytes)
    content_type = request.headers.get("content-type", "application/json")
    if content_type.startswith("multipart/form-data"):
        return await _from_multipart(request, body, settings.max_upload_bytes)
    if not content_type.startswith("application/json"):
        raise InvalidInput("header.content-type", "send application/json or multipart/form-data")
    fields = _validated(body)
    content = fields.content.encode("utf-8", "surrogatepass") if fields.content is not None else None
    return ImportBody(fields=fields, content=content)


async def _read_limited(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge("the request", limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge("the request", limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def _from_multipart(request: Request, body: bytes, limit: int) -> ImportBody:
    async def replay() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    replayed = Request(request.scope, replay)
    async with replayed.form(max_files=1, max_fields=20, max_part_size=limit) as form:
        upload = form.get("file")
        values = {name: value for name, value in form.items() if name != "file" and isinstance(value, str)}
        if isinstance(upload, UploadFile):
            values["content"] = ""  # stands for the file in validation
            values.setdefault("filename", upload.filename or "upload")
            return ImportBody(fields=_validated(values), content=await upload.read())
    fields = _validated(values)
    content = fields.content.encode("utf-8") if fields.content is not None else None
    return ImportBody(fields=fields, content=content)


def _validated(data: bytes | dict[str, Any]) -> ImportCreate:
    try:
        if isinstance(data, bytes):
            return ImportCreate.model_validate_json(data or b"{}")
        return ImportCreate.model_validate(data)
    except ValidationError as error:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
        ) from error


ImportBodyDep = Annotated[ImportBody, Depends(import_body)]


# --- imports -------------------------------------------------------------------------------------

_IMPORT_SCHEMA: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": ImportCreate.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["format"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "The price file."},
                        "url": {"type": "string"},
                        "format": {"type": "string", "enum": ["skypilot", "litellm", "canonical"]},
                        "provider": {"type": "string"},
                        "dry_run": {"type": "boolean"},
                        "force": {"type": "boolean"},
                    },
                }
            },
        },
    }
}


@router.post(
    "/imports",
    operation_id="start_import",
    response_model=ImportRead,
    status_code=201,
    openapi_extra=_IMPORT_SCHEMA,
    responses={
        200: {
            "description": "A dry run, or nothing to change (unchanged / not_modified)",
            "model": ImportRead,
        },
        202: {"description": "Held for review: see `hold_reasons`; repeat with `force`", "model": ImportRead},
        **AUTH,
        409: _problem("Another import is running"),
        413: _problem("The upload or fetched file is above the size limit"),
        422: _problem("Invalid request, or a malformed file: `errors[]` has the row, column and reason"),
        502: _problem("The URL could not be fetched"),
    },
)
def start_import(
    request: Request,
    actor: WriteKey,
    body: ImportBodyDep,
    session: SessionDep,
    settings: SettingsDep,
    fetcher: FetcherDep,
    clock: ClockDep,
    response: Response,
) -> ImportRead:
    """Import a SkyPilot, LiteLLM or canonical price file, uploaded or fetched from a URL.

    201: applied as a new catalog version (`catalog_version`). 200: a dry run, or nothing changed.
    202: held for review. The diff lists added, removed, changed (old -> new, %) and unchanged rows.
    """
    fields = body.fields
    spec = imports.ImportSpec(
        format=fields.format, provider=fields.provider, dry_run=fields.dry_run, force=fields.force
    )
    options: dict[str, Any] = {"lock_timeout_s": settings.import_lock_timeout_seconds, "clock": clock}
    if fields.url is not None:
        run = imports.import_url(session, spec, fields.url, actor, fetcher, **options)
    else:
        run = imports.import_content(session, spec, body.content or b"", fields.filename, actor, **options)
    response.status_code = _STATUS[run.status]
    request.app.state.metrics.imports.labels(status=run.status).inc()
    return ImportRead.of(run)


@router.get("/imports", operation_id="list_imports", response_model=PageRead[ImportRead], responses=AUTH)
def list_imports(
    _actor: ReadKey,
    session: SessionDep,
    status: Annotated[
        str | None, Query(pattern=NO_NUL, description="applied, unchanged, not_modified or held.")
    ] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> PageRead[ImportRead]:
    """Recorded imports, newest first (dry runs are not recorded)."""
    runs, total = imports.list_import_runs(session, limit, offset, status)
    return PageRead(items=[ImportRead.of(run) for run in runs], total=total, limit=limit, offset=offset)


@router.get(
    "/imports/{import_id}",
    operation_id="get_import",
    response_model=ImportRead,
    responses={**AUTH, 404: _problem("No such import")},
)
def get_import(_actor: ReadKey, session: SessionDep, import_id: RowId) -> ImportRead:
    """One import with its diff, hold reasons, and who ran it."""
    return ImportRead.of(imports.get_import_run(session, import_id))


# --- price overrides -----------------------------------------------------------------------------


@router.get(
    "/overrides", operation_id="list_overrides", response_model=PageRead[OverrideRead], responses=AUTH
)
def list_overrides(
    _actor: ReadKey,
    session: SessionDep,
    clock: ClockDep,
    in_force: Annotated[bool, Query(description="Only the overrides in force now.")] = False,
    limit: Limit = 50,
    offset: Offset = 0,
) -> PageRead[OverrideRead]:
    rows, total = overrides.list_overrides(session, limit, offset, clock() if in_force else None)
    return PageRead(items=[OverrideRead.of(row) for row in rows], total=total, limit=limit, offset=offset)


@router.post(
    "/overrides",
    operation_id="create_override",
    response_model=OverrideRead,
    status_code=201,
    responses={**AUTH, 422: _problem("Invalid override")},
)
def create_override(
    session: WriteSessionDep, actor: WriteKey, clock: ClockDep, body: OverrideCreate
) -> OverrideRead:
    """A negotiated price for a provider, effective from now (or a later `effective_from`)."""
    spec = overrides.OverrideSpec(**body.model_dump())
    return OverrideRead.of(overrides.create_override(session, spec, actor, clock()))


@router.post(
    "/overrides/{override_id}/end",
    operation_id="end_override",
    response_model=OverrideRead,
    responses={**AUTH, 404: _problem("No such override"), 409: _problem("Already ended")},
)
def end_override(
    session: WriteSessionDep, actor: WriteKey, clock: ClockDep, override_id: RowId
) -> OverrideRead:
    """Stop an override now. It stays on record (and in force for reads `as_of` before now)."""
    return OverrideRead.of(overrides.end_override(session, override_id, actor, clock()))


# --- audit log -----------------------------------------------------------------------------------


@router.get(
    "/audit", operation_id="list_audit_entries", response_model=PageRead[AuditEntryRead], responses=AUTH
)
def list_audit(
    _actor: AdminKey,
    session: SessionDep,
    action: Annotated[
        str | None, Query(pattern=NO_NUL, description="e.g. import.applied, override.create")
    ] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> PageRead[AuditEntryRead]:
    """Every write, newest first: who (key id or CLI user), when, what, and what changed. Admin keys only."""
    entries, total = list_audit_entries(session, limit, offset, action)
    return PageRead(items=[AuditEntryRead.of(e) for e in entries], total=total, limit=limit, offset=offset)
