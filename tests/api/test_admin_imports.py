"""`/v1/admin/imports` over HTTP: JSON and multipart uploads, URL imports through a fake server,
dry runs, held imports, size limits, malformed files, the record of each run, and as-of reads."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import httpx
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import (
    AdminApp,
    admin_app,
    assert_problem,
    edit_rows,
    fingerprint,
    scaled,
    shipped_text,
)

H100 = "gpu-h100-sxm_8gpu-128vcpu-1600gb"


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory, max_upload_bytes=256 * 1024) as made:
        yield made


def nebius(factor: str) -> str:
    return edit_rows(shipped_text("nebius"), scaled("Price", factor))


def h100_price(admin: AdminApp, **params: object) -> tuple[str, dict[str, object]]:
    query = {"provider": "nebius", "include_suspect": True, "limit": 100, **params}
    body = admin.client.get("/v1/cloud-offers", params=query).json()
    offer = next(o for o in body["items"] if o["instance_type"] == H100 and o["region"] == "eu-north1")
    return offer["on_demand_usd_per_hour"], body


def test_a_dry_run_returns_the_diff_and_writes_nothing(admin: AdminApp, session: Session) -> None:
    before = fingerprint(session)
    response = admin.client.post(
        "/v1/admin/imports",
        json={"format": "skypilot", "provider": "nebius", "content": nebius("1.25"), "dry_run": True},
        headers=admin.auth("write"),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["id"], body["status"], body["catalog_version"]) == (None, "dry_run", None)
    assert {k: body["diff"][k] for k in ("added", "removed", "changed", "unchanged")} == {
        "added": 0,
        "removed": 0,
        "changed": 21,
        "unchanged": 0,
    }
    change = body["diff"]["examples"]["changed"][0]["prices"][0]
    assert change["change_pct"] == 25.0
    assert Decimal(change["new"]) == Decimal(change["old"]) * Decimal("1.25")
    assert fingerprint(session) == before


def test_applying_creates_a_catalog_version_that_reads_report(admin: AdminApp) -> None:
    seed_price, seed_page = h100_price(admin)
    response = admin.client.post(
        "/v1/admin/imports",
        json={
            "format": "skypilot",
            "provider": "nebius",
            "content": nebius("1.1"),
            "filename": "nebius_vms.csv",
        },
        headers=admin.auth("write"),
    )
    assert response.status_code == 201, response.text
    body = response.json()
    version = body["catalog_version"]
    assert body["status"] == "applied"
    assert version > body["based_on_catalog_version"]  # (PostgreSQL ids may skip: sequences do not roll back)
    assert body["run_by"] == f"key {admin.keys['write'][0]} (write-key)"

    new_price, page = h100_price(admin)
    assert Decimal(new_price) == Decimal(seed_price) * Decimal("1.1")
    assert page["catalog_version_id"] == version
    assert page["as_of"] is None
    old_price, old_page = h100_price(admin, catalog_version=seed_page["catalog_version_id"])
    assert old_price == seed_price
    assert old_page["catalog_version_id"] == seed_page["catalog_version_id"]
    versions = admin.client.get("/v1/catalog/versions").json()["items"]
    assert [v["kind"] for v in versions][-1] == "import"
    assert admin.client.get("/v1/catalog").json()["version"]["id"] == version

    record = admin.client.get(f"/v1/admin/imports/{body['id']}", headers=admin.auth("read")).json()
    assert record == body
    listed = admin.client.get("/v1/admin/imports", headers=admin.auth("read")).json()
    assert listed["items"][0]["id"] == body["id"]


def test_a_multipart_upload_imports_the_file(admin: AdminApp) -> None:
    response = admin.client.post(
        "/v1/admin/imports",
        data={"format": "skypilot", "provider": "nebius", "dry_run": "true"},
        files={"file": ("nebius_vms.csv", nebius("0.9").encode(), "text/csv")},
        headers=admin.auth("write"),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["status"], body["filename"], body["diff"]["changed"]) == ("dry_run", "nebius_vms.csv", 21)


def test_an_upload_above_the_size_limit_is_413(admin: AdminApp, session: Session) -> None:
    before = fingerprint(session)
    big = shipped_text("aws")  # ~395 kB, the limit here is 256 kB
    response = admin.client.post(
        "/v1/admin/imports",
        json={"format": "skypilot", "provider": "aws", "content": big},
        headers=admin.auth("write"),
    )
    assert "262,144 bytes" in assert_problem(response, 413)["detail"]
    multipart = admin.client.post(
        "/v1/admin/imports",
        data={"format": "skypilot", "provider": "aws"},
        files={"file": ("aws_vms.csv", big.encode(), "text/csv")},
        headers=admin.auth("write"),
    )
    assert_problem(multipart, 413)
    assert fingerprint(session) == before


def test_a_malformed_file_is_a_422_naming_row_column_and_reason(admin: AdminApp, session: Session) -> None:
    before = fingerprint(session)
    text = shipped_text("nebius").replace("23.60", "23.6O", 1)  # a letter O
    response = admin.client.post(
        "/v1/admin/imports",
        json={"format": "skypilot", "provider": "nebius", "content": text},
        headers=admin.auth("write"),
    )
    body = assert_problem(response, 422)
    assert body["title"] == "Malformed file"
    assert body["errors"] == [
        {"field": "body.content", "row": 3, "column": "Price", "reason": "not a number: '23.6O'"}
    ]
    assert fingerprint(session) == before


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"format": "skypilot", "content": "x"}, "body.provider"),
        ({"format": "litellm", "content": "{}", "provider": "aws"}, "body.provider"),
        ({"format": "excel", "content": "x"}, "body.format"),
        ({"format": "litellm"}, "body"),
        ({"format": "litellm", "content": "{}", "url": "https://prices.example.com/x"}, "body"),
        ({"format": "litellm", "content": "{}", "overwrite": True}, "body.overwrite"),
    ],
)
def test_invalid_requests_are_422_naming_the_field(
    admin: AdminApp, payload: dict[str, object], field: str
) -> None:
    response = admin.client.post("/v1/admin/imports", json=payload, headers=admin.auth("write"))
    body = assert_problem(response, 422)
    assert field in [error["field"] for error in body["errors"]], body


def test_a_suspicious_import_is_held_with_its_reasons_until_forced(admin: AdminApp) -> None:
    payload = {"format": "skypilot", "provider": "nebius", "content": nebius("0.01")}
    held = admin.client.post("/v1/admin/imports", json=payload, headers=admin.auth("write"))
    assert held.status_code == 202, held.text
    body = held.json()
    assert (body["status"], body["catalog_version"]) == ("held", None)
    assert {reason["kind"] for reason in body["hold_reasons"]} == {"price_drop"}
    assert "-99.0%" in body["hold_reasons"][0]["detail"]
    seed_price, _ = h100_price(admin)
    assert Decimal(seed_price) == Decimal("23.6")  # nothing applied

    forced = admin.client.post(
        "/v1/admin/imports", json={**payload, "force": True}, headers=admin.auth("write")
    )
    assert forced.status_code == 201, forced.text
    assert Decimal(h100_price(admin)[0]) == Decimal("0.236")
    held_record = admin.client.get("/v1/admin/imports", params={"status": "held"}, headers=admin.auth("read"))
    assert [item["id"] for item in held_record.json()["items"]] == [body["id"]]


def test_a_url_import_uses_the_fake_server_and_skips_an_unchanged_file(admin: AdminApp) -> None:
    url = "https://prices.example.com/catalogs/v8/nebius/vms.csv"
    admin.server.routes[url] = httpx.Response(200, text=nebius("1.5"), headers={"etag": 'W/"n1"'})
    payload = {"format": "skypilot", "provider": "nebius", "url": url}
    first = admin.client.post("/v1/admin/imports", json=payload, headers=admin.auth("write"))
    assert first.status_code == 201, first.text
    assert (first.json()["source_url"], first.json()["etag"]) == (url, 'W/"n1"')

    admin.server.routes[url] = httpx.Response(304)
    second = admin.client.post("/v1/admin/imports", json=payload, headers=admin.auth("write"))
    assert second.status_code == 200, second.text
    assert second.json()["status"] == "not_modified"
    assert admin.server.requests[-1].headers["if-none-match"] == 'W/"n1"'


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("https://evil.example.net/vms.csv", "allow-list"),
        ("https://internal.example.com/vms.csv", "non-public address 10.1.2.3"),
    ],
)
def test_url_imports_are_limited_to_public_allowed_hosts(admin: AdminApp, url: str, reason: str) -> None:
    response = admin.client.post(
        "/v1/admin/imports", json={"format": "litellm", "url": url}, headers=admin.auth("write")
    )
    body = assert_problem(response, 422)
    assert body["errors"][0]["field"] == "body.url"
    assert reason in body["errors"][0]["reason"]
    assert admin.server.requests == []


def test_an_unreachable_source_is_a_502(admin: AdminApp) -> None:
    url = "https://prices.example.com/down.json"
    admin.server.routes[url] = httpx.Response(503)
    response = admin.client.post(
        "/v1/admin/imports", json={"format": "litellm", "url": url}, headers=admin.auth("write")
    )
    assert "HTTP 503" in assert_problem(response, 502)["detail"]
    assert len(admin.server.requests) == 4  # the first attempt and three retries


def test_every_recorded_import_is_in_the_audit_log(admin: AdminApp) -> None:
    payload = {"format": "skypilot", "provider": "nebius", "content": nebius("1.2")}
    applied = admin.client.post("/v1/admin/imports", json=payload, headers=admin.auth("write")).json()
    entries = admin.client.get(
        "/v1/admin/audit", params={"action": "import.applied"}, headers=admin.auth("admin")
    )
    entry = entries.json()["items"][0]
    assert entry["target"] == f"import:{applied['id']}"
    assert entry["api_key_id"] == admin.keys["write"][0]
    assert entry["detail"]["catalog_version"] == applied["catalog_version"]
    assert entry["detail"]["counts"] == {"added": 0, "changed": 21, "removed": 0, "unchanged": 0}


def test_price_reads_accept_as_of_or_catalog_version_not_both(admin: AdminApp) -> None:
    for path in ("/v1/cloud-offers", "/v1/api-prices", "/v1/accelerators", "/v1/energy-prices"):
        response = admin.client.get(path, params={"as_of": "2030-01-01T00:00:00Z", "catalog_version": 1})
        assert assert_problem(response, 422)["errors"][0]["field"] == "query.catalog_version"
        unknown = admin.client.get(path, params={"catalog_version": 999})
        assert "no catalog version 999" in assert_problem(unknown, 422)["detail"]
        page = admin.client.get(path, params={"catalog_version": 1}).raise_for_status().json()
        assert page["catalog_version_id"] == 1


def test_energy_prices_are_listed(admin: AdminApp) -> None:
    body = admin.client.get("/v1/energy-prices", params={"region": "ohio"}).raise_for_status().json()
    assert [(p["region"], p["usd_per_kwh"]) for p in body["items"]] in (
        [("US/Ohio", "0.1102")],
        [("US/Ohio", "0.110200")],
    )
