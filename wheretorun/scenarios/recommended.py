"""A recommended option as a finance plan: a scenario's `RecommendedPlanIn` names a workload and an
option kind; the recommendation service finds the best such option and this module turns its cost
breakdown into the capex, monthly and per-token lines the finance engine projects."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from wheretorun.engine import finance
from wheretorun.engine.recommendation import PlanOption
from wheretorun.engine.workload import OptionKind
from wheretorun.errors import InvalidInput
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.scenarios.schemas import RecommendedPlanIn
from wheretorun.services.recommendations import run_recommendation

__all__ = ["finance_plan_for_option"]

# The finance engine models purchases, resale and the cost of capital itself (capex, book value,
# discounting), so those lines of an option become one capex item instead of cash flows.
_CAPITAL_LINES = {"hardware purchase", "card purchase", "resale value", "cost of capital"}
# Lines that do not grow with traffic: paid per month.
_FIXED_LINES = {"operations staff", "upkeep", "maintenance", "colocation"}
_CATEGORIES = {
    "operations staff": "staff",
    "upkeep": "staff",
    "maintenance": "maintenance",
    "colocation": "colocation",
    "power": "power",
    "instance hours": "compute",
    "rental during lead time": "compute",
}


def finance_plan_for_option(
    session: Session,
    plan: RecommendedPlanIn,
    as_of: dt.datetime | None,
    field: str,
    snapshots: SnapshotCache,
) -> finance.Plan:
    """The best `plan.option` for `plan.workload` as a finance plan: capex for the hardware,
    fixed monthly lines, and the rest per million tokens so it follows the scenario's traffic."""
    recommendation = run_recommendation(  # only the best of each kind is read: write up one option
        session, plan.workload, plan.constraints, plan.assumptions, as_of, snapshots, prefix=field, limit=1
    )
    option = recommendation.best_per_option.get(OptionKind(plan.option))
    if option is None:
        reasons = ", ".join(f"{g.reason.value} ({g.count})" for g in recommendation.rejected)
        raise InvalidInput(
            f"{field}.option", f"no feasible {plan.option} option for this workload; rejected: {reasons}"
        )
    a = recommendation.assumptions
    months = a.horizon_months
    tokens = _tokens_served(option)
    capex = []
    if option.capex_usd > 0:
        capex.append(
            finance.CapexItem(
                name=f"{option.setup.accelerator_id or 'hardware'} purchase",
                amount_usd=float(option.capex_usd),
                depreciation_years=a.depreciation_years,
                residual_fraction=a.residual_value_fraction,
            )
        )
    opex, usage = [], []
    for line in option.breakdown:
        if line.name in _CAPITAL_LINES or line.usd == 0:
            continue
        category = finance.CostCategory(_CATEGORIES.get(line.name, "tokens"))
        if line.name in _FIXED_LINES or tokens is None:
            opex.append(finance.OpexLine(line.name, float(line.usd) / months, category))
        else:
            usage.append(finance.UsageLine(line.name, float(line.usd) / tokens * 1e6, category=category))
    return finance.Plan(
        name=plan.name or option.label, capex=tuple(capex), opex=tuple(opex), usage=tuple(usage)
    )


def _tokens_served(option: PlanOption) -> float | None:
    """Tokens the option serves over the horizon, from its all-in price per million tokens (None
    for training). An owned plan with no rental during its lead time serves none then, so its
    usage lines are spread over the tokens from delivery on: a scenario's traffic pays each line's
    rate per token served (its power per token, say), in every month it has traffic."""
    if option.usd_per_million_tokens is None or option.usd_per_million_tokens <= 0:
        return None
    return float(option.total_usd / option.usd_per_million_tokens) * 1e6
