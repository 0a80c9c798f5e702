"""Migration 0002 (the price lifecycle tables) upgrades, downgrades to 0001 and upgrades again."""

from __future__ import annotations

from typing import Any

from alembic import command
from sqlalchemy import inspect

from wheretorun.db import alembic_config

LIFECYCLE_TABLES = {"energy_prices", "api_keys", "import_runs", "audit_log", "price_overrides"}


def test_0002_goes_up_down_and_up_leaving_0001_alone(backend: str, empty_engine_factory: Any) -> None:
    engine = empty_engine_factory(backend)
    config = alembic_config(engine)
    command.upgrade(config, "0001")
    at_0001 = set(inspect(engine).get_table_names())
    command.upgrade(config, "head")
    assert LIFECYCLE_TABLES <= set(inspect(engine).get_table_names())

    command.downgrade(config, "0001")
    assert set(inspect(engine).get_table_names()) == at_0001  # 0001's tables untouched, ours gone

    command.upgrade(config, "head")
    inspector = inspect(engine)
    assert LIFECYCLE_TABLES <= set(inspector.get_table_names())
    current = [
        index
        for index in inspector.get_indexes("energy_prices")
        if index["name"] == "uq_energy_prices_current"
    ]
    assert current
    assert current[0]["unique"]
    assert {fk["name"] for fk in inspector.get_foreign_keys("import_runs")} == {
        "fk_import_runs_api_key_id_api_keys",
        "fk_import_runs_based_on_version_id_catalog_versions",
        "fk_import_runs_catalog_version_id_catalog_versions",
    }
