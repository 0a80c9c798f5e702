"""Bringing a database's schema up to date: the Alembic migrations in `wheretorun/migrations/`, run
programmatically on a given engine (no alembic.ini needed).

Alembic is imported on first use, and `upgrade_to_head` first asks whether the database is at the
head already (one query): a CLI call on a migrated database then skips running the migration
environment, which imports every table module (~0.2 s of the ~1 s `wheretorun recommend` takes).
That check reads the `revision` / `down_revision` lines of the migration files itself, so it does
not import Alembic either (~0.15 s); a file it cannot read, or a database not at the heads it
finds, goes through Alembic as before.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["MIGRATIONS_DIR", "alembic_config", "declared_heads", "is_at_head", "upgrade_to_head"]

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(engine: Engine) -> Config:
    """An Alembic config that runs our migrations on `engine`."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def is_at_head(engine: Engine) -> bool:
    """Whether the database's Alembic revisions are exactly the migrations' heads."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    heads = set(ScriptDirectory(str(MIGRATIONS_DIR)).get_heads())
    with engine.connect() as connection:
        current = set(MigrationContext.configure(connection).get_current_heads())
    return current == heads


_REVISION = re.compile(r"^revision(?:\s*:[^=]*)?\s*=\s*[\"']([^\"']+)[\"']\s*$", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision(?:\s*:[^=]*)?\s*=\s*(.+?)\s*$", re.MULTILINE)
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")


def declared_heads() -> set[str] | None:
    """The migrations' heads read from their files' `revision` and `down_revision` lines, without
    importing Alembic; None when a file does not state them in that plain form."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        revision = _REVISION.findall(source)
        down = _DOWN_REVISION.findall(source)
        if len(revision) != 1 or len(down) != 1:
            return None
        if down[0] != "None" and not _QUOTED.findall(down[0]):
            return None
        revisions.add(revision[0])
        parents.update(_QUOTED.findall(down[0]))
    return revisions - parents if revisions else None


def _at_declared_heads(engine: Engine) -> bool:
    """Whether the database's `alembic_version` rows are exactly `declared_heads()` (False when
    unknown or unreadable: Alembic then decides)."""
    heads = declared_heads()
    if heads is None:
        return False
    try:
        with engine.connect() as connection:
            current = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
    except SQLAlchemyError:
        return False
    return current == heads


def upgrade_to_head(engine: Engine) -> None:
    if _at_declared_heads(engine) or is_at_head(engine):
        return
    from alembic import command

    command.upgrade(alembic_config(engine), "head")
