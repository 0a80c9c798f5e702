"""The app over the test's rolled-back connection, driven through Starlette's httpx-based client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.settings import Settings


@pytest.fixture
def client(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[InProcessClient]:
    app = create_app(Settings(auto_seed=False), engine=seeded_engine)
    app.state.session_factory = session_factory
    with InProcessClient(app) as test_client:
        yield test_client
