"""Two replicas on one PostgreSQL database: two apps, each with its own engine (and so its own
connection pool), on a schema migrated and seeded once for this module. Their shared state lives
in the database, or in Redis (db 15, keys under a prefix made for the test run) when configured:
a retry sent to the other replica replays the first response, concurrent duplicates do not both
run, and the rate limit is one budget across both."""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import redis
import yaml
from fastapi import FastAPI, Request
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from tests.api.test_limits_api import clear_of_the_window_edge
from tests.api.test_scenarios_api import BODY
from tests.conftest import POSTGRES_URL, drop_postgres_schema, make_postgres_engine
from tests.import_support import TEST_ACTOR, assert_problem
from wheretorun.api.app import create_app
from wheretorun.api.deps import get_session
from wheretorun.api.inprocess import InProcessClient
from wheretorun.db import create_db_engine
from wheretorun.errors import Unavailable
from wheretorun.idempotency import RedisIdempotencyStore, RequestKey, SqlIdempotencyStore
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.ratelimit import RedisCounters, SqlCounters
from wheretorun.scenarios.models import ScenarioRecord
from wheretorun.security import Scope, create_api_key
from wheretorun.settings import Settings

REDIS_URL = "redis://127.0.0.1:6379/15"
LIMIT = 8


@pytest.fixture(scope="module")
def schema() -> Iterator[str]:
    name = f"wtr_scale_{uuid.uuid4().hex[:10]}"
    engine = make_postgres_engine(name)
    try:
        prepare_database(engine)
        engine.dispose()
        yield name
    finally:
        drop_postgres_schema(name)


@pytest.fixture(scope="module")
def redis_prefix() -> Iterator[str]:
    prefix = f"wtr-test-{uuid.uuid4().hex}:"
    client = redis.Redis.from_url(REDIS_URL)
    try:
        yield prefix
    finally:
        for name in client.scan_iter(match=f"{prefix}*"):
            client.delete(name)
        client.close()


@dataclass
class Replicas:
    a: InProcessClient
    b: InProcessClient
    apps: tuple[FastAPI, FastAPI]
    engine: Engine  # a third connection pool, for looking at the database
    auth: dict[str, str]  # a `write` key, which creating a scenario needs

    def scenarios_named(self, name: str) -> list[int]:
        with Session(self.engine) as session:
            return list(session.scalars(select(ScenarioRecord.id).where(ScenarioRecord.name == name)))


@pytest.fixture(params=["database", "redis"])
def replicas(request: pytest.FixtureRequest, schema: str, redis_prefix: str) -> Iterator[Replicas]:
    settings: dict[str, Any] = {"auto_seed": False, "rate_limit_per_minute": LIMIT}
    if request.param == "redis":
        settings |= {"redis_url": REDIS_URL, "redis_key_prefix": redis_prefix}
    engines = [
        create_db_engine(POSTGRES_URL, connect_args={"options": f"-csearch_path={schema}"}) for _ in range(3)
    ]
    apps = (
        create_app(Settings(**settings), engine=engines[0]),
        create_app(Settings(**settings), engine=engines[1]),
    )
    address = (f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}", 5000)
    with Session(engines[2]) as session, session.begin():
        _key, token = create_api_key(
            session, "scale-out-writer", Scope.WRITE, TEST_ACTOR, dt.datetime.now(dt.UTC)
        )
    with ExitStack() as stack:
        a = stack.enter_context(InProcessClient(apps[0], client_address=address))
        b = stack.enter_context(InProcessClient(apps[1], client_address=address))
        yield Replicas(a=a, b=b, apps=apps, engine=engines[2], auth={"Authorization": f"Bearer {token}"})
    for app in apps:
        if app.state.redis is not None:
            app.state.redis.close()
    for engine in engines:
        engine.dispose()


def named(label: str) -> dict[str, Any]:
    return {**BODY, "name": f"{label} {uuid.uuid4().hex}"}


def warm_up(replicas: Replicas) -> None:
    """One plain create per replica first: FastAPI builds its validators on first use, and two
    threads doing that at once is not what these tests are about."""
    for client in (replicas.a, replicas.b):
        assert client.post("/v1/scenarios", json=named("warm-up"), headers=replicas.auth).status_code == 201


def test_a_retry_sent_to_the_other_replica_replays_the_first_response(replicas: Replicas) -> None:
    clear_of_the_window_edge()
    body, headers = named("retried"), {"Idempotency-Key": str(uuid.uuid4()), **replicas.auth}
    created = replicas.a.post("/v1/scenarios", json=body, headers=headers)
    assert created.status_code == 201, created.text
    retried = replicas.b.post("/v1/scenarios", json=body, headers=headers)
    assert retried.status_code == 201
    assert retried.headers["idempotent-replayed"] == "true"
    assert retried.json()["id"] == created.json()["id"]
    assert replicas.scenarios_named(body["name"]) == [created.json()["id"]]
    changed = replicas.b.post("/v1/scenarios", json={**body, "tags": ["other"]}, headers=headers)
    assert assert_problem(changed, 422)["errors"][0]["field"] == "header.idempotency-key"


