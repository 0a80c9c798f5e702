"""A private PostgreSQL cluster per test, so a fault test can stop and start its database without
touching the shared server on 5432.

The cluster lives in a temporary directory owned by the `postgres` OS user (PostgreSQL refuses to
run as root; the tests do), listens on 127.0.0.1 on a free port and on a Unix socket in its own
directory, and is stopped and deleted at the end of the test whatever happens.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.live_server import free_port

PG_BIN = Path(os.environ.get("WHERETORUN_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_USER = "postgres"
DATABASE = "wtr_faults"
TIMEOUT_S = 60


class PrivateCluster:
    """`url` reaches its database `wtr_faults`; `stop()` kills the server at once, `start()` restarts it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.data = directory / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg://{PG_USER}@127.0.0.1:{self.port}/{DATABASE}"

    def _as_postgres(self, *command: str) -> None:
        subprocess.run(
            ["runuser", "-u", PG_USER, "--", *command],
            check=True,
            capture_output=True,
            timeout=TIMEOUT_S,
        )

    def create(self) -> None:
        self._as_postgres(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", PG_USER, "--no-sync"
        )
        self.start()
        dsn = f"host=127.0.0.1 port={self.port} user={PG_USER} dbname=postgres connect_timeout=10"
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.directory / "server.log")
        self._as_postgres(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", log, "-w", "-t", "60", "start"
        )

    def stop(self, mode: str = "immediate") -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


@pytest.fixture
def private_postgres() -> Iterator[PrivateCluster]:
    missing = [tool for tool in ("initdb", "pg_ctl") if not (PG_BIN / tool).exists()]
    if missing:
        pytest.skip(f"no {', '.join(missing)} in {PG_BIN} (set WHERETORUN_TEST_PG_BIN)")
    try:
        owner = pwd.getpwnam(PG_USER)
    except KeyError:
        pytest.skip(f"no `{PG_USER}` OS user to run a private PostgreSQL cluster as")
    if shutil.which("runuser") is None:
        pytest.skip("no `runuser` to start PostgreSQL as the postgres user")
    directory = Path(tempfile.mkdtemp(prefix="wtr-faults-pg-"))  # in /tmp: reachable by `postgres`
    os.chown(directory, owner.pw_uid, owner.pw_gid)
    cluster = PrivateCluster(directory)
    try:
        cluster.create()
        yield cluster
    finally:
        if cluster.running():
            cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
