"""The FastAPI application: routers under /v1, problem+json errors, one engine per app."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from wheretorun.api.errors import install_error_handlers
from wheretorun.api.middleware import (
    EXEMPT_FROM_RATE_LIMIT,
    BodySizeLimitMiddleware,
    ConcurrencyLimitMiddleware,
    IdempotencyMiddleware,
    IdempotentRoute,
    KeepAliveLimitMiddleware,
    RateLimitMiddleware,
    RequestContextMiddleware,
    succeeded,
)
from wheretorun.api.page import mount_page
from wheretorun.api.routers import admin, catalog, estimates, health, recommendations, scenarios
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.heap import settle_once
from wheretorun.idempotency import IdempotencyStore, RedisIdempotencyStore, SqlIdempotencyStore
from wheretorun.observability import Metrics, configure_logging, silence_server_access_log
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.ratelimit import CounterStore, RateLimiter, RedisCounters, SqlCounters
from wheretorun.settings import Settings, get_settings

__all__ = ["IDEMPOTENT_ROUTES", "create_app"]

API_VERSION = "1.0.0"
IMPORTS_PATH = "/v1/admin/imports"


def _applied_import(status: int, body: bytes) -> bool:
    """A dry run changes nothing, so it is not remembered: the same key may then run it for real."""
    if not succeeded(status, body):
        return False
    try:
        return bool(json.loads(body).get("status") != "dry_run")
    except (ValueError, AttributeError):
        return True


IDEMPOTENT_ROUTES = (
    IdempotentRoute("POST", "/v1/scenarios"),
    IdempotentRoute("POST", IMPORTS_PATH, remember=_applied_import),
    IdempotentRoute("POST", "/v1/admin/overrides"),
    IdempotentRoute("POST", "/v1/recommendations"),
)


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """Build the app. Without `engine`, one is made from the settings' database URL, and with
    `auto_seed` an empty database is migrated and seeded on start."""
    settings = settings or get_settings()
    owns_engine = engine is None
    engine = engine or create_db_engine(settings.resolved_database_url())
    configure_logging(settings.log_format, settings.log_level)
    silence_server_access_log()
    redis_client = _redis(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.auto_seed:
            prepare_database(engine)
        settle_once("startup")
        yield
        if owns_engine:
            engine.dispose()
        if redis_client is not None:
            redis_client.close()

    app = FastAPI(
        title="wheretorun",
        version=API_VERSION,
        summary="Where should this AI workload run, and what will it cost?",
        description=(
            "Compares hosted model APIs, cloud GPU rental, owned hardware and local GPUs for inference, "
            "batch and training workloads, from a catalog of real public prices and specs. Money is USD as "
            "exact decimal strings; GB means 10^9 bytes. Errors are RFC 9457 application/problem+json."
        ),
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = make_session_factory(engine)
    app.state.snapshots = SnapshotCache(settle=True)
    app.state.metrics = Metrics()
    app.state.engine_turns = anyio.CapacityLimiter(1)  # deps.in_engine_thread
    app.state.redis = redis_client
    install_error_handlers(app)
    _install_middleware(app, settings, redis_client)
    # the routes are matched in this order: the busiest first (each router passed costs a request
    # a few microseconds); OpenAPI lists the paths in the same order
    app.include_router(estimates.router)
    app.include_router(recommendations.router)
    app.include_router(health.router)
    app.include_router(catalog.router)
    app.include_router(admin.router)
    app.include_router(scenarios.router)
    mount_page(app)
    return app


def _redis(settings: Settings) -> Any:
    if not settings.redis_url:
        return None
    import redis

    return redis.Redis.from_url(settings.redis_url, socket_timeout=5, socket_connect_timeout=5)


def _install_middleware(app: FastAPI, settings: Settings, redis_client: Any) -> None:
    """Shared state (counters, idempotency records) in Redis when configured, else the database.

    The database stores open sessions from `app.state.session_factory` when a request comes, so
    the tests' rolled-back sessions cover them too. `add_middleware` puts the last one outermost.
    """

    def sessions() -> Session:
        session: Session = app.state.session_factory()
        return session

    metrics: Metrics = app.state.metrics
    store: IdempotencyStore
    if redis_client is not None:
        store = RedisIdempotencyStore(
            redis_client, settings.redis_key_prefix, settings.idempotency_ttl_seconds
        )
    else:
        store = SqlIdempotencyStore(sessions, settings.idempotency_ttl_seconds)
    app.add_middleware(
        ConcurrencyLimitMiddleware,
        limit=settings.max_concurrent_requests,
        exempt=EXEMPT_FROM_RATE_LIMIT | {IMPORTS_PATH},
    )
    app.add_middleware(
        IdempotencyMiddleware,
        store=store,
        routes=IDEMPOTENT_ROUTES,
        sessions=sessions,
        metrics=metrics,
        max_body_bytes=max(settings.max_request_bytes, settings.max_upload_bytes),
    )
    app.add_middleware(
        BodySizeLimitMiddleware,
        limit=settings.max_request_bytes,
        limits_by_path={IMPORTS_PATH: None},  # its route: the API key first, then max_upload_bytes
    )
    if settings.rate_limit_per_minute > 0:
        counters: CounterStore = (
            RedisCounters(redis_client, settings.redis_key_prefix)
            if redis_client is not None
            else SqlCounters(sessions)
        )
        limiter = RateLimiter(counters, settings.rate_limit_per_minute)
        app.add_middleware(RateLimitMiddleware, limiter=limiter, sessions=sessions, metrics=metrics)
    app.add_middleware(RequestContextMiddleware, metrics=metrics, templates=lambda: app.openapi()["paths"])
    if settings.max_requests_per_connection > 0:
        app.add_middleware(
            KeepAliveLimitMiddleware,
            max_requests=settings.max_requests_per_connection,
            max_age_s=settings.max_connection_seconds,
        )
