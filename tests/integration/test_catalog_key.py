"""`SnapshotCache.catalog_key` asks the database for the catalog's state once, then again only after
a commit (SQLite's commit counter), and every time when it cannot know what the session sees;
`SnapshotCache.specs` remembers catalog specs for that state, and `specs_in_memory` hands them out
only while the state is known without asking.

Sessions here are bound to an engine over an SQLite file of the test's own (as the server's are);
`_catalog_state` is wrapped to count its calls, and still asks the real database.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine, event, select
from sqlalchemy.orm import Session, sessionmaker

from wheretorun.errors import NotFound
from wheretorun.pricing import snapshot as snapshot_module
from wheretorun.pricing.models import CatalogVersion
from wheretorun.pricing.overrides import OverrideSpec, create_override
from wheretorun.pricing.snapshot import (
    CatalogKey,
    CatalogSpecs,
    NotInMemory,
    SnapshotCache,
    load_accelerator_spec,
    load_model_architecture,
)
from wheretorun.security import Actor

ACTOR = Actor("cli:test")


@pytest.fixture
def state_queries(monkeypatch: pytest.MonkeyPatch) -> list[dt.datetime | None]:
    """The `as_of` of each catalog-state query asked (the real query runs)."""
    asked: list[dt.datetime | None] = []
    real = snapshot_module._catalog_state

    def counting(session: Session, as_of: dt.datetime | None) -> tuple[int, str]:
        asked.append(as_of)
        return real(session, as_of)

    monkeypatch.setattr(snapshot_module, "_catalog_state", counting)
    return asked


@pytest.fixture
def sessions(sqlite_file_engine: Engine) -> sessionmaker[Session]:
    """Sessions bound to the engine, as the app makes them (`make_session_factory`)."""
    return sessionmaker(bind=sqlite_file_engine, expire_on_commit=False)


@pytest.fixture
def statements(sqlite_file_engine: Engine) -> Iterator[list[str]]:
    """Every SQL statement the engine's connections run."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(args[2])

    event.listen(sqlite_file_engine, "before_cursor_execute", record)
    yield seen
    event.remove(sqlite_file_engine, "before_cursor_execute", record)


def key_in_a_new_session(cache: SnapshotCache, sessions: sessionmaker[Session]) -> CatalogKey:
    with sessions() as session:
        return cache.catalog_key(session)


def commit_an_override(sessions: sessionmaker[Session], provider: str = "aws") -> None:
    spec = OverrideSpec(applies_to="cloud_offers", provider=provider, reason="test", multiplier=Decimal("2"))
    with sessions.begin() as session:
        create_override(session, spec, ACTOR, dt.datetime.now(dt.UTC))


