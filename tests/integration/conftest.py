"""A seeded catalog in an SQLite file of the test's own, reached through an engine: the way the
server reaches its database (a session per request, bound to the engine, committing for real).

The tests' shared `seeded_engine` is reached through one rolled-back connection, where commits are
savepoints that no other connection sees; what depends on real commits (`CommitCounter`, the catalog
state known between commits) is tested here. The catalog is seeded once per test session and copied
(SQLite's backup API) for each test, so no test sees another's commits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from wheretorun.db import create_db_engine
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.settings import Settings


@pytest.fixture(scope="session")
def seeded_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file migrated and seeded once for the test session; tests copy it, never open it."""
    path = tmp_path_factory.mktemp("seeded-template") / "catalog.db"
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        assert prepare_database(engine) is not None
    finally:
        engine.dispose()
    return path


@pytest.fixture
def sqlite_file_url(seeded_sqlite_template: Path, tmp_path: Path) -> str:
    """The URL of this test's own copy of the seeded catalog."""
    path = tmp_path / "catalog.db"
    with closing(sqlite3.connect(seeded_sqlite_template)) as source, closing(sqlite3.connect(path)) as copy:
        source.backup(copy)
    return f"sqlite:///{path}"


@pytest.fixture
def sqlite_file_settings(sqlite_file_url: str) -> Settings:
    """The server's settings over this test's database (given as the environment names it)."""
    environment: dict[str, Any] = {"DATABASE_URL": sqlite_file_url}
    return Settings(auto_seed=False, **environment)


@pytest.fixture
def sqlite_file_engine(sqlite_file_url: str) -> Iterator[Engine]:
    engine = create_db_engine(sqlite_file_url)
    yield engine
    engine.dispose()
