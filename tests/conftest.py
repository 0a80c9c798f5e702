"""Shared fixtures: a migrated, seeded catalog on SQLite and on the real PostgreSQL.

Each test session (and each xdist worker) gets its own SQLite file and its own PostgreSQL schema,
migrated with Alembic and seeded once from the shipped data. Each test then runs inside a
transaction that is rolled back, so tests never see each other's writes.

PostgreSQL is the server on 127.0.0.1:5432 (database `test`, trust auth) unless
`WHERETORUN_TEST_POSTGRES_URL` names another. It is required: `.ci/run` starts it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, text
from sqlalchemy.orm import Session, sessionmaker

from wheretorun.db import create_db_engine
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.loader import SeedReport

POSTGRES_URL = os.environ.get(
    "WHERETORUN_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
BACKENDS = ["sqlite", "postgresql"]


def _worker_tag() -> str:
    return f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{uuid.uuid4().hex[:8]}"


def make_postgres_engine(schema: str) -> Engine:
    """An engine whose connections live in `schema` (created here)."""
    admin = create_db_engine(POSTGRES_URL)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    admin.dispose()
    return create_db_engine(POSTGRES_URL, connect_args={"options": f"-csearch_path={schema}"})


def drop_postgres_schema(schema: str) -> None:
    admin = create_db_engine(POSTGRES_URL)
    with admin.begin() as connection:
        connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="session")
def empty_engine_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Makes fresh, empty databases of either kind; drops them at the end of the session."""
    schemas: list[str] = []
    engines: list[Engine] = []

    def make(kind: str) -> Engine:
        if kind == "sqlite":
            path: Path = tmp_path_factory.mktemp("db") / "catalog.db"
            engine = create_db_engine(f"sqlite:///{path}")
        else:
            schema = f"wtr_{_worker_tag()}"
            schemas.append(schema)
            engine = make_postgres_engine(schema)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.dispose()
    for schema in schemas:
        drop_postgres_schema(schema)


@pytest.fixture(scope="session")
def seeded(backend: str, empty_engine_factory: object) -> tuple[Engine, SeedReport]:
    """A database of kind `backend`, migrated to head and seeded once for the session."""
    engine = empty_engine_factory(backend)  # type: ignore[operator]
    report = prepare_database(engine)
    assert report is not None
    return engine, report


@pytest.fixture(scope="session")
def seeded_engine(seeded: tuple[Engine, SeedReport]) -> Engine:
    return seeded[0]


@pytest.fixture
def connection(seeded_engine: Engine) -> Iterator[Connection]:
    """A connection inside an outer transaction that is rolled back after the test."""
    with seeded_engine.connect() as connection:
        outer = connection.begin()
        try:
            yield connection
        finally:
            outer.rollback()


@pytest.fixture
def session_factory(connection: Connection) -> sessionmaker[Session]:
    """Sessions bound to the test's connection; their commits become savepoints."""
    return sessionmaker(bind=connection, expire_on_commit=False, join_transaction_mode="create_savepoint")


@pytest.fixture
def session(session_factory: sessionmaker[Session]) -> Iterator[Session]:
    with session_factory() as session:
        yield session
