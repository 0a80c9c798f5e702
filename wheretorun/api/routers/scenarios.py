"""`/v1/scenarios`: saved, versioned finance scenarios, their evaluation, comparison and exports.

Creating, updating and deleting need an API key of scope `write` (and are in the audit log); the
other routes are reads and follow `WHERETORUN_REQUIRE_KEY_FOR_READS`, like the catalog. Updates and
deletes need `If-Match` with the scenario's ETag (`"v3"`, a list of them, or `*` for any current
version): a stale one is a 412, a missing one a 428. The check and the write are one atomic
compare-and-set in the database, so of concurrent writers naming the same version exactly one wins.
Evaluations answer JSON, or the cash-flow table as CSV / XLSX (`?format=csv|xlsx` or an `Accept`
header); charts are SVG or PNG.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt

from wheretorun.api.deps import ClockDep, SessionDep, SnapshotsDep, WriteKey, WriteSessionDep, catalog_reads
from wheretorun.api.schemas import PageRead, RowId, TextQuery
from wheretorun.bounds import NO_NUL, distinct
from wheretorun.errors import InvalidInput
from wheretorun.fields import SAFE_INT_MAX, SAFE_INT_MIN
from wheretorun.pricing.repositories import PageRequest
from wheretorun.scenarios import exports, service
from wheretorun.scenarios.evaluation_schemas import ComparisonRead, EvaluationRead, SavedEvaluationRead
from wheretorun.scenarios.models import ScenarioRecord
from wheretorun.scenarios.schemas import (
    ANALYSES_EXAMPLE,
    SCENARIO_EXAMPLES,
    AnalysesIn,
    ScenarioBody,
    ScenarioCreate,
    ScenarioEvaluateRequest,
    ScenarioRead,
    ScenarioUpdate,
    ScenarioVersionRead,
)

router = APIRouter(prefix="/v1/scenarios", tags=["scenarios"])
READ = [Depends(catalog_reads)]  # every route but the three writes: a key only if reads need one

PROBLEM: dict[str, Any] = {"content": {"application/problem+json": {}}}
ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such scenario or version", **PROBLEM},
    422: {"description": "Invalid input; `errors[].field` names it", **PROBLEM},
}
WRITES: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    401: {"description": "No API key, or an unknown or revoked one", **PROBLEM},
    403: {"description": "The key's scope is below `write`", **PROBLEM},
    409: {"description": "Another write held the database for too long; nothing was changed", **PROBLEM},
}
VERSIONED: dict[int | str, dict[str, Any]] = {
    **WRITES,
    412: {"description": "If-Match names a version that is no longer current", **PROBLEM},
    428: {"description": "If-Match is missing", **PROBLEM},
}
FILES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {media: {} for media in exports.MEDIA_TYPES.values()},
        "description": "JSON, or the file asked for",
    },
    **ERRORS,
}


class AnalysisRequest(AnalysesIn):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"examples": [{"version": 1}, {"version": 2, **ANALYSES_EXAMPLE}]},
    )

    version: int | None = Field(
        None, ge=1, le=SAFE_INT_MAX, description="Evaluate this version (default: the current one)."
    )


MAX_COMPARED = 10  # scenarios side by side (of each kind): more is no longer a table one can read


class CompareRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"scenario_ids": [1, 2]},
                {
                    "scenario_ids": [1],
                    "scenarios": [{**SCENARIO_EXAMPLES[0], "name": "70B, 10% cheaper API"}],
                },
            ]
        },
    )

    scenario_ids: Annotated[
        list[Annotated[StrictInt, Field(ge=SAFE_INT_MIN, le=SAFE_INT_MAX)]],
        Field(max_length=MAX_COMPARED),
        AfterValidator(distinct),
    ] = Field([], description="Saved scenarios to compare (current versions).")
    scenarios: list[ScenarioEvaluateRequest] = Field(
        [], max_length=MAX_COMPARED, description="Unsaved scenarios to compare."
    )


_ONE_ETAG = r'(W/)?"v[0-9]{1,16}"'
ETAG_PATTERN = rf"^(\*|{_ONE_ETAG}( *, *{_ONE_ETAG})*)$"
"""`If-Match` as RFC 9110 has it: `*` (any current version), or one or more scenario ETags as the
API sends them (`"v3"`, `"v3", "v4"`), each optionally weak (`W/"v3"`)."""


def _etag(version: int) -> str:
    return f'"v{version}"'


_ETAG = re.compile(r'(?:W/)?"v(?P<version>[0-9]{1,10})"')


def _expected_version(if_match: str | None) -> service.Expected:
    """The versions `If-Match` names: `*` (any), or a list of ETags (`"v3"`, `"v3", "v4"`).

    A weak tag (`W/"v3"`) is read as the strong one: this API only hands out strong ETags, and a
    client or proxy that marked one weak still means that version.
    """
    if if_match is None:
        return None
    if if_match.strip() == "*":
        return service.ANY_VERSION
    versions: set[int] = set()
    for part in if_match.split(","):
        match = _ETAG.fullmatch(part.strip())
        if match is None:
            raise InvalidInput("header.if-match", f'expected an ETag like "v3", or *, got {if_match!r}')
        versions.add(int(match["version"]))
    return versions.pop() if len(versions) == 1 else frozenset(versions)


def _read(scenario: ScenarioRecord) -> ScenarioRead:
    current = service.current_version(scenario)
    return ScenarioRead(
        id=scenario.id,
        name=scenario.name,
        tags=list(scenario.tags),
        version=scenario.current_version,
        created_at=scenario.created_at,
        updated_at=scenario.updated_at,
        catalog_version_id=current.catalog_version_id,
        body=current.body,
    )


def _format(format_query: str | None, accept: str | None, allowed: tuple[str, ...]) -> str:
    if format_query is not None:
        if format_query not in allowed:
            raise InvalidInput("query.format", f"choose one of {', '.join(allowed)}")
        return format_query
    for name in allowed:
        if name != "json" and accept and exports.MEDIA_TYPES.get(name, "") in accept:
            return name
    return allowed[0]


def _table_or_json(evaluated: service.Evaluated, fmt: str, filename: str) -> Any:
    if fmt == "json":
        return evaluated.result
    content = exports.table_file(evaluated.analyses, "csv" if fmt == "csv" else "xlsx")
    return Response(
        content,
        media_type=exports.MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{filename}.{fmt}"'},
    )


IfMatch = Annotated[
    str,
    Header(
        pattern=ETAG_PATTERN,
        description=(
            'The ETag of the version you edit (`"v3"`, from GET), a list of them, or `*` for whatever '
            "version is current. Without it: 428."
        ),
        examples=['"v1"'],
    ),
]
FormatQuery = Annotated[Literal["json", "csv", "xlsx"] | None, Query(alias="format")]
ChartFormatQuery = Annotated[Literal["svg", "png"] | None, Query(alias="format")]


@router.post(
    "", operation_id="create_scenario", status_code=201, response_model=ScenarioRead, responses=WRITES
)
def create_scenario(
    session: WriteSessionDep, actor: WriteKey, clock: ClockDep, body: ScenarioCreate, response: Response
) -> ScenarioRead:
    """Save a scenario as version 1. Needs a `write` key; the audit log records it."""
    scenario = service.create_scenario(session, body, actor, clock())
    response.headers["ETag"] = _etag(scenario.current_version)
    response.headers["Location"] = f"/v1/scenarios/{scenario.id}"
    return _read(scenario)


@router.get(
    "",
    operation_id="list_scenarios",
    response_model=PageRead[ScenarioRead],
    responses=ERRORS,
    dependencies=READ,
)
def list_scenarios(
    session: SessionDep,
    tag: TextQuery = None,
    q: Annotated[str | None, Query(pattern=NO_NUL, max_length=100, description="Part of the name.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=SAFE_INT_MAX)] = 0,
) -> PageRead[ScenarioRead]:
    page = service.list_scenarios(session, tag, q, PageRequest(limit, offset))
    return PageRead(items=[_read(s) for s in page.items], total=page.total, limit=limit, offset=offset)


@router.post(
    "/evaluate",
    operation_id="evaluate_unsaved_scenario",
    response_model=EvaluationRead,
    response_model_exclude_unset=True,
    responses=FILES,
    dependencies=READ,
)
def evaluate_unsaved(
    session: SessionDep,
    snapshots: SnapshotsDep,
    body: ScenarioEvaluateRequest,
    format_query: FormatQuery = None,
    accept: Annotated[str | None, Header()] = None,
) -> Any:
    """Monthly cash flows, totals and NPV of every plan, and the analyses asked for
    (`monte_carlo`, `sensitivity`, `break_even`, `buy_versus_rent`)."""
    fmt = _format(format_query, accept, ("json", "csv", "xlsx"))
    evaluated = service.evaluate_body(session, body, body, snapshots)
    return _table_or_json(evaluated, fmt, "scenario")


@router.post("/charts/{chart}", operation_id="chart_unsaved_scenario", responses=FILES, dependencies=READ)
def chart_unsaved(
    session: SessionDep,
    snapshots: SnapshotsDep,
    chart: Literal["cost_stack", "break_even", "tornado", "monte_carlo"],
    body: ScenarioEvaluateRequest,
    format_query: ChartFormatQuery = None,
    plan: TextQuery = None,
) -> Response:
    """A chart of an unsaved scenario: cost stack over time, break-even curve, tornado, Monte Carlo."""
    fmt = format_query or "svg"
    analyses = service.analyse_body(session, body, body, snapshots)
    return Response(exports.chart_file(analyses, chart, fmt, plan), media_type=exports.MEDIA_TYPES[fmt])


@router.post(
    "/compare",
    operation_id="compare_scenarios",
    response_model=ComparisonRead,
    responses=ERRORS,
    dependencies=READ,
)
def compare(session: SessionDep, snapshots: SnapshotsDep, body: CompareRequest) -> ComparisonRead:
    """Plans of two or more scenarios side by side, with deltas per cost line against the first."""
    bodies: list[tuple[str, ScenarioBody]] = []
    for scenario in service.find_by_ids(session, body.scenario_ids):
        bodies.append((scenario.name, service.saved_body(service.current_version(scenario))))
    bodies.extend((unsaved.name, unsaved) for unsaved in body.scenarios)
    return service.compare_scenarios(session, bodies, snapshots)


@router.get(
    "/{scenario_id}",
    operation_id="get_scenario",
    response_model=ScenarioRead,
    responses=ERRORS,
    dependencies=READ,
)
def get_scenario(session: SessionDep, scenario_id: RowId, response: Response) -> ScenarioRead:
    scenario = service.get_scenario(session, scenario_id)
    response.headers["ETag"] = _etag(scenario.current_version)
    return _read(scenario)


@router.put(
    "/{scenario_id}", operation_id="update_scenario", response_model=ScenarioRead, responses=VERSIONED
)
def update_scenario(
    session: WriteSessionDep,
    actor: WriteKey,
    clock: ClockDep,
    scenario_id: RowId,
    body: ScenarioUpdate,
    response: Response,
    if_match: IfMatch,
) -> ScenarioRead:
    """Save a new version. `If-Match` must carry the current ETag (or `*`). Needs a `write` key."""
    expected = _expected_version(if_match)
    scenario = service.update_scenario(session, scenario_id, body, expected, actor, clock())
    response.headers["ETag"] = _etag(scenario.current_version)
    return _read(scenario)


@router.delete("/{scenario_id}", operation_id="delete_scenario", status_code=204, responses=VERSIONED)
def delete_scenario(
    session: WriteSessionDep, actor: WriteKey, clock: ClockDep, scenario_id: RowId, if_match: IfMatch
) -> Response:
    """Delete a scenario and all its versions. `If-Match` as for updates; needs a `write` key."""
    service.delete_scenario(session, scenario_id, _expected_version(if_match), actor, clock())
    return Response(status_code=204)


@router.get(
    "/{scenario_id}/versions",
    operation_id="list_scenario_versions",
    response_model=list[ScenarioVersionRead],
    responses=ERRORS,
    dependencies=READ,
)
def list_versions(session: SessionDep, scenario_id: RowId) -> list[ScenarioVersionRead]:
    scenario = service.get_scenario(session, scenario_id)
    return [ScenarioVersionRead.model_validate(v, from_attributes=True) for v in scenario.versions]


@router.get(
    "/{scenario_id}/versions/{version}",
    operation_id="get_scenario_version",
    response_model=ScenarioVersionRead,
    responses=ERRORS,
    dependencies=READ,
)
def get_version(session: SessionDep, scenario_id: RowId, version: RowId) -> ScenarioVersionRead:
    return ScenarioVersionRead.model_validate(
        service.get_version(session, scenario_id, version), from_attributes=True
    )


@router.post(
    "/{scenario_id}/evaluate",
    operation_id="evaluate_scenario",
    response_model=SavedEvaluationRead,
    response_model_exclude_unset=True,
    responses=FILES,
    dependencies=READ,
)
def evaluate_saved(
    session: SessionDep,
    snapshots: SnapshotsDep,
    scenario_id: RowId,
    body: AnalysisRequest | None = None,
    format_query: FormatQuery = None,
    accept: Annotated[str | None, Header()] = None,
) -> Any:
    """Evaluate a saved scenario (its current version, or `version`) with the prices it recorded."""
    analyses_request = body or AnalysisRequest()
    fmt = _format(format_query, accept, ("json", "csv", "xlsx"))
    evaluated = service.evaluate_scenario(
        session, scenario_id, analyses_request.version, analyses_request, snapshots
    )
    assert isinstance(evaluated.result, SavedEvaluationRead), (
        "a saved scenario's evaluation names its version"
    )
    filename = f"scenario-{scenario_id}-v{evaluated.result.version}"
    return _table_or_json(evaluated, fmt, filename)


@router.post(
    "/{scenario_id}/charts/{chart}", operation_id="chart_scenario", responses=FILES, dependencies=READ
)
def chart_saved(
    session: SessionDep,
    snapshots: SnapshotsDep,
    scenario_id: RowId,
    chart: Literal["cost_stack", "break_even", "tornado", "monte_carlo"],
    body: AnalysisRequest | None = None,
    format_query: ChartFormatQuery = None,
    plan: TextQuery = None,
) -> Response:
    analyses_request = body or AnalysisRequest()
    evaluated = service.evaluate_scenario(
        session, scenario_id, analyses_request.version, analyses_request, snapshots
    )
    fmt = format_query or "svg"
    return Response(
        exports.chart_file(evaluated.analyses, chart, fmt, plan), media_type=exports.MEDIA_TYPES[fmt]
    )
