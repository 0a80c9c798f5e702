"""Where the winner changes with volume.

The best plan of each option kind keeps its configuration (the same API price, cloud offer and
pricing mode, accelerator and replica layout) and is re-sized and re-priced (`CostedCandidate.reprice`) at
multiples of today's volume, from 1/64 to 64 x on a grid of factors of 4. Between two grid points
with different winners the switch is bisected (on a log scale, to ~1%). Plans that cannot serve a
volume (a local card past one user, a batch past its accelerator limit) drop out there. Whole
units make the curves steps, so the switch is where one plan becomes cheaper, not necessarily
where two costs are equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wheretorun.engine.costs.candidate import CostedCandidate
from wheretorun.engine.money import rounded
from wheretorun.engine.recommendation import BreakEvenPoint, Crossover, VolumeBreakEven

__all__ = ["volume_break_even"]

_GRID = tuple(4.0**k for k in range(-3, 4))
_BISECTIONS = 7


def _cost(plan: CostedCandidate, multiplier: float) -> float:
    """Monthly cost (or job cost) of `plan` at `multiplier` x volume; inf when it cannot serve."""
    if multiplier == 1.0:
        total: float | None = plan.total_usd
    elif plan.repriced_total_usd is not None:
        total = plan.repriced_total_usd(multiplier)
    elif plan.reprice is None:
        return math.inf
    else:
        scaled = plan.reprice(multiplier)
        total = None if scaled is None else scaled.total_usd
    return _per_month(plan, total)


def _per_month(plan: CostedCandidate, total: float | None) -> float:
    if total is None:
        return math.inf
    return total if plan.months is None else total / plan.months


def _grid_costs(plan: CostedCandidate) -> list[float]:
    """`_cost` of `plan` at each multiplier of the grid; the volumes other than today's priced at
    once when its re-pricing can (a `totals` method, as costs/cloud.RepricedTotal's: one sizing
    for all of them)."""
    at_once = getattr(plan.repriced_total_usd, "totals", None)
    if at_once is None:
        return [_cost(plan, multiplier) for multiplier in _GRID]
    others = [multiplier for multiplier in _GRID if multiplier != 1.0]
    totals = dict(zip(others, at_once(others), strict=True))
    return [
        _cost(plan, 1.0) if multiplier == 1.0 else _per_month(plan, totals[multiplier])
        for multiplier in _GRID
    ]


class _Costs:
    """`_cost` of every plan at each multiplier, each computed once per break-even analysis (the
    grid's first, plan by plan; the bisection's as it asks; re-pricing a plan is its whole
    sizing)."""

    def __init__(self, plans: Sequence[CostedCandidate]) -> None:
        self.plans = plans
        on_grid = [_grid_costs(plan) for plan in plans]
        self.known: dict[float, list[float]] = {
            multiplier: [costs[index] for costs in on_grid] for index, multiplier in enumerate(_GRID)
        }

    def at(self, multiplier: float) -> list[float]:
        if multiplier not in self.known:
            self.known[multiplier] = [_cost(plan, multiplier) for plan in self.plans]
        return self.known[multiplier]


def _winner(plans: _Costs, multiplier: float) -> tuple[int, list[float]]:
    costs = plans.at(multiplier)
    return min(range(len(costs)), key=lambda i: (costs[i], i)), costs


def _bisect(plans: _Costs, low: float, high: float, low_winner: int) -> tuple[float, int]:
    """The multiplier in (low, high] where the winner stops being `low_winner`, and who wins there."""
    high_winner = _winner(plans, high)[0]
    for _ in range(_BISECTIONS):
        middle = math.sqrt(low * high)
        winner = _winner(plans, middle)[0]
        if winner == low_winner:
            low = middle
        else:
            high, high_winner = middle, winner
    return high, high_winner


def volume_break_even(
    plans: Sequence[CostedCandidate], volume_unit: str, current_volume: float
) -> VolumeBreakEven | None:
    """Break-even analysis of `plans` (the best of each option kind); None with fewer than two."""
    compared = [plan for plan in plans if plan.reprice is not None]
    if len(compared) < 2:
        return None
    labels = tuple(plan.label for plan in compared)
    costs_of = _Costs(compared)
    points: list[BreakEvenPoint] = []
    crossovers: list[Crossover] = []
    previous: tuple[float, int] | None = None
    for multiplier in _GRID:
        winner, costs = _winner(costs_of, multiplier)
        points.append(
            BreakEvenPoint(
                multiplier=multiplier,
                volume=current_volume * multiplier,
                usd_per_month=tuple(
                    (label, rounded(cost))
                    for label, cost in zip(labels, costs, strict=True)
                    if math.isfinite(cost)
                ),
                winner=labels[winner],
            )
        )
        if previous is not None and previous[1] != winner:
            at, new_winner = _bisect(costs_of, previous[0], multiplier, previous[1])
            crossovers.append(Crossover(at, current_volume * at, labels[previous[1]], labels[new_winner]))
        previous = (multiplier, winner)
    return VolumeBreakEven(
        volume_unit=volume_unit,
        current_volume=current_volume,
        compared=labels,
        points=tuple(points),
        crossovers=tuple(crossovers),
        searched=(_GRID[0], _GRID[-1]),
        summary=_summary(crossovers, volume_unit, labels[_winner(costs_of, 1.0)[0]]),
    )


def _summary(crossovers: Sequence[Crossover], unit: str, today: str) -> str:
    if not crossovers:
        return (
            f"Of the compared plans {today} stays the cheapest from 1/64 to 64 x today's volume: "
            "the winner never changes in that range"
        )
    changes = "; ".join(
        f"at {c.volume:,.4g} {unit.replace('_', ' ')} ({c.multiplier:.3g} x today) the cheapest changes from "
        f"{c.from_label} to {c.to_label}"
        for c in crossovers
    )
    return f"Of the compared plans {today} is cheapest today; {changes}."