def commit_a_catalog_version(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        session.add(
            CatalogVersion(created_at=dt.datetime.now(dt.UTC), kind="import", description="test", sources=[])
        )


def remembers(specs: CatalogSpecs, kind: str, name: str) -> bool:
    """Whether `specs` holds `name` in memory: its in-memory view answers it instead of raising
    `NotInMemory` (it never reads the session, so none is given)."""
    view = specs.in_memory_only()
    look_up = view.model_architecture if kind == "model" else view.accelerator_spec
    try:
        look_up(None, name, "body.name")  # type: ignore[arg-type]
    except NotInMemory:
        return False
    return True


# --- catalog_key ---------------------------------------------------------------------------------


def test_the_state_is_asked_once_while_nothing_is_committed(
    sessions: sessionmaker[Session], state_queries: list[dt.datetime | None]
) -> None:
    cache = SnapshotCache()
    keys = [key_in_a_new_session(cache, sessions) for _ in range(5)]
    assert len(state_queries) == 1
    assert len(set(keys)) == 1
    version, moment, _overrides = keys[0]
    with sessions() as session:
        assert version == session.scalar(select(CatalogVersion.id).order_by(CatalogVersion.id.desc()))
    assert moment == f"day:{dt.datetime.now(dt.UTC).date()}"


def test_a_committed_override_is_asked_for_and_changes_the_key(
    sessions: sessionmaker[Session], state_queries: list[dt.datetime | None]
) -> None:
    cache = SnapshotCache()
    before = key_in_a_new_session(cache, sessions)
    commit_an_override(sessions)
    after = key_in_a_new_session(cache, sessions)
    assert len(state_queries) == 2
    assert after[0] == before[0]
    assert after[2] != before[2]
    assert after[2].startswith("1:")
    assert before[2].startswith("0:")
    assert key_in_a_new_session(cache, sessions) == after
    assert len(state_queries) == 2  # and known again until the next commit


def test_a_committed_catalog_version_changes_the_key(
    sessions: sessionmaker[Session], state_queries: list[dt.datetime | None]
) -> None:
    cache = SnapshotCache()
    before = key_in_a_new_session(cache, sessions)
    commit_a_catalog_version(sessions)
    after = key_in_a_new_session(cache, sessions)
    assert len(state_queries) == 2
    assert after[0] > before[0]
    assert after[1:] == before[1:]


def test_any_commit_by_another_connection_is_asked_for(
    sessions: sessionmaker[Session], sqlite_file_url: str, state_queries: list[dt.datetime | None]
) -> None:
    """A commit that changes nothing of the catalog, by a connection outside SQLAlchemy: asked
    again (the counter cannot tell what changed), and the key stays."""
    cache = SnapshotCache()
    before = key_in_a_new_session(cache, sessions)
    with closing(sqlite3.connect(sqlite_file_url.removeprefix("sqlite:///"))) as plain:
        plain.execute("CREATE TABLE unrelated (x INTEGER)")
        plain.commit()
    assert key_in_a_new_session(cache, sessions) == before
    assert len(state_queries) == 2


def test_a_session_in_a_transaction_asks_every_time_and_sees_its_own_writes(
    sessions: sessionmaker[Session], state_queries: list[dt.datetime | None]
) -> None:
    cache = SnapshotCache()
    committed = key_in_a_new_session(cache, sessions)
    with sessions() as session:
        session.execute(select(1))
        assert cache.catalog_key(session) == committed
        assert cache.catalog_key(session) == committed
        assert len(state_queries) == 3
        spec = OverrideSpec(applies_to="cloud_offers", provider="gcp", reason="test", multiplier=Decimal("3"))
        create_override(session, spec, ACTOR, dt.datetime.now(dt.UTC))  # not committed
        assert cache.catalog_key(session)[2] != committed[2]
        session.rollback()
    assert len(state_queries) == 4
    assert key_in_a_new_session(cache, sessions) == committed  # the uncommitted key was not kept
    assert len(state_queries) == 4


def test_a_session_bound_to_a_connection_asks_every_time(
    sqlite_file_engine: Engine, state_queries: list[dt.datetime | None]
) -> None:
    cache = SnapshotCache()
    with sqlite_file_engine.connect() as connection:
        for _ in range(3):
            with Session(bind=connection) as session:
                cache.catalog_key(session)
    assert len(state_queries) == 3


def test_an_explicit_moment_asks_every_time(
    sessions: sessionmaker[Session], state_queries: list[dt.datetime | None]
) -> None:
    cache = SnapshotCache()
    moment = dt.datetime.now(dt.UTC)
    keys = []
    for _ in range(3):
        with sessions() as session:
            keys.append(cache.catalog_key(session, moment))
    assert state_queries == [moment] * 3
    assert keys[0][1] == moment.isoformat()


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_postgresql_asks_every_time(seeded_engine: Engine, state_queries: list[dt.datetime | None]) -> None:
    cache = SnapshotCache()
    keys = []
    for _ in range(3):
        with Session(seeded_engine) as session:  # bound to the engine, no transaction begun
            keys.append(cache.catalog_key(session))
    assert len(state_queries) == 3
    assert len(set(keys)) == 1
    with Session(seeded_engine) as session:
        assert cache.specs_in_memory(session) is None


# --- specs, specs_in_memory ----------------------------------------------------------------------


def test_a_catalog_accelerator_spec_is_the_one_loaded_and_is_looked_up_once(
    sessions: sessionmaker[Session], statements: list[str]
) -> None:
    cache = SnapshotCache()
    with sessions() as session:
        loaded = load_accelerator_spec(session, "H100")
    with sessions() as session:
        specs = cache.specs(session)
        assert not remembers(specs, "accelerator", "H100")
        spec = specs.accelerator_spec(session, "H100", "body.accelerator")
    assert spec == loaded
    assert spec.name == "h100-sxm"
    assert remembers(specs, "accelerator", "H100")
    statements.clear()
    with sessions() as session:
        again = cache.specs(session)
        assert again is specs
        assert again.accelerator_spec(session, "H100", "body.accelerator") is spec
    assert statements == []  # neither the catalog state nor the spec asked of the database


def test_an_alias_and_the_id_give_the_same_spec(sessions: sessionmaker[Session]) -> None:
    cache = SnapshotCache()
    with sessions() as session:
        by_id = cache.specs(session).accelerator_spec(session, "h100-sxm", "body.accelerator")
    with sessions() as session:
        specs = cache.specs(session)
        by_alias = specs.accelerator_spec(session, "NVIDIA H100 SXM5 80GB", "body.accelerator")
    assert by_alias == by_id
    assert remembers(specs, "accelerator", "NVIDIA H100 SXM5 80GB")
    assert remembers(specs, "accelerator", "h100-sxm")


def test_a_catalog_model_architecture_is_the_one_loaded(sessions: sessionmaker[Session]) -> None:
    cache = SnapshotCache()
    with sessions() as session:
        loaded = load_model_architecture(session, "llama-3.1-8b")
    with sessions() as session:
        specs = cache.specs(session)
        assert specs.model_architecture(session, "llama-3.1-8b", "body.model") == loaded
    assert remembers(specs, "model", "llama-3.1-8b")
    assert not remembers(specs, "accelerator", "llama-3.1-8b")


def test_an_unknown_name_raises_each_time_and_is_not_remembered(
    sessions: sessionmaker[Session], statements: list[str]
) -> None:
    cache = SnapshotCache()
    for _ in range(2):
        statements.clear()
        with sessions() as session:
            specs = cache.specs(session)
            with pytest.raises(NotFound):
                specs.accelerator_spec(session, "Quantum-9000", "body.accelerator")
            with pytest.raises(NotFound):
                specs.model_architecture(session, "no-such-model", "body.model")
        assert statements  # looked up again, not answered from memory
        assert not remembers(specs, "accelerator", "Quantum-9000")
        assert not remembers(specs, "model", "no-such-model")


def test_specs_are_in_memory_only_while_the_state_is_known(sessions: sessionmaker[Session]) -> None:
    cache = SnapshotCache()
    with sessions() as session:
        assert cache.specs_in_memory(session) is None  # nothing asked yet
    key_in_a_new_session(cache, sessions)
    with sessions() as session:
        assert cache.specs_in_memory(session) is None  # the state is known, no specs yet
    with sessions() as session:
        specs = cache.specs(session)
        specs.accelerator_spec(session, "H100", "body.accelerator")
    with sessions() as session:
        assert cache.specs_in_memory(session) is specs
    with sessions() as session:
        session.execute(select(1))
        assert cache.specs_in_memory(session) is None  # a session in a transaction
    commit_an_override(sessions)
    with sessions() as session:
        assert cache.specs_in_memory(session) is None  # committed since: not known without asking
    with sessions() as session:
        renewed = cache.specs(session)
    assert renewed is not specs  # a new catalog state starts afresh
    assert not remembers(renewed, "accelerator", "H100")
    with sessions() as session:
        assert cache.specs_in_memory(session) is renewed


def test_specs_outlive_a_commit_that_leaves_the_catalog_state(
    sessions: sessionmaker[Session], sqlite_file_url: str
) -> None:
    cache = SnapshotCache()
    with sessions() as session:
        specs = cache.specs(session)
        specs.accelerator_spec(session, "H100", "body.accelerator")
    with closing(sqlite3.connect(sqlite_file_url.removeprefix("sqlite:///"))) as plain:
        plain.execute("CREATE TABLE unrelated (x INTEGER)")
        plain.commit()
    with sessions() as session:
        assert cache.specs_in_memory(session) is None
    with sessions() as session:
        assert cache.specs(session) is specs  # asked again: same state, same memo
    with sessions() as session:
        assert cache.specs_in_memory(session) is specs


def test_a_session_bound_to_a_connection_never_has_specs_in_memory(sqlite_file_engine: Engine) -> None:
    cache = SnapshotCache()
    with sqlite_file_engine.connect() as connection:
        for _ in range(2):
            with Session(bind=connection) as session:
                cache.specs(session).accelerator_spec(session, "H100", "body.accelerator")
            with Session(bind=connection) as session:
                assert cache.specs_in_memory(session) is None


def test_specs_in_memory_only_never_ask_the_database(
    sessions: sessionmaker[Session], statements: list[str]
) -> None:
    """The view the event loop computes with: what is remembered is read, anything else raises
    `NotInMemory` without a statement (a name evicted or never asked between the check and the
    use would otherwise be a blocking query on the event loop)."""
    cache = SnapshotCache()
    with sessions() as session:
        spec = cache.specs(session).accelerator_spec(session, "H100", "body.accelerator")
    statements.clear()
    with sessions() as session:
        specs = cache.specs_in_memory(session)
        assert specs is not None
        view = specs.in_memory_only()
        assert view.accelerator_spec(session, "H100", "body.accelerator") is spec
        with pytest.raises(NotInMemory):
            view.accelerator_spec(session, "A100-80GB", "body.accelerator")
        with pytest.raises(NotInMemory):
            view.model_architecture(session, "llama-3.1-8b", "body.model")
    assert statements == []
    assert not remembers(specs, "accelerator", "A100-80GB")
