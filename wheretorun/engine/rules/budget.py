"""Plans over the money limits: `over_budget` when the average month costs more than
`constraints.max_usd_per_month` (a batch job: its cost spread over the months its deadline spans,
at least one), `over_capex` when one purchase of the hardware costs more than
`constraints.max_capex_usd`.

It applies last, on costed plans (and on cloud rows as they are priced): every other rule is about
whether a plan can run, this one about whether the user can pay for it.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import Constraints

__all__ = ["OVER_MONTHLY_BUDGET", "exceeded_limit", "over_limits"]

OVER_MONTHLY_BUDGET = Rejection(RejectReason.OVER_BUDGET, "over the monthly budget")  # a priced cloud row


def exceeded_limit(usd_per_month: float, capex_usd: float, constraints: Constraints) -> RejectReason | None:
    """The reason `over_limits` rejects for, without writing its detail (a planner that keeps only
    a few examples per reason writes the detail of those alone)."""
    if constraints.max_usd_per_month is not None and usd_per_month > constraints.max_usd_per_month:
        return RejectReason.OVER_BUDGET
    if constraints.max_capex_usd is not None and capex_usd > constraints.max_capex_usd:
        return RejectReason.OVER_CAPEX
    return None


def over_limits(usd_per_month: float, capex_usd: float, constraints: Constraints) -> Rejection | None:
    """`over_budget` above `max_usd_per_month`, then `over_capex` above `max_capex_usd`."""
    if constraints.max_usd_per_month is None and constraints.max_capex_usd is None:
        return None  # no limits (most requests): without exceeded_limit's call, ~100 a request
    reason = exceeded_limit(usd_per_month, capex_usd, constraints)
    if reason is RejectReason.OVER_BUDGET:
        return Rejection(reason, f"${usd_per_month:,.0f} a month > ${constraints.max_usd_per_month:,.0f}")
    if reason is RejectReason.OVER_CAPEX:
        return Rejection(reason, f"capex ${capex_usd:,.0f} > ${constraints.max_capex_usd:,.0f}")
    return None
