"""Liveness and readiness probes (outside /v1: they describe the process, not the API)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from sqlalchemy import text

from wheretorun.api.schemas import HealthRead
from wheretorun.errors import Unavailable
from wheretorun.observability import Metrics

router = APIRouter(tags=["health"])


@router.get("/healthz", operation_id="healthz", response_model=HealthRead)
def healthz() -> HealthRead:
    """The process is up."""
    return HealthRead(status="ok")


@router.get(
    "/readyz",
    operation_id="readyz",
    response_model=HealthRead,
    responses={
        503: {"description": "The database cannot be reached", "content": {"application/problem+json": {}}}
    },
)
def readyz(request: Request) -> HealthRead:
    """The database answers."""
    engine = request.app.state.engine
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:  # any driver error means "not ready"
        raise Unavailable(f"database not reachable: {type(exc).__name__}") from exc
    return HealthRead(status="ok", database=engine.dialect.name)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus metrics of this process (text exposition format)."""
    app_metrics: Metrics = request.app.state.metrics
    body, content_type = app_metrics.exposition()
    return Response(body, media_type=content_type)
