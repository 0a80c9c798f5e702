"""A cheap answer to "has anything been committed to this database since I last looked?".

SQLite keeps a counter per connection, `PRAGMA data_version`, that changes whenever another
connection (of this process or any other) commits to the database file
(https://www.sqlite.org/pragma.html#pragma_data_version). One private connection per database file
and process reads it in a few microseconds, where the catalog-state query it lets us skip costs
~0.4 ms. PostgreSQL has no such counter, so there is none for it: its callers ask the database.
"""

from __future__ import annotations

import sqlite3
import threading

from sqlalchemy import Engine

__all__ = ["CommitCounter", "commit_counter_for"]


class CommitCounter:
    """`value()` changes whenever a commit has landed in the database since the last call."""

    def __init__(self, path: str) -> None:
        # never written through; shared by the process's threads under the lock
        self._connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()

    def value(self) -> int:
        with self._lock:
            row = self._connection.execute("PRAGMA data_version").fetchone()
        return int(row[0])


_counters: dict[str, CommitCounter] = {}
_counters_lock = threading.Lock()


def commit_counter_for(engine: Engine) -> CommitCounter | None:
    """The process's counter for `engine`'s database: an SQLite file; None for anything else (an
    in-memory SQLite database is private to its connection, PostgreSQL has no counter)."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    if url.query.get("mode") == "memory":
        return None
    path = url.database
    with _counters_lock:
        counter = _counters.get(path)
        if counter is None:
            counter = _counters[path] = CommitCounter(path)
    return counter
