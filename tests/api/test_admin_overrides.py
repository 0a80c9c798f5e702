"""Price overrides over HTTP: negotiated prices as effective-dated rows, applied by the price reads
next to the list prices, ended without being deleted, and validated."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import AdminApp, admin_app, assert_problem
from wheretorun.api.deps import get_clock

T0 = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=1)


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        set_clock(made, T0)
        yield made


def set_clock(admin: AdminApp, moment: dt.datetime) -> None:
    admin.app.dependency_overrides[get_clock] = lambda: lambda: moment


def create(admin: AdminApp, **fields: Any) -> dict[str, Any]:
    body = {
        "applies_to": "cloud_offers",
        "provider": "nebius",
        "reason": "2026 enterprise agreement",
        **fields,
    }
    response = admin.client.post("/v1/admin/overrides", json=body, headers=admin.auth("write"))
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def offers(admin: AdminApp, provider: str = "nebius", **params: Any) -> dict[str, dict[str, Any]]:
    query = {"provider": provider, "limit": 500, "include_suspect": True, **params}
    items = admin.client.get("/v1/cloud-offers", params=query).raise_for_status().json()["items"]
    return {f"{o['instance_type']}@{o['region']}": o for o in items}


def test_a_discount_shows_next_to_the_list_price(admin: AdminApp) -> None:
    override = create(admin, multiplier="0.8")
    assert (override["created_by"], override["effective_from"]) == (
        f"key {admin.keys['write'][0]} (write-key)",
        T0.isoformat().replace("+00:00", "Z"),
    )
    for offer in offers(admin).values():
        assert offer["override"]["id"] == override["id"]
        listed = Decimal(offer["on_demand_usd_per_hour"])
        assert Decimal(offer["effective_on_demand_usd_per_hour"]) == (listed * Decimal("0.8")).quantize(
            Decimal("1e-6")
        )
    other = next(iter(offers(admin, "lambda").values()))
    assert other["override"] is None
    assert other["effective_on_demand_usd_per_hour"] == other["on_demand_usd_per_hour"]


def test_the_most_specific_override_wins(admin: AdminApp) -> None:
    create(admin, multiplier="0.9")
    create(admin, multiplier="0.7", accelerator="H200-SXM", region="eu-west1")
    fixed = create(admin, fixed_usd_per_hour="20", instance_type="gpu-h100-sxm_8gpu-128vcpu-1600gb")
    by_key = offers(admin)
    h100 = by_key["gpu-h100-sxm_8gpu-128vcpu-1600gb@eu-north1"]
    assert (h100["override"]["id"], Decimal(h100["effective_on_demand_usd_per_hour"])) == (
        fixed["id"],
        Decimal(20),
    )
    h200_west = by_key["gpu-h200-sxm_8gpu-128vcpu-1600gb@eu-west1"]
    assert Decimal(h200_west["effective_on_demand_usd_per_hour"]) == Decimal("28") * Decimal("0.7")
    h200_north = by_key["gpu-h200-sxm_8gpu-128vcpu-1600gb@eu-north1"]
    assert Decimal(h200_north["effective_on_demand_usd_per_hour"]) == Decimal("28") * Decimal("0.9")


def test_hosted_api_discounts_scale_the_token_prices(admin: AdminApp) -> None:
    create(admin, applies_to="api_prices", provider="openai", model_id="gpt-4o", multiplier="0.5")
    items = admin.client.get("/v1/api-prices", params={"model": "gpt-4o", "provider": "openai"}).json()[
        "items"
    ]
    gpt4o = next(item for item in items if item["model_id"] == "gpt-4o")
    assert (
        Decimal(gpt4o["effective_input_usd_per_million_tokens"])
        == Decimal(gpt4o["input_usd_per_million_tokens"]) / 2
    )
    assert (
        Decimal(gpt4o["effective_output_usd_per_million_tokens"])
        == Decimal(gpt4o["output_usd_per_million_tokens"]) / 2
    )
    mini = next(item for item in items if item["model_id"] == "gpt-4o-mini")
    assert mini["override"] is None


def test_ending_an_override_keeps_it_for_past_reads(admin: AdminApp) -> None:
    override = create(admin, multiplier="0.5")
    set_clock(admin, T0 + dt.timedelta(days=30))
    ended = admin.client.post(f"/v1/admin/overrides/{override['id']}/end", headers=admin.auth("write"))
    assert ended.status_code == 200, ended.text
    assert ended.json()["effective_to"].startswith((T0 + dt.timedelta(days=30)).date().isoformat())
    assert all(o["override"] is None for o in offers(admin).values())
    during = offers(admin, as_of=(T0 + dt.timedelta(days=1)).isoformat())
    assert all(o["override"]["id"] == override["id"] for o in during.values())
    again = admin.client.post(f"/v1/admin/overrides/{override['id']}/end", headers=admin.auth("write"))
    assert_problem(again, 409)
    listed = admin.client.get("/v1/admin/overrides", headers=admin.auth("read")).json()
    assert [item["id"] for item in listed["items"]] == [override["id"]]
    assert (
        admin.client.get("/v1/admin/overrides", params={"in_force": True}, headers=admin.auth("read")).json()[
            "total"
        ]
        == 0
    )
    audit = admin.client.get("/v1/admin/audit", headers=admin.auth("admin")).json()["items"]
    assert [e["action"] for e in audit[:2]] == ["override.end", "override.create"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"multiplier": "0.8", "fixed_usd_per_hour": "10", "instance_type": "x"}, "body.multiplier"),
        ({}, "body.multiplier"),
        ({"multiplier": "0"}, "body.multiplier"),
        ({"multiplier": "11"}, "body.multiplier"),
        ({"fixed_usd_per_hour": "10"}, "body.fixed_usd_per_hour"),
        ({"multiplier": "0.8", "provider": "no-such-cloud"}, "body.provider"),
        ({"multiplier": "0.8", "accelerator": "Quantum-9000"}, "body.accelerator"),
        ({"multiplier": "0.8", "model_id": "gpt-4o"}, "body.model_id"),
        (
            {"multiplier": "0.8", "applies_to": "api_prices", "provider": "openai", "region": "x"},
            "body.region",
        ),
        ({"multiplier": "0.8", "effective_from": "2020-01-01T00:00:00Z"}, "body.effective_from"),
        ({"multiplier": "0.8", "effective_to": "2020-01-01T00:00:00Z"}, "body.effective_to"),
        ({"multiplier": "0.8", "reason": ""}, "body.reason"),
        ({"multiplier": "0.8", "effective_from": "2030-01-01T00:00:00"}, "body.effective_from"),
    ],
)
def test_invalid_overrides_are_422(admin: AdminApp, fields: dict[str, Any], field: str) -> None:
    body = {"applies_to": "cloud_offers", "provider": "nebius", "reason": "quote", **fields}
    response = admin.client.post("/v1/admin/overrides", json=body, headers=admin.auth("write"))
    problem = assert_problem(response, 422)
    assert field in [error["field"] for error in problem["errors"]], problem


def test_overrides_need_a_write_key_to_create(admin: AdminApp) -> None:
    body = {"applies_to": "cloud_offers", "provider": "nebius", "reason": "quote", "multiplier": "0.9"}
    assert_problem(admin.client.post("/v1/admin/overrides", json=body), 401)
    assert_problem(admin.client.post("/v1/admin/overrides", json=body, headers=admin.auth("read")), 403)
