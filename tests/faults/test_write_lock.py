"""What a long transaction that holds the write lock (as a price import does on SQLite) does to the
other requests, on a database with real commits:

* SQLite: `/readyz` answers 503 "writes are blocked"; a scenario write waits the busy timeout and
  then gets a 409 to retry (not a 503 "cannot be reached"); an import waits its lock timeout and
  says how long it waited. Once the lock is released, all is well again.
* PostgreSQL: an import holds only the import lock, which other writes never wait for.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.api.test_scenarios_api import BODY
from tests.import_support import assert_problem, edit_rows, scaled, shipped_text
from tests.live_server import ServedDatabase, served_database
from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.db import SQLITE_BUSY_TIMEOUT_S
from wheretorun.pricing.imports.lock import _LOCK_CLASS
from wheretorun.settings import Settings

pytestmark = pytest.mark.faults
LOCK_WAIT_S = 0.5


@pytest.fixture
def sqlite_database(tmp_path: Path) -> Iterator[ServedDatabase]:
    with served_database("sqlite", tmp_path) as served:
        yield served


@pytest.fixture
def postgres_database(tmp_path: Path) -> Iterator[ServedDatabase]:
    with served_database("postgresql", tmp_path) as served:
        yield served


def _client(database: ServedDatabase) -> InProcessClient:
    settings = Settings(auto_seed=False, import_lock_timeout_seconds=LOCK_WAIT_S)
    return InProcessClient(create_app(settings, engine=database.engine), headers=database.auth)


def _import(client: InProcessClient) -> Any:
    content = edit_rows(shipped_text("nebius"), scaled("Price", "1.1"))
    return client.post(
        "/v1/admin/imports", json={"format": "skypilot", "provider": "nebius", "content": content}
    )


def test_sqlite_a_held_write_lock_shows_in_readyz_and_other_writes_get_409(
    sqlite_database: ServedDatabase,
) -> None:
    holder = sqlite_database.engine.raw_connection()
    try:
        holder.cursor().execute("BEGIN IMMEDIATE")  # what an import holds between its lock and commit
        with _client(sqlite_database) as client:
            assert "writes are blocked" in assert_problem(client.get("/readyz"), 503)["detail"]
            started = time.monotonic()
            refused = client.post("/v1/scenarios", json=BODY)
            waited = time.monotonic() - started
            problem = assert_problem(refused, 409)
            assert "write lock" in problem["detail"]
            assert refused.headers["retry-after"] == "1"
            assert waited >= SQLITE_BUSY_TIMEOUT_S * 0.9
            blocked_import = assert_problem(_import(client), 409)
            stated = float(re.search(r"waited ([0-9.]+) s", blocked_import["detail"]).group(1))  # type: ignore[union-attr]
            assert LOCK_WAIT_S * 0.9 <= stated < SQLITE_BUSY_TIMEOUT_S
    finally:
        holder.cursor().execute("ROLLBACK")
        holder.close()
    with _client(sqlite_database) as client:
        assert client.get("/readyz").json()["status"] == "ok"
        assert client.post("/v1/scenarios", json=BODY).status_code == 201
        assert _import(client).status_code == 201


def test_postgresql_an_import_in_progress_does_not_hold_up_other_writes(
    postgres_database: ServedDatabase,
) -> None:
    with postgres_database.engine.connect() as holder:
        # The import lock, held as a running import holds it.
        holder.execute(text("SELECT pg_advisory_lock(:c, hashtext(current_schema()))"), {"c": _LOCK_CLASS})
        with _client(postgres_database) as client:
            assert client.get("/readyz").json()["status"] == "ok"
            started = time.monotonic()
            assert client.post("/v1/scenarios", json=BODY).status_code == 201
            assert time.monotonic() - started < SQLITE_BUSY_TIMEOUT_S, "the write did not wait for the import"
            blocked_import = assert_problem(_import(client), 409)
            stated = float(re.search(r"waited ([0-9.]+) s", blocked_import["detail"]).group(1))  # type: ignore[union-attr]
            assert LOCK_WAIT_S * 0.9 <= stated < SQLITE_BUSY_TIMEOUT_S
        holder.execute(text("SELECT pg_advisory_unlock_all()"))
        holder.commit()
    with _client(postgres_database) as client:
        assert _import(client).status_code == 201
