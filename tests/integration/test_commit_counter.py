"""`CommitCounter` (SQLite's `PRAGMA data_version`): its value changes after a commit by any other
connection, of this process or another, and only then; PostgreSQL and in-memory SQLite have none."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.pool import StaticPool

from tests.conftest import POSTGRES_URL
from wheretorun.db import create_db_engine
from wheretorun.pricing.commit_counter import CommitCounter, commit_counter_for


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "counted.db"
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE notes (body TEXT)"))
    finally:
        engine.dispose()
    return path


@pytest.fixture
def engine(database: Path) -> Iterator[Engine]:
    engine = create_db_engine(f"sqlite:///{database}")
    yield engine
    engine.dispose()


@pytest.fixture
def counter(engine: Engine) -> CommitCounter:
    counter = commit_counter_for(engine)
    assert isinstance(counter, CommitCounter)
    return counter


def _write_through(engine: Engine, body: str) -> None:
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO notes (body) VALUES (:body)"), {"body": body})


def test_an_engine_has_one_counter_and_another_engine_on_the_file_sees_the_same_commits(
    engine: Engine, database: Path
) -> None:
    counter = commit_counter_for(engine)
    assert counter is not None
    assert commit_counter_for(engine) is counter
    other = create_db_engine(f"sqlite:///{database}")
    try:
        other_counter = commit_counter_for(other)
        assert other_counter is not None
        assert other_counter is not counter
        before, other_before = counter.value(), other_counter.value()
        _write_through(engine, "seen by both")
        assert counter.value() != before
        assert other_counter.value() != other_before
    finally:
        other.dispose()


def test_a_database_file_replaced_at_its_path_reads_as_a_change(engine: Engine, database: Path) -> None:
    """A file re-created at the same path (a re-seed, a restore by `mv`): the counter reopens it
    instead of watching the deleted file for ever."""
    counter = commit_counter_for(engine)
    assert counter is not None
    before = counter.value()
    assert before is not None
    replacement = database.with_name("replacement.db")
    with closing(sqlite3.connect(replacement)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("CREATE TABLE notes (body TEXT)")
        writer.commit()
    replacement.replace(database)
    after = counter.value()
    assert after is not None
    assert after != before
    assert counter.value() == after  # and steady again while nothing is committed


def test_a_relative_url_counts_the_file_its_engine_opens(
    database: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The counter opens the path SQLite reports for the engine's connections, not the URL's text
    read against whatever the working directory is later."""
    monkeypatch.chdir(database.parent)
    relative = create_db_engine("sqlite:///counted.db")
    try:
        with relative.connect():
            pass  # the engine's connections open ./counted.db as it was when made
        monkeypatch.chdir(tmp_path.parent)  # where no counted.db is
        counter = commit_counter_for(relative)
        assert counter is not None
        before = counter.value()
        assert before is not None
        _write_through(relative, "through the relative engine")
        assert counter.value() != before
    finally:
        relative.dispose()


def test_no_counter_value_outside_wal_mode(tmp_path: Path) -> None:
    """In a rollback-journal database reading the counter could wait behind a writer: it says
    "unknown" (None), and callers ask the database."""
    path = tmp_path / "journal.db"
    with closing(sqlite3.connect(path)) as writer:
        writer.execute("CREATE TABLE notes (body TEXT)")
        writer.commit()
    assert CommitCounter(str(path)).value() is None


def test_a_missing_file_reads_as_unknown(tmp_path: Path) -> None:
    assert CommitCounter(str(tmp_path / "gone.db")).value() is None


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://",
        "sqlite:///:memory:",
        "sqlite+pysqlite:///:memory:",
        "sqlite:///file:shared?mode=memory&cache=shared&uri=true",
        POSTGRES_URL,
    ],
)
def test_no_counter_for_postgresql_or_an_in_memory_database(url: str) -> None:
    # the pool named, since SQLAlchemy deprecates choosing one from `mode=memory`
    engine = (
        create_db_engine(url, poolclass=StaticPool) if url.startswith("sqlite") else create_db_engine(url)
    )
    try:
        assert commit_counter_for(engine) is None
    finally:
        engine.dispose()


def test_the_value_stays_while_nothing_is_committed(
    engine: Engine, database: Path, counter: CommitCounter
) -> None:
    _write_through(engine, "before")
    first = counter.value()
    assert first is not None  # a value to compare, not "unknown"
    assert counter.value() == first
    with engine.connect() as connection:  # reads
        assert connection.execute(text("SELECT count(*) FROM notes")).scalar_one() == 1
    with engine.connect() as connection:  # a write rolled back
        connection.execute(text("INSERT INTO notes (body) VALUES ('rolled back')"))
        connection.rollback()
    with closing(sqlite3.connect(database)) as plain:  # another connection's write rolled back
        plain.execute("INSERT INTO notes (body) VALUES ('rolled back too')")
        plain.rollback()
    assert counter.value() == first


def test_a_commit_through_the_engine_changes_the_value(engine: Engine, counter: CommitCounter) -> None:
    before = counter.value()
    _write_through(engine, "one")
    after_one = counter.value()
    assert after_one != before
    assert counter.value() == after_one
    _write_through(engine, "two")
    assert counter.value() != after_one


def test_a_commit_by_a_plain_sqlite3_connection_changes_the_value(
    database: Path, counter: CommitCounter
) -> None:
    before = counter.value()
    with closing(sqlite3.connect(database)) as plain:
        plain.execute("INSERT INTO notes (body) VALUES ('from sqlite3')")
        plain.commit()
    assert counter.value() != before


def test_a_commit_by_another_process_changes_the_value(database: Path, counter: CommitCounter) -> None:
    before = counter.value()
    script = (
        "import sqlite3, sys\n"
        "connection = sqlite3.connect(sys.argv[1])\n"
        "connection.execute(\"INSERT INTO notes (body) VALUES ('from another process')\")\n"
        "connection.commit()\n"
        "connection.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, str(database)], check=True, timeout=60)
    changed = counter.value()
    assert changed != before
    assert counter.value() == changed


def test_threads_read_the_same_value_meanwhile(engine: Engine, counter: CommitCounter) -> None:
    _write_through(engine, "settled")
    expected = counter.value()
    assert expected is not None
    seen: list[tuple[int, int] | None] = []

    def read() -> None:
        seen.extend(counter.value() for _ in range(50))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [expected] * 400
