"""The database going away: the requests in flight and those that follow get a 503 problem (not a
500, not a hang), and once the database is back the same app object serves again, no restart.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from tests.faults.conftest import PrivateCluster
from tests.import_support import assert_problem
from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.db import create_db_engine
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.settings import Settings

pytestmark = pytest.mark.faults

READ = "/v1/accelerators/H100"


def _wait_for_a_blocked_query(dsn: str, timeout_s: float = 30) -> None:
    """Until some backend waits for a lock (the request, stuck behind our table lock)."""
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(dsn, autocommit=True) as connection:
        while time.monotonic() < deadline:
            waiting = connection.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            ).fetchone()
            if waiting and waiting[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the request never reached the database")


def test_a_database_outage_is_503_and_the_same_app_recovers(private_postgres: PrivateCluster) -> None:
    engine = create_db_engine(private_postgres.url, connect_args={"connect_timeout": 5})
    prepare_database(engine)
    app = create_app(Settings(auto_seed=False), engine=engine)
    dsn = f"host=127.0.0.1 port={private_postgres.port} user=postgres dbname=wtr_faults"
    try:
        with InProcessClient(app) as client, ThreadPoolExecutor(max_workers=1) as pool:
            assert client.get(READ).status_code == 200
            assert client.get("/readyz").status_code == 200

            # A request in the middle of a query when the server dies: hold it behind a table lock,
            # then stop PostgreSQL without a shutdown checkpoint (as a crash would).
            locker = psycopg.connect(dsn)
            locker.execute("LOCK TABLE accelerators IN ACCESS EXCLUSIVE MODE")
            in_flight = pool.submit(client.get, READ)
            _wait_for_a_blocked_query(dsn)
            private_postgres.stop("immediate")
            assert_problem(in_flight.result(timeout=60), 503)
            locker.close()

            # While it is down: 503 at once (the connection is refused), for reads and for readiness.
            started = time.monotonic()
            assert_problem(client.get(READ), 503)
            assert_problem(client.get("/readyz"), 503)
            assert time.monotonic() - started < 30

            # Back up: the same app, the same engine, and its pool's dead connections are replaced.
            private_postgres.start()
            assert client.get(READ).status_code == 200
            assert client.get("/readyz").json()["database"] == "postgresql"
    finally:
        engine.dispose()
