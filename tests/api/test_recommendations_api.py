"""`POST /v1/recommendations` over the full seeded catalog: the contract, first-principles
scenarios, constraints, bad input, and prices read as of a past moment."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import AdminApp, admin_app, litellm_text
from wheretorun.api.inprocess import InProcessClient
from wheretorun.services.recommendation_reads import RecommendationRead

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
OPTION_FIELDS = {
    "option",
    "total_usd",
    "usd_per_month",
    "usd_per_million_tokens",
    "capex_usd",
    "opex_usd_per_month",
    "breakdown",
    "rationale",
    "risks",
    "utilisation",
    "ttft_ms",
    "tpot_ms",
}


def recommend(client: InProcessClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/recommendations", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def inference(**fields: Any) -> dict[str, Any]:
    return {"kind": "inference", "input_tokens": 1000, "output_tokens": 250, **fields}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_workload_gets_ranked_costed_options(client: InProcessClient, example: Path) -> None:
    result = recommend(client, yaml.safe_load(example.read_text(encoding="utf-8")))
    options = result["options"]
    assert options, result["rejected"]
    assert OPTION_FIELDS <= set(options[0])
    totals = [Decimal(o["total_usd"]) for o in options]
    assert totals == sorted(totals), "ranked cheapest first"
    for option in options:
        assert Decimal(option["total_usd"]) > 0, "no option is ever free"
        lines = sum(Decimal(line["usd"]) for line in option["breakdown"])
        assert lines == pytest.approx(Decimal(option["total_usd"]), abs=Decimal("1"))
        assert option["rationale"]
    assert result["catalog_version"] >= 1
    assert all(entry["source"] for entry in result["assumptions"].values())
    for group in result["rejected"]:
        assert group["count"] > 0
        assert group["examples"], group["reason"]


def test_the_answer_is_the_declared_model_as_json(client: InProcessClient) -> None:
    """The handler writes its JSON itself; it must be what the declared `response_model` is:
    every field of `RecommendationRead`, by the same names, and nothing else."""
    body = yaml.safe_load((EXAMPLES[0]).read_text(encoding="utf-8"))
    response = client.post("/v1/recommendations", json=body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    read = RecommendationRead.model_validate(answer)
    assert answer["options"]
    assert set(answer) == set(RecommendationRead.model_fields)
    assert json.loads(read.model_dump_json(by_alias=True)) == answer


def test_a_training_plan_says_when_its_communication_has_no_figure_in_the_catalog(
    client: InProcessClient,
) -> None:
    """LoRA over the full catalog: plans on several accelerators the catalog has no interconnect
    figure for (RTX PRO 6000 instances, A10 servers) leave their data-parallel communication out
    of the time, and say so in their risks; plans on B200 (900 GB/s in the catalog) do not."""
    body = yaml.safe_load((EXAMPLES[0].parent / "lora-finetune-8b.yaml").read_text(encoding="utf-8"))
    result = recommend(client, {**body, "limit": 100})
    caveat = "the catalog has no interconnect figure for"
    plans = [*result["options"], *result["best_per_option"].values()]
    caveated = {plan["option"] for plan in plans if any(caveat in risk for risk in plan["risks"])}
    assert {"cloud", "owned"} <= caveated
    b200 = [plan for plan in plans if plan["setup"]["accelerator_id"] == "b200"]
    assert b200
    assert not any(caveat in risk for plan in b200 for risk in plan["risks"])


def test_the_top_option_is_never_dearer_than_the_best_of_any_kind(client: InProcessClient) -> None:
    body = yaml.safe_load((EXAMPLES[0].parent / "chat-assistant-70b.yaml").read_text(encoding="utf-8"))
    result = recommend(client, body)
    top = Decimal(result["options"][0]["total_usd"])
    for best in result["best_per_option"].values():
        assert top <= Decimal(best["total_usd"])


def test_tiny_volume_goes_to_a_hosted_api(client: InProcessClient) -> None:
    result = recommend(client, {"workload": inference(model="llama-3.1-8b", requests_per_day=100)})
    assert result["options"][0]["option"] == "hosted_api"


def test_steady_high_volume_over_three_years_favours_owning_or_reserving(client: InProcessClient) -> None:
    # One cloud and one accelerator, so its on-demand, reserved and owned plans all rank
    body = {
        "workload": inference(model="llama-3.1-70b", requests_per_second=40, ttft_ms=2000, tpot_ms=60),
        "assumptions": {"horizon_months": 36},
        "constraints": {
            "allowed_options": ["owned", "cloud"],
            "allowed_providers": ["aws"],
            "allowed_accelerators": ["H100"],
        },
        "limit": 100,
    }
    options = recommend(client, body)["options"]
    cheapest = {}
    for option in options:
        mode = option["setup"]["pricing_mode"]
        cheapest.setdefault(mode, Decimal(option["total_usd"]))
    assert {"on_demand", "reserved_3y", "purchase"} <= set(cheapest), cheapest
    assert cheapest["reserved_3y"] < cheapest["on_demand"]
    assert cheapest["purchase"] < cheapest["on_demand"]


def test_on_premises_only_yields_only_owned_or_local(client: InProcessClient) -> None:
    body = {
        "workload": inference(model="llama-3.1-8b", requests_per_day=50_000),
        "constraints": {"on_premises_only": True},
    }
    result = recommend(client, body)
    assert result["options"]
    assert {o["option"] for o in result["options"]} <= {"owned", "local"}
    assert "violates_data_residency" in {group["reason"] for group in result["rejected"]}


def test_a_405b_model_never_fits_a_24gb_card(client: InProcessClient) -> None:
    body = {
        "workload": inference(model="llama-3.1-405b", requests_per_day=100),
        "constraints": {"allowed_accelerators": ["RTX4090"], "allowed_options": ["local", "owned", "cloud"]},
    }
    result = recommend(client, body)
    assert result["options"] == []
    assert "does_not_fit_memory" in {group["reason"] for group in result["rejected"]}


def test_budget_and_provider_constraints_reject_with_their_reason(client: InProcessClient) -> None:
    body = {
        "workload": inference(model="llama-3.3-70b", requests_per_day=200_000),
        "constraints": {"max_usd_per_month": 50, "excluded_providers": ["deepinfra"]},
    }
    result = recommend(client, body)
    assert all(Decimal(o["usd_per_month"]) <= 50 for o in result["options"])
    assert "over_budget" in {group["reason"] for group in result["rejected"]}
    assert all(o["setup"]["provider"] != "deepinfra" for o in result["options"])


def test_the_same_input_gives_the_same_answer(client: InProcessClient) -> None:
    body = {"workload": inference(model="llama-3.1-8b", requests_per_day=20_000, ttft_ms=1500)}
    first, second = recommend(client, body), recommend(client, body)
    assert json.dumps(first["options"], sort_keys=True) == json.dumps(second["options"], sort_keys=True)


def test_assumption_defaults_cite_their_sources(client: InProcessClient) -> None:
    defaults = client.get("/v1/recommendations/assumptions").json()
    assert defaults["pue"]["value"] == 1.58
    assert "Uptime" in defaults["pue"]["source"]
    overridden = recommend(
        client,
        {"workload": inference(model="llama-3.1-8b", requests_per_day=1000), "assumptions": {"pue": 1.2}},
    )
    assert overridden["assumptions"]["pue"]["value"] == 1.2
    assert overridden["assumptions"]["pue"]["source"] != defaults["pue"]["source"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"workload": inference(model="no-such-model", requests_per_day=10)}, "body.workload.model"),
        ({"workload": inference(model="llama-3.1-8b", requests_per_day=-1)}, "body.workload"),
        ({"workload": inference(model="llama-3.1-8b", models=["x"], requests_per_day=1)}, "body.workload"),
        ({"workload": inference(model="llama-3.1-8b")}, "body.workload"),
        (
            {"workload": inference(model="llama-3.1-8b", requests_per_day=1), "assumptions": {"pue": 0.5}},
            "body.assumptions.pue",
        ),
        (
            {
                "workload": inference(model="llama-3.1-8b", requests_per_day=1),
                "assumptions": {"horizon_months": 0},
            },
            "body.assumptions.horizon_months",
        ),
        (
            {
                "workload": inference(model="llama-3.1-8b", requests_per_day=1),
                "constraints": {"allowed_accelerators": ["warp-drive"]},
            },
            "body.constraints.allowed_accelerators",
        ),
        (
            {
                "workload": inference(model="llama-3.1-8b", requests_per_day=1),
                "constraints": {"min_precision": "int3"},
            },
            "body.constraints.min_precision",
        ),
        ({"workload": {"kind": "training", "model": "llama-3.1-8b", "tokens": -5}}, "body.workload"),
        ({"workload": {"kind": "teleport", "model": "llama-3.1-8b"}}, "body.workload"),
    ],
)
def test_bad_input_is_422_naming_the_field(client: InProcessClient, body: dict[str, Any], field: str) -> None:
    response = client.post("/v1/recommendations", json=body)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    fields = [error["field"] for error in response.json()["errors"]]
    assert any(f.startswith(field) for f in fields), fields


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


def test_a_recommendation_as_of_a_past_moment_uses_the_prices_then(admin: AdminApp) -> None:
    """Import a price change, then price the same workload now and as of before the import."""
    body: dict[str, Any] = {
        "workload": inference(model="llama-3.1-8b", requests_per_day=100),
        "constraints": {"allowed_options": ["hosted_api"]},
    }
    before = recommend(admin.client, body)
    winner = before["options"][0]["setup"]["hosted_model_id"]
    moment = dt.datetime.now(dt.UTC).isoformat()

    prices = json.loads(litellm_text())
    for key in ("input_cost_per_token", "output_cost_per_token"):
        prices[winner][key] = prices[winner][key] * 100
    imported = admin.client.post(
        "/v1/admin/imports",
        json={"format": "litellm", "content": json.dumps(prices), "force": True},
        headers=admin.auth("write"),
    )
    assert imported.status_code == 201, imported.text

    after = recommend(admin.client, body)
    assert after["catalog_version"] == imported.json()["catalog_version"]
    assert after["options"][0]["setup"]["hosted_model_id"] != winner
    replayed = recommend(admin.client, {**body, "as_of": moment})
    assert replayed["catalog_version"] == before["catalog_version"]
    assert replayed["options"][0]["setup"]["hosted_model_id"] == winner
    assert replayed["options"][0]["total_usd"] == before["options"][0]["total_usd"]
    by_version = recommend(admin.client, {**body, "catalog_version": before["catalog_version"]})
    assert by_version["options"][0]["total_usd"] == before["options"][0]["total_usd"]
    both = admin.client.post("/v1/recommendations", json={**body, "as_of": moment, "catalog_version": 1})
    assert both.status_code == 422
