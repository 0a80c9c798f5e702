"""The app over the test's rolled-back connection, driven through Starlette's httpx-based client."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.security import Actor, Scope, create_api_key
from wheretorun.settings import Settings

TEST_ACTOR = Actor(label="cli:test")


def write_key_headers(session_factory: sessionmaker[Session], name: str = "test-writer") -> dict[str, str]:
    """An `Authorization` header with a new key of scope `write` (scenario writes need one)."""
    with session_factory.begin() as session:
        _key, token = create_api_key(session, name, Scope.WRITE, TEST_ACTOR, dt.datetime.now(dt.UTC))
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[InProcessClient]:
    """A client that sends a `write` key with every request (reads need none; scenario writes do)."""
    app = create_app(Settings(auto_seed=False), engine=seeded_engine)
    app.state.session_factory = session_factory
    with InProcessClient(app, headers=write_key_headers(session_factory)) as test_client:
        yield test_client
