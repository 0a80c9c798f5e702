"""Limits: the request body size, the rate limit per API key or client address, and the
pagination cap of every list endpoint. On SQLite and PostgreSQL (`backend`)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest
from fastapi import FastAPI, Request
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.api.test_scenarios_api import BODY
from tests.import_support import AdminApp, admin_app, assert_problem, shipped_text
from wheretorun.api.inprocess import InProcessClient
from wheretorun.api.middleware import IdempotencyMiddleware, IdempotentRoute
from wheretorun.idempotency import RequestKey, StoredResponse
from wheretorun.observability import Metrics
from wheretorun.ratelimit import WINDOW_SECONDS

SMALL = 4096


@pytest.fixture
def small(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(
        seeded_engine, session_factory, max_request_bytes=SMALL, max_upload_bytes=256 * 1024
    ) as made:
        yield made


@pytest.fixture
def limited(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    clear_of_the_window_edge()
    with admin_app(seeded_engine, session_factory, rate_limit_per_minute=3) as made:
        yield made


def clear_of_the_window_edge(margin: float = 5.0) -> None:
    """Wait for the next window when this one ends within `margin` seconds (a test must not straddle it)."""
    left = WINDOW_SECONDS - time.time() % WINDOW_SECONDS
    if left < margin:
        time.sleep(left + 0.05)


# --- body size ---------------------------------------------------------------------------------------


def test_a_body_above_the_limit_is_413(small: AdminApp) -> None:
    big = {**BODY, "name": "x" * SMALL}
    response = small.client.post("/v1/scenarios", json=big, headers=small.auth("write"))
    problem = assert_problem(response, 413)
    assert f"{SMALL:,} bytes" in problem["detail"]
    assert problem["request_id"] == response.headers["x-request-id"]
    assert small.client.post("/v1/scenarios", json=BODY, headers=small.auth("write")).status_code == 201


def test_a_streamed_body_without_a_length_is_counted(small: AdminApp) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"name": "'
        for _ in range(SMALL // 512 + 1):
            yield b"x" * 512
        yield b'"}'

    response = small.client.post(
        "/v1/scenarios", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert_problem(response, 413)


def test_a_body_at_the_limit_passes_the_size_check(small: AdminApp) -> None:
    body = b'{"name": "' + b"x" * (SMALL - 12) + b'"}'
    assert len(body) == SMALL
    headers = {"content-type": "application/json", **small.auth("write")}
    response = small.client.post("/v1/scenarios", content=body, headers=headers)
    assert_problem(response, 422)  # read and validated, not refused for its size


def test_price_imports_keep_their_own_larger_limit(small: AdminApp) -> None:
    content = shipped_text("nebius")
    assert len(content) > SMALL
    payload = {"format": "skypilot", "provider": "nebius", "content": content, "dry_run": True}
    response = small.client.post("/v1/admin/imports", json=payload, headers=small.auth("write"))
    assert response.status_code == 200, response.text
    too_big = {**payload, "content": "x" * (300 * 1024)}
    assert_problem(small.client.post("/v1/admin/imports", json=too_big, headers=small.auth("write")), 413)
    # With an Idempotency-Key the body is buffered to fingerprint it: still within the upload limit.
    keyed = {**small.auth("write"), "Idempotency-Key": "big-upload"}
    assert_problem(small.client.post("/v1/admin/imports", json=too_big, headers=keyed), 413)
    assert_problem(
        small.client.post("/v1/admin/imports", json=too_big, headers={"Idempotency-Key": "k"}), 413
    )


# --- rate limit --------------------------------------------------------------------------------------


def test_the_fourth_request_in_a_minute_is_429(limited: AdminApp) -> None:
    for _ in range(3):
        assert limited.client.get("/v1/accelerators/H100").status_code == 200
    refused = limited.client.get("/v1/accelerators/H100")
    problem = assert_problem(refused, 429)
    assert "3 requests per minute" in problem["detail"]
    assert 1 <= int(refused.headers["retry-after"]) <= WINDOW_SECONDS
    assert problem["request_id"] == refused.headers["x-request-id"]
    metrics = limited.client.get("/metrics").text
    assert "wheretorun_rate_limited_requests_total 1.0" in metrics
    refused_series = 'route="/v1/accelerators/{accelerator_id}",status="429"'
    assert refused_series in metrics, "a refused request is still counted under its route"


def test_probes_and_metrics_are_exempt(limited: AdminApp) -> None:
    for _ in range(5):
        for path in ("/healthz", "/readyz", "/metrics"):
            assert limited.client.get(path).status_code == 200, path


def test_each_api_key_has_its_own_budget(limited: AdminApp) -> None:
    for _ in range(3):
        limited.client.get("/v1/models")
    assert_problem(limited.client.get("/v1/models"), 429)
    for scope in ("read", "write"):
        for _ in range(3):
            assert limited.client.get("/v1/admin/imports", headers=limited.auth(scope)).status_code == 200
        assert_problem(limited.client.get("/v1/admin/imports", headers=limited.auth(scope)), 429)


def test_an_unknown_key_counts_against_the_address(limited: AdminApp) -> None:
    for index in range(3):
        limited.client.get("/v1/models", headers={"Authorization": f"Bearer wtr_made-up-{index}"})
    assert_problem(limited.client.get("/v1/models"), 429)


def test_each_client_address_has_its_own_budget(limited: AdminApp) -> None:
    for _ in range(4):
        limited.client.get("/v1/models")
    with InProcessClient(limited.app, client_address=("10.9.8.7", 4000)) as other:
        assert other.get("/v1/models").status_code == 200


def test_the_rate_limit_is_off_by_default(admin_default: AdminApp) -> None:
    for _ in range(20):
        assert admin_default.client.get("/v1/models", params={"limit": 1}).status_code == 200


@pytest.fixture
def admin_default(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


# --- pagination caps ---------------------------------------------------------------------------------


def list_paths(admin: AdminApp) -> list[str]:
    """Every GET operation of the API document that takes `limit`, without path parameters."""
    paths = admin.app.openapi()["paths"]
    return sorted(
        path
        for path, item in paths.items()
        if "get" in item
        and any(p["name"] == "limit" and p["in"] == "query" for p in item["get"].get("parameters", []))
        and "{" not in path
    )


def test_every_list_endpoint_caps_its_page_at_500(admin_default: AdminApp) -> None:
    paths = list_paths(admin_default)
    expected = {"/v1/accelerators", "/v1/models", "/v1/cloud-offers", "/v1/api-prices", "/v1/scenarios"}
    assert expected <= set(paths), paths
    assert {"/v1/admin/imports", "/v1/admin/overrides", "/v1/admin/audit"} <= set(paths), paths
    headers = admin_default.auth("admin")
    for path in paths:
        over = admin_default.client.get(path, params={"limit": 501}, headers=headers)
        assert assert_problem(over, 422)["errors"][0]["field"] == "query.limit", path
        at_cap = admin_default.client.get(path, params={"limit": 500}, headers=headers)
        assert at_cap.status_code == 200, (path, at_cap.text)
        assert at_cap.json()["limit"] == 500, path
        assert len(at_cap.json()["items"]) <= 500, path


class MemoryStore:
    """A fake idempotency store: claims always succeed; what is completed is kept."""

    def __init__(self) -> None:
        self.completed: list[int] = []

    def claim(self, key: RequestKey, request_sha256: str) -> StoredResponse | None:
        return None

    def complete(self, key: RequestKey, request_sha256: str, response: StoredResponse) -> None:
        self.completed.append(response.status)

    def release(self, key: RequestKey, request_sha256: str) -> None:
        pass


def test_the_idempotency_buffer_is_bounded() -> None:
    app = FastAPI()

    @app.post("/things", status_code=201)
    async def create(request: Request) -> dict[str, int]:
        return {"bytes": len(await request.body())}

    store = MemoryStore()
    app.add_middleware(
        IdempotencyMiddleware,
        store=store,
        routes=[IdempotentRoute("POST", "/things")],
        sessions=lambda: pytest.fail("no API key is looked up"),
        metrics=Metrics(),
        max_body_bytes=10,
    )
    headers = {"Idempotency-Key": "k1", "content-type": "application/octet-stream"}
    with InProcessClient(app) as client:
        assert_problem(client.post("/things", content=b"x" * 11, headers=headers), 413)
        assert store.completed == []
        fits = client.post("/things", content=b"x" * 10, headers=headers)
        assert (fits.status_code, fits.json()) == (201, {"bytes": 10})
    assert store.completed == [201]
