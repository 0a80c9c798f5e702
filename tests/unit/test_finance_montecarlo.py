"""Monte Carlo: reproducible with a seed, exact without variance, right on known distributions."""

from __future__ import annotations

import numpy as np
import pytest

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance import (
    CostCategory,
    Distribution,
    DistributionKind,
    FinanceAssumptions,
    InstanceLine,
    Metric,
    OpexLine,
    OwnedCapacity,
    Plan,
    Scenario,
    Traffic,
    UnitOpexLine,
    UsageLine,
    evaluate,
    monte_carlo,
)
from wheretorun.engine.finance import montecarlo as montecarlo_module

HOSTED = Plan("hosted", usage=(UsageLine("tokens", 1.0),))
CLOUD = Plan(
    "cloud",
    instances=(
        InstanceLine(
            "8xH100",
            20.0,
            tokens_per_month_per_instance=3e10,
            utilisation=0.6,
            minimum_instances=1,
            fallback_usd_per_instance_hour=45.0,
            spot_availability=0.8,
        ),
    ),
)
OWNED = Plan(
    "owned",
    capacity=OwnedCapacity(
        tokens_per_month_per_unit=3e10,
        capex_usd_per_unit=300_000.0,
        burst_usd_per_million_tokens=1.0,
        lead_time_months=3,
        utilisation=0.6,
        initial_units=1,
        depreciation_years=4,
        residual_fraction=0.1,
        unit_opex=(UnitOpexLine("power", 800.0, CostCategory.POWER),),
    ),
    opex=(OpexLine("staff", 8_000.0, CostCategory.STAFF, annual_escalation=0.03),),
)
SCENARIO = Scenario(
    plans=(HOSTED, CLOUD, OWNED),
    traffic=Traffic(tokens_per_month=1.5e10, growth_per_month=0.05),
    assumptions=FinanceAssumptions(horizon_months=36, discount_rate_annual=0.08),
)
UNCERTAIN = (
    Distribution("traffic", DistributionKind.LOGNORMAL, 0.6, 1.5),
    Distribution("growth_per_month", DistributionKind.TRIANGULAR, 0.0, 0.1, mode=0.05),
    Distribution("utilisation", DistributionKind.UNIFORM, 0.4, 0.8),
    Distribution("electricity", DistributionKind.TRIANGULAR, 0.8, 1.5, mode=1.0),
    Distribution("spot_availability", DistributionKind.UNIFORM, 0.5, 1.0),
    Distribution("price:tokens", DistributionKind.UNIFORM, 0.5, 1.1, plan="hosted"),
)


def test_same_seed_same_result() -> None:
    first = monte_carlo(SCENARIO, UNCERTAIN, samples=2000, seed=42)
    second = monte_carlo(SCENARIO, UNCERTAIN, samples=2000, seed=42)
    assert first == second
    assert np.array_equal(first.outcomes_usd, second.outcomes_usd)


def test_another_seed_another_result() -> None:
    first = monte_carlo(SCENARIO, UNCERTAIN, samples=2000, seed=42)
    other = monte_carlo(SCENARIO, UNCERTAIN, samples=2000, seed=43)
    assert not np.array_equal(first.outcomes_usd, other.outcomes_usd)


@pytest.mark.parametrize("metric", list(Metric))
def test_zero_variance_p50_equals_the_deterministic_figure_exactly(metric: Metric) -> None:
    fixed = (
        Distribution("traffic", DistributionKind.LOGNORMAL, 1.0, 1.0),
        Distribution("growth_per_month", DistributionKind.TRIANGULAR, 0.05, 0.05, mode=0.05),
        Distribution("utilisation", DistributionKind.UNIFORM, 0.6, 0.6),
        Distribution("spot_availability", DistributionKind.UNIFORM, 0.8, 0.8),
        Distribution("discount_rate_annual", DistributionKind.UNIFORM, 0.08, 0.08),
        Distribution("price", DistributionKind.TRIANGULAR, 1.0, 1.0, mode=1.0),
    )
    result = monte_carlo(SCENARIO, fixed, samples=501, seed=3, metric=metric)
    deterministic = evaluate(SCENARIO)
    for outcome, plan in zip(result.plans, deterministic.plans, strict=True):
        assert outcome.p50_usd == plan.metric(metric)
        assert outcome.p10_usd == outcome.p90_usd == outcome.p50_usd
        assert outcome.deterministic_usd == plan.metric(metric)


