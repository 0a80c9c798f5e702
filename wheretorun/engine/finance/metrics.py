"""Discounting, NPV, IRR and payback over monthly cash flows, and buying versus renting.

Conventions (the same everywhere in `engine.finance`):

* Month m (1-based) is discounted by (1 + i)^(m − 1): month 1 is today, undiscounted, like
  `numpy_financial.npv(i, flows)`. The monthly rate is the annual one compounded:
  i = (1 + annual)^(1/12) − 1, so twelve months at i equal one year at the annual rate.
* IRR is a monthly rate, found by bracketing the sign changes of NPV(r) on a grid of rates between
  −50% and +1000% a month and refining each with Brent's method; when there are several, the one
  closest to zero is reported. `annual_rate` turns it into (1 + i)^12 − 1.
* Payback is the first month from which the cumulative sum stays at or above zero to the end of
  the horizon (a plan that dips below zero again has not paid back yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from wheretorun.engine.finance.cashflow import Evaluation

__all__ = [
    "BuyVersusRent",
    "annual_rate",
    "buy_versus_rent",
    "discount_factors",
    "irr",
    "monthly_rate",
    "npv",
    "payback_month",
]

FloatArray = npt.NDArray[np.float64]

_IRR_LOWEST = -0.5
_IRR_HIGHEST = 10.0
_IRR_GRID = np.unique(
    np.concatenate([-np.geomspace(1e-7, -_IRR_LOWEST, 300), [0.0], np.geomspace(1e-7, _IRR_HIGHEST, 400)])
)


def monthly_rate(annual: float) -> float:
    """The monthly rate equivalent to `annual` compounded: (1 + annual)^(1/12) − 1."""
    return float((1.0 + annual) ** (1.0 / 12.0) - 1.0)


def annual_rate(monthly: float) -> float:
    """The annual rate equivalent to `monthly` compounded: (1 + monthly)^12 − 1."""
    return float((1.0 + monthly) ** 12 - 1.0)


def discount_factors(annual: float, months: int) -> FloatArray:
    """1 / (1 + i)^(m − 1) for months m = 1..`months`."""
    return np.asarray(1.0 / (1.0 + monthly_rate(annual)) ** np.arange(months, dtype=np.float64))


def npv(flows: Sequence[float] | FloatArray, discount_rate_annual: float) -> float:
    """Present value today (start of month 1) of monthly `flows` from month 1."""
    values = np.asarray(flows, dtype=np.float64)
    return float(values @ discount_factors(discount_rate_annual, len(values)))


def _npv_at_monthly(values: FloatArray, rate: float) -> float:
    return float(np.sum(values / (1.0 + rate) ** np.arange(len(values))))


def irr(flows: Sequence[float] | FloatArray) -> float | None:
    """The monthly internal rate of return of `flows` (month 1 first): the rate at which their NPV
    is zero. None when the flows never change sign or no root lies between −50% and +1000%."""
    values = np.asarray(flows, dtype=np.float64)
    if not (np.any(values > 0) and np.any(values < 0)):
        return None
    periods = np.arange(len(values), dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        curve = (values / (1.0 + _IRR_GRID[:, None]) ** periods).sum(axis=1)
    roots = [float(rate) for rate, value in zip(_IRR_GRID, curve, strict=True) if value == 0.0]
    signs = np.sign(curve)
    from scipy.optimize import brentq  # on first use: scipy.optimize takes ~0.3 s to import

    for index in np.flatnonzero(signs[:-1] * signs[1:] < 0):
        low, high = float(_IRR_GRID[index]), float(_IRR_GRID[index + 1])
        root = brentq(lambda rate: _npv_at_monthly(values, rate), low, high, xtol=1e-14, rtol=1e-12)
        roots.append(float(root))
    if not roots:
        return None
    return min(roots, key=abs)


def payback_month(flows: Sequence[float] | FloatArray) -> int | None:
    """The first month (1-based) from which the cumulative sum of `flows` stays ≥ 0 to the end;
    None when it ends below zero."""
    cumulative = np.cumsum(np.asarray(flows, dtype=np.float64))
    if len(cumulative) == 0:
        return None
    tolerance = 1e-9 * max(1.0, float(np.max(np.abs(cumulative))))
    below = np.flatnonzero(cumulative < -tolerance)
    if len(below) == 0:
        return 1
    last_below = int(below[-1])
    return None if last_below == len(cumulative) - 1 else last_below + 2


@dataclass(frozen=True, slots=True)
class BuyVersusRent:
    """Buying seen as an investment against renting: the savings of `buy` over `rent` each month
    (rent's cash flow minus buy's: negative while the purchase is being paid off)."""

    buy: str
    rent: str
    monthly_savings_usd: tuple[float, ...]
    total_savings_usd: float
    npv_savings_usd: float
    payback_month: int | None
    discounted_payback_month: int | None
    irr_monthly: float | None
    irr_annual: float | None


def buy_versus_rent(evaluation: Evaluation, buy: str, rent: str) -> BuyVersusRent:
    """Payback, discounted payback and IRR of choosing plan `buy` over plan `rent`."""
    buy_flows = np.asarray(evaluation.plan(buy, "buy_versus_rent[0]").monthly_total_usd)
    rent_flows = np.asarray(evaluation.plan(rent, "buy_versus_rent[1]").monthly_total_usd)
    savings = rent_flows - buy_flows
    rate = evaluation.scenario.assumptions.discount_rate_annual
    discounted = savings * discount_factors(rate, len(savings))
    monthly_irr = irr(savings)
    return BuyVersusRent(
        buy=buy,
        rent=rent,
        monthly_savings_usd=tuple(float(value) for value in savings),
        total_savings_usd=float(savings.sum()),
        npv_savings_usd=float(discounted.sum()),
        payback_month=payback_month(savings),
        discounted_payback_month=payback_month(discounted),
        irr_monthly=monthly_irr,
        irr_annual=None if monthly_irr is None else annual_rate(monthly_irr),
    )
