"""Issue 10 (part b): every input is bounded in the schema, so a request is answered or refused with
a 422 naming the field, never a 5xx; repeated names add no work; the worst accepted requests are
answered (their timings are in bench/bounded_work.py, not asserted here). Both databases."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import AdminApp, admin_app, assert_problem
from wheretorun.bounds import MAX_MODELS
from wheretorun.scenarios.schemas import MAX_EVALUATION_WORK, MAX_PLANS, MAX_SCENARIO_LINES

HOSTED = {"kind": "custom", "name": "hosted", "usage": [{"name": "tokens", "usd_per_unit": 0.6}]}
OWNED = {
    "kind": "custom",
    "name": "owned",
    "capacity": {
        "tokens_per_month_per_unit": 2e10,
        "capex_usd_per_unit": 300_000,
        "burst_usd_per_million_tokens": 0.6,
        "initial_units": 1,
    },
}
SCENARIO: dict[str, Any] = {
    "name": "bounds",
    "traffic": {"tokens_per_month": 5e9, "growth_per_month": 0.05},
    "plans": [HOSTED, OWNED],
}
BATCH = {
    "kind": "batch",
    "model": "llama-3.1-8b",
    "input_tokens_total": 1e9,
    "output_tokens_total": 1e8,
    "deadline_hours": 24,
}
CHAT = {
    "kind": "inference",
    "model": "llama-3.1-8b",
    "requests_per_day": 20_000,
    "input_tokens": 1000,
    "output_tokens": 250,
}
TRAINING = {"kind": "training", "model": "llama-3.1-8b", "method": "lora", "tokens": 1e9}
ESTIMATE = {"model": "llama-3.1-8b", "accelerator": "H100"}
MLA_MODEL = {
    "total_params_b": 16,
    "layers": 27,
    "hidden_size": 2048,
    "attention_heads": 16,
    "kv_heads": 16,
    "head_dim": 192,
    "vocab_size": 102_400,
    "max_context": 32_768,
    "attention": "mla",
}


@pytest.fixture
def api(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


def _post(api: AdminApp, path: str, body: Any) -> Any:
    return api.client.post(path, json=body, headers=api.auth("admin"))


def _refused(api: AdminApp, path: str, body: Any, field: str) -> dict[str, Any]:
    """A 422 problem whose errors name `field` (or a field inside it)."""
    problem = assert_problem(_post(api, path, body), 422)
    fields = [error["field"] for error in problem["errors"]]
    assert any(name == field or name.startswith((field + ".", field + "[")) for name in fields), fields
    return problem


def _recommendation(workload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"workload": workload, **extra}


# --- bounded work: repeats and list lengths ------------------------------------------------------


def test_a_model_repeated_a_thousand_times_is_refused(api: AdminApp) -> None:
    # Before: 1,000 repeats of one id (16 KB) planned the model 1,000 times (100 s).
    body = _recommendation({**BATCH, "model": None, "models": ["llama-3.1-8b"] * 1000})
    problem = _refused(api, "/v1/recommendations", body, "body.workload")
    assert [error["field"] for error in problem["errors"]] == ["body.workload.batch.models"]
    assert str(MAX_MODELS) in problem["detail"]


def test_repeated_models_are_planned_once(api: AdminApp) -> None:
    once = _post(api, "/v1/recommendations", _recommendation(BATCH))
    repeated = _post(
        api,
        "/v1/recommendations",
        _recommendation({**BATCH, "model": None, "models": ["llama-3.1-8b"] * MAX_MODELS}),
    )
    assert once.status_code == repeated.status_code == 200, repeated.text
    assert repeated.json()["candidates_evaluated"] == once.json()["candidates_evaluated"] > 0


def test_forty_thousand_accelerator_names_are_refused(api: AdminApp) -> None:
    # Before: 40,000 names were each resolved in the catalog (23 s).
    body = _recommendation(BATCH, constraints={"allowed_accelerators": ["H100"] * 40_000})
    _refused(api, "/v1/recommendations", body, "body.constraints.allowed_accelerators")


def test_repeated_accelerator_names_collapse(api: AdminApp) -> None:
    body = _recommendation(BATCH, constraints={"allowed_accelerators": ["H100", "A100-80GB"] * 50})
    response = _post(api, "/v1/recommendations", body)
    assert response.status_code == 200, response.text
    accelerators = {
        option["setup"]["accelerator_id"]
        for option in response.json()["options"]
        if option["setup"]["accelerator_id"] is not None
    }
    assert accelerators
    assert accelerators <= {"h100-sxm", "h100", "a100-80gb", "a100-sxm4-80gb"} or all(
        "h100" in name or "a100" in name for name in accelerators
    )


def test_thousands_of_capex_lines_are_refused(api: AdminApp) -> None:
    # Before: 20,000 capex lines in one plan took 32 s to evaluate.
    lines = [{"name": f"server {index}", "amount_usd": 1000} for index in range(101)]
    body = {**SCENARIO, "plans": [{"kind": "custom", "name": "owned", "capex": lines}, HOSTED]}
    problem = assert_problem(_post(api, "/v1/scenarios/evaluate", body), 422)
    assert any("capex" in error["field"] for error in problem["errors"]), problem


def _plan_of_lines(index: int, lines: int) -> dict[str, Any]:
    """A plan of `lines` cost lines, half capex and half opex, at the money bounds."""
    return {
        "kind": "custom",
        "name": f"plan {index}",
        "capex": [{"name": f"c{line}", "amount_usd": 1e12, "month": 1 + line} for line in range(lines // 2)],
        "opex": [{"name": f"o{line}", "usd_per_month": 1e11} for line in range(lines - lines // 2)],
    }


def test_the_largest_accepted_scenario_is_answered(api: AdminApp) -> None:
    """MAX_PLANS plans of MAX_SCENARIO_LINES lines in all over 240 months, with sensitivity."""
    per_plan = MAX_SCENARIO_LINES // MAX_PLANS
    body = {
        "traffic": {"tokens_per_month": 1e16},
        "assumptions": {"horizon_months": 240},
        "plans": [_plan_of_lines(index, per_plan) for index in range(MAX_PLANS)],
        "sensitivity": {},
    }
    response = _post(api, "/v1/scenarios/evaluate", body)
    assert response.status_code == 200, response.text
    totals = [plan["total_usd"] for plan in response.json()["plans"]]
    assert len(totals) == MAX_PLANS
    assert all(float(total) > 1e13 for total in totals)

    last = {**body["plans"][-1], "usage": [{"name": "tokens", "usd_per_unit": 0.6}]}
    one_line_more = {**body, "plans": [*body["plans"][:-1], last]}
    problem = _refused(api, "/v1/scenarios/evaluate", one_line_more, "body.plans")
    assert str(MAX_SCENARIO_LINES) in problem["detail"]
    one_plan_more = {**body, "plans": [*body["plans"], _plan_of_lines(MAX_PLANS + 1, 2)]}
    _refused(api, "/v1/scenarios/evaluate", one_plan_more, "body.plans")


def test_monte_carlo_work_is_capped(api: AdminApp) -> None:
    # SCENARIO has 3 cost lines (a usage line; the servers and their burst): 720 per draw.
    distributions = [{"input": "traffic", "kind": "lognormal", "low": 0.5, "high": 2.0}]
    at_the_cap = MAX_EVALUATION_WORK // (3 * 240)
    body = {**SCENARIO, "assumptions": {"horizon_months": 240}}
    too_much = {**body, "monte_carlo": {"samples": at_the_cap + 1, "distributions": distributions}}
    _refused(api, "/v1/scenarios/evaluate", too_much, "body.monte_carlo.samples")
    response = _post(
        api,
        "/v1/scenarios/evaluate",
        {**body, "monte_carlo": {"samples": at_the_cap, "distributions": distributions}},
    )
    assert response.status_code == 200, response.text
    assert response.json()["monte_carlo"]["samples"] == at_the_cap


def test_a_horizon_break_even_is_capped_by_its_months(api: AdminApp) -> None:
    body = {
        **SCENARIO,
        "assumptions": {"horizon_months": 240},
        "plans": [_plan_of_lines(0, 100), _plan_of_lines(1, 100)],
    }
    every_month = {
        **body,
        "break_even": {"plan_a": "plan 0", "plan_b": "plan 1", "variable": "horizon_months", "high": 240},
    }
    _refused(api, "/v1/scenarios/evaluate", every_month, "body.break_even.points")
    fewer = {
        **body,
        "break_even": {"plan_a": "plan 0", "plan_b": "plan 1", "variable": "horizon_months", "high": 100},
    }
    response = _post(api, "/v1/scenarios/evaluate", fewer)
    assert response.status_code == 200, response.text


# --- numbers: bounded in the schema, and money that cannot overflow -----------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/recommendations", _recommendation({**CHAT, "requests_per_day": 1e300}), "body.workload"),
        ("/v1/recommendations", _recommendation({**CHAT, "peak_to_average": 1e300}), "body.workload"),
        ("/v1/recommendations", _recommendation({**BATCH, "input_tokens_total": 1e300}), "body.workload"),
        ("/v1/recommendations", _recommendation({**BATCH, "deadline_hours": 5e-324}), "body.workload"),
        ("/v1/recommendations", _recommendation({**TRAINING, "tokens": 1e300}), "body.workload"),
        ("/v1/recommendations", _recommendation({**TRAINING, "runs_per_year": 1e300}), "body.workload"),
        (
            "/v1/recommendations",
            _recommendation({**CHAT, "growth_per_month": 0.25}, assumptions={"horizon_months": 240}),
            "body.workload.growth_per_month",
        ),
        (
            "/v1/scenarios/evaluate",
            {
                **SCENARIO,
                "traffic": {"tokens_per_month": 1e9, "growth_per_month": 0.25},
                "assumptions": {"horizon_months": 240},
            },
            "body.traffic.growth_per_month",
        ),
        (
            "/v1/scenarios/evaluate",
            {**SCENARIO, "traffic": {"tokens_per_month": 1e300}},
            "body.traffic.tokens_per_month",
        ),
        (
            "/v1/scenarios/evaluate",
            {**SCENARIO, "plans": [{**HOSTED, "usage": [{"name": "t", "usd_per_unit": 1e300}]}, OWNED]},
            "body.plans.0",
        ),
        (
            "/v1/scenarios/evaluate",
            {**SCENARIO, "plans": [{**HOSTED, "capex": [{"name": "c", "amount_usd": 1e300}]}, OWNED]},
            "body.plans.0",
        ),
        (
            "/v1/scenarios/evaluate",
            {
                **SCENARIO,
                "plans": [
                    HOSTED,
                    {**OWNED, "capacity": {**OWNED["capacity"], "tokens_per_month_per_unit": 1e-300}},
                ],
            },  # type: ignore[dict-item]
            "body.plans.1",
        ),
        (
            "/v1/scenarios/evaluate",
            {
                **SCENARIO,
                "monte_carlo": {
                    "samples": 100,
                    "distributions": [{"input": "traffic", "kind": "lognormal", "low": 0.5, "high": 1e300}],
                },
            },
            "body.monte_carlo.distributions.0.high",
        ),
        # Found by schemathesis' coverage phase (a 500: a cost per unit of a vanishing figure was inf):
        (
            "/v1/recommendations",
            _recommendation(BATCH, assumptions={"hours_per_month": 5e-324}),
            "body.assumptions.hours_per_month",
        ),
        (
            "/v1/recommendations",
            _recommendation(BATCH, assumptions={"depreciation_years": 5e-324}),
            "body.assumptions.depreciation_years",
        ),
        (
            "/v1/recommendations",
            _recommendation(BATCH, assumptions={"target_utilisation": 5e-324}),
            "body.assumptions.target_utilisation",
        ),
        (
            "/v1/recommendations",
            _recommendation(TRAINING, assumptions={"training_gpu_power_fraction": 5e-324}),
            "body.assumptions.training_gpu_power_fraction",
        ),
        (
            "/v1/scenarios/charts/cost_stack",
            {
                **SCENARIO,
                "plans": [
                    {
                        "kind": "recommended",
                        "option": "cloud",
                        "workload": CHAT,
                        "assumptions": {"hours_per_month": 5e-324},
                    }
                ],
            },
            "body.plans.0",
        ),
        (
            "/v1/recommendations",
            _recommendation({**TRAINING, "runs_per_year": 5e-324}),
            "body.workload.training.runs_per_year",
        ),
        (
            "/v1/recommendations",
            _recommendation({**TRAINING, "tokens": None, "dataset_tokens": 1e9, "epochs": 5e-324}),
            "body.workload.training.epochs",
        ),
        (
            "/v1/estimates/training",
            {**ESTIMATE, "tokens": 1e9, "internode_bandwidth_gb_s": 5e-324},
            "body.internode_bandwidth_gb_s",
        ),
        (
            "/v1/estimates/inference",
            {**ESTIMATE, "cpu_offload": {"host_memory_bandwidth_gb_s": 5e-324}},
            "body.cpu_offload.host_memory_bandwidth_gb_s",
        ),
    ],
)
def test_out_of_bounds_numbers_are_422_naming_the_field(
    api: AdminApp, path: str, body: dict[str, Any], field: str
) -> None:
    _refused(api, path, body, field)


def test_the_largest_accepted_traffic_is_priced(api: AdminApp) -> None:
    """Every traffic figure at its bound at once, growing as fast as allowed over 240 months."""
    workload = {
        **CHAT,
        "requests_per_day": 1e11,
        "input_tokens": 100_000,
        "output_tokens": 100_000,
        "peak_to_average": 1000,
        "growth_per_month": 0.059,  # 1.059^239 < 10^6
    }
    response = _post(
        api, "/v1/recommendations", _recommendation(workload, assumptions={"horizon_months": 240})
    )
    assert response.status_code == 200, response.text
    assert response.json()["options"], "the hosted APIs price any volume"
    total = response.json()["options"][0]["total_usd"]
    assert float(total) > 1e12


@pytest.mark.parametrize(
    "workload",
    [
        {**BATCH, "input_tokens_total": 1e15, "output_tokens_total": 1e15, "deadline_hours": 0.01},
        {**TRAINING, "tokens": 1e15, "runs_per_year": 8760, "deadline_hours": 0.01},
    ],
    ids=["batch", "training"],
)
def test_volumes_at_their_bounds_are_answered(api: AdminApp, workload: dict[str, Any]) -> None:
    response = _post(api, "/v1/recommendations", _recommendation(workload))
    assert response.status_code == 200, response.text
    assert response.json()["workload_kind"] == workload["kind"]


@pytest.mark.parametrize(
    "workload",
    [
        {**CHAT, "requests_per_day": 5e-324},
        {**BATCH, "input_tokens_total": 5e-324, "output_tokens_total": 5e-324},
    ],
    ids=["inference", "batch"],
)
def test_a_vanishing_volume_has_totals_and_no_per_unit_figure(
    api: AdminApp, workload: dict[str, Any]
) -> None:
    # Before: a 500 (a cost per million tokens of inf). The totals of a plan that serves next to
    # nothing are finite and still ranked; its cost per million tokens is not defined (null).
    response = _post(api, "/v1/recommendations", _recommendation(workload))
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options
    assert all(float(option["total_usd"]) >= 0 for option in options)
    assert any(option["usd_per_million_tokens"] is None for option in options)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        # Found by schemathesis' negative data (ST201): a boolean was taken as a number and a number
        # as a boolean (pydantic's lax mode); a numeric string is not a number either.
        (
            "/v1/recommendations",
            _recommendation(BATCH, assumptions={"host_vm_usd_per_accelerator_hour": False}),
            "body.assumptions.host_vm_usd_per_accelerator_hour",
        ),
        ("/v1/recommendations", _recommendation({**CHAT, "requests_per_day": "20000"}), "body.workload"),
        (
            "/v1/scenarios/evaluate",
            {**SCENARIO, "assumptions": {"discount_rate_annual": False}},
            "body.assumptions.discount_rate_annual",
        ),
        (
            "/v1/estimates/training",
            {**ESTIMATE, "tokens": 1e9, "activation_checkpointing": 0},
            "body.activation_checkpointing",
        ),
        ("/v1/estimates/training", {**ESTIMATE, "tokens": True}, "body.tokens"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_422_naming_the_field(
    api: AdminApp, path: str, body: dict[str, Any], field: str
) -> None:
    _refused(api, path, body, field)


def test_many_runs_a_year_are_answered_with_their_break_even(api: AdminApp) -> None:
    # Before: 200 runs a year (within 0.01-8,760) was a 422, because the volume break-even re-prices
    # the job at up to 64x the runs (12,800 a year) and the engine refused that volume.
    response = _post(api, "/v1/recommendations", _recommendation({**TRAINING, "runs_per_year": 200}))
    assert response.status_code == 200, response.text
    assert response.json()["options"]


def test_a_calendar_month_bounds_hours_per_month(api: AdminApp) -> None:
    for hours, status in ((671.9, 422), (672, 200), (744, 200), (744.1, 422)):
        body = _recommendation(BATCH, assumptions={"hours_per_month": hours})
        assert _post(api, "/v1/recommendations", body).status_code == status, hours


def test_scenario_money_at_its_bounds_is_exact_dollars(api: AdminApp) -> None:
    # Before: 0.25 a month over 240 months made Decimal.quantize fail (a 500) past ~10^26 USD.
    body = {
        "traffic": {"tokens_per_month": 1e16, "growth_per_month": 0.059},
        "assumptions": {"horizon_months": 240},
        "plans": [{**HOSTED, "usage": [{"name": "t", "usd_per_unit": 1e6, "units_per_million_tokens": 1e6}]}],
    }
    response = _post(api, "/v1/scenarios/evaluate", body)
    assert response.status_code == 200, response.text
    total = response.json()["plans"][0]["total_usd"]
    assert total.endswith(tuple(f".{cents:02d}" for cents in range(100)))
    assert float(total) > 1e26


def test_cpu_offload_at_the_slowest_host_memory_has_a_tpot(api: AdminApp) -> None:
    # Before: 5e-324 GB/s answered 200 with `tpot_ms: null`, which the schema declares a number.
    body = {**ESTIMATE, "accelerator": "RTX4090", "model": "llama-3.1-70b"}
    body["cpu_offload"] = {"host_memory_bandwidth_gb_s": 1.0}
    response = _post(api, "/v1/estimates/inference", body)
    assert response.status_code == 200, response.text
    assert isinstance(response.json()["performance"]["tpot_ms"], float)


@pytest.mark.parametrize("route", ["evaluate", "charts/cost_stack", "compare"])
def test_a_plan_of_zero_units_at_zero_capex_is_answered(api: AdminApp, route: str) -> None:
    free = {
        "kind": "custom",
        "name": "free",
        "capacity": {
            "tokens_per_month_per_unit": 1e9,
            "capex_usd_per_unit": 0,
            "burst_usd_per_million_tokens": 0,
        },
    }
    scenario = {
        "traffic": {"tokens_per_month": 0},
        "plans": [free, {**HOSTED, "usage": [{"name": "t", "usd_per_unit": 0}]}],
    }
    body = {"scenarios": [scenario]} if route == "compare" else scenario
    response = _post(api, f"/v1/scenarios/{route}", body)
    assert response.status_code == 200, response.text


def test_an_empty_model_name_is_422(api: AdminApp) -> None:
    # Before: a recommended batch plan with `models: [""]` answered 503.
    plan = {"kind": "recommended", "option": "cloud", "workload": {**BATCH, "model": None, "models": [""]}}
    body = {**SCENARIO, "plans": [HOSTED, plan]}
    problem = assert_problem(_post(api, "/v1/scenarios/evaluate", body), 422)
    assert any("models" in error["field"] for error in problem["errors"]), problem


# --- strings: NUL is refused on both databases --------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("GET", "/v1/models?family=llama%00", None, "query.family"),
        ("GET", "/v1/cloud-offers?provider=aws%00", None, "query.provider"),
        ("GET", "/v1/accelerators?q=H1%0000", None, "query.q"),
        ("GET", "/v1/models/llama%00", None, "path.model_id"),
        ("GET", "/v1/accelerators/H100%00", None, "path.accelerator_id"),
        ("POST", "/v1/scenarios", {**SCENARIO, "name": "a\x00b"}, "body.name"),
        ("POST", "/v1/recommendations", _recommendation({**BATCH, "model": "llama\x00"}), "body.workload"),
    ],
)
def test_a_nul_character_is_422_on_both_databases(
    api: AdminApp, method: str, path: str, body: Any, field: str
) -> None:
    # Before: PostgreSQL refused NUL in text, and the driver's error was a 500.
    response = api.client.request(method, path, json=body, headers=api.auth("admin"))
    problem = assert_problem(response, 422)
    assert any(error["field"].startswith(field) for error in problem["errors"]), problem


# --- bad data that used to be accepted ----------------------------------------------------------


def test_mla_needs_its_cached_elements(api: AdminApp) -> None:
    # Before: computed as standard attention (2 x heads x head_dim per layer).
    _refused(
        api, "/v1/estimates/inference", {**ESTIMATE, "model": MLA_MODEL}, "body.model.kv_elements_per_layer"
    )
    with_latent = {**ESTIMATE, "model": {**MLA_MODEL, "kv_elements_per_layer": 576}}
    response = _post(api, "/v1/estimates/inference", with_latent)
    assert response.status_code == 200, response.text


def test_more_gpu_layers_than_the_model_has_is_422(api: AdminApp) -> None:
    body = {**ESTIMATE, "cpu_offload": {"host_memory_bandwidth_gb_s": 100, "gpu_layers": 1000}}
    problem = _refused(api, "/v1/estimates/inference", body, "body.cpu_offload.gpu_layers")
    assert "32" in problem["detail"]


@pytest.mark.parametrize("field", ["concurrency", "accelerator_count", "input_tokens"])
def test_a_boolean_is_not_a_count(api: AdminApp, field: str) -> None:
    _refused(api, "/v1/estimates/inference", {**ESTIMATE, field: True}, f"body.{field}")


def test_the_discount_rate_bound_is_the_schemas(api: AdminApp) -> None:
    schema = api.client.get("/openapi.json").json()["components"]["schemas"]["FinanceAssumptionsIn"]
    rate = schema["properties"]["discount_rate_annual"]
    assert (rate["minimum"], rate["maximum"]) == (0.0, 1.0)
    negative = {**SCENARIO, "assumptions": {"discount_rate_annual": -0.99}}
    _refused(api, "/v1/scenarios/evaluate", negative, "body.assumptions.discount_rate_annual")
    for edge in (0.0, 1.0):
        response = _post(
            api, "/v1/scenarios/evaluate", {**SCENARIO, "assumptions": {"discount_rate_annual": edge}}
        )
        assert response.status_code == 200, response.text


def test_a_bad_buy_versus_rent_entry_names_its_position(api: AdminApp) -> None:
    # Before: the field was `body.buy`, which the request does not have.
    _refused(
        api,
        "/v1/scenarios/evaluate",
        {**SCENARIO, "buy_versus_rent": ["nope", "hosted"]},
        "body.buy_versus_rent[0]",
    )
    _refused(
        api,
        "/v1/scenarios/evaluate",
        {**SCENARIO, "buy_versus_rent": ["owned", "nope"]},
        "body.buy_versus_rent[1]",
    )


def test_a_date_time_is_iso_8601_not_a_number(api: AdminApp) -> None:
    problem = assert_problem(api.client.get("/v1/accelerators?as_of=0.5"), 422)
    assert problem["errors"][0]["field"] == "query.as_of"
    _refused(api, "/v1/scenarios/evaluate", {**SCENARIO, "as_of": 0}, "body.as_of")


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_a_plan_name_with_control_characters_and_any_script_is_charted(api: AdminApp, fmt: str) -> None:
    """A name is the client's text (a fuzzed name with U+009A once made a 500 here): it is
    charted, its control characters left out (every chart kind: tests/unit/test_reports_charts.py)."""
    plans = [{**HOSTED, "name": "hosted\x9a\x01"}, {**OWNED, "name": "owned 漢字 🚀"}]
    response = _post(api, f"/v1/scenarios/charts/cost_stack?format={fmt}", {**SCENARIO, "plans": plans})
    assert response.status_code == 200, response.text
    if fmt == "svg":
        assert "owned 漢字 🚀" in response.text
        assert "\x9a" not in response.text
        assert "\x01" not in response.text
