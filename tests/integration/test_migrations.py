"""Alembic is the only way the schema changes: up, down and up again on both databases, and the
migrations produce exactly what the ORM models describe."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from wheretorun import idempotency as _idempotency_tables  # noqa: F401  (registers their tables)
from wheretorun import ratelimit as _ratelimit_tables  # noqa: F401
from wheretorun import security as _security_tables  # noqa: F401
from wheretorun.db import Base, alembic_config
from wheretorun.pricing import models as _catalog_tables  # noqa: F401
from wheretorun.scenarios import models as _scenario_tables  # noqa: F401  (registers their tables)

CATALOG_TABLES = {
    "accelerators",
    "accelerator_aliases",
    "hardware_prices",
    "commitment_terms",
    "models",
    "cloud_offers",
    "api_prices",
    "catalog_versions",
    "scenarios",
    "scenario_versions",
    "idempotency_records",
    "rate_limit_counters",
}


def test_upgrade_downgrade_upgrade(backend: str, empty_engine_factory) -> None:  # type: ignore[no-untyped-def]
    engine = empty_engine_factory(backend)
    config = alembic_config(engine)

    command.upgrade(config, "head")
    assert CATALOG_TABLES <= set(inspect(engine).get_table_names())

    command.downgrade(config, "base")
    assert not CATALOG_TABLES & set(inspect(engine).get_table_names())

    command.upgrade(config, "head")
    assert CATALOG_TABLES <= set(inspect(engine).get_table_names())


def test_migrations_match_the_models(backend: str, empty_engine_factory) -> None:  # type: ignore[no-untyped-def]
    engine = empty_engine_factory(backend)
    command.upgrade(alembic_config(engine), "head")
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": False})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []


def test_constraints_follow_the_naming_convention(backend: str, empty_engine_factory) -> None:  # type: ignore[no-untyped-def]
    engine = empty_engine_factory(backend)
    command.upgrade(alembic_config(engine), "head")
    inspector = inspect(engine)
    for table in CATALOG_TABLES:
        for foreign_key in inspector.get_foreign_keys(table):
            assert foreign_key["name"].startswith(f"fk_{table}_"), foreign_key
        if backend == "postgresql":
            assert inspector.get_pk_constraint(table)["name"] == f"pk_{table}"


def test_downgrade_to_0006_removes_the_commitment_terms_and_the_price_basis(  # type: ignore[no-untyped-def]
    backend: str, empty_engine_factory
) -> None:
    engine = empty_engine_factory(backend)
    config = alembic_config(engine)
    command.upgrade(config, "head")
    columns = {c["name"] for c in inspect(engine).get_columns("hardware_prices")}
    assert {"basis", "accelerators_per_unit"} <= columns

    command.downgrade(config, "0006")
    inspector = inspect(engine)
    assert "commitment_terms" not in inspector.get_table_names()
    assert not {"basis", "accelerators_per_unit"} & {
        c["name"] for c in inspector.get_columns("hardware_prices")
    }

    command.upgrade(config, "head")
    assert "commitment_terms" in inspect(engine).get_table_names()


def test_the_quick_head_check_agrees_with_alembic(backend: str, empty_engine_factory) -> None:  # type: ignore[no-untyped-def]
    """`upgrade_to_head` skips Alembic when the files' own revision lines say the database is at
    head: those heads must be Alembic's, and a database one step behind must still be upgraded."""
    from alembic.script import ScriptDirectory

    from wheretorun.db import upgrade_to_head
    from wheretorun.db.migrate import MIGRATIONS_DIR, _at_declared_heads, declared_heads

    script = ScriptDirectory(str(MIGRATIONS_DIR))
    assert declared_heads() == set(script.get_heads())
    engine = empty_engine_factory(backend)
    assert not _at_declared_heads(engine)  # no alembic_version table yet
    config = alembic_config(engine)
    command.upgrade(config, "head")
    assert _at_declared_heads(engine)
    command.downgrade(config, "-1")
    assert not _at_declared_heads(engine)
    upgrade_to_head(engine)
    with engine.connect() as connection:
        assert set(MigrationContext.configure(connection).get_current_heads()) == set(script.get_heads())