def test_no_distributions_is_the_deterministic_evaluation() -> None:
    result = monte_carlo(SCENARIO, (), samples=10, seed=0)
    assert [outcome.p50_usd for outcome in result.plans] == [
        plan.total_usd for plan in evaluate(SCENARIO).plans
    ]


def test_percentiles_are_ordered_and_probabilities_add_up() -> None:
    result = monte_carlo(SCENARIO, UNCERTAIN, samples=3000, seed=1)
    for outcome in result.plans:
        assert outcome.p10_usd < outcome.p50_usd < outcome.p90_usd
        assert 0.0 <= outcome.probability_cheapest <= 1.0
    assert sum(outcome.probability_cheapest for outcome in result.plans) == pytest.approx(1.0)
    assert result.outcomes_usd.shape == (3000, 3)
    assert not result.outcomes_usd.flags.writeable


def test_probability_cheapest_counts_the_cheapest_sample_by_sample() -> None:
    result = monte_carlo(SCENARIO, UNCERTAIN, samples=3000, seed=1)
    cheapest = np.argmin(result.outcomes_usd, axis=1)
    for index, outcome in enumerate(result.plans):
        assert outcome.probability_cheapest == pytest.approx(np.mean(cheapest == index))


def test_ties_share_the_sample() -> None:
    twins = Scenario(plans=(HOSTED, Plan("twin", usage=(UsageLine("tokens", 1.0),))), traffic=Traffic(1e9))
    result = monte_carlo(twins, (Distribution("traffic", DistributionKind.UNIFORM, 0.5, 2.0),), samples=100)
    assert [outcome.probability_cheapest for outcome in result.plans] == [0.5, 0.5]


def test_a_uniform_price_gives_the_uniform_quantiles() -> None:
    # hosted total = 1 USD/M x 1e9 tokens x 12 months x multiplier: quantiles of U(0.5, 1.5) x 12,000
    simple = Scenario(
        plans=(HOSTED,), traffic=Traffic(1e9), assumptions=FinanceAssumptions(horizon_months=12)
    )
    result = monte_carlo(
        simple, (Distribution("price:tokens", DistributionKind.UNIFORM, 0.5, 1.5),), samples=50_000, seed=9
    )
    outcome = result.plans[0]
    assert outcome.p10_usd == pytest.approx(12_000 * 0.6, rel=0.01)
    assert outcome.p50_usd == pytest.approx(12_000 * 1.0, rel=0.01)
    assert outcome.p90_usd == pytest.approx(12_000 * 1.4, rel=0.01)


def test_lognormal_low_and_high_are_its_p10_and_p90() -> None:
    simple = Scenario(plans=(HOSTED,), traffic=Traffic(1e9), assumptions=FinanceAssumptions(horizon_months=1))
    result = monte_carlo(
        simple, (Distribution("traffic", DistributionKind.LOGNORMAL, 0.5, 2.0),), samples=50_000, seed=5
    )
    outcome = result.plans[0]
    assert outcome.p10_usd == pytest.approx(500.0, rel=0.02)
    assert outcome.p50_usd == pytest.approx(1000.0, rel=0.02)
    assert outcome.p90_usd == pytest.approx(2000.0, rel=0.02)


def test_chunks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = monte_carlo(SCENARIO, UNCERTAIN, samples=100, seed=11)
    monkeypatch.setattr(montecarlo_module, "_CHUNK", 7)
    chunked = monte_carlo(SCENARIO, UNCERTAIN, samples=100, seed=11)
    assert np.array_equal(whole.outcomes_usd, chunked.outcomes_usd)
    assert np.all(np.isfinite(chunked.outcomes_usd))


