"""`get_session`, the request's session, and `memory_or_database` and `in_engine_thread_with_session`,
which own one the same way for the handlers that need the database only sometimes and for a
recommendation: a write is committed before the response
starts, a handler that raises leaves nothing written, a commit that fails is answered 500, and a
request that never touches the database runs no SQL, takes no worker thread to end a
transaction, and leaves none open.

The app's sessions are bound to an engine over an SQLite file of the test's own, so commits and
rollbacks are real; routes of the test's own, added to the app, do the writing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Engine, event, text
from sqlalchemy.exc import IntegrityError
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
            if message["type"] == "http.response.start" and "/test/write" in scope["path"]:
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

    def insert(session: Session) -> dict[str, str]:
        session.execute(text("INSERT INTO probe (note) VALUES ('written')"))
        return {"status": "written"}

    def insert_then_fail(session: Session) -> dict[str, str]:
        session.execute(text("INSERT INTO probe (note) VALUES ('to be rolled back')"))
        raise InvalidInput("body.note", "refused after the write")

    def insert_then_fail_to_commit(session: Session) -> dict[str, str]:
        def refuse() -> None:
            raise IntegrityError("COMMIT", None, Exception("refused by the database"))

        session.commit = refuse  # type: ignore[method-assign]
        return insert(session)

    def untouched(session: Session) -> dict[str, str]:
        seen.sessions.append(session)
        return {"status": "untouched"}

    # each case three times: through the `SessionDep` dependency, through `memory_or_database`
    # (the database path in a worker thread; `untouched` answered from memory on the event loop)
    # and through `in_engine_thread_with_session`
    for path, work in (
        ("/test/write", insert),
        ("/test/write-then-fail", insert_then_fail),
        ("/test/write-then-fail-to-commit", insert_then_fail_to_commit),
    ):
        app.add_api_route(f"/dependency{path}", _with_dependency(work), methods=["POST"])
        app.add_api_route(f"/memory-or-database{path}", _memory_or_database(None, work), methods=["POST"])
        app.add_api_route(f"/engine-thread{path}", _in_engine_thread(work), methods=["POST"])

    async def untouched_dependency(session: SessionDep) -> dict[str, str]:
        return untouched(session)

    app.add_api_route("/dependency/test/untouched", untouched_dependency, methods=["GET"])
    app.add_api_route(
        "/memory-or-database/test/untouched", _memory_or_database(untouched, insert), methods=["GET"]
    )
    app.add_api_route("/engine-thread/test/untouched", _in_engine_thread(untouched), methods=["GET"])
    app.add_middleware(_RowsAtResponseStart, engine=engine, seen=seen)

    def record(*args: Any) -> None:
        seen.statements.append(args[2])

    event.listen(engine, "before_cursor_execute", record)
    real: Callable[..., Any] = run_in_threadpool

    async def hop(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        seen.hops.append(getattr(function, "__qualname__", repr(function)))
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(deps, "run_in_threadpool", hop)
    try:
        with InProcessClient(app) as client:
            yield Served(client=client, engine=engine, seen=seen)
    finally:
        engine.dispose()


def _with_dependency(work: Callable[[Session], dict[str, str]]) -> Callable[..., dict[str, str]]:
    def route(session: SessionDep) -> dict[str, str]:
        return work(session)

    return route


def _memory_or_database(
    from_memory: Callable[[Session], dict[str, str]] | None,
    from_database: Callable[[Session], dict[str, str]],
) -> Callable[..., Any]:
    async def route(request: Request) -> dict[str, str]:
        return await deps.memory_or_database(request, from_memory or (lambda session: None), from_database)

    return route


def _in_engine_thread(work: Callable[[Session], dict[str, str]]) -> Callable[..., Any]:
    async def route(request: Request) -> dict[str, str]:
        return await deps.in_engine_thread_with_session(request, work)

    return route


OWNERS = ["/dependency", "/memory-or-database", "/engine-thread"]


@pytest.mark.parametrize("owner", OWNERS)
def test_a_write_is_committed_before_the_response_starts(served: Served, owner: str) -> None:
    response = served.client.post(f"{owner}/test/write")
    assert response.status_code == 200, response.text
    assert served.seen.rows_at_response_start == [1]
    assert served.seen.hops  # the commit ran in a worker thread
    if owner == "/memory-or-database":
        assert any(hop.endswith(".insert") for hop in served.seen.hops), served.seen.hops  # the work too
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("owner", OWNERS)
def test_a_handler_that_raises_after_writing_leaves_nothing_written(served: Served, owner: str) -> None:
    response = served.client.post(f"{owner}/test/write-then-fail")
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "body.note"
    assert served.seen.rows_at_response_start == [0]
    assert _rows(served.engine) == 0
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("owner", OWNERS)
def test_a_commit_that_fails_is_answered_500_and_leaves_nothing_written(served: Served, owner: str) -> None:
    response = served.client.post(f"{owner}/test/write-then-fail-to-commit")
    assert response.status_code == 500, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert served.seen.rows_at_response_start == [0]
    assert _rows(served.engine) == 0
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("owner", OWNERS)
def test_a_request_that_never_touches_the_database_runs_no_sql_and_leaves_no_transaction(
    served: Served, owner: str
) -> None:
    served.seen.statements.clear()
    response = served.client.get(f"{owner}/test/untouched")
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "untouched"}  # from memory: the database path never ran
    assert served.seen.statements == []
    assert served.seen.hops == []  # nothing to commit, roll back or give back
    [session] = served.seen.sessions
    assert not session.in_transaction()
    assert served.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
