"""The client against the real app (over the test's rolled-back transaction, on SQLite and
PostgreSQL) and against `httpx.MockTransport` fakes."""

from __future__ import annotations

from collections.abc import Iterator

import anyio.from_thread
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import AdminApp, admin_app
from wheretorun.client import WheretorunClient

BASE_URL = "http://wheretorun.test"


class BlockingASGITransport(httpx.BaseTransport):
    """A sync transport into an ASGI app: httpx's ASGITransport is async-only, so each request is
    run on an anyio blocking portal's event loop (as `wheretorun.api.inprocess` does)."""

    def __init__(self, app: FastAPI, portal: anyio.from_thread.BlockingPortal) -> None:
        self._asgi = httpx.ASGITransport(app=app)
        self._portal = portal

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def send() -> httpx.Response:
            response = await self._asgi.handle_async_request(request)
            content = await response.aread()
            return httpx.Response(response.status_code, headers=response.headers, content=content)

        return self._portal.call(send)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def api(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    """The app with a read, a write and an admin key (`api.keys[scope][1]` is the token)."""
    with admin_app(seeded_engine, session_factory) as made:
        yield made


@pytest.fixture
def portal() -> Iterator[anyio.from_thread.BlockingPortal]:
    with anyio.from_thread.start_blocking_portal() as made:
        yield made


@pytest.fixture
def sync_client(api: AdminApp, portal: anyio.from_thread.BlockingPortal) -> Iterator[WheretorunClient]:
    """The sync client of the real app, with the admin key and no retries."""
    transport = BlockingASGITransport(api.app, portal)
    with WheretorunClient(BASE_URL, api_key=api.keys["admin"][1], retries=0, transport=transport) as client:
        yield client
