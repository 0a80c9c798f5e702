"""Bring a database to a usable state: migrate to head, seed the catalog if it is empty.

The loader (and the import parsers it uses) is imported only when there is something to seed:
on a seeded database this module costs one query, not ~0.1 s of imports per CLI call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Engine, func, select

from wheretorun.db import make_session_factory, upgrade_to_head
from wheretorun.pricing.models import CatalogVersion

if TYPE_CHECKING:
    from wheretorun.pricing.loader import SeedReport

__all__ = ["prepare_database", "seed_if_empty"]


def seed_if_empty(engine: Engine) -> SeedReport | None:
    """Seed in one transaction; returns what was written, or None when a catalog exists already."""
    with make_session_factory(engine).begin() as session:
        if session.scalar(select(func.count()).select_from(CatalogVersion)) != 0:
            return None  # seeded already (`loader.catalog_is_seeded`, without importing the loader)
        from wheretorun.pricing.loader import seed_catalog

        return seed_catalog(session)


def prepare_database(engine: Engine) -> SeedReport | None:
    upgrade_to_head(engine)
    return seed_if_empty(engine)
