"""Connecting: SQLAlchemy engines (with SQLite made to behave like PostgreSQL) and session factories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

__all__ = [
    "SQLITE_BUSY_TIMEOUT_S",
    "begin_write",
    "create_db_engine",
    "make_session_factory",
]

# How long a SQLite write waits for another writer's lock before it gives up ("database is locked").
# Writers queue for SQLite's one write lock: 16 concurrent scenario creates on the loaded 2-core CI
# machine took over 5 s to drain (tests/faults/test_conditional_writes.py), and a price import holds
# the lock up to ~4.4 s (bench/import_bounds.py, README "Bounded work").
SQLITE_BUSY_TIMEOUT_S = 15.0
_WRITER = "wheretorun_writer"  # connection execution option: begin with the write lock held
_WRITER_WAIT_MS = "wheretorun_writer_wait_ms"  # ... waiting this long for it instead of the busy timeout


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
        event.listen(engine, "reset", _sqlite_reset)
        return engine
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin, so that
    # SAVEPOINTs and rollbacks work as on PostgreSQL (SQLAlchemy's documented pysqlite recipe).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    # A writer takes the write lock when it begins (waiting up to the busy timeout for another writer);
    # a plain BEGIN would read a snapshot first, and SQLite cannot turn a reader whose snapshot another
    # writer has since changed into a writer: it fails at once ("database is locked"), without waiting.
    options = connection.get_execution_options()
    if not options.get(_WRITER, False):
        connection.exec_driver_sql("BEGIN")
        return
    wait_ms = options.get(_WRITER_WAIT_MS)
    if wait_ms is not None:
        connection.exec_driver_sql(f"PRAGMA busy_timeout = {int(wait_ms)}")
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    finally:
        if wait_ms is not None:
            connection.exec_driver_sql(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")


def _sqlite_reset(dbapi_connection: Any, _record: Any, _state: Any) -> None:
    # A COMMIT that SQLite refuses (a deferred foreign key) leaves its transaction open, while
    # SQLAlchemy counts it as ended and skips its own rollback: end it before the connection is reused.
    if dbapi_connection.in_transaction:
        dbapi_connection.rollback()


def begin_write(session: Session, wait_s: float | None = None) -> None:
    """Make `session`'s transaction begin as a writer when it begins (at its first statement).

    On SQLite that is `BEGIN IMMEDIATE`: the transaction holds the database's write lock from its first
    read, so what it reads stays current until it commits, and concurrent writers queue (up to the
    busy timeout) instead of failing. On PostgreSQL it is a plain BEGIN (rows are locked as written).
    The lock is taken only when the session is first used, not here, so nothing that runs before the
    handler (the API-key lookup) runs while this request holds it. A session bound to a connection
    that is already in a transaction (the tests' rolled-back connection) opens a savepoint there as
    usual. `wait_s`: wait that long for SQLite's write lock instead of the busy timeout.
    """
    if session.in_transaction():
        raise RuntimeError("begin_write() must come before the session's first statement")
    options: dict[str, Any] = {_WRITER: True}
    if wait_s is not None:
        options[_WRITER_WAIT_MS] = wait_s * 1000
    session.execution_options = session.execution_options.union(options)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)
