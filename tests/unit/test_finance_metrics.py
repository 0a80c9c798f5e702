"""NPV, IRR and payback against numpy-financial (an independent implementation) and closed forms."""

from __future__ import annotations

import math

import numpy as np
import numpy_financial as npf
import pytest

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance import (
    CapexItem,
    FinanceAssumptions,
    OpexLine,
    Plan,
    ResidualValue,
    Scenario,
    Traffic,
    annual_rate,
    buy_versus_rent,
    discount_factors,
    evaluate,
    irr,
    monthly_rate,
    npv,
    payback_month,
)


def test_monthly_rate_compounds_to_the_annual_rate() -> None:
    assert monthly_rate(0.12) == pytest.approx(1.12 ** (1 / 12) - 1)
    assert (1 + monthly_rate(0.12)) ** 12 == pytest.approx(1.12)
    assert annual_rate(monthly_rate(0.07)) == pytest.approx(0.07)
    assert monthly_rate(0.0) == 0.0


def test_discount_factors_start_undiscounted() -> None:
    factors = discount_factors(0.1, 13)
    assert factors[0] == 1.0
    assert factors[12] == pytest.approx(1 / 1.1)


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.12, 0.35])
def test_npv_matches_numpy_financial(rate: float) -> None:
    flows = np.random.default_rng(7).uniform(-5e4, 1e5, 48)
    assert npv(flows, rate) == pytest.approx(npf.npv(monthly_rate(rate), flows), rel=1e-12)


def test_npv_of_a_level_stream_is_an_annuity_due() -> None:
    payment, months, rate = 2500.0, 60, 0.09
    i = monthly_rate(rate)
    v = 1 / (1 + i)
    annuity_due = payment * (1 - v**months) / (1 - v)
    assert npv([payment] * months, rate) == pytest.approx(annuity_due, rel=1e-12)


def test_evaluated_npv_matches_numpy_financial() -> None:
    plan = Plan(
        "owned",
        capex=(CapexItem("server", 90_000.0, month=2, depreciation_years=3, residual_fraction=0.1),),
        opex=(OpexLine("staff", 3_000.0, annual_escalation=0.04),),
    )
    scenario = Scenario(
        plans=(plan,),
        traffic=Traffic(),
        assumptions=FinanceAssumptions(horizon_months=30, discount_rate_annual=0.11),
    )
    result = evaluate(scenario).plans[0]
    expected = npf.npv(monthly_rate(0.11), list(result.monthly_total_usd))
    assert result.npv_usd == pytest.approx(expected, rel=1e-12)


def test_irr_recovers_the_rate_of_an_annuity() -> None:
    # pay C now, receive s a month for n months (the first at once): C = s x annuity-due at i
    i, s, n = 0.01, 1000.0, 36
    v = 1 / (1 + i)
    price = s * (1 - v**n) / (1 - v)
    flows = [s - price] + [s] * (n - 1)
    assert irr(flows) == pytest.approx(i, abs=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_irr_matches_numpy_financial(seed: int) -> None:
    rng = np.random.default_rng(seed)
    outlay = rng.uniform(50_000, 500_000)
    savings = rng.uniform(2_000, 40_000, int(rng.integers(12, 61)))
    flows = np.concatenate([[-outlay], savings])
    expected = npf.irr(flows)
    if math.isnan(expected):
        assert irr(flows) is None
    else:
        assert irr(flows) == pytest.approx(expected, abs=1e-9)


def test_irr_is_none_without_a_sign_change() -> None:
    assert irr([100.0, 200.0, 300.0]) is None
    assert irr([-100.0, -1.0]) is None


def test_irr_can_be_negative() -> None:
    flows = [-1000.0, 300.0, 300.0, 300.0]  # never paid back
    assert irr(flows) == pytest.approx(npf.irr(flows), abs=1e-10)
    rate = irr(flows)
    assert rate is not None
    assert rate < 0


def test_payback_is_the_first_month_with_recovered_cumulative() -> None:
    # -1000 + 300 m >= 0 from m = ceil(1000 / 300) = 4
    assert payback_month([-1000.0 + 300.0] + [300.0] * 9) == 4
    assert payback_month([50.0, 50.0]) == 1
    assert payback_month([-1000.0, 100.0]) is None


def test_payback_waits_until_the_cumulative_stays_recovered() -> None:
    flows = [-100.0, 150.0, -200.0, 100.0, 100.0]  # cumulative: -100, 50, -150, -50, 50
    assert payback_month(flows) == 5


def test_buy_versus_rent_closed_form() -> None:
    price, rent = 10_000.0, 500.0
    buy_plan = Plan("buy", capex=(CapexItem("gpu box", price, depreciation_years=5),))
    rent_plan = Plan("rent", opex=(OpexLine("rental", rent),))
    scenario = Scenario(
        plans=(buy_plan, rent_plan),
        traffic=Traffic(),
        assumptions=FinanceAssumptions(
            horizon_months=36, discount_rate_annual=0.1, residual_value=ResidualValue.NONE
        ),
    )
    result = buy_versus_rent(evaluate(scenario), buy="buy", rent="rent")
    savings = [rent - price] + [rent] * 35
    assert result.monthly_savings_usd == pytest.approx(savings)
    assert result.total_savings_usd == pytest.approx(36 * rent - price)
    assert result.payback_month == 20  # -10,000 + 500 m >= 0 from m = 20
    assert result.irr_monthly == pytest.approx(npf.irr(savings), abs=1e-10)
    assert result.irr_annual == pytest.approx((1 + npf.irr(savings)) ** 12 - 1, abs=1e-9)
    assert result.npv_savings_usd == pytest.approx(npf.npv(monthly_rate(0.1), savings))
    discounted = np.cumsum(np.array(savings) * discount_factors(0.1, 36))
    assert result.discounted_payback_month == int(np.argmax(discounted >= 0)) + 1
    assert result.discounted_payback_month is not None
    assert result.discounted_payback_month > 20


def test_buy_versus_rent_names_an_unknown_plan() -> None:
    scenario = Scenario(plans=(Plan("rent", opex=(OpexLine("r", 1.0),)),), traffic=Traffic())
    with pytest.raises(InvalidSpec) as error:
        buy_versus_rent(evaluate(scenario), buy="owned", rent="rent")
    assert error.value.field == "buy_versus_rent[0]"  # the request field, not `body.buy`