def test_concurrent_duplicates_run_once(replicas: Replicas) -> None:
    """Replica A is slow to answer; B gets the same request meanwhile: 409, then a replay."""
    clear_of_the_window_edge(10)
    warm_up(replicas)

    async def slow_session(request: Request) -> AsyncIterator[Session]:
        await anyio.sleep(1.0)
        async for session in get_session(request):
            yield session

    replicas.apps[0].dependency_overrides[get_session] = slow_session
    body, headers = named("concurrent"), {"Idempotency-Key": str(uuid.uuid4()), **replicas.auth}
    results: dict[str, httpx.Response] = {}

    def send(name: str, client: InProcessClient) -> None:
        results[name] = client.post("/v1/scenarios", json=body, headers=headers)

    first = threading.Thread(target=send, args=("a", replicas.a))
    first.start()
    time.sleep(0.4)
    send("b", replicas.b)
    first.join()
    assert results["a"].status_code == 201, results["a"].text
    assert_problem(results["b"], 409)
    assert results["b"].headers["retry-after"] == "1"
    later = replicas.b.post("/v1/scenarios", json=body, headers=headers)
    assert (later.status_code, later.headers["idempotent-replayed"]) == (201, "true")
    assert replicas.scenarios_named(body["name"]) == [results["a"].json()["id"]]


def test_simultaneous_duplicates_create_one_scenario(replicas: Replicas) -> None:
    clear_of_the_window_edge(10)
    warm_up(replicas)
    body, headers = named("race"), {"Idempotency-Key": str(uuid.uuid4()), **replicas.auth}
    barrier = threading.Barrier(2)
    statuses: list[tuple[int, str | None]] = []

    def send(client: InProcessClient) -> None:
        barrier.wait()
        response = client.post("/v1/scenarios", json=body, headers=headers)
        statuses.append((response.status_code, response.headers.get("idempotent-replayed")))

    threads = [threading.Thread(target=send, args=(client,)) for client in (replicas.a, replicas.b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(statuses) in ({(201, None), (201, "true")}, {(201, None), (409, None)})
    assert len(replicas.scenarios_named(body["name"])) == 1


def test_the_rate_limit_is_one_budget_across_replicas(replicas: Replicas) -> None:
    clear_of_the_window_edge()
    answers = [
        (replicas.a if n % 2 else replicas.b).get("/v1/models", params={"limit": 1}) for n in range(LIMIT + 3)
    ]
    assert [r.status_code for r in answers] == [200] * LIMIT + [429] * 3
    assert {answers[-1].headers["retry-after"], answers[-2].headers["retry-after"]} <= {
        str(s) for s in range(1, 61)
    }


def test_the_rate_limit_per_api_key_holds_across_replicas(replicas: Replicas) -> None:
    clear_of_the_window_edge()
    with Session(replicas.engine) as session, session.begin():
        _key, token = create_api_key(session, "scale-out", Scope.READ, TEST_ACTOR, dt.datetime.now(dt.UTC))
    auth = {"Authorization": f"Bearer {token}"}
    statuses = [
        (replicas.b if n % 2 else replicas.a).get("/v1/admin/imports", headers=auth).status_code
        for n in range(LIMIT + 2)
    ]
    assert statuses == [200] * LIMIT + [429, 429]


def test_the_compose_file_describes_replicas_on_shared_storage() -> None:
    """docker-compose.yml cannot run here (no Docker engine): check it parses, and that its API
    settings are ones the service accepts."""
    root = Path(__file__).resolve().parents[2]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    api = services["api"]
    assert api["deploy"]["replicas"] >= 2
    assert {"db", "redis", "lb", "migrate"} <= set(services)
    assert "8000:8080" in services["lb"]["ports"]
    assert (root / "deploy" / "nginx.conf").is_file()
    environment = api["environment"]
    settings = Settings(
        **{"DATABASE_URL": environment["DATABASE_URL"]},
        **{
            name.removeprefix("WHERETORUN_").lower(): value
            for name, value in environment.items()
            if name.startswith("WHERETORUN_")
        },
    )
    assert settings.redis_url.startswith("redis://redis:")
    assert settings.rate_limit_per_minute > 0
    assert set(environment) - {"DATABASE_URL", "FORWARDED_ALLOW_IPS"} <= {
        f"WHERETORUN_{name.upper()}" for name in Settings.model_fields
    }


def test_stores_that_cannot_be_reached_raise_unavailable() -> None:
    dead_database = create_db_engine(
        "postgresql+psycopg://postgres@127.0.0.1:1/test", connect_args={"connect_timeout": 2}
    )
    dead_redis = redis.Redis(port=1, socket_connect_timeout=1)
    key = RequestKey("anonymous", "POST", "/v1/scenarios", "k")
    try:
        stores = [
            SqlIdempotencyStore(sessionmaker(dead_database), ttl_seconds=60),
            RedisIdempotencyStore(dead_redis, "wtr-dead:", ttl_seconds=60),
        ]
        for store in stores:
            with pytest.raises(Unavailable, match="idempotency records"):
                store.claim(key, "sha")
            with pytest.raises(Unavailable):
                store.release(key, "sha")
        for counters in (SqlCounters(sessionmaker(dead_database)), RedisCounters(dead_redis, "wtr-dead:")):
            with pytest.raises(Unavailable, match="rate-limit counters"):
                counters.hit("ip:1@1", time.time() + 60)
    finally:
        dead_database.dispose()
        dead_redis.close()
