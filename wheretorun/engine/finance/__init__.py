"""Finance: multi-year cash flows of plans, NPV, break-even, sensitivity, Monte Carlo, comparison.

Pure functions over frozen values: no I/O, no clock; randomness only from a `seed` argument.

    scenario = Scenario(plans=(...), traffic=Traffic(...), assumptions=FinanceAssumptions(...))
    evaluate(scenario)                          -> Evaluation (monthly flows, totals, NPV per plan)
    buy_versus_rent(evaluation, buy, rent)      -> BuyVersusRent (payback, IRR of the difference)
    break_even(scenario, a, b, variable)        -> BreakEven (curve points, crossings or "never")
    sensitivity(scenario, ranges)               -> Sensitivity (a tornado per plan)
    monte_carlo(scenario, distributions, samples, seed) -> MonteCarloResult (P10/P50/P90, P(cheapest))
    compare([plan_result, ...])                 -> Comparison (deltas per line, like a cost diff)

Conventions, argued in the modules: costs are positive cash flows; month m is discounted by
(1 + i)^(m − 1) with i = (1 + annual)^(1/12) − 1 (`metrics`); assets held at the end are sold at
book value in the last month unless `ResidualValue.NONE` (`cashflow`); owned units are ordered
and paid `lead_time_months` before the month that needs them, and the burst price carries what
they cannot (`plan.OwnedCapacity`). Validation errors are `InvalidSpec(field, reason)` with the
field's path in a request body (`plans[1].capex[0].amount_usd`, `monte_carlo.distributions[0].low`).

Expressing the options as plans (a sketch for the API layer)
-------------------------------------------------------------

Hosted API X — a usage line per million tokens, with the blended price of the traffic's
input/cached/output mix:

    Plan("hosted: X", usage=(
        UsageLine("tokens", usd_per_unit=blended_usd_per_million_tokens, category=CostCategory.TOKENS),
    ))

Cloud rental — whole instances, enough for each month's tokens at the planned utilisation,
billed per instance-hour (on spot, add `fallback_usd_per_instance_hour` = the on-demand price and
a `spot_availability`):

    Plan("cloud: 8xH100 on-demand", instances=(
        InstanceLine("p5.48xlarge", usd_per_instance_hour=offer.usd_per_hour,
                     tokens_per_month_per_instance=tokens_per_s_per_replica * 3600 * HOURS_PER_MONTH,
                     utilisation=0.6, minimum_instances=1),
    ))

Owned N×H100 — servers bought as the traffic grows, with their running costs per server, the
fixed costs of running a deployment, and a burst price for what the servers cannot carry
(typically the hosted API the workload would use otherwise):

    watts = 8 * 700 + 2_000  # accelerators at TDP + the rest of the server
    Plan("owned: 8xH100", capacity=OwnedCapacity(
        tokens_per_month_per_unit=tokens_per_s_per_server * 3600 * HOURS_PER_MONTH,
        capex_usd_per_unit=8 * gpu_usd * (1 + server_overhead),
        lead_time_months=3, utilisation=0.6, initial_units=1,
        depreciation_years=4, residual_fraction=0.2,
        burst_usd_per_million_tokens=hosted_blended_usd_per_million_tokens,
        unit_opex=(
            UnitOpexLine("power", power_usd_per_month(watts, pue=1.3, usd_per_kwh=0.12), CostCategory.POWER),
            UnitOpexLine("colocation", kw_per_server * usd_per_kw_month, CostCategory.COLOCATION),
            UnitOpexLine("maintenance", capex_per_server * 0.08 / 12, CostCategory.MAINTENANCE),
        ),
    ), opex=(OpexLine("operations staff", 0.25 * 15_000, CostCategory.STAFF, annual_escalation=0.03),))

A fixed cluster that is never expanded is `initial_units=N, max_units=N`; extra hardware bought
once (network switches) is a `CapexItem`. Reserved instances fit `OwnedCapacity` too: the upfront
fee as `capex_usd_per_unit` (depreciated over the term, residual 0), the reserved hourly rate ×
730 as a `unit_opex` line, and the on-demand price of the overflow, per million tokens, as the
burst price.
"""

from wheretorun.engine.finance.breakeven import (
    BreakEven,
    BreakEvenVariable,
    Crossing,
    CrossingKind,
    CurvePoint,
    break_even,
)
from wheretorun.engine.finance.cashflow import (
    CostKind,
    Evaluation,
    LineFlow,
    Metric,
    MonthFlow,
    PlanResult,
    evaluate,
)
from wheretorun.engine.finance.compare import Change, Comparison, ComparisonRow, compare
from wheretorun.engine.finance.inputs import INPUT_NAMES
from wheretorun.engine.finance.metrics import (
    BuyVersusRent,
    annual_rate,
    buy_versus_rent,
    discount_factors,
    irr,
    monthly_rate,
    npv,
    payback_month,
)
from wheretorun.engine.finance.montecarlo import (
    Distribution,
    DistributionKind,
    MonteCarloResult,
    PlanOutcome,
    monte_carlo,
)
from wheretorun.engine.finance.plan import (
    HOURS_PER_MONTH,
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
from wheretorun.engine.finance.sensitivity import (
    PlanTornado,
    Sensitivity,
    SensitivityRange,
    TornadoBar,
    sensitivity,
    standard_ranges,
)

__all__ = [
    "HOURS_PER_MONTH",
    "INPUT_NAMES",
    "BreakEven",
    "BreakEvenVariable",
    "BuyVersusRent",
    "CapexItem",
    "Change",
    "Comparison",
    "ComparisonRow",
    "CostCategory",
    "CostKind",
    "Crossing",
    "CrossingKind",
    "CurvePoint",
    "Distribution",
    "DistributionKind",
    "Evaluation",
    "FinanceAssumptions",
    "InstanceLine",
    "LineFlow",
    "Metric",
    "MonteCarloResult",
    "MonthFlow",
    "OpexLine",
    "OwnedCapacity",
    "Plan",
    "PlanOutcome",
    "PlanResult",
    "PlanTornado",
    "ResidualValue",
    "Scenario",
    "Sensitivity",
    "SensitivityRange",
    "TornadoBar",
    "Traffic",
    "UnitOpexLine",
    "UsageLine",
    "annual_rate",
    "break_even",
    "buy_versus_rent",
    "compare",
    "discount_factors",
    "evaluate",
    "irr",
    "monte_carlo",
    "monthly_rate",
    "npv",
    "payback_month",
    "power_usd_per_month",
    "sensitivity",
    "standard_ranges",
]