@pytest.mark.parametrize(
    ("distribution", "field"),
    [
        (Distribution("traffic", DistributionKind.UNIFORM, 1.5, 0.5), "monte_carlo.distributions[0].low"),
        (
            Distribution("utilisation", DistributionKind.TRIANGULAR, 0.8, 0.4, mode=0.6),
            "monte_carlo.distributions[0].low",
        ),
        (
            Distribution("utilisation", DistributionKind.UNIFORM, 0.5, 1.2),
            "monte_carlo.distributions[0].high",
        ),
        (
            Distribution("utilisation", DistributionKind.TRIANGULAR, 0.4, 0.8),
            "monte_carlo.distributions[0].mode",
        ),
        (
            Distribution("utilisation", DistributionKind.TRIANGULAR, 0.4, 0.8, mode=0.9),
            "monte_carlo.distributions[0].mode",
        ),
        (
            Distribution("traffic", DistributionKind.UNIFORM, 0.5, 1.5, mode=1.0),
            "monte_carlo.distributions[0].mode",
        ),
        (Distribution("traffic", DistributionKind.LOGNORMAL, 0.0, 1.5), "monte_carlo.distributions[0].low"),
        (
            Distribution("horizon_months", DistributionKind.UNIFORM, 12, 24),
            "monte_carlo.distributions[0].input",
        ),
        (Distribution("weather", DistributionKind.UNIFORM, 0.5, 1.5), "monte_carlo.distributions[0].input"),
        (Distribution("traffic", "normal", 0.5, 1.5), "monte_carlo.distributions[0].kind"),  # type: ignore[arg-type]
        (
            Distribution("electricity", DistributionKind.UNIFORM, 0.5, 1.5, plan="unknown"),
            "monte_carlo.distributions[0].plan",
        ),
    ],
)
def test_bad_distributions_name_the_field(distribution: Distribution, field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        monte_carlo(SCENARIO, (distribution,), samples=10)
    assert error.value.field == field


def test_the_same_input_twice_is_refused() -> None:
    twice = (
        Distribution("traffic", DistributionKind.UNIFORM, 0.5, 1.5),
        Distribution("traffic", DistributionKind.UNIFORM, 0.8, 1.2),
    )
    with pytest.raises(InvalidSpec) as error:
        monte_carlo(SCENARIO, twice, samples=10)
    assert error.value.field == "monte_carlo.distributions[1].input"


@pytest.mark.parametrize(
    ("samples", "seed", "field"),
    [(0, 1, "monte_carlo.samples"), (2_000_000, 1, "monte_carlo.samples"), (10, -1, "monte_carlo.seed")],
)
def test_bad_run_settings_name_the_field(samples: int, seed: int, field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        monte_carlo(SCENARIO, UNCERTAIN, samples=samples, seed=seed)
    assert error.value.field == field


def test_strings_are_accepted_for_kind_and_metric() -> None:
    spelled = (Distribution("traffic", "uniform", 0.5, 1.5),)  # type: ignore[arg-type]
    as_strings = monte_carlo(SCENARIO, spelled, samples=200, seed=2, metric="npv_usd")  # type: ignore[arg-type]
    as_members = monte_carlo(
        SCENARIO,
        (Distribution("traffic", DistributionKind.UNIFORM, 0.5, 1.5),),
        samples=200,
        seed=2,
        metric=Metric.NPV,
    )
    assert as_strings.plans == as_members.plans
    assert as_strings.metric is Metric.NPV


def test_an_unknown_metric_names_the_field() -> None:
    with pytest.raises(InvalidSpec) as error:
        monte_carlo(SCENARIO, UNCERTAIN, samples=10, metric="irr")  # type: ignore[arg-type]
    assert error.value.field == "monte_carlo.metric"
