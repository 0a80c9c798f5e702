"""The service as a real server process (uvicorn on a free loopback port) over a real database, for
tests that need what only a process gives: being killed with SIGKILL, and concurrent requests served
by the server's own thread pool with one database session each.

`served_database(kind)` makes a fresh, migrated and seeded database (a SQLite file, or a schema of
the shared PostgreSQL server) that the test's writes are committed to, with a `write` key.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
from sqlalchemy import Engine

from tests.conftest import POSTGRES_URL, drop_postgres_schema, make_postgres_engine
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.security import Actor, Scope, create_api_key

__all__ = ["LiveServer", "ServedDatabase", "free_port", "live_server", "served_database"]

START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class ServedDatabase:
    url: str  # what the server process is given as DATABASE_URL
    engine: Engine  # the test's own connection pool, to look at what was committed
    write_token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.write_token}"}


@contextmanager
def served_database(kind: str, directory: Path) -> Iterator[ServedDatabase]:
    """A fresh seeded database of `kind` ("sqlite" or "postgresql"), dropped afterwards."""
    schema = f"wtr_live_{uuid.uuid4().hex[:10]}"
    if kind == "sqlite":
        url = f"sqlite:///{directory / 'catalog.db'}"
        engine = create_db_engine(url)
    else:
        engine = make_postgres_engine(schema)
        url = f"{POSTGRES_URL}?options={quote(f'-csearch_path={schema}')}"
    try:
        prepare_database(engine)
        with make_session_factory(engine).begin() as session:
            _key, token = create_api_key(
                session, "live-writer", Scope.WRITE, Actor("cli:test"), dt.datetime.now(dt.UTC)
            )
        yield ServedDatabase(url=url, engine=engine, write_token=token)
    finally:
        engine.dispose()
        if kind != "sqlite":
            drop_postgres_schema(schema)


class LiveServer:
    """`python -m uvicorn` serving `create_app()` over `database_url`; its output goes to `log`."""

    def __init__(self, database_url: str, log: Path) -> None:
        self.database_url = database_url
        self.log = log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> LiveServer:
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "WHERETORUN_AUTO_SEED": "false",
            "WHERETORUN_LOG_LEVEL": "WARNING",
        }
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "wheretorun.api.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
        ]
        with self.log.open("ab") as output:
            self.process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"the server did not become ready: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, nothing flushed that was not already."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        assert self.process.wait(timeout=START_TIMEOUT_S) == -signal.SIGKILL

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=START_TIMEOUT_S)


@contextmanager
def live_server(database_url: str, log: Path) -> Iterator[LiveServer]:
    server = LiveServer(database_url, log).start()
    try:
        yield server
    finally:
        server.stop()
