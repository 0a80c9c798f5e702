"""FastAPI dependencies: settings, the one database session per request that owns its transaction,
API-key authentication, and the injectable clock and URL fetcher."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, TypeVar

import anyio
from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from wheretorun.db import begin_write
from wheretorun.errors import NotSaved, Unauthorized
from wheretorun.pricing.imports import Fetcher, fetcher_from_settings
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.security import Actor, Scope, authenticate, require_scope
from wheretorun.settings import Settings

__all__ = [
    "AdminKey",
    "ClockDep",
    "FetcherDep",
    "ReadKey",
    "SessionDep",
    "SettingsDep",
    "SnapshotsDep",
    "WriteKey",
    "WriteSessionDep",
    "catalog_reads",
    "get_clock",
    "get_fetcher",
    "get_session",
    "get_settings_dep",
    "get_snapshots",
    "get_write_session",
    "in_engine_thread",
    "in_engine_thread_with_session",
    "memory_or_database",
    "requires",
]


_log = logging.getLogger("wheretorun.db")
T = TypeVar("T")


async def get_settings_dep(request: Request) -> Settings:
    """(Dependencies that do no I/O are `async`: FastAPI runs a plain one in a worker thread.)"""
    settings: Settings = request.app.state.settings
    return settings


async def get_session(request: Request) -> AsyncIterator[Session]:
    """One session per request: commit when the handler succeeds, roll back when it raises.

    Services and repositories never commit; this module is the only place that does (here, and in
    `memory_or_database` for handlers that need the database only sometimes). The dependency has
    `scope="function"`, so the commit runs when the handler returns and before the response is sent:
    a write is acknowledged only once it is committed, and a commit that fails is answered with an
    error (a 5xx problem) instead of the success the handler had prepared.

    The session opens no connection until the handler uses it, so this runs on the event loop and
    hands the commit or rollback to a worker thread only when there is a transaction to end.
    """
    async with _request_session(request) as session:
        yield session


async def memory_or_database(
    request: Request, from_memory: Callable[[Session], T | None], from_database: Callable[[Session], T]
) -> T:
    """`from_memory(session)` on the event loop, and when it answers None, `from_database(session)`
    in a worker thread; the session committed, rolled back and closed as `get_session`'s is, before
    the handler returns. For a handler that the catalog in memory answers most of the time (an
    estimate by catalog names): `get_session`'s dependency machinery cost such an estimate ~45 us of
    its ~400 (in process, 2026-12-05), though its session never began."""

    async def answer(session: Session) -> T:
        found = from_memory(session)
        return await run_in_threadpool(from_database, session) if found is None else found

    return await _with_session(request, answer)


async def _with_session(request: Request, use: Callable[[Session], Awaitable[T]]) -> T:
    """`await use(session)` with a session of the request's own, committed, rolled back and closed
    as `get_session`'s is, before the handler returns. Settled here rather than by
    `_request_session`: ~20,000 instructions of an estimate's ~1.9M less than the context manager
    (2026-12-05)."""
    session: Session = request.app.state.session_factory()
    try:
        answer = await use(session)
    except BaseException:
        await _settle(session, failed=True)
        raise
    await _settle(session, failed=False)
    return answer


@asynccontextmanager
async def _request_session(request: Request) -> AsyncIterator[Session]:
    session: Session = request.app.state.session_factory()
    try:
        yield session
    except BaseException:
        await _settle(session, failed=True)
        raise
    await _settle(session, failed=False)


async def _settle(session: Session, *, failed: bool) -> None:
    """End the request's session: roll back when its handler `failed`, else commit; then close."""
    try:
        if failed:
            await _shielded_in_thread_if_used(session, session.rollback)
        else:
            await _in_thread_if_used(session, lambda: _commit(session))
    finally:
        await _shielded_in_thread_if_used(session, session.close)


async def _in_thread_if_used(session: Session, action: Callable[[], None]) -> None:
    """`action` in a worker thread when the session holds a transaction (it talks to the database),
    else nothing: a session that never began has nothing to commit, roll back or give back."""
    if session.in_transaction():
        await run_in_threadpool(action)


async def _shielded_in_thread_if_used(session: Session, action: Callable[[], None]) -> None:
    """`_in_thread_if_used`, shielded from cancellation. The cancel scope is made only when there
    is something to run: ~35,000 instructions of an estimate's ~1.94M otherwise (2026-12-05)."""
    if session.in_transaction():
        with anyio.CancelScope(shield=True):
            await run_in_threadpool(action)


