"""Scenario validation: every impossible input raises InvalidSpec naming the field by its path."""

from __future__ import annotations

import dataclasses
import math

import pytest

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance import (
    CapexItem,
    CostCategory,
    FinanceAssumptions,
    InstanceLine,
    OpexLine,
    OwnedCapacity,
    Plan,
    ResidualValue,
    Scenario,
    Traffic,
    UnitOpexLine,
    UsageLine,
    power_usd_per_month,
)

HOSTED = Plan("hosted", usage=(UsageLine("tokens", 2.0),))
OWNED = Plan(
    "owned",
    capex=(CapexItem("switches", 20_000.0),),
    opex=(OpexLine("staff", 5_000.0, CostCategory.STAFF),),
    capacity=OwnedCapacity(
        tokens_per_month_per_unit=1e10,
        capex_usd_per_unit=250_000.0,
        burst_usd_per_million_tokens=2.0,
        unit_opex=(UnitOpexLine("power", 900.0, CostCategory.POWER),),
    ),
)
CLOUD = Plan(
    "cloud",
    instances=(InstanceLine("h100", 3.0, 2e9, fallback_usd_per_instance_hour=6.0, spot_availability=0.7),),
)


def scenario(*plans: Plan, **assumptions: object) -> Scenario:
    return Scenario(
        plans=plans or (HOSTED, OWNED, CLOUD),
        traffic=Traffic(tokens_per_month=1e9, growth_per_month=0.05),
        assumptions=FinanceAssumptions(**assumptions),  # type: ignore[arg-type]
    )


def field_of(error: pytest.ExceptionInfo[InvalidSpec]) -> str:
    return error.value.field


def test_a_valid_scenario_builds() -> None:
    built = scenario()
    assert built.plan_names == ("hosted", "owned", "cloud")
    assert built.horizon_months == 36


