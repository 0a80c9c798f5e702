"""Named inputs: the assumptions that sensitivity, break-even and Monte Carlo move.

| name                   | what it sets                                                  | values     |
|------------------------|---------------------------------------------------------------|------------|
| `traffic`              | multiplier of the tokens of every month                       | >= 0       |
| `growth_per_month`     | the monthly growth (replaces the scenario's; growth traffic)  | (-1, 1]    |
| `discount_rate_annual` | the cost of capital                                           | [0, 1]     |
| `horizon_months`       | the horizon (sensitivity and break-even only)                 | 1..600     |
| `utilisation`          | planned share of rated capacity of instances and owned units  | (0, 1]     |
| `spot_availability`    | share of spot instance-hours obtained at the spot price       | [0, 1]     |
| `electricity`          | multiplier of the `power` lines (the same as `price:power`)   | >= 0       |
| `price`                | multiplier of every price of the plan(s)                      | >= 0       |
| `price:<category>`     | multiplier of the lines of one `CostCategory`                 | >= 0       |

The first four belong to the whole scenario. The others apply to every plan, or to one plan
when a `plan` name is given. Absolute values (`utilisation`, `spot_availability`) replace the
plan's own; multipliers multiply each other.

`Knobs` holds the values of one evaluation batch as arrays of shape (samples, 1), so one
vectorised pass evaluates every sample; the deterministic evaluation is a batch of one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance.plan import MAX_HORIZON_MONTHS, CostCategory, Scenario

__all__ = [
    "INPUT_NAMES",
    "InputKind",
    "Knobs",
    "NamedInput",
    "PlanKnobs",
    "as_member",
    "build_knobs",
    "parse_input",
    "with_horizon",
]

FloatArray = npt.NDArray[np.float64]
_Enum = TypeVar("_Enum", bound=StrEnum)


def as_member(kind: type[_Enum], value: object, field: str) -> _Enum:
    """`value` (a member or its string) as a member of `kind`; InvalidSpec(`field`) otherwise."""
    try:
        return kind(str(value))
    except ValueError:
        raise InvalidSpec(
            field, f"must be one of {[member.value for member in kind]}, got {value!r}"
        ) from None


class InputKind(StrEnum):
    TRAFFIC = "traffic"
    GROWTH = "growth_per_month"
    DISCOUNT_RATE = "discount_rate_annual"
    HORIZON = "horizon_months"
    UTILISATION = "utilisation"
    SPOT_AVAILABILITY = "spot_availability"
    PRICE = "price"


_SCENARIO_WIDE = frozenset({InputKind.TRAFFIC, InputKind.GROWTH, InputKind.DISCOUNT_RATE, InputKind.HORIZON})
_MULTIPLIERS = frozenset({InputKind.TRAFFIC, InputKind.PRICE})

# (lowest, highest, lowest excluded)
_BOUNDS: dict[InputKind, tuple[float, float, bool]] = {
    InputKind.TRAFFIC: (0.0, np.inf, False),
    InputKind.GROWTH: (-1.0, 1.0, True),
    InputKind.DISCOUNT_RATE: (0.0, 1.0, False),
    InputKind.HORIZON: (1.0, float(MAX_HORIZON_MONTHS), False),
    InputKind.UTILISATION: (0.0, 1.0, True),
    InputKind.SPOT_AVAILABILITY: (0.0, 1.0, False),
    InputKind.PRICE: (0.0, np.inf, False),
}

INPUT_NAMES: tuple[str, ...] = (
    *(kind.value for kind in InputKind),
    "electricity",
    *(f"price:{category.value}" for category in CostCategory),
)


@dataclass(frozen=True, slots=True)
class NamedInput:
    """A parsed input name: what it moves, for which category of lines and which plan."""

    kind: InputKind
    category: CostCategory | None = None
    plan: str | None = None

    @property
    def is_multiplier(self) -> bool:
        return self.kind in _MULTIPLIERS

    @property
    def label(self) -> str:
        name = self.kind.value if self.category is None else f"{self.kind.value}:{self.category.value}"
        return name if self.plan is None else f"{name} ({self.plan})"

    def check_value(self, value: float, field: str) -> None:
        """InvalidSpec(`field`) unless `value` is a value this input can take."""
        low, high, open_low = _BOUNDS[self.kind]
        above = value > low if open_low else value >= low
        if not (np.isfinite(value) and above and value <= high):
            lower = f"> {low:g}" if open_low else f">= {low:g}"
            raise InvalidSpec(field, f"{self.label} must be {lower} and <= {high:g}, got {value!r}")
        if self.kind is InputKind.HORIZON and value != round(value):
            raise InvalidSpec(field, f"horizon_months must be a whole number of months, got {value!r}")


def parse_input(scenario: Scenario, name: str, plan: str | None, path: str) -> NamedInput:
    """The input called `name`, scoped to `plan` (None: every plan), validated against
    `scenario`. `path` is where the input sits in the request (`...ranges[2]`)."""
    kind, category = _kind_of(name, f"{path}.input")
    if plan is not None:
        if kind in _SCENARIO_WIDE:
            raise InvalidSpec(f"{path}.plan", f"{kind.value} belongs to the whole scenario, not to one plan")
        scenario.plan_index(plan, f"{path}.plan")
    if kind is InputKind.GROWTH and scenario.traffic.is_series:
        raise InvalidSpec(
            f"{path}.input", "growth_per_month cannot move an explicit monthly_tokens series; use traffic"
        )
    return NamedInput(kind, category, plan)


def _kind_of(name: str, field: str) -> tuple[InputKind, CostCategory | None]:
    if name == "electricity":
        return InputKind.PRICE, CostCategory.POWER
    if name.startswith("price:"):
        try:
            return InputKind.PRICE, CostCategory(name.removeprefix("price:"))
        except ValueError:
            pass
    else:
        try:
            return InputKind(name), None
        except ValueError:
            pass
    raise InvalidSpec(field, f"unknown input {name!r}; known inputs are {list(INPUT_NAMES)}")


def with_horizon(scenario: Scenario, horizon_months: int) -> Scenario:
    """The same scenario over another horizon."""
    assumptions = dataclasses.replace(scenario.assumptions, horizon_months=horizon_months)
    return dataclasses.replace(scenario, assumptions=assumptions)


@dataclass(slots=True)
class PlanKnobs:
    """Per-sample values for one plan; None means "as the plan says"."""

    price_all: FloatArray
    price_by_category: dict[CostCategory, FloatArray]
    utilisation: FloatArray | None = None
    spot_availability: FloatArray | None = None

    def price(self, category: CostCategory) -> FloatArray:
        """The multiplier of the prices of `category` lines, shape (samples, 1)."""
        by_category = self.price_by_category.get(category)
        return self.price_all if by_category is None else self.price_all * by_category


@dataclass(slots=True)
class Knobs:
    """Per-sample values of one evaluation batch, each of shape (samples, 1)."""

    size: int
    traffic_multiplier: FloatArray
    growth_per_month: FloatArray | None  # None: the traffic is an explicit series
    discount_rate_annual: FloatArray
    plans: tuple[PlanKnobs, ...]  # in the order of the scenario's plans


def build_knobs(scenario: Scenario, settings: Sequence[tuple[NamedInput, FloatArray]], size: int) -> Knobs:
    """The scenario's own values for `size` samples, with `settings` applied (values of shape
    (size,)). Scenario-wide settings first, then all-plan ones, then plan-scoped ones, so that a
    plan's own setting wins over an all-plan one. `horizon_months` is not a knob: see
    `with_horizon`."""

    def column(value: float) -> FloatArray:
        return np.full((size, 1), value, dtype=np.float64)

    traffic = scenario.traffic
    knobs = Knobs(
        size=size,
        traffic_multiplier=column(1.0),
        growth_per_month=None if traffic.is_series else column(traffic.growth_per_month),
        discount_rate_annual=column(scenario.assumptions.discount_rate_annual),
        plans=tuple(PlanKnobs(price_all=column(1.0), price_by_category={}) for _ in scenario.plans),
    )
    for named, values in sorted(settings, key=lambda setting: setting[0].plan is not None):
        _apply(scenario, knobs, named, np.asarray(values, dtype=np.float64).reshape(size, 1))
    return knobs


def _apply(scenario: Scenario, knobs: Knobs, named: NamedInput, values: FloatArray) -> None:
    if named.kind is InputKind.TRAFFIC:
        knobs.traffic_multiplier = knobs.traffic_multiplier * values
    elif named.kind is InputKind.GROWTH:
        knobs.growth_per_month = values
    elif named.kind is InputKind.DISCOUNT_RATE:
        knobs.discount_rate_annual = values
    elif named.kind is InputKind.HORIZON:
        raise ValueError("horizon_months changes the shape of the evaluation: use with_horizon")
    else:
        for index in _plan_indexes(scenario, named.plan):
            _apply_to_plan(knobs.plans[index], named, values)


def _plan_indexes(scenario: Scenario, plan: str | None) -> range | tuple[int]:
    if plan is None:
        return range(len(scenario.plans))
    return (scenario.plan_index(plan, "plan"),)


def _apply_to_plan(plan_knobs: PlanKnobs, named: NamedInput, values: FloatArray) -> None:
    if named.kind is InputKind.UTILISATION:
        plan_knobs.utilisation = values
    elif named.kind is InputKind.SPOT_AVAILABILITY:
        plan_knobs.spot_availability = values
    elif named.category is None:
        plan_knobs.price_all = plan_knobs.price_all * values
    else:
        current = plan_knobs.price_by_category.get(named.category)
        plan_knobs.price_by_category[named.category] = values if current is None else current * values