def _commit(session: Session) -> None:
    """Commit, or turn a refusal into `NotSaved` (500). An `OperationalError` keeps its own meaning
    (503 when the database is unreachable, 409 when another writer held it too long)."""
    try:
        session.commit()
    except OperationalError:
        raise
    except SQLAlchemyError as error:
        _log.error("the commit failed; the request is answered with an error", exc_info=True)
        raise NotSaved() from error


SessionDep = Annotated[Session, Depends(get_session, scope="function")]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]


async def get_snapshots(request: Request) -> SnapshotCache:
    """The app's catalog snapshots and specs, kept per catalog state (`SnapshotCache`)."""
    snapshots: SnapshotCache = request.app.state.snapshots
    return snapshots


SnapshotsDep = Annotated[SnapshotCache, Depends(get_snapshots)]


async def in_engine_thread(request: Request, work: Callable[[], T]) -> T:
    """`work` (a recommendation: milliseconds of CPU-bound Python) in a worker thread, one at a
    time per worker process; the others wait their turn on the event loop, holding no thread.

    The GIL runs one thread's Python at a time, so two recommendations in one process never ran
    in parallel: they took turns every 5 ms (the interpreter's switch interval), each probably
    evicting the other's data from the CPU caches (not measured). One at a time, a recommendation
    cost 9-11% less CPU and the worker answered 5-9% more of them (three paired runs, one worker,
    8 connections, bench/load_test.py's body; 2026-12-05); with two workers sharing two cores
    with the load generator, 1.5% less, within the noise. Each waits its turn instead of
    finishing late.
    A request waiting its turn still holds its handler slot (`max_concurrent_requests`, 2 by
    default): with two recommendations in flight, other requests wait for a slot as before."""
    limiter: anyio.CapacityLimiter = request.app.state.engine_turns
    return await anyio.to_thread.run_sync(work, limiter=limiter)


async def in_engine_thread_with_session(request: Request, work: Callable[[Session], T]) -> T:
    """`work(session)` in the engine's thread (`in_engine_thread`), with a session of its own that
    is committed, rolled back and closed as `get_session`'s is, before the handler returns (as
    `memory_or_database` does). For a recommendation: the session and the snapshots as
    dependencies cost ~0.26M instructions of the 8B prototype's ~24.1M through the app
    (2026-12-05)."""
    return await _with_session(request, lambda session: in_engine_thread(request, lambda: work(session)))


def get_write_session(session: SessionDep) -> Session:
    """The request's session, to be begun as a writer (`begin_write`: on SQLite its transaction holds
    the write lock from its first read, so what the write reads stays current). Routes that write
    take this instead of `SessionDep`."""
    begin_write(session)
    return session


WriteSessionDep = Annotated[Session, Depends(get_write_session, scope="function")]


# --- API keys ------------------------------------------------------------------------------------

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key from `wheretorun keys create`, sent as `Authorization: Bearer <key>`.",
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _actor(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Actor:
    """The key's actor, looked up in a short session of its own: the request's session (and so its
    transaction) starts only when the handler uses it, so a writer's transaction has read nothing
    before it takes its lock (SQLite cannot wait for a lock after it has read)."""
    if credentials is None:
        raise Unauthorized(
            "this needs an API key: send `Authorization: Bearer <key>` (made by `wheretorun keys create`)"
        )
    with request.app.state.session_factory() as session:
        return authenticate(session, credentials.credentials)


def requires(scope: Scope) -> Callable[[Request, HTTPAuthorizationCredentials | None], Actor]:
    """A dependency that answers 401 without a valid key and 403 when its scope is below `scope`."""

    def dependency(request: Request, credentials: Credentials) -> Actor:
        actor = _actor(request, credentials)
        request.state.api_key_id = actor.key_id  # for the access log
        require_scope(actor, scope)
        return actor

    return dependency


ReadKey = Annotated[Actor, Depends(requires(Scope.READ))]
WriteKey = Annotated[Actor, Depends(requires(Scope.WRITE))]
AdminKey = Annotated[Actor, Depends(requires(Scope.ADMIN))]


def catalog_reads(request: Request, settings: SettingsDep, credentials: Credentials) -> None:
    """Catalog reads are open, unless `WHERETORUN_REQUIRE_KEY_FOR_READS` asks for a key (any scope)."""
    if settings.require_key_for_reads:
        _actor(request, credentials)


# --- injectable collaborators (tests override these) -------------------------------------------


async def get_clock() -> Callable[[], dt.datetime]:
    return lambda: dt.datetime.now(dt.UTC)


def get_fetcher(settings: SettingsDep) -> Fetcher:
    """Fetches URL imports under the settings' allow-list; tests override it with a MockTransport."""
    return fetcher_from_settings(settings)


ClockDep = Annotated[Callable[[], dt.datetime], Depends(get_clock)]
FetcherDep = Annotated[Fetcher, Depends(get_fetcher)]
