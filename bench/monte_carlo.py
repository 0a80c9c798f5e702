"""Time a 10,000-sample Monte Carlo of a 3-plan, 36-month scenario (hosted API, cloud rental on
spot, owned servers bought as traffic grows), with seven uncertain inputs.

    .venv/bin/python bench/monte_carlo.py

Target (issue 5): under 1 s on the 2-core development machine.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wheretorun.engine.finance import (  # noqa: E402
    CostCategory,
    Distribution,
    DistributionKind,
    FinanceAssumptions,
    InstanceLine,
    OpexLine,
    OwnedCapacity,
    Plan,
    Scenario,
    Traffic,
    UnitOpexLine,
    UsageLine,
    monte_carlo,
    power_usd_per_month,
)

SAMPLES = 10_000
TARGET_SECONDS = 1.0


def three_plan_scenario() -> Scenario:
    """A 70B-class model served at 20 billion tokens a month, growing 6% a month."""
    hosted = Plan("hosted API", usage=(UsageLine("tokens", usd_per_unit=0.9),))
    cloud = Plan(
        "cloud 8xH100 spot",
        instances=(
            InstanceLine(
                "8xH100 instance",
                usd_per_instance_hour=24.0,
                tokens_per_month_per_instance=3.0e10,
                utilisation=0.6,
                minimum_instances=1,
                fallback_usd_per_instance_hour=55.0,
                spot_availability=0.8,
            ),
        ),
        opex=(OpexLine("platform engineer", 6_000.0, CostCategory.STAFF),),
    )
    owned = Plan(
        "owned 8xH100",
        capacity=OwnedCapacity(
            tokens_per_month_per_unit=3.0e10,
            capex_usd_per_unit=320_000.0,
            burst_usd_per_million_tokens=0.9,
            lead_time_months=3,
            utilisation=0.6,
            initial_units=1,
            depreciation_years=4,
            residual_fraction=0.15,
            unit_opex=(
                UnitOpexLine(
                    "power", power_usd_per_month(7_600, pue=1.3, usd_per_kwh=0.12), CostCategory.POWER
                ),
                UnitOpexLine("colocation", 1_800.0, CostCategory.COLOCATION),
                UnitOpexLine("maintenance", 320_000.0 * 0.08 / 12, CostCategory.MAINTENANCE),
            ),
        ),
        opex=(OpexLine("operations staff", 7_500.0, CostCategory.STAFF, annual_escalation=0.03),),
    )
    return Scenario(
        plans=(hosted, cloud, owned),
        traffic=Traffic(tokens_per_month=2.0e10, growth_per_month=0.06),
        assumptions=FinanceAssumptions(horizon_months=36, discount_rate_annual=0.08),
    )


DISTRIBUTIONS = (
    Distribution("traffic", DistributionKind.LOGNORMAL, 0.6, 1.4),
    Distribution("growth_per_month", DistributionKind.TRIANGULAR, 0.0, 0.12, mode=0.06),
    Distribution("utilisation", DistributionKind.UNIFORM, 0.4, 0.8),
    Distribution("electricity", DistributionKind.TRIANGULAR, 0.8, 1.5, mode=1.0),
    Distribution("spot_availability", DistributionKind.UNIFORM, 0.5, 1.0),
    Distribution("price:tokens", DistributionKind.TRIANGULAR, 0.5, 1.1, mode=0.9),
    Distribution("price:hardware", DistributionKind.UNIFORM, 0.9, 1.2),
)


def main() -> None:
    scenario = three_plan_scenario()
    monte_carlo(scenario, DISTRIBUTIONS, samples=SAMPLES, seed=1)  # warm up imports and caches
    runs = []
    for seed in range(5):
        start = time.perf_counter()
        result = monte_carlo(scenario, DISTRIBUTIONS, samples=SAMPLES, seed=seed)
        runs.append(time.perf_counter() - start)
    median = statistics.median(runs)
    print(
        f"Monte Carlo: {SAMPLES:,} samples x {len(scenario.plans)} plans x {scenario.horizon_months} months"
    )
    print(
        f"  median {median * 1000:.0f} ms, best {min(runs) * 1000:.0f} ms"
        f" over {len(runs)} runs (target < 1 s)"
    )
    for outcome in result.plans:
        print(
            f"  {outcome.plan:20s} P10 {outcome.p10_usd:>14,.0f}  P50 {outcome.p50_usd:>14,.0f}"
            f"  P90 {outcome.p90_usd:>14,.0f}  P(cheapest) {outcome.probability_cheapest:.2f}"
        )
    if median >= TARGET_SECONDS:
        print("  SLOWER THAN THE TARGET")
        sys.exit(1)


if __name__ == "__main__":
    main()
