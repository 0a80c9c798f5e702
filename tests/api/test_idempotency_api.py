"""`Idempotency-Key` on the POST routes that create things: a retry replays the first response and
creates nothing; the same key with another body is refused; a key still in flight is a 409; only
successes are remembered; keys belong to one API key. On SQLite and PostgreSQL (`backend`)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from tests.api.test_scenarios_api import BODY
from tests.import_support import AdminApp, admin_app, assert_problem, edit_rows, scaled, shipped_text
from wheretorun.idempotency import IdempotencyRecord, RequestKey, SqlIdempotencyStore, fingerprint
from wheretorun.scenarios.models import ScenarioRecord


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


RECOMMENDATION = {
    "workload": {
        "kind": "inference",
        "model": "llama-3.1-8b",
        "requests_per_day": 20000,
        "input_tokens": 1000,
        "output_tokens": 250,
    },
}
OVERRIDE = {"applies_to": "cloud_offers", "provider": "nebius", "multiplier": "0.9", "reason": "agreement"}


def key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def scenario_count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(ScenarioRecord)) or 0


def test_a_retried_create_returns_the_first_scenario_and_creates_nothing(
    admin: AdminApp, session: Session
) -> None:
    headers = {**key(), **admin.auth("write")}
    before = scenario_count(session)
    first = admin.client.post("/v1/scenarios", json=BODY, headers=headers)
    assert first.status_code == 201, first.text
    assert "idempotent-replayed" not in first.headers
    again = admin.client.post("/v1/scenarios", json=BODY, headers=headers)
    assert again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"] == '"v1"'
    assert again.headers["x-request-id"] != first.headers["x-request-id"], "each request has its own id"
    assert scenario_count(session) == before + 1
    metrics = admin.client.get("/metrics").text
    assert "wheretorun_idempotent_replays_total 1.0" in metrics


def test_without_a_key_every_post_creates(admin: AdminApp, session: Session) -> None:
    before = scenario_count(session)
    ids = {
        admin.client.post("/v1/scenarios", json=BODY, headers=admin.auth("write")).json()["id"]
        for _ in range(2)
    }
    assert len(ids) == 2
    assert scenario_count(session) == before + 2


def test_the_same_key_with_another_body_is_refused(admin: AdminApp, session: Session) -> None:
    headers = {**key(), **admin.auth("write")}
    assert admin.client.post("/v1/scenarios", json=BODY, headers=headers).status_code == 201
    before = scenario_count(session)
    other = admin.client.post("/v1/scenarios", json={**BODY, "name": "something else"}, headers=headers)
    problem = assert_problem(other, 422)
    assert problem["errors"][0]["field"] == "header.idempotency-key"
    assert "Idempotency" in problem["title"]
    assert problem["request_id"] == other.headers["x-request-id"]
    assert scenario_count(session) == before


@pytest.mark.parametrize("value", ["", "has space", "x" * 256, "naïve"])
def test_malformed_keys_are_422(admin: AdminApp, value: str) -> None:
    headers = {"Idempotency-Key": value.encode(), **admin.auth("write")}
    response = admin.client.post("/v1/scenarios", json=BODY, headers=headers)
    assert assert_problem(response, 422)["errors"][0]["field"] == "header.idempotency-key"


def test_a_failed_request_is_not_remembered(admin: AdminApp) -> None:
    headers = {**key(), **admin.auth("write")}
    broken = {**BODY, "plans": []}
    assert_problem(admin.client.post("/v1/scenarios", json=broken, headers=headers), 422)
    # The key is free again: the corrected request runs, and its retry replays it.
    created = admin.client.post("/v1/scenarios", json=BODY, headers=headers)
    assert created.status_code == 201, created.text
    assert "idempotent-replayed" not in created.headers
    assert admin.client.post("/v1/scenarios", json=BODY, headers=headers).json() == created.json()


def test_a_key_still_in_flight_is_409(admin: AdminApp, session_factory: sessionmaker[Session]) -> None:
    """Another replica claimed the key and has not answered yet."""
    value = str(uuid.uuid4())
    store = SqlIdempotencyStore(session_factory, ttl_seconds=3600)
    body = json.dumps(BODY).encode()
    assert (
        store.claim(
            RequestKey(f"key:{admin.keys['write'][0]}", "POST", "/v1/scenarios", value),
            fingerprint(b"", body),
        )
        is None
    )
    headers = {"Idempotency-Key": value, "Content-Type": "application/json", **admin.auth("write")}
    response = admin.client.post("/v1/scenarios", content=body, headers=headers)
    assert_problem(response, 409)
    assert response.headers["retry-after"] == "1"


def test_an_expired_record_is_forgotten(admin: AdminApp, session_factory: sessionmaker[Session]) -> None:
    headers = {**key(), **admin.auth("write")}
    first = admin.client.post("/v1/scenarios", json=BODY, headers=headers).json()
    with session_factory.begin() as session:
        past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        session.execute(update(IdempotencyRecord).values(expires_at=past))
    again = admin.client.post("/v1/scenarios", json=BODY, headers=headers)
    assert again.status_code == 201
    assert "idempotent-replayed" not in again.headers
    assert again.json()["id"] != first["id"]


def test_records_expire_after_the_configured_time(admin: AdminApp, session: Session) -> None:
    value = str(uuid.uuid4())
    before = dt.datetime.now(dt.UTC)
    admin.client.post("/v1/recommendations", json=RECOMMENDATION, headers={"Idempotency-Key": value})
    record = session.scalars(
        select(IdempotencyRecord).where(IdempotencyRecord.idempotency_key == value)
    ).one()
    assert record.state == "complete"
    assert record.owner == "anonymous"
    ttl = record.expires_at - before
    assert dt.timedelta(hours=23, minutes=59) < ttl <= dt.timedelta(hours=24, seconds=5)


def test_keys_belong_to_one_api_key(admin: AdminApp) -> None:
    body = OVERRIDE
    headers = key()
    created = admin.client.post("/v1/admin/overrides", json=body, headers={**headers, **admin.auth("write")})
    assert created.status_code == 201, created.text
    replayed = admin.client.post("/v1/admin/overrides", json=body, headers={**headers, **admin.auth("write")})
    assert (replayed.json()["id"], replayed.headers["idempotent-replayed"]) == (created.json()["id"], "true")
    other_key = admin.client.post(
        "/v1/admin/overrides", json=body, headers={**headers, **admin.auth("admin")}
    )
    assert other_key.status_code == 201
    assert "idempotent-replayed" not in other_key.headers
    assert other_key.json()["id"] != created.json()["id"]


def test_a_replay_still_needs_no_less_than_the_first_request(admin: AdminApp) -> None:
    """Without a key the request is someone else's (`anonymous`): no replay of a key's response."""
    body = OVERRIDE
    headers = key()
    assert (
        admin.client.post(
            "/v1/admin/overrides", json=body, headers={**headers, **admin.auth("write")}
        ).status_code
        == 201
    )
    assert_problem(admin.client.post("/v1/admin/overrides", json=body, headers=headers), 401)


def test_imports_are_idempotent_but_dry_runs_are_not_remembered(admin: AdminApp) -> None:
    content = edit_rows(shipped_text("nebius"), scaled("Price", "1.1"))
    payload: dict[str, Any] = {"format": "skypilot", "provider": "nebius", "content": content}
    headers = {**key(), **admin.auth("write")}
    dry = admin.client.post("/v1/admin/imports", json={**payload, "dry_run": True}, headers=headers)
    assert dry.json()["status"] == "dry_run"
    # The dry run did not take the key, so the same key now applies the import ...
    applied = admin.client.post("/v1/admin/imports", json=payload, headers=headers)
    assert (applied.status_code, applied.json()["status"]) == (201, "applied"), applied.text
    # ... and a retry replays it instead of importing again (which would answer "unchanged").
    retried = admin.client.post("/v1/admin/imports", json=payload, headers=headers)
    assert (retried.status_code, retried.headers["idempotent-replayed"]) == (201, "true")
    assert retried.json() == applied.json()
    runs = admin.client.get("/v1/admin/imports", headers=admin.auth("read")).json()
    assert [run["id"] for run in runs["items"]].count(applied.json()["id"]) == 1
    assert runs["total"] == 1


def test_recommendations_replay_too(admin: AdminApp) -> None:
    body = RECOMMENDATION
    headers = key()
    first = admin.client.post("/v1/recommendations", json=body, headers=headers)
    assert first.status_code == 200, first.text
    again = admin.client.post("/v1/recommendations", json=body, headers=headers)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content


def test_other_routes_ignore_the_header(admin: AdminApp) -> None:
    created = admin.client.post("/v1/scenarios", json=BODY, headers=admin.auth("write")).json()
    headers = key()
    for _ in range(2):
        response = admin.client.post(f"/v1/scenarios/{created['id']}/evaluate", json={}, headers=headers)
        assert "idempotent-replayed" not in response.headers


def test_an_unreachable_store_is_503_for_keyed_requests_and_fails_open_for_the_limit(
    seeded_engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    dead = {"redis_url": "redis://127.0.0.1:1/0", "rate_limit_per_minute": 1}
    with admin_app(seeded_engine, session_factory, **dead) as admin:
        try:
            for _ in range(3):  # the limit cannot be counted: requests go through
                assert admin.client.get("/v1/models", params={"limit": 1}).status_code == 200
            keyed = admin.client.post("/v1/scenarios", json=BODY, headers={**key(), **admin.auth("write")})
            assert "cannot be reached" in assert_problem(keyed, 503)["detail"]
            assert (
                admin.client.post("/v1/scenarios", json=BODY, headers=admin.auth("write")).status_code == 201
            )
        finally:
            admin.app.state.redis.close()
