"""Bringing a database's schema up to date: the Alembic migrations in `wheretorun/migrations/`, run
programmatically on a given engine (no alembic.ini needed)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

__all__ = ["MIGRATIONS_DIR", "alembic_config", "upgrade_to_head"]

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(engine: Engine) -> Config:
    """An Alembic config that runs our migrations on `engine`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def upgrade_to_head(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "head")
