"""Alembic environment: runs on the engine handed over in `config.attributes["engine"]`,
or on the URL from the settings when run from the `alembic` command line."""

from __future__ import annotations

from alembic import context

from wheretorun import idempotency as _idempotency_tables  # noqa: F401  (registers their tables)
from wheretorun import ratelimit as _ratelimit_tables  # noqa: F401
from wheretorun import security as _security_tables  # noqa: F401
from wheretorun.db import Base, create_db_engine
from wheretorun.pricing import models as _catalog_tables  # noqa: F401
from wheretorun.scenarios import models as _scenario_tables  # noqa: F401  (registers their tables)
from wheretorun.settings import get_settings

target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine")
    if engine is None:
        engine = create_db_engine(get_settings().resolved_database_url())
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
