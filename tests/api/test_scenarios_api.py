"""`/v1/scenarios`: saved versions with optimistic concurrency, evaluation, analyses, exports."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from decimal import Decimal
from typing import Any

import openpyxl
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import admin_app, assert_problem
from wheretorun.api.inprocess import InProcessClient

HOSTED = {"kind": "custom", "name": "hosted", "usage": [{"name": "tokens", "usd_per_unit": 0.6}]}
OWNED = {
    "kind": "custom",
    "name": "owned",
    "capacity": {
        "tokens_per_month_per_unit": 2e10,
        "capex_usd_per_unit": 300_000,
        "burst_usd_per_million_tokens": 0.6,
        "lead_time_months": 3,
        "initial_units": 1,
        "depreciation_years": 4,
        "residual_fraction": 0.2,
        "unit_opex": [{"name": "power", "usd_per_unit_month": 900, "category": "power"}],
    },
    "opex": [{"name": "staff", "usd_per_month": 4500, "category": "staff"}],
}
BODY: dict[str, Any] = {
    "name": "70B serving",
    "tags": ["llm", "finance"],
    "traffic": {"tokens_per_month": 5e9, "growth_per_month": 0.05},
    "assumptions": {"horizon_months": 36, "discount_rate_annual": 0.08},
    "plans": [HOSTED, OWNED],
}


def create(client: InProcessClient, **changes: Any) -> dict[str, Any]:
    response = client.post("/v1/scenarios", json={**BODY, **changes})
    assert response.status_code == 201, response.text
    assert response.headers["etag"] == '"v1"'
    result: dict[str, Any] = response.json()
    return result


def test_create_read_list_and_filter(client: InProcessClient) -> None:
    created = create(client)
    other = create(client, name="batch jobs", tags=["batch"])
    fetched = client.get(f"/v1/scenarios/{created['id']}")
    assert fetched.json()["body"]["plans"][1]["name"] == "owned"
    assert fetched.headers["etag"] == '"v1"'
    assert fetched.json()["catalog_version_id"] >= 1
    assert fetched.json()["body"]["as_of"], "the moment its prices come from is recorded"
    by_tag = client.get("/v1/scenarios", params={"tag": "batch"}).json()
    assert [s["id"] for s in by_tag["items"]] == [other["id"]]
    by_name = client.get("/v1/scenarios", params={"q": "70b"}).json()
    assert created["id"] in [s["id"] for s in by_name["items"]]
    assert other["id"] not in [s["id"] for s in by_name["items"]]


def test_updates_make_versions_and_stale_updates_are_refused(client: InProcessClient) -> None:
    scenario_id = create(client)["id"]
    changed = {
        **BODY,
        "name": "70B serving, 5 years",
        "assumptions": {"horizon_months": 60},
        "note": "longer",
    }
    assert client.put(f"/v1/scenarios/{scenario_id}", json=changed).status_code == 428
    updated = client.put(f"/v1/scenarios/{scenario_id}", json=changed, headers={"If-Match": '"v1"'})
    assert updated.status_code == 200
    assert updated.headers["etag"] == '"v2"'
    stale = client.put(f"/v1/scenarios/{scenario_id}", json=BODY, headers={"If-Match": '"v1"'})
    assert stale.status_code == 412
    assert stale.headers["content-type"].startswith("application/problem+json")
    versions = client.get(f"/v1/scenarios/{scenario_id}/versions").json()
    assert [v["version"] for v in versions] == [1, 2]
    first = client.get(f"/v1/scenarios/{scenario_id}/versions/1").json()
    assert first["body"]["assumptions"]["horizon_months"] == 36
    old = client.post(f"/v1/scenarios/{scenario_id}/evaluate", json={"version": 1}).json()
    new = client.post(f"/v1/scenarios/{scenario_id}/evaluate").json()
    assert len(old["plans"][0]["monthly"]) == 36
    assert len(new["plans"][0]["monthly"]) == 60


def test_delete_needs_the_current_version(client: InProcessClient) -> None:
    scenario_id = create(client)["id"]
    assert client.delete(f"/v1/scenarios/{scenario_id}").status_code == 428
    assert client.delete(f"/v1/scenarios/{scenario_id}", headers={"If-Match": '"v9"'}).status_code == 412
    assert client.delete(f"/v1/scenarios/{scenario_id}", headers={"If-Match": '"v1"'}).status_code == 204
    assert client.get(f"/v1/scenarios/{scenario_id}").status_code == 404


def test_evaluation_contract(client: InProcessClient) -> None:
    result = client.post("/v1/scenarios/evaluate", json=BODY).json()
    assert result["assumptions"]["horizon_months"] == 36
    assert result["assumptions"]["discount_rate_annual"] == 0.08
    for plan in result["plans"]:
        months = plan["monthly"]
        assert [m["month"] for m in months] == list(range(1, 37))
        assert sum(Decimal(m["total_usd"]) for m in months) == pytest.approx(
            Decimal(plan["total_usd"]), abs=Decimal("0.5")
        )
    hosted = result["plans"][0]
    # costs paid later are worth less today: a stream of positive costs has NPV below its total
    assert Decimal(hosted["npv_usd"]) < Decimal(hosted["total_usd"])
    # hosted = $0.60 per million tokens on 5e9 tokens growing 5% a month
    expected = sum(0.6 * 5e3 * 1.05**m for m in range(36))
    assert float(hosted["total_usd"]) == pytest.approx(expected, rel=1e-6)
    owned = result["plans"][1]
    assert Decimal(owned["monthly"][0]["capex_usd"]) == Decimal("300000.00")


def test_monte_carlo_is_reproducible_and_zero_variance_is_deterministic(client: InProcessClient) -> None:
    spread = {
        "samples": 3000,
        "seed": 7,
        "distributions": [{"input": "traffic", "kind": "uniform", "low": 0.5, "high": 1.5}],
    }
    first = client.post("/v1/scenarios/evaluate", json={**BODY, "monte_carlo": spread}).json()["monte_carlo"]
    again = client.post("/v1/scenarios/evaluate", json={**BODY, "monte_carlo": spread}).json()["monte_carlo"]
    assert first == again
    assert sum(p["probability_cheapest"] for p in first["plans"]) == pytest.approx(1.0)
    for plan in first["plans"]:
        assert Decimal(plan["p10_usd"]) <= Decimal(plan["p50_usd"]) <= Decimal(plan["p90_usd"])
    flat = {
        "samples": 500,
        "seed": 1,
        "distributions": [{"input": "traffic", "kind": "uniform", "low": 1, "high": 1}],
    }
    result = client.post("/v1/scenarios/evaluate", json={**BODY, "monte_carlo": flat}).json()
    for plan, outcome in zip(result["plans"], result["monte_carlo"]["plans"], strict=True):
        assert outcome["p50_usd"] == plan["total_usd"]


def test_break_even_buy_versus_rent_and_sensitivity(client: InProcessClient) -> None:
    analyses = {
        "break_even": {"plan_a": "hosted", "plan_b": "owned", "variable": "volume"},
        "buy_versus_rent": ["owned", "hosted"],
        "sensitivity": {},
    }
    result = client.post("/v1/scenarios/evaluate", json={**BODY, **analyses}).json()
    crossing = result["break_even"]
    assert crossing["curve"], "curve points for charting"
    # hosted costs grow with volume, the owned server is mostly fixed: they cross
    assert not crossing["never"]
    point = crossing["crossings"][0]
    assert (point["cheaper_below"], point["cheaper_above"]) == ("hosted", "owned")
    assert result["buy_versus_rent"]["buy"] == "owned"
    bars = result["sensitivity"]["plans"][0]["bars"]
    swings = [Decimal(bar["swing_usd"]) for bar in bars]
    assert swings == sorted(swings, reverse=True)


def test_cash_flow_exports(client: InProcessClient) -> None:
    scenario_id = create(client)["id"]
    as_csv = client.post(f"/v1/scenarios/{scenario_id}/evaluate", params={"format": "csv"})
    assert as_csv.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(rows) == 2 * 36
    xlsx_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    as_xlsx = client.post(f"/v1/scenarios/{scenario_id}/evaluate", headers={"Accept": xlsx_type})
    assert as_xlsx.headers["content-type"] == xlsx_type
    workbook = openpyxl.load_workbook(io.BytesIO(as_xlsx.content))
    assert "assumptions" in workbook.sheetnames


@pytest.mark.parametrize("chart", ["cost_stack", "break_even", "tornado", "monte_carlo"])
def test_charts_are_svg_with_a_title(client: InProcessClient, chart: str) -> None:
    analyses = {
        "break_even": {"plan_a": "hosted", "plan_b": "owned"},
        "sensitivity": {},
        "monte_carlo": {
            "samples": 500,
            "distributions": [{"input": "traffic", "kind": "uniform", "low": 0.8, "high": 1.2}],
        },
    }
    response = client.post(f"/v1/scenarios/charts/{chart}", json={**BODY, **analyses})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(response.content)
    assert root.tag.endswith("svg")
    png = client.post(f"/v1/scenarios/charts/{chart}", params={"format": "png"}, json={**BODY, **analyses})
    assert png.content.startswith(b"\x89PNG")


def test_compare_shows_deltas_per_line(client: InProcessClient) -> None:
    first = create(client)["id"]
    cheaper = {
        **BODY,
        "name": "cheaper tokens",
        "plans": [{**HOSTED, "usage": [{"name": "tokens", "usd_per_unit": 0.3}]}],
    }
    result = client.post(
        "/v1/scenarios/compare", json={"scenario_ids": [first], "scenarios": [cheaper]}
    ).json()
    total = next(row for row in result["summary"] if row["key"] == "total_usd")
    assert len(result["labels"]) == 3
    assert Decimal(total["delta_usd"][0]) == 0
    assert Decimal(total["delta_usd"][2]) < 0


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"assumptions": {"horizon_months": -1}}, "body.assumptions.horizon_months"),
        ({"assumptions": {"discount_rate_annual": 5}}, "body.assumptions.discount_rate_annual"),
        ({"plans": []}, "body.plans"),
        ({"plans": [HOSTED, HOSTED]}, "body.plans"),
        ({"break_even": {"plan_a": "hosted", "plan_b": "nope"}}, "body.break_even"),
        (
            {
                "monte_carlo": {
                    "distributions": [{"input": "traffic", "kind": "uniform", "low": 2, "high": 1}]
                }
            },
            "body.monte_carlo",
        ),
        (
            {
                "monte_carlo": {
                    "distributions": [{"input": "gremlins", "kind": "uniform", "low": 0, "high": 1}]
                }
            },
            "body.monte_carlo",
        ),
        ({"traffic": {"tokens_per_month": -5}}, "body.traffic.tokens_per_month"),
    ],
)
def test_bad_scenarios_are_422_naming_the_field(
    client: InProcessClient, changes: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/scenarios/evaluate", json={**BODY, **changes})
    assert response.status_code == 422, response.text
    fields = [error["field"] for error in response.json()["errors"]]
    assert any(f.startswith(field) for f in fields), fields


WORKLOAD_70B = {
    "kind": "inference",
    "model": "llama-3.1-70b",
    "requests_per_day": 2_000_000,
    "input_tokens": 1000,
    "output_tokens": 250,
    "ttft_ms": 2000,
    "tpot_ms": 60,
}


def test_plans_can_come_from_a_recommendation(client: InProcessClient) -> None:
    body = {
        "name": "from recommendations",
        "traffic": {"tokens_per_month": 2_000_000 * 1250 * 30.4, "growth_per_month": 0.02},
        "plans": [
            {"kind": "recommended", "name": "api", "option": "hosted_api", "workload": WORKLOAD_70B},
            {"kind": "recommended", "name": "buy", "option": "owned", "workload": WORKLOAD_70B},
        ],
        "buy_versus_rent": ["buy", "api"],
    }
    result = client.post("/v1/scenarios/evaluate", json=body)
    assert result.status_code == 200, result.text
    plans = {plan["name"]: plan for plan in result.json()["plans"]}
    assert Decimal(plans["api"]["capex_usd"]) == 0
    assert Decimal(plans["buy"]["capex_usd"]) > 0
    assert Decimal(plans["api"]["total_usd"]) > 0
    # the hosted plan follows the traffic: month 36 costs more than month 1 at 2% growth
    monthly = plans["api"]["monthly"]
    assert Decimal(monthly[-1]["opex_usd"]) > Decimal(monthly[0]["opex_usd"])
    assert result.json()["buy_versus_rent"]["buy"] == "buy"


def test_a_recommended_plan_that_cannot_exist_is_422(client: InProcessClient) -> None:
    impossible = {**WORKLOAD_70B, "model": "llama-3.1-405b"}
    body = {
        "name": "impossible",
        "traffic": {"tokens_per_month": 1e9},
        "plans": [
            {
                "kind": "recommended",
                "option": "local",
                "workload": impossible,
                "constraints": {"allowed_accelerators": ["RTX4090"]},
            }
        ],
    }
    response = client.post("/v1/scenarios/evaluate", json=body)
    assert response.status_code == 422, response.text
    fields = [error["field"] for error in response.json()["errors"]]
    assert fields == ["body.plans.0.option"]


# --- keys, audit, If-Match forms, filters (issue 10) ------------------------------------------------


def test_scenario_writes_need_a_write_key_and_are_audited(
    seeded_engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    with admin_app(seeded_engine, session_factory) as admin:
        client = admin.client
        assert_problem(client.post("/v1/scenarios", json=BODY), 401)
        assert_problem(client.post("/v1/scenarios", json=BODY, headers=admin.auth("read")), 403)
        created = client.post("/v1/scenarios", json=BODY, headers=admin.auth("write"))
        assert created.status_code == 201, created.text
        path = f"/v1/scenarios/{created.json()['id']}"
        # Reads follow the catalog's setting: open by default.
        assert client.get(path).status_code == 200
        assert client.post(f"{path}/evaluate").status_code == 200
        for method, options in (("PUT", {"json": BODY}), ("DELETE", {})):
            headers = {"If-Match": '"v1"'}
            assert_problem(client.request(method, path, headers=headers, **options), 401)
            with_read_key = {**headers, **admin.auth("read")}
            assert_problem(client.request(method, path, headers=with_read_key, **options), 403)
        assert client.get(path).json()["version"] == 1, "refused writes changed nothing"
        write = {"If-Match": '"v1"', **admin.auth("write")}
        assert client.put(path, json={**BODY, "name": "renamed"}, headers=write).status_code == 200
        assert client.delete(path, headers={**write, "If-Match": '"v2"'}).status_code == 204
        audit = client.get("/v1/admin/audit", params={"limit": 10}, headers=admin.auth("admin")).json()
    scenario_entries = [e for e in audit["items"] if e["action"].startswith("scenario.")]
    target = f"scenario:{created.json()['id']}"
    assert [(e["action"], e["target"]) for e in scenario_entries] == [
        ("scenario.delete", target),
        ("scenario.update", target),
        ("scenario.create", target),
    ]
    write_key_id = admin.keys["write"][0]
    assert {e["api_key_id"] for e in scenario_entries} == {write_key_id}
    assert scenario_entries[1]["detail"] == {"name": "renamed", "version": 2, "edited_version": 1}


def test_scenario_reads_need_a_key_when_catalog_reads_do(
    seeded_engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    with admin_app(seeded_engine, session_factory, require_key_for_reads=True) as admin:
        created = admin.client.post("/v1/scenarios", json=BODY, headers=admin.auth("write")).json()
        path = f"/v1/scenarios/{created['id']}"
        for method, url in (("GET", path), ("GET", "/v1/scenarios"), ("POST", f"{path}/evaluate")):
            assert_problem(admin.client.request(method, url), 401)
            assert admin.client.request(method, url, headers=admin.auth("read")).status_code == 200


def test_if_match_star_and_lists_follow_rfc_9110(client: InProcessClient) -> None:
    scenario_id = create(client)["id"]
    path = f"/v1/scenarios/{scenario_id}"
    star = client.put(path, json=BODY, headers={"If-Match": "*"})
    assert star.status_code == 200, star.text
    assert star.headers["etag"] == '"v2"'
    assert client.put(path, json=BODY, headers={"If-Match": '"v1", "v2"'}).headers["etag"] == '"v3"'
    assert_problem(client.put(path, json=BODY, headers={"If-Match": '"v1", "v2"'}), 412)
    bad = assert_problem(client.put(path, json=BODY, headers={"If-Match": "v3"}), 422)
    assert bad["errors"][0]["field"].startswith("header")
    assert_problem(client.delete("/v1/scenarios/999999", headers={"If-Match": "*"}), 404)
    assert client.delete(path, headers={"If-Match": "*"}).status_code == 204


def test_like_wildcards_in_name_filters_match_literally(client: InProcessClient) -> None:
    plain = create(client, name="plain name")["id"]
    underscored = create(client, name="with_underscore 100%")["id"]
    for q, expected in (("_", {underscored}), ("%", {underscored}), ("n_n", set())):
        found = {s["id"] for s in client.get("/v1/scenarios", params={"q": q, "limit": 500}).json()["items"]}
        assert found & {plain, underscored} == expected, q
    models = client.get("/v1/models", params={"q": "_", "limit": 500}).json()
    assert models["total"] < client.get("/v1/models", params={"limit": 1}).json()["total"]
    assert all("_" in m["id"] or "_" in m["name"] for m in models["items"])
