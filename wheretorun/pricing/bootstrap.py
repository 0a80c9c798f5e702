"""Bring a database to a usable state: migrate to head, seed the catalog if it is empty."""

from __future__ import annotations

from sqlalchemy import Engine

from wheretorun.db import make_session_factory, upgrade_to_head
from wheretorun.pricing.loader import SeedReport, catalog_is_seeded, seed_catalog

__all__ = ["prepare_database", "seed_if_empty"]


def seed_if_empty(engine: Engine) -> SeedReport | None:
    """Seed in one transaction; returns what was written, or None when a catalog exists already."""
    with make_session_factory(engine).begin() as session:
        if catalog_is_seeded(session):
            return None
        return seed_catalog(session)


def prepare_database(engine: Engine) -> SeedReport | None:
    upgrade_to_head(engine)
    return seed_if_empty(engine)
