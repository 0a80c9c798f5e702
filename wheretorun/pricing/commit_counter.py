"""A cheap answer to "has anything been committed to this database since I last looked?".

SQLite keeps a counter per connection, `PRAGMA data_version`, that changes whenever another
connection (of this process or any other) commits to the database file
(https://www.sqlite.org/pragma.html#pragma_data_version). One private connection per engine reads
it in a few microseconds, where the catalog-state query it lets us skip costs ~0.4 ms. PostgreSQL
has no such counter, so there is none for it: its callers ask the database.

The counter is trusted only where it cannot mislead or block:
- in WAL mode (what `db.connect` sets), where reading it takes no lock; in any other journal
  mode it could wait behind a writer;
- on the file the engine's own connections use (its path as SQLite reports it), checked by device
  and inode at every read: a file replaced at that path (re-seeded, restored by `mv`) reopens
  the counter and reads as a change;
- and any error reading it means "unknown": the caller asks the database.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref

from sqlalchemy import Engine

__all__ = ["CommitCounter", "commit_counter_for"]


class CommitCounter:
    """`value()` changes whenever a commit has landed in the database file since the last call,
    or the file was replaced; None when it cannot tell."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._generation = 0  # how many times the file was (re)opened
        self._connection: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # (device, inode) of the file opened
        self._wal = False

    def value(self) -> tuple[int, int] | None:
        with self._lock:
            try:
                return self._read()
            except (OSError, sqlite3.Error):
                self._close()
                return None

    def _read(self) -> tuple[int, int] | None:
        status = os.stat(self._path)
        if self._connection is None or self._file != (status.st_dev, status.st_ino):
            self._reopen((status.st_dev, status.st_ino))
        assert self._connection is not None
        if not self._wal:
            return None
        return self._generation, int(self._connection.execute("PRAGMA data_version").fetchone()[0])

    def _reopen(self, file: tuple[int, int]) -> None:
        self._close()
        # timeout=0: never wait for a lock (the counter is read on the event loop)
        self._connection = sqlite3.connect(
            self._path, check_same_thread=False, isolation_level=None, timeout=0
        )
        self._file = file
        self._generation += 1
        mode = self._connection.execute("PRAGMA journal_mode").fetchone()[0]
        self._wal = str(mode).lower() == "wal"  # a database's journal mode persists

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection, self._file = None, None


_counters: weakref.WeakKeyDictionary[Engine, CommitCounter | None] = weakref.WeakKeyDictionary()
_counters_lock = threading.Lock()


def commit_counter_for(engine: Engine, *, create: bool = True) -> CommitCounter | None:
    """The process's counter for `engine`'s database: an SQLite file; None for anything else (an
    in-memory SQLite database is private to its connection, PostgreSQL has no counter). One per
    engine, dropped with it. Making one asks the engine for its file: `create=False` answers None
    instead when there is none yet (on the event loop, which must not wait for a connection)."""
    with _counters_lock:
        if engine in _counters:
            return _counters[engine]
    if not create:
        return None
    counter = _make_counter(engine)
    with _counters_lock:
        return _counters.setdefault(engine, counter)


def _make_counter(engine: Engine) -> CommitCounter | None:
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    if url.query.get("mode") == "memory":
        return None
    with engine.connect() as connection:  # the file its connections really open
        main = connection.exec_driver_sql("PRAGMA database_list").first()
    return CommitCounter(str(main[2])) if main is not None and main[2] else None
