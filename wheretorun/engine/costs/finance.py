"""What owning hardware costs over the horizon, per dollar of purchase price.

The hardware is paid at month 0 and enters service after the lead time. It loses value in a
straight line from its price to `residual` x price over its life (`life_months` in service),
and is then sold at that residual value and replaced by a new unit (if the horizon goes on).
The unit held at the end of the horizon is valued at its book value then. So:

    depreciation     = purchases - resale values (retired units and the one held at the end)
    cost of capital  = sum over months of book value x annual rate / 12   (simple interest on the
                       money tied up, the configiq "capital charge": average book value x rate)

Both are per 1 USD of capex; multiply by the purchase price.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = ["CapitalSchedule", "capital_schedule"]


@dataclass(frozen=True, slots=True)
class CapitalSchedule:
    purchases: int  # the first purchase and its replacements within the horizon
    resale: float  # per 1 USD of capex: residual values of retired units + book value at the end
    cost_of_capital: float  # per 1 USD of capex, over the horizon
    in_service_months: int

    @property
    def depreciation(self) -> float:
        """Capital consumed over the horizon, per 1 USD of capex."""
        return self.purchases - self.resale


@functools.cache
def capital_schedule(
    start_month: int, horizon_months: int, life_months: float, residual: float, annual_rate: float
) -> CapitalSchedule:
    """Purchases, resale and capital charge of hardware in service from `start_month`."""
    if start_month >= horizon_months:
        return CapitalSchedule(1, 1.0, annual_rate / 12 * horizon_months, 0)
    purchases = 0
    resale = 0.0
    service_start = float(start_month)
    while service_start < horizon_months:
        purchases += 1
        used = min(horizon_months - service_start, life_months)
        resale += 1.0 - (1.0 - residual) * used / life_months
        service_start += life_months
    charge = sum(_book_value(month, start_month, life_months, residual) for month in range(horizon_months))
    return CapitalSchedule(
        purchases=purchases,
        resale=resale,
        cost_of_capital=charge * annual_rate / 12,
        in_service_months=horizon_months - start_month,
    )


def _book_value(month: int, start_month: int, life_months: float, residual: float) -> float:
    """Value of the unit held at the start of `month`, per 1 USD of its price."""
    if month < start_month:
        return 1.0
    age = (month - start_month) % life_months
    return 1.0 - (1.0 - residual) * age / life_months
