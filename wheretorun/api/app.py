"""The FastAPI application: routers under /v1, problem+json errors, one engine per app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy import Engine

from wheretorun.api.errors import install_error_handlers
from wheretorun.api.routers import admin, catalog, estimates, health, recommendations, scenarios
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.db import create_db_engine, make_session_factory
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.settings import Settings, get_settings

__all__ = ["create_app"]

API_VERSION = "1.0.0"


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """Build the app. Without `engine`, one is made from the settings' database URL, and with
    `auto_seed` an empty database is migrated and seeded on start."""
    settings = settings or get_settings()
    owns_engine = engine is None
    engine = engine or create_db_engine(settings.resolved_database_url())

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.auto_seed:
            prepare_database(engine)
        yield
        if owns_engine:
            engine.dispose()

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
    app.state.snapshots = SnapshotCache()
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(catalog.router)
    app.include_router(estimates.router)
    app.include_router(admin.router)
    app.include_router(recommendations.router)
    app.include_router(scenarios.router)
    return app
