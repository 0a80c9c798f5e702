"""`get_session`, the request's session: a write is committed before the response starts, a handler
that raises leaves nothing written, and a request that never touches the database runs no SQL,
takes no worker thread to end a transaction, and leaves none open.

The app's sessions are bound to an engine over an SQLite file of the test's own, so commits and
rollbacks are real; routes of the test's own, added to the app, do the writing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Engine, event, text
from sqlalchemy.orm import Session
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wheretorun.api import deps
from wheretorun.api.app import create_app
from wheretorun.api.deps import SessionDep
from wheretorun.api.inprocess import InProcessClient
from wheretorun.errors import InvalidInput
from wheretorun.settings import Settings


@dataclass
class Seen:
    sessions: list[Session] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    hops: list[str] = field(default_factory=list)
    rows_at_response_start: list[int] = field(default_factory=list)


def _rows(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM probe")).scalar_one())


class _RowsAtResponseStart:
    """Counts the committed probe rows, through a connection of its own, as the response to a
    write route starts."""

    def __init__(self, app: ASGIApp, engine: Engine, seen: Seen) -> None:
        self.app, self.engine, self.seen = app, engine, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and scope["path"].startswith("/test/write"):
                self.seen.rows_at_response_start.append(_rows(self.engine))
            await send(message)

        await self.app(scope, receive, sending)


@dataclass
class Served:
    client: InProcessClient
    engine: Engine
    seen: Seen


@pytest.fixture
def served(sqlite_file_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    app: FastAPI = create_app(sqlite_file_settings)
    engine: Engine = app.state.engine
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE probe (note TEXT NOT NULL)"))
    seen = Seen()

    def write(session: SessionDep) -> dict[str, str]:
        session.execute(text("INSERT INTO probe (note) VALUES ('written')"))
        return {"status": "written"}

    def write_then_fail(session: SessionDep) -> dict[str, str]:
        session.execute(text("INSERT INTO probe (note) VALUES ('to be rolled back')"))
        raise InvalidInput("body.note", "refused after the write")

    async def untouched(session: SessionDep) -> dict[str, str]:
        seen.sessions.append(session)
        return {"status": "untouched"}

    app.add_api_route("/test/write", write, methods=["POST"])
    app.add_api_route("/test/write-then-fail", write_then_fail, methods=["POST"])
    app.add_api_route("/test/untouched", untouched, methods=["GET"])
    app.add_middleware(_RowsAtResponseStart, engine=engine, seen=seen)

    def record(*args: Any) -> None:
        seen.statements.append(args[2])

    event.listen(engine, "before_cursor_execute", record)
    real: Callable[..., Any] = run_in_threadpool

    async def hop(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        seen.hops.append(getattr(function, "__name__", repr(function)))
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(deps, "run_in_threadpool", hop)
    try:
        with InProcessClient(app) as client:
            yield Served(client=client, engine=engine, seen=seen)
    finally:
        engine.dispose()


def test_a_write_is_committed_before_the_response_starts(served: Served) -> None:
    response = served.client.post("/test/write")
    assert response.status_code == 200, response.text
    assert served.seen.rows_at_response_start == [1]
    assert served.seen.hops  # the commit ran in a worker thread
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_a_handler_that_raises_after_writing_leaves_nothing_written(served: Served) -> None:
    response = served.client.post("/test/write-then-fail")
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "body.note"
    assert served.seen.rows_at_response_start == [0]
    assert _rows(served.engine) == 0
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_a_request_that_never_touches_the_database_runs_no_sql_and_leaves_no_transaction(
    served: Served,
) -> None:
    served.seen.statements.clear()
    response = served.client.get("/test/untouched")
    assert response.status_code == 200, response.text
    assert served.seen.statements == []
    assert served.seen.hops == []  # nothing to commit, roll back or give back
    [session] = served.seen.sessions
    assert not session.in_transaction()
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
