"""Connecting: SQLAlchemy engines (with SQLite made to behave like PostgreSQL) and session factories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["create_db_engine", "make_session_factory"]


def create_db_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for `url`; SQLite gets foreign keys enforced and its parent folder created."""
    if url.startswith("sqlite"):
        database = url.split("///", 1)[-1]
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        # Connections may be handed between threads (FastAPI runs sync routes in a thread pool);
        # the pool still gives each connection to one thread at a time.
        connect_args = {"check_same_thread": False, **kwargs.pop("connect_args", {})}
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin, so that
    # SAVEPOINTs and rollbacks work as on PostgreSQL (SQLAlchemy's documented pysqlite recipe).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN")


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)
