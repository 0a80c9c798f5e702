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

__all__ = ["OVER_MONTHLY_BUDGET", "over_limits"]

OVER_MONTHLY_BUDGET = Rejection(RejectReason.OVER_BUDGET, "over the monthly budget")  # a priced cloud row


def over_limits(usd_per_month: float, capex_usd: float, constraints: Constraints) -> Rejection | None:
    """`over_budget` above `max_usd_per_month`, then `over_capex` above `max_capex_usd`."""
    if constraints.max_usd_per_month is not None and usd_per_month > constraints.max_usd_per_month:
        return Rejection(
            RejectReason.OVER_BUDGET,
            f"${usd_per_month:,.0f} a month > ${constraints.max_usd_per_month:,.0f}",
        )
    if constraints.max_capex_usd is not None and capex_usd > constraints.max_capex_usd:
        return Rejection(
            RejectReason.OVER_CAPEX, f"capex ${capex_usd:,.0f} > ${constraints.max_capex_usd:,.0f}"
        )
    return None
