"""Liveness and readiness probes (outside /v1: they describe the process, not the API)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from wheretorun.api.schemas import HealthRead
from wheretorun.db import begin_write
from wheretorun.errors import Unavailable
from wheretorun.observability import Metrics

router = APIRouter(tags=["health"])
READY_WRITE_WAIT_S = 1.0  # how long /readyz waits for SQLite's write lock before saying "blocked"


@router.get("/healthz", operation_id="healthz", response_model=HealthRead)
def healthz() -> HealthRead:
    """The process is up."""
    return HealthRead(status="ok")


@router.get(
    "/readyz",
    operation_id="readyz",
    response_model=HealthRead,
    responses={
        503: {
            "description": "The database cannot be reached, or cannot take a write (SQLite's write lock "
            f"held for more than {READY_WRITE_WAIT_S:g} s, by a long price import say)",
            "content": {"application/problem+json": {}},
        }
    },
)
def readyz(request: Request) -> HealthRead:
    """The database answers, and a write could start now."""
    engine = request.app.state.engine
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:  # any driver error means "not ready"
        raise Unavailable(f"database not reachable: {type(exc).__name__}") from exc
    if not _a_write_can_start(request.app.state.session_factory):
        raise Unavailable(
            f"writes are blocked: another transaction (a price import?) has held the database's write "
            f"lock for more than {READY_WRITE_WAIT_S:g} s"
        )
    return HealthRead(status="ok", database=engine.dialect.name)


def _a_write_can_start(session_factory: sessionmaker[Session]) -> bool:
    """Whether a write transaction begins within `READY_WRITE_WAIT_S` (on SQLite: whether its one
    write lock is free; on PostgreSQL writers lock rows, so this is immediate). Nothing is written."""
    with session_factory() as session:
        try:
            begin_write(session, wait_s=READY_WRITE_WAIT_S)
            session.connection()  # begins the transaction: on SQLite, takes the write lock
        except OperationalError as error:
            if "locked" in str(error.orig):
                return False
            raise Unavailable(f"database not reachable: {type(error).__name__}") from error
        session.rollback()
    return True


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus metrics of this process (text exposition format)."""
    app_metrics: Metrics = request.app.state.metrics
    body, content_type = app_metrics.exposition()
    return Response(body, media_type=content_type)
