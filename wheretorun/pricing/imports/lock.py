"""One import at a time: the lock is taken inside the import's transaction and released when it ends.

* PostgreSQL: a transaction-level advisory lock (`pg_try_advisory_xact_lock`), keyed by the schema
  so that catalogs in different schemas of one database do not block each other. A second import
  polls for it and gives up with `Conflict` (HTTP 409) after `timeout_s`.
* SQLite: the database's single write lock, taken with a write that changes nothing. The second
  import waits up to `timeout_s` (SQLite's busy timeout) and then gets `Conflict`. SQLite cannot wait
  when the transaction has read already and another writer is active: it answers at once, also
  with `Conflict`.

The diff is computed after the lock is held, so an import always compares against the catalog
as the previous import left it.
"""

from __future__ import annotations

import time

from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from wheretorun.db import SQLITE_BUSY_TIMEOUT_S
from wheretorun.errors import Conflict

__all__ = ["lock_catalog_for_import"]

_LOCK_CLASS = 0x57545231  # "WTR1": the advisory-lock namespace of catalog imports
_POLL_S = 0.05


def lock_catalog_for_import(session: Session, timeout_s: float) -> None:
    """Hold the import lock until the session's transaction ends, or raise `Conflict`."""
    if session.get_bind().dialect.name == "postgresql":
        _lock_postgresql(session, timeout_s)
    else:
        _lock_sqlite(session, timeout_s)


def _lock_postgresql(session: Session, timeout_s: float) -> None:
    started = time.monotonic()
    statement = text("SELECT pg_try_advisory_xact_lock(:lock_class, hashtext(current_schema()))")
    while not session.scalar(statement, {"lock_class": _LOCK_CLASS}):
        if time.monotonic() - started >= timeout_s:
            raise _busy(time.monotonic() - started)
        time.sleep(_POLL_S)


def _lock_sqlite(session: Session, timeout_s: float) -> None:
    session.execute(text(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}"))
    started = time.monotonic()
    try:
        session.execute(text("UPDATE catalog_versions SET id = id WHERE 0"))
    except OperationalError as error:
        if "locked" not in str(error.orig):
            raise
        waited = time.monotonic() - started
        if waited < timeout_s * 0.9:  # SQLite answered at once: it could not wait (see above)
            raise Conflict(
                f"another write was committed after this import had started reading the database "
                f"(SQLite cannot wait then; it answered after {waited:.2f} s): retry the import"
            ) from error
        raise _busy(waited) from error
    finally:
        session.execute(text(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}"))


def _busy(waited_s: float) -> Conflict:
    return Conflict(
        f"another import or write held the lock: this import waited {waited_s:.1f} s for it; "
        "retry when it has finished"
    )
