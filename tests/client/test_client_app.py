"""Both clients against the real app: every operation, ETags, files, API keys and typed errors."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.client.conftest import BASE_URL
from tests.import_support import AdminApp, edit_rows, scaled, shipped_text
from wheretorun.client import (
    AsyncWheretorunClient,
    AuthError,
    ConflictError,
    NotFoundError,
    ValidationError,
    WheretorunClient,
)
from wheretorun.services.estimate_schemas import InferenceEstimateCreate

SCENARIO: dict[str, Any] = {
    "name": "70B serving",
    "tags": ["client-test"],
    "traffic": {"tokens_per_month": 5e9, "growth_per_month": 0.05},
    "assumptions": {"horizon_months": 24},
    "plans": [
        {"kind": "custom", "name": "hosted", "usage": [{"name": "tokens", "usd_per_unit": 0.6}]},
        {
            "kind": "custom",
            "name": "owned",
            "capex": [{"name": "server", "amount_usd": 250_000, "depreciation_years": 4}],
            "opex": [{"name": "power", "usd_per_month": 1500, "category": "power"}],
        },
    ],
}
CANONICAL = "kind,key,usd_per_unit,usd_per_kwh,source\nhardware,H100-SXM,30000,,quote\n"
OVERRIDE = {"applies_to": "cloud_offers", "provider": "aws", "multiplier": "0.8", "reason": "EDP"}


@asynccontextmanager
async def async_client(api: AdminApp, scope: str | None = "admin") -> AsyncIterator[AsyncWheretorunClient]:
    key = api.keys[scope][1] if scope else None
    transport = httpx.ASGITransport(app=api.app)
    async with AsyncWheretorunClient(BASE_URL, api_key=key, retries=0, transport=transport) as client:
        yield client


# --- async -----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_catalog_reads_and_pagination(api: AdminApp) -> None:
    async with async_client(api, scope=None) as client:
        catalog = await client.get_catalog()
        assert catalog["counts"]["cloud_offers"] > 0

        page = await client.list_accelerators(limit=7)
        assert len(page["items"]) == 7
        every = [item async for item in client.paginate(client.list_accelerators, limit=7)]
        assert len(every) == page["total"] > 7
        assert len({item["id"] for item in every}) == len(every)
        assert (await client.get_accelerator("A100-80GB"))["id"] == "a100-sxm-80gb"

        model = (await client.list_models(open_weights=True, limit=1))["items"][0]
        assert (await client.get_model(model["id"]))["id"] == model["id"]

        cap = Decimal("5")
        offers = await client.list_cloud_offers(
            accelerator="H100", max_usd_per_hour=cap, sort="on_demand_usd_per_hour", limit=5
        )
        assert offers["items"]
        assert all(Decimal(o["on_demand_usd_per_hour"]) <= cap for o in offers["items"])
        offer = offers["items"][0]
        assert (await client.get_cloud_offer(offer["id"]))["instance_type"] == offer["instance_type"]

        moment = dt.datetime.now(dt.UTC)
        prices = await client.list_api_prices(model="llama-3.3-70b", as_of=moment, include_suspect=False)
        assert prices["as_of"] is not None
        assert (await client.get_api_price(prices["items"][0]["id"]))["id"] == prices["items"][0]["id"]

        assert (await client.list_energy_prices(limit=2))["items"]
        assert (await client.list_catalog_versions())["items"][0]["kind"] == "seed"


@pytest.mark.anyio
async def test_estimates_recommendations_and_assumptions(api: AdminApp) -> None:
    async with async_client(api, scope=None) as client:
        typed = InferenceEstimateCreate(model="llama-3.1-8b", accelerator="H100", concurrency=8)
        inference = await client.estimate_inference(typed)
        assert inference["memory"]["fits"] is True
        training = await client.estimate_training(
            {"model": "llama-3.1-8b", "accelerator": "H100", "method": "lora", "tokens": 1e9}
        )
        assert training["accelerator_hours"] > 0

        workload = {
            "kind": "inference",
            "models": ["llama-3.1-8b"],
            "requests_per_day": 300,
            "input_tokens": 800,
            "output_tokens": 200,
        }
        recommendation = await client.create_recommendation({"workload": workload, "limit": 3})
        assert 0 < len(recommendation["options"]) <= 3
        assert "horizon_months" in await client.list_recommendation_assumptions()


@pytest.mark.anyio
async def test_scenario_crud_follows_etags(api: AdminApp) -> None:
    async with async_client(api) as client:
        created = await client.create_scenario(SCENARIO)
        scenario_id = created["id"]
        assert created["version"] == 1
        assert (await client.get_scenario(scenario_id))["name"] == "70B serving"

        renamed = await client.update_scenario(scenario_id, {**SCENARIO, "name": "v2"}, if_match=1)
        assert renamed["version"] == 2
        with pytest.raises(ConflictError) as stale:
            await client.update_scenario(scenario_id, SCENARIO, if_match=1)
        assert stale.value.status == 412
        third = await client.update_scenario(scenario_id, SCENARIO, if_match='"v2"')
        assert third["version"] == 3

        assert [s["id"] for s in (await client.list_scenarios(tag="client-test"))["items"]] == [scenario_id]
        assert [v["version"] for v in await client.list_scenario_versions(scenario_id)] == [1, 2, 3]
        assert (await client.get_scenario_version(scenario_id, 2))["body"]["plans"]

        with pytest.raises(ConflictError):
            await client.delete_scenario(scenario_id, if_match=2)
        assert await client.delete_scenario(scenario_id, if_match=3) is None
        with pytest.raises(NotFoundError) as gone:
            await client.get_scenario(scenario_id)
        assert (gone.value.status, gone.value.title) == (404, "Not found")
        assert str(scenario_id) in gone.value.detail


@pytest.mark.anyio
async def test_evaluations_charts_comparisons_and_exports(api: AdminApp) -> None:
    async with async_client(api) as client:
        scenario_id = (await client.create_scenario(SCENARIO))["id"]
        unsaved = await client.evaluate_unsaved_scenario({**SCENARIO, "break_even": None})
        saved = await client.evaluate_scenario(scenario_id, {"version": 1})
        assert saved["version"] == 1
        assert saved["plans"] == unsaved["plans"]

        csv_table = await client.export_scenario(scenario_id, "csv")
        assert csv_table.splitlines()[0].startswith(b"plan,month,")
        assert (await client.export_unsaved_scenario(SCENARIO, "xlsx")).startswith(b"PK")  # a zip

        assert b"<svg" in await client.chart_scenario(scenario_id, "cost_stack")
        png = await client.chart_unsaved_scenario("cost_stack", SCENARIO, format="png", plan="owned")
        assert png.startswith(b"\x89PNG")

        cheaper = {**SCENARIO, "name": "cheaper"}
        comparison = await client.compare_scenarios(scenario_ids=[scenario_id], scenarios=[cheaper])
        assert len(comparison["labels"]) == 4  # two plans of each scenario


@pytest.mark.anyio
async def test_admin_operations_need_the_right_key(api: AdminApp) -> None:
    async with async_client(api, scope=None) as anonymous, async_client(api, scope="read") as reader:
        with pytest.raises(AuthError) as missing:
            await anonymous.list_imports()
        assert missing.value.status == 401
        with pytest.raises(AuthError) as narrow:
            await reader.list_audit_entries()
        assert narrow.value.status == 403

    async with async_client(api, scope="write") as writer:
        override = await writer.create_override(OVERRIDE)
        assert (await writer.end_override(override["id"]))["effective_to"] is not None
        with pytest.raises(ConflictError) as ended:
            await writer.end_override(override["id"])
        assert ended.value.status == 409
        assert (await writer.list_overrides(in_force=False))["total"] >= 1

        dry = await writer.start_import(format="canonical", content=CANONICAL, dry_run=True)
        assert (dry["status"], dry["id"]) == ("dry_run", None)
        nebius = edit_rows(shipped_text("nebius"), scaled("Price", "1.1"))
        applied = await writer.start_import(format="skypilot", provider="nebius", content=nebius.encode())
        assert (applied["status"], applied["filename"]) == ("applied", "upload")
        assert await writer.get_import(applied["id"]) == applied
        assert [run["id"] for run in (await writer.list_imports())["items"]] == [applied["id"]]

    async with async_client(api, scope="admin") as admin:
        audit = await admin.list_audit_entries(action="override.create")
        assert [entry["action"] for entry in audit["items"]] == ["override.create"]


@pytest.mark.anyio
async def test_invalid_input_is_a_validation_error_naming_the_field(api: AdminApp) -> None:
    async with async_client(api, scope=None) as client:
        with pytest.raises(ValidationError) as invalid:
            await client.list_models(limit=0)
    problem = invalid.value
    assert problem.status == 422
    assert [error["field"] for error in problem.errors] == ["query.limit"]
    assert problem.body["instance"] == "/v1/models"


# --- sync ------------------------------------------------------------------------------------------


def test_sync_client_reads_pages_and_probes(sync_client: WheretorunClient) -> None:
    total = sync_client.list_models(limit=1)["total"]
    assert len(list(sync_client.paginate(sync_client.list_models, limit=10))) == total
    assert sync_client.healthz() == {"status": "ok", "database": None}
    assert sync_client.readyz()["status"] == "ok"


def test_sync_client_scenarios_exports_and_errors(sync_client: WheretorunClient) -> None:
    created = sync_client.create_scenario(SCENARIO)
    updated = sync_client.update_scenario(created["id"], SCENARIO, if_match=created["version"])
    assert updated["version"] == 2
    with pytest.raises(ConflictError):
        sync_client.delete_scenario(created["id"], if_match=1)
    assert sync_client.export_scenario(created["id"], "xlsx").startswith(b"PK")
    assert sync_client.evaluate_unsaved_scenario(SCENARIO)["plans"]
    with pytest.raises(ValidationError) as invalid:
        sync_client.create_scenario({**SCENARIO, "plans": []})
    assert invalid.value.errors[0]["field"] == "body.plans"
    with pytest.raises(NotFoundError):
        sync_client.get_accelerator("no such accelerator")


def test_sync_client_uploads_and_audits(sync_client: WheretorunClient) -> None:
    dry = sync_client.start_import(
        format="canonical", content=CANONICAL.encode(), filename="q.csv", dry_run=True
    )
    assert (dry["status"], dry["filename"]) == ("dry_run", "q.csv")
    sync_client.create_override(OVERRIDE)
    assert sync_client.list_audit_entries(limit=1)["items"][0]["action"] == "override.create"
