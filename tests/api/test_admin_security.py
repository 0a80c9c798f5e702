"""API keys over HTTP: 401 without a valid key (with a Bearer challenge), 403 with too narrow a
scope, revocation, the audit log, and reads that can be closed by a setting."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import TEST_ACTOR, AdminApp, admin_app, assert_problem
from wheretorun.security import ApiKey, Scope, authenticate, hash_token, revoke_api_key

IMPORT = {"format": "canonical", "content": "kind,key,usd_per_unit,usd_per_kwh,source\n", "dry_run": True}


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/admin/imports"),
        ("GET", "/v1/admin/imports"),
        ("GET", "/v1/admin/imports/1"),
        ("GET", "/v1/admin/overrides"),
        ("POST", "/v1/admin/overrides"),
        ("POST", "/v1/admin/overrides/1/end"),
        ("GET", "/v1/admin/audit"),
    ],
)
def test_admin_routes_need_a_key(admin: AdminApp, method: str, path: str) -> None:
    response = admin.client.request(method, path, json=IMPORT if method == "POST" else None)
    assert_problem(response, 401)
    assert response.headers["www-authenticate"] == 'Bearer realm="wheretorun"'


@pytest.mark.parametrize(
    "authorization",
    ["Bearer wtr_not-a-real-key", "Bearer ", "Basic dXNlcjpwYXNz", "wtr_without_scheme"],
)
def test_an_unknown_or_malformed_key_is_401(admin: AdminApp, authorization: str) -> None:
    response = admin.client.post("/v1/admin/imports", json=IMPORT, headers={"Authorization": authorization})
    assert_problem(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_write_needs_the_write_scope(admin: AdminApp) -> None:
    response = admin.client.post("/v1/admin/imports", json=IMPORT, headers=admin.auth("read"))
    body = assert_problem(response, 403)
    assert "'write'" in body["detail"]
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    for scope in ("write", "admin"):
        response = admin.client.post("/v1/admin/imports", json=IMPORT, headers=admin.auth(scope))
        assert response.status_code == 422, response.text  # past auth: the empty file is malformed


def test_the_audit_log_is_for_admin_keys_only(admin: AdminApp) -> None:
    for scope in ("read", "write"):
        assert_problem(admin.client.get("/v1/admin/audit", headers=admin.auth(scope)), 403)
    entries = admin.client.get("/v1/admin/audit", headers=admin.auth("admin")).raise_for_status().json()
    created = [e for e in entries["items"] if e["action"] == "key.create"]
    assert {e["detail"]["scope"] for e in created} == {"read", "write", "admin"}


def test_a_revoked_key_stops_working(admin: AdminApp, session_factory: sessionmaker[Session]) -> None:
    key_id, _ = admin.keys["write"]
    with session_factory.begin() as session:
        revoke_api_key(session, key_id, TEST_ACTOR, dt.datetime.now(dt.UTC))
    response = admin.client.post("/v1/admin/imports", json=IMPORT, headers=admin.auth("write"))
    body = assert_problem(response, 401)
    assert "revoked" in body["detail"]
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_keys_are_stored_only_as_hashes(admin: AdminApp, session: Session) -> None:
    _, token = admin.keys["admin"]
    stored = session.scalars(select(ApiKey)).all()
    assert all(token not in (key.token_sha256, key.prefix, key.name) for key in stored)
    assert hash_token(token) in {key.token_sha256 for key in stored}
    assert len(token) > 40
    assert authenticate(session, token).scope is Scope.ADMIN


def test_reads_are_open_unless_a_setting_closes_them(
    seeded_engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    with admin_app(seeded_engine, session_factory) as open_app:
        assert open_app.client.get("/v1/cloud-offers", params={"limit": 1}).status_code == 200
    with admin_app(seeded_engine, session_factory, require_key_for_reads=True) as closed:
        assert_problem(closed.client.get("/v1/cloud-offers", params={"limit": 1}), 401)
        assert closed.client.get("/v1/cloud-offers", headers=closed.auth("read")).status_code == 200
        assert closed.client.get("/healthz").status_code == 200


def test_the_openapi_document_declares_the_bearer_scheme(admin: AdminApp) -> None:
    spec = admin.client.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["ApiKey"] == {
        "type": "http",
        "description": "An API key from `wheretorun keys create`, sent as `Authorization: Bearer <key>`.",
        "scheme": "bearer",
    }
    start = spec["paths"]["/v1/admin/imports"]["post"]
    assert start["operationId"] == "start_import"
    assert set(start["requestBody"]["content"]) == {"application/json", "multipart/form-data"}
    assert {"200", "201", "202", "401", "403", "409", "413", "422", "502"} <= set(start["responses"])


def test_the_key_is_checked_before_an_upload_is_read(
    seeded_engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    big = {"format": "litellm", "content": "x" * 4096}
    with admin_app(seeded_engine, session_factory, max_upload_bytes=1024) as small_limit:
        assert_problem(small_limit.client.post("/v1/admin/imports", json=big), 401)
        assert_problem(
            small_limit.client.post("/v1/admin/imports", json=big, headers=small_limit.auth("write")), 413
        )
