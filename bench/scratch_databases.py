"""Scratch databases for the benches: a SQLite file in a temporary folder, and a fresh schema of a
PostgreSQL server that is dropped afterwards, so a bench never touches a real catalog."""

from __future__ import annotations

import argparse
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, text

from wheretorun.db import create_db_engine
from wheretorun.pricing.bootstrap import prepare_database

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@contextmanager
def scratch_sqlite() -> Iterator[Engine]:
    with tempfile.TemporaryDirectory() as workdir:
        engine = create_db_engine(f"sqlite:///{Path(workdir) / 'bench.db'}")
        try:
            yield engine
        finally:
            engine.dispose()


@contextmanager
def seeded_sqlite_url() -> Iterator[str]:
    """The URL of a scratch SQLite file migrated and seeded with the shipped catalog, for benches
    whose child processes open it themselves."""
    with scratch_sqlite() as engine:
        prepare_database(engine)
        yield engine.url.render_as_string(hide_password=False)


@contextmanager
def scratch_postgres(url: str) -> Iterator[Engine]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = create_db_engine(url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_db_engine(url, connect_args={"options": f"-csearch_path={schema}"})
    try:
        yield engine
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def run_on_sqlite_and_postgres(bench: Callable[[Engine, str], None], description: str | None) -> None:
    """`bench(engine, label)` on a scratch SQLite file, then (unless `--no-postgres`) on a scratch
    PostgreSQL schema of `--postgres`."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", metavar="URL", default=DEFAULT_POSTGRES, help="PostgreSQL to use")
    parser.add_argument("--no-postgres", action="store_true", help="benchmark SQLite only")
    args = parser.parse_args()
    with scratch_sqlite() as engine:
        bench(engine, "sqlite (file)")
    if not args.no_postgres:
        with scratch_postgres(args.postgres) as engine:
            bench(engine, "postgresql")
