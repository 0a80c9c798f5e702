"""Where two plans cost the same: the traffic volume, utilisation or horizon of break-even.

The cost of each plan is evaluated on a grid of the variable (the curve, for charting); every
sign change of cost(A) − cost(B) between two grid points is a crossing, refined with Brent's
method. Costs with whole units (instances, owned servers) are step functions of the volume and
the utilisation, so the two curves may jump past each other without ever being equal: such a
crossing is reported as a `STEP` at the jump, an ordinary one as `EQUAL`. Horizons are whole
months: the crossing is interpolated linearly between the two months around it. No sign change
in the range is "never" (`BreakEven.never`). Two crossings closer together than the grid
spacing can hide each other: raise `points` to look closer.

Variables:
* `volume`: the tokens a month in month 1; the whole traffic forecast is scaled with it, so a
  growing forecast keeps its growth (with no growth it is simply the steady tokens a month);
* `utilisation`: the planned utilisation of instances and owned units, of every plan or of
  `plan` only;
* `horizon_months`: the length of the scenario, re-evaluated for each month (the residual value
  is counted at each horizon's end).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance.cashflow import Metric, evaluate_settings
from wheretorun.engine.finance.inputs import InputKind, NamedInput, as_member, parse_input
from wheretorun.engine.finance.plan import MAX_HORIZON_MONTHS, Scenario

__all__ = [
    "BreakEven",
    "BreakEvenVariable",
    "Crossing",
    "CrossingKind",
    "CurvePoint",
    "break_even",
]

FloatArray = npt.NDArray[np.float64]

_PATH = "break_even"
_EQUAL_TOLERANCE = 1e-6  # relative: costs this close are equal


class BreakEvenVariable(StrEnum):
    VOLUME = "volume"
    UTILISATION = "utilisation"
    HORIZON = "horizon_months"


_UNITS = {
    BreakEvenVariable.VOLUME: "tokens per month (month 1)",
    BreakEvenVariable.UTILISATION: "fraction of rated capacity",
    BreakEvenVariable.HORIZON: "months",
}


class CrossingKind(StrEnum):
    EQUAL = "equal"  # the two costs are equal at x
    STEP = "step"  # the costs jump past each other at x (whole units), never equal


@dataclass(frozen=True, slots=True)
class CurvePoint:
    x: float
    plan_a_usd: float
    plan_b_usd: float


@dataclass(frozen=True, slots=True)
class Crossing:
    x: float
    kind: CrossingKind
    plan_a_usd: float
    plan_b_usd: float
    cheaper_below: str  # the plan that is cheaper just below x
    cheaper_above: str


@dataclass(frozen=True, slots=True)
class BreakEven:
    plan_a: str
    plan_b: str
    variable: BreakEvenVariable
    unit: str
    metric: Metric
    low: float
    high: float
    curve: tuple[CurvePoint, ...]
    crossings: tuple[Crossing, ...]

    @property
    def value(self) -> float | None:
        """The first break-even point, None when the plans never cross in the range."""
        return self.crossings[0].x if self.crossings else None

    @property
    def never(self) -> bool:
        return not self.crossings


def break_even(
    scenario: Scenario,
    plan_a: str,
    plan_b: str,
    variable: BreakEvenVariable = BreakEvenVariable.VOLUME,
    *,
    low: float | None = None,
    high: float | None = None,
    points: int = 61,
    metric: Metric = Metric.TOTAL,
    plan: str | None = None,
) -> BreakEven:
    """The values of `variable` in [low, high] at which `plan_a` and `plan_b` cost the same.

    Defaults: volume from a tenth to ten times month 1's tokens (log-spaced), utilisation from
    0.05 to 1, horizon from 1 month to the scenario's. `plan` limits a utilisation change to one
    plan. Field paths of errors start with `break_even.`.
    """
    variable = as_member(BreakEvenVariable, variable, f"{_PATH}.variable")
    metric = as_member(Metric, metric, f"{_PATH}.metric")
    indexes = (
        scenario.plan_index(plan_a, f"{_PATH}.plan_a"),
        scenario.plan_index(plan_b, f"{_PATH}.plan_b"),
    )
    if plan_a == plan_b:
        raise InvalidSpec(f"{_PATH}.plan_b", "compare two different plans")
    if not 2 <= points <= 1000:
        raise InvalidSpec(f"{_PATH}.points", f"must be between 2 and 1000, got {points}")
    if variable is BreakEvenVariable.HORIZON:
        low_x, high_x = _horizon_range(scenario, low, high)
        curve, crossings = _horizon_search(scenario, indexes, (plan_a, plan_b), low_x, high_x, metric)
    else:
        axis = _continuous_axis(scenario, variable, low, high, plan)
        low_x, high_x = axis.low, axis.high
        curve, crossings = _continuous_search(scenario, indexes, (plan_a, plan_b), axis, points, metric)
    return BreakEven(
        plan_a=plan_a,
        plan_b=plan_b,
        variable=variable,
        unit=_UNITS[variable],
        metric=metric,
        low=low_x,
        high=high_x,
        curve=curve,
        crossings=crossings,
    )


# --- continuous variables: volume and utilisation --------------------------------------------


@dataclass(frozen=True, slots=True)
class _Axis:
    named: NamedInput
    low: float
    high: float
    to_input: float  # input value = x × to_input
    log_spaced: bool

    def grid(self, points: int) -> FloatArray:
        if self.log_spaced:
            return np.geomspace(self.low, self.high, points)
        return np.linspace(self.low, self.high, points)


def _continuous_axis(
    scenario: Scenario, variable: BreakEvenVariable, low: float | None, high: float | None, plan: str | None
) -> _Axis:
    if variable is BreakEvenVariable.VOLUME:
        if plan is not None:
            raise InvalidSpec(f"{_PATH}.plan", "the traffic volume is the same for every plan")
        first = scenario.traffic.first_month_tokens
        if first <= 0:
            raise InvalidSpec(
                "traffic.tokens_per_month", "a volume break-even scales month 1's tokens: they must be > 0"
            )
        named = parse_input(scenario, InputKind.TRAFFIC.value, None, _PATH)
        low_x, high_x = _range(first / 10 if low is None else low, first * 10 if high is None else high)
        _check_range_values(named, low_x / first, high_x / first)
        return _Axis(named, low_x, high_x, 1.0 / first, log_spaced=low_x > 0)
    named = parse_input(scenario, InputKind.UTILISATION.value, plan, _PATH)
    low_x, high_x = _range(0.05 if low is None else low, 1.0 if high is None else high)
    _check_range_values(named, low_x, high_x)
    return _Axis(named, low_x, high_x, 1.0, log_spaced=False)


def _range(low: float, high: float) -> tuple[float, float]:
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise InvalidSpec(f"{_PATH}.low", f"must be finite and below high, got low={low!r}, high={high!r}")
    return float(low), float(high)


def _check_range_values(named: NamedInput, low: float, high: float) -> None:
    named.check_value(low, f"{_PATH}.low")
    named.check_value(high, f"{_PATH}.high")


def _continuous_search(
    scenario: Scenario,
    indexes: tuple[int, int],
    names: tuple[str, str],
    axis: _Axis,
    points: int,
    metric: Metric,
) -> tuple[tuple[CurvePoint, ...], tuple[Crossing, ...]]:
    def costs(xs: FloatArray) -> FloatArray:
        """(len(xs), 2): cost of plan A and plan B at each x."""
        batch = evaluate_settings(scenario, [(axis.named, xs * axis.to_input)], size=len(xs))
        return batch.metric(metric)[:, list(indexes)]

    xs = axis.grid(points)
    grid_costs = costs(xs)
    curve = tuple(CurvePoint(float(x), float(a), float(b)) for x, (a, b) in zip(xs, grid_costs, strict=True))

    def cost_pair(x: float) -> tuple[float, float]:
        a, b = costs(np.array([x]))[0]
        return float(a), float(b)

    crossings = [
        _refine(cost_pair, float(xs[i]), float(xs[i + 1]), names)
        for i in _sign_changes(grid_costs[:, 0] - grid_costs[:, 1])
    ]
    return curve, tuple(crossings)


def _sign_changes(difference: FloatArray) -> list[int]:
    """Indexes i where the difference changes sign between i and i + 1, or is zero at i + 1
    after being non-zero (a touch counts once)."""
    signs = np.sign(difference)
    return [i for i in range(len(signs) - 1) if signs[i] != 0 and signs[i] != signs[i + 1]]


def _refine(
    cost_pair: Callable[[float], tuple[float, float]], left: float, right: float, names: tuple[str, str]
) -> Crossing:
    """The crossing between `left` and `right`, where the difference changes sign."""

    def difference(x: float) -> float:
        a, b = cost_pair(x)
        return a - b

    on_left, on_right = difference(left), difference(right)
    if on_right == 0.0 or on_left * on_right > 0:  # a touch at `right`
        root = right
    else:
        from scipy.optimize import brentq  # on first use: scipy.optimize takes ~0.3 s to import

        xtol = 1e-12 * max(abs(left), abs(right))
        root = float(brentq(difference, left, right, xtol=xtol, rtol=1e-14))
    a, b = cost_pair(root)
    equal = abs(a - b) <= _EQUAL_TOLERANCE * max(abs(a), abs(b), 1.0)
    below_a_cheaper = on_left < 0
    return Crossing(
        x=root,
        kind=CrossingKind.EQUAL if equal else CrossingKind.STEP,
        plan_a_usd=a,
        plan_b_usd=b,
        cheaper_below=names[0] if below_a_cheaper else names[1],
        cheaper_above=names[1] if below_a_cheaper else names[0],
    )


# --- the horizon ----------------------------------------------------------------------------


def _horizon_range(scenario: Scenario, low: float | None, high: float | None) -> tuple[float, float]:
    series = scenario.traffic.monthly_tokens
    longest = MAX_HORIZON_MONTHS if series is None else len(series)
    low_x, high_x = _range(
        1.0 if low is None else low, float(scenario.horizon_months) if high is None else high
    )
    for value, field in ((low_x, "low"), (high_x, "high")):
        if value != round(value) or not 1 <= value <= longest:
            raise InvalidSpec(
                f"{_PATH}.{field}", f"must be a whole number of months from 1 to {longest}, got {value!r}"
            )
    return low_x, high_x


def _horizon_search(
    scenario: Scenario,
    indexes: tuple[int, int],
    names: tuple[str, str],
    low: float,
    high: float,
    metric: Metric,
) -> tuple[tuple[CurvePoint, ...], tuple[Crossing, ...]]:
    horizon = parse_input(scenario, InputKind.HORIZON.value, None, _PATH)
    months = np.arange(int(low), int(high) + 1, dtype=np.float64)
    costs = np.array(
        [
            evaluate_settings(scenario, [(horizon, np.array([month]))], size=1).metric(metric)[
                0, list(indexes)
            ]
            for month in months
        ]
    )
    curve = tuple(CurvePoint(float(m), float(a), float(b)) for m, (a, b) in zip(months, costs, strict=True))
    difference = costs[:, 0] - costs[:, 1]
    crossings = []
    for i in _sign_changes(difference):
        share = difference[i] / (difference[i] - difference[i + 1])  # linear interpolation
        a = costs[i, 0] + share * (costs[i + 1, 0] - costs[i, 0])
        below_a_cheaper = difference[i] < 0
        crossings.append(
            Crossing(
                x=float(months[i] + share),
                kind=CrossingKind.EQUAL,
                plan_a_usd=float(a),
                plan_b_usd=float(a),
                cheaper_below=names[0] if below_a_cheaper else names[1],
                cheaper_above=names[1] if below_a_cheaper else names[0],
            )
        )
    return curve, tuple(crossings)