@pytest.mark.parametrize(
    ("assumptions", "field"),
    [
        ({"horizon_months": 0}, "assumptions.horizon_months"),
        ({"horizon_months": -12}, "assumptions.horizon_months"),
        ({"horizon_months": 601}, "assumptions.horizon_months"),
        ({"horizon_months": 12.5}, "assumptions.horizon_months"),
        ({"discount_rate_annual": -0.01}, "assumptions.discount_rate_annual"),
        ({"discount_rate_annual": 1.5}, "assumptions.discount_rate_annual"),
        ({"discount_rate_annual": math.nan}, "assumptions.discount_rate_annual"),
        ({"residual_value": "resale"}, "assumptions.residual_value"),
    ],
)
def test_bad_assumptions_name_their_field(assumptions: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        scenario(**assumptions)
    assert field_of(error) == field


def _with_plan(index: int, plan: Plan) -> Scenario:
    plans = [HOSTED, OWNED, CLOUD]
    plans[index] = plan
    return Scenario(plans=tuple(plans), traffic=Traffic(1e9))


@pytest.mark.parametrize(
    ("index", "plan", "field"),
    [
        (1, dataclasses.replace(OWNED, capex=(CapexItem("switches", -1.0),)), "plans[1].capex[0].amount_usd"),
        (
            1,
            dataclasses.replace(OWNED, capex=(CapexItem("switches", 1.0, month=0),)),
            "plans[1].capex[0].month",
        ),
        (
            1,
            dataclasses.replace(
                OWNED, capex=(CapexItem("a", 1.0), CapexItem("b", 1.0, residual_fraction=1.2))
            ),
            "plans[1].capex[1].residual_fraction",
        ),
        (
            1,
            dataclasses.replace(OWNED, capex=(CapexItem("a", 1.0, depreciation_years=0),)),
            "plans[1].capex[0].depreciation_years",
        ),
        (0, Plan("hosted", usage=(UsageLine("tokens", math.inf),)), "plans[0].usage[0].usd_per_unit"),
        (
            0,
            Plan("hosted", usage=(UsageLine("tokens", 1.0, units_per_million_tokens=0),)),
            "plans[0].usage[0].units_per_million_tokens",
        ),
        (0, Plan(" ", usage=(UsageLine("tokens", 1.0),)), "plans[0].name"),
        (0, Plan("empty"), "plans[0]"),
        (0, Plan("twice", usage=(UsageLine("a", 1.0), UsageLine("a", 2.0))), "plans[0]"),
        (
            1,
            Plan("staff", opex=(OpexLine("staff", 1.0, start_month=5, end_month=4),)),
            "plans[1].opex[0].end_month",
        ),
        (
            1,
            Plan("staff", opex=(OpexLine("staff", 1.0, annual_escalation=-1.0),)),
            "plans[1].opex[0].annual_escalation",
        ),
        (
            2,
            Plan("cloud", instances=(InstanceLine("h100", 3.0, 2e9, utilisation=0.0),)),
            "plans[2].instances[0].utilisation",
        ),
        (
            2,
            Plan("cloud", instances=(InstanceLine("h100", 3.0, 0.0),)),
            "plans[2].instances[0].tokens_per_month_per_instance",
        ),
        (
            2,
            Plan("cloud", instances=(InstanceLine("h100", 3.0, 2e9, spot_availability=0.5),)),
            "plans[2].instances[0].fallback_usd_per_instance_hour",
        ),
        (
            1,
            Plan("owned", capacity=OwnedCapacity(1e9, 1.0, burst_usd_per_million_tokens=-2.0)),
            "plans[1].capacity.burst_usd_per_million_tokens",
        ),
        (
            1,
            Plan("owned", capacity=OwnedCapacity(1e9, 1.0, 2.0, lead_time_months=-1)),
            "plans[1].capacity.lead_time_months",
        ),
        (
            1,
            Plan("owned", capacity=OwnedCapacity(1e9, 1.0, 2.0, initial_units=3, max_units=2)),
            "plans[1].capacity.max_units",
        ),
        (
            1,
            Plan("owned", capacity=OwnedCapacity(1e9, 1.0, 2.0, unit_opex=(UnitOpexLine("power", -5.0),))),
            "plans[1].capacity.unit_opex[0].usd_per_unit_month",
        ),
        (
            1,
            Plan("owned", capacity=OwnedCapacity(1e9, 1.0, 2.0, burst_name="servers")),
            "plans[1]",
        ),
    ],
)
def test_bad_plans_name_their_field(index: int, plan: Plan, field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        _with_plan(index, plan)
    assert field_of(error) == field


def test_plan_names_must_be_unique() -> None:
    with pytest.raises(InvalidSpec) as error:
        Scenario(plans=(HOSTED, HOSTED), traffic=Traffic(1e9))
    assert field_of(error) == "plans[1].name"


def test_a_scenario_needs_a_plan() -> None:
    with pytest.raises(InvalidSpec) as error:
        Scenario(plans=(), traffic=Traffic(1e9))
    assert field_of(error) == "plans"


@pytest.mark.parametrize(
    ("traffic", "field"),
    [
        (Traffic(tokens_per_month=-1.0), "traffic.tokens_per_month"),
        (Traffic(tokens_per_month=1e9, growth_per_month=-1.0), "traffic.growth_per_month"),
        (Traffic(tokens_per_month=1e9, growth_per_month=2.0), "traffic.growth_per_month"),
        (Traffic(monthly_tokens=(1e9,) * 35), "traffic.monthly_tokens"),
        (Traffic(tokens_per_month=5.0, monthly_tokens=(1e9,) * 36), "traffic.monthly_tokens"),
        (Traffic(monthly_tokens=(1e9,) * 10 + (-1.0,) + (1e9,) * 25), "traffic.monthly_tokens[10]"),
    ],
)
def test_bad_traffic_names_its_field(traffic: Traffic, field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        Scenario(plans=(HOSTED,), traffic=traffic)
    assert field_of(error) == field


def test_a_series_longer_than_the_horizon_is_accepted() -> None:
    built = Scenario(plans=(HOSTED,), traffic=Traffic(monthly_tokens=(1e9,) * 48))
    assert built.traffic.first_month_tokens == 1e9


def test_unknown_plan_lookup_names_the_field() -> None:
    with pytest.raises(InvalidSpec) as error:
        scenario().plan_index("nope", "break_even.plan_a")
    assert field_of(error) == "break_even.plan_a"
    assert "nope" in error.value.reason


def test_line_names_cover_the_capacity_lines() -> None:
    assert OWNED.line_names == ("switches", "staff", "servers", "power", "burst")


def test_power_bill() -> None:
    # 10 kW at PUE 1.5 for 730 hours at $0.10/kWh
    assert power_usd_per_month(10_000, pue=1.5, usd_per_kwh=0.10) == pytest.approx(1095.0)


def test_enums_spelled_as_strings_become_members() -> None:
    """A request body gives plain strings; the scenario holds enum members from then on."""
    plan = Plan(
        "owned",
        opex=[OpexLine("power", 100.0, category="power")],  # type: ignore[arg-type]
        capacity=OwnedCapacity(1e9, 1.0, 2.0, unit_opex=[UnitOpexLine("colo", 5.0, "colocation")]),  # type: ignore[arg-type]
    )
    built = Scenario(
        plans=[plan],  # type: ignore[arg-type]
        traffic=Traffic(1e9),
        assumptions=FinanceAssumptions(residual_value="none"),  # type: ignore[arg-type]
    )
    assert built.assumptions.residual_value is ResidualValue.NONE
    assert built.plans[0].opex[0].category is CostCategory.POWER
    assert built.plans[0].capacity is not None
    assert built.plans[0].capacity.unit_opex[0].category is CostCategory.COLOCATION
    assert isinstance(built.plans, tuple)
