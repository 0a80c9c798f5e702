"""Request ids, the JSON access log and `/metrics` over HTTP."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.api.test_scenarios_api import BODY
from tests.import_support import AdminApp, admin_app, assert_problem, edit_rows, scaled, shipped_text
from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.observability import ACCESS_LOGGER, JsonFormatter
from wheretorun.settings import Settings

UUID_HEX = re.compile(r"^[0-9a-f]{32}$")


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


def test_a_request_id_is_made_and_echoed(client: InProcessClient) -> None:
    first = client.get("/v1/accelerators/H100")
    second = client.get("/v1/accelerators/H100")
    assert UUID_HEX.match(first.headers["x-request-id"])
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


def test_the_clients_request_id_is_kept(client: InProcessClient) -> None:
    response = client.get("/v1/accelerators/nonexistent-gpu", headers={"X-Request-ID": "trace-42.a:b"})
    assert response.headers["x-request-id"] == "trace-42.a:b"
    assert assert_problem(response, 404)["request_id"] == "trace-42.a:b"


@pytest.mark.parametrize("given", ["has spaces", "x" * 129, "semi;colon"])
def test_an_unusable_request_id_is_replaced(client: InProcessClient, given: str) -> None:
    response = client.get("/healthz", headers={"X-Request-ID": given})
    assert UUID_HEX.match(response.headers["x-request-id"])


def test_every_problem_names_its_request(client: InProcessClient) -> None:
    validation = client.get("/v1/accelerators", params={"limit": 0})
    domain = client.post("/v1/scenarios", json={**BODY, "plans": []})
    unknown_route = client.get("/v1/nothing-here")
    for response in (validation, domain, unknown_route):
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["request_id"] == response.headers["x-request-id"]


def test_one_json_log_line_per_request(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(ACCESS_LOGGER)
    logger.addHandler(handler)
    try:
        with admin_app(seeded_engine, session_factory) as admin:
            ok = admin.client.get("/v1/admin/imports/999999", headers=admin.auth("read"))
            listed = admin.client.get("/v1/accelerators", params={"vendor": "NVIDIA"})
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 2
    missing, page = lines
    assert missing == {
        "time": missing["time"],
        "level": "INFO",
        "logger": "wheretorun.access",
        "message": "request",
        "method": "GET",
        "path": "/v1/admin/imports/{import_id}",
        "target": "/v1/admin/imports/999999",
        "client": missing["client"],
        "status": 404,
        "duration_ms": missing["duration_ms"],
        "request_id": ok.headers["x-request-id"],
        "api_key_id": admin.keys["read"][0],
    }
    assert isinstance(missing["duration_ms"], float)
    assert missing["duration_ms"] > 0
    assert (page["path"], page["status"], page["api_key_id"]) == ("/v1/accelerators", 200, None)
    assert page["target"] == "/v1/accelerators?vendor=NVIDIA"
    assert isinstance(page["client"], str)
    assert page["client"]
    assert page["request_id"] == listed.headers["x-request-id"]


def test_an_unexpected_error_is_a_500_problem_with_the_request_id(seeded_engine: Engine) -> None:
    app = create_app(Settings(auto_seed=False), engine=seeded_engine)

    def boom() -> None:
        raise RuntimeError("unexpected")

    app.add_api_route("/boom", boom, operation_id="boom")

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://wheretorun.test") as http:
            return await http.get("/boom", headers={"X-Request-ID": "r-500"})

    response = anyio.run(call)
    assert_problem(response, 500)
    assert (response.headers["x-request-id"], response.json()["request_id"]) == ("r-500", "r-500")
    metrics = app.state.metrics.exposition()[0].decode()
    assert 'wheretorun_http_requests_total{method="GET",route="/boom",status="500"} 1.0' in metrics


def _sample(metrics: str, name: str, **labels: str) -> float:
    """The value of the sample `name` with exactly `labels` (0 when there is none)."""
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def test_metrics_count_requests_by_route_template(client: InProcessClient) -> None:
    client.get("/v1/accelerators/H100")
    client.get("/v1/accelerators/A100-80GB")
    client.get("/v1/accelerators/not-a-gpu")
    client.get("/v1/no-such-route")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    route = {"method": "GET", "route": "/v1/accelerators/{accelerator_id}"}
    assert _sample(text, "wheretorun_http_requests_total", **route, status="200") == 2
    assert _sample(text, "wheretorun_http_requests_total", **route, status="404") == 1
    assert (
        _sample(text, "wheretorun_http_requests_total", method="GET", route="<unmatched>", status="404") == 1
    )
    latency = "wheretorun_http_request_duration_seconds_count"
    assert _sample(text, latency, **route, status="200") == 2
    assert (
        _sample(text, "wheretorun_http_request_duration_seconds_bucket", **route, status="200", le="+Inf")
        == 2
    )
    assert "/v1/accelerators/H100" not in text, "paths are templates: no per-id series"


def test_metrics_count_recommendation_candidates(client: InProcessClient) -> None:
    body = {
        "workload": {
            "kind": "inference",
            "model": "llama-3.1-8b",
            "requests_per_day": 20000,
            "input_tokens": 1000,
            "output_tokens": 250,
        }
    }
    result = client.post("/v1/recommendations", json=body).json()
    assert result["candidates_evaluated"] > 0
    text = client.get("/metrics").text
    assert _sample(text, "wheretorun_recommendation_candidates_evaluated_count") == 1
    assert (
        _sample(text, "wheretorun_recommendation_candidates_evaluated_sum") == result["candidates_evaluated"]
    )


def test_metrics_count_import_outcomes(admin: AdminApp) -> None:
    payload = {
        "format": "skypilot",
        "provider": "nebius",
        "content": edit_rows(shipped_text("nebius"), scaled("Price", "1.2")),
    }
    write = admin.auth("write")
    assert (
        admin.client.post("/v1/admin/imports", json={**payload, "dry_run": True}, headers=write).status_code
        == 200
    )
    assert admin.client.post("/v1/admin/imports", json=payload, headers=write).status_code == 201
    assert admin.client.post("/v1/admin/imports", json=payload, headers=write).status_code == 200
    text = admin.client.get("/metrics").text
    assert _sample(text, "wheretorun_price_imports_total", status="dry_run") == 1
    assert _sample(text, "wheretorun_price_imports_total", status="applied") == 1
    assert _sample(text, "wheretorun_price_imports_total", status="unchanged") == 1


def test_each_app_has_its_own_metrics(seeded_engine: Engine) -> None:
    one = create_app(Settings(auto_seed=False), engine=seeded_engine)
    two = create_app(Settings(auto_seed=False), engine=seeded_engine)
    with InProcessClient(one) as client:
        client.get("/healthz")
    assert (
        _sample(
            one.state.metrics.exposition()[0].decode(),
            "wheretorun_http_requests_total",
            method="GET",
            route="/healthz",
            status="200",
        )
        == 1
    )
    assert "/healthz" not in two.state.metrics.exposition()[0].decode()


def test_metrics_are_outside_the_api_contract(client: InProcessClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "/metrics" not in paths
    assert client.get("/v1/metrics").status_code == 404
