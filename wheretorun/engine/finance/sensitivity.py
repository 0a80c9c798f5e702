"""A tornado: each assumption moved alone to its low and its high value, the others held at the
scenario's; the swing of each plan's total (or NPV), largest first.

Inputs are named as in `engine.finance.inputs` (`traffic`, `utilisation`, `price:tokens`,
`discount_rate_annual`, `horizon_months`, ...). The discount rate moves only the NPV: with the
default metric (the nominal total) its swing is zero, which is the truth about nominal sums.
`standard_ranges` proposes a range for each assumption the scenario actually has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance.cashflow import Metric, evaluate_settings
from wheretorun.engine.finance.inputs import InputKind, NamedInput, as_member, parse_input
from wheretorun.engine.finance.plan import MAX_HORIZON_MONTHS, CostCategory, Scenario

__all__ = [
    "PlanTornado",
    "Sensitivity",
    "SensitivityRange",
    "TornadoBar",
    "sensitivity",
    "standard_ranges",
]

_PATH = "sensitivity.ranges"


@dataclass(frozen=True, slots=True)
class SensitivityRange:
    """Move `input` (of every plan, or of `plan` only) from `low` to `high`."""

    input: str
    low: float
    high: float
    plan: str | None = None


@dataclass(frozen=True, slots=True)
class TornadoBar:
    input: str  # the input's name, with its plan when it has one: "utilisation (owned)"
    low: float
    high: float
    low_usd: float  # the plan's figure with the input at `low`
    high_usd: float
    swing_usd: float  # |high_usd − low_usd|


@dataclass(frozen=True, slots=True)
class PlanTornado:
    plan: str
    base_usd: float
    bars: tuple[TornadoBar, ...]  # largest swing first


@dataclass(frozen=True, slots=True)
class Sensitivity:
    metric: Metric
    plans: tuple[PlanTornado, ...]

    def plan(self, name: str) -> PlanTornado:
        for tornado in self.plans:
            if tornado.plan == name:
                return tornado
        raise KeyError(name)


def sensitivity(
    scenario: Scenario, ranges: Sequence[SensitivityRange], metric: Metric = Metric.TOTAL
) -> Sensitivity:
    """Each plan's `metric` with each range's input at its low and its high value."""
    metric = as_member(Metric, metric, "sensitivity.metric")
    if not ranges:
        raise InvalidSpec(_PATH, "name at least one input to move")
    inputs = [_checked(scenario, item, f"{_PATH}[{index}]") for index, item in enumerate(ranges)]
    base = evaluate_settings(scenario, (), size=1).metric(metric)[0]
    ends = [_low_and_high(scenario, named, item, metric) for named, item in zip(inputs, ranges, strict=True)]
    tornados = []
    for plan_index, plan in enumerate(scenario.plans):
        bars = [
            TornadoBar(
                input=item.input if item.plan is None else f"{item.input} ({item.plan})",
                low=item.low,
                high=item.high,
                low_usd=float(at_ends[0, plan_index]),
                high_usd=float(at_ends[1, plan_index]),
                swing_usd=float(abs(at_ends[1, plan_index] - at_ends[0, plan_index])),
            )
            for named, item, at_ends in zip(inputs, ranges, ends, strict=True)
        ]
        bars.sort(key=lambda bar: bar.swing_usd, reverse=True)
        tornados.append(PlanTornado(plan.name, float(base[plan_index]), tuple(bars)))
    return Sensitivity(metric, tuple(tornados))


def _checked(scenario: Scenario, item: SensitivityRange, path: str) -> NamedInput:
    named = parse_input(scenario, item.input, item.plan, path)
    named.check_value(item.low, f"{path}.low")
    named.check_value(item.high, f"{path}.high")
    if item.low > item.high:
        raise InvalidSpec(f"{path}.low", f"must not exceed high ({item.high!r}), got {item.low!r}")
    if named.kind is InputKind.HORIZON and scenario.traffic.monthly_tokens is not None:
        longest = len(scenario.traffic.monthly_tokens)
        if item.high > longest:
            raise InvalidSpec(f"{path}.high", f"the monthly_tokens series covers only {longest} months")
    return named


def _low_and_high(
    scenario: Scenario, named: NamedInput, item: SensitivityRange, metric: Metric
) -> np.ndarray:
    """(2, plans): the metric at the low and at the high value."""
    if named.kind is InputKind.HORIZON:  # one horizon per evaluation
        return np.vstack(
            [
                evaluate_settings(scenario, [(named, np.array([value]))], size=1).metric(metric)
                for value in (item.low, item.high)
            ]
        )
    return evaluate_settings(scenario, [(named, np.array([item.low, item.high]))], size=2).metric(metric)


def standard_ranges(scenario: Scenario) -> tuple[SensitivityRange, ...]:
    """A first tornado for `scenario`: ±50% traffic, ±2 points of monthly growth, ±4 points of
    discount rate, ±12 months of horizon, ±20% on each price category the plans use, ±30% on
    electricity, utilisation from 0.2 below to 0.1 above each plan's, spot availability
    from 0.5 to 1. Ranges are clipped to the values each input can take."""
    assumptions = scenario.assumptions
    ranges = [SensitivityRange("traffic", 0.5, 1.5)]
    if not scenario.traffic.is_series:
        growth = scenario.traffic.growth_per_month
        ranges.append(_around("growth_per_month", growth, -0.02, 0.02, lowest=-0.99, highest=1.0))
    rate = assumptions.discount_rate_annual
    ranges.append(_around("discount_rate_annual", rate, -0.04, 0.04, lowest=0.0, highest=1.0))
    series = scenario.traffic.monthly_tokens
    longest = MAX_HORIZON_MONTHS if series is None else len(series)
    horizon = scenario.horizon_months
    ranges.append(SensitivityRange("horizon_months", max(horizon - 12, 1), min(horizon + 12, longest)))
    categories = _categories(scenario)
    ranges += [
        SensitivityRange(f"price:{category.value}", 0.8, 1.2)
        for category in CostCategory
        if category in categories and category is not CostCategory.POWER
    ]
    if CostCategory.POWER in categories:
        ranges.append(SensitivityRange("electricity", 0.7, 1.3))
    ranges += _utilisation_ranges(scenario)
    if any(
        line.fallback_usd_per_instance_hour is not None for plan in scenario.plans for line in plan.instances
    ):
        ranges.append(SensitivityRange("spot_availability", 0.5, 1.0))
    return tuple(ranges)


def _categories(scenario: Scenario) -> set[CostCategory]:
    found: set[CostCategory] = set()
    for plan in scenario.plans:
        found.update(item.category for item in plan.items)
        if plan.capacity is not None:
            found.update({CostCategory.HARDWARE, CostCategory.TOKENS})
            found.update(line.category for line in plan.capacity.unit_opex)
    return found


def _utilisation_ranges(scenario: Scenario) -> list[SensitivityRange]:
    ranges = []
    for plan in scenario.plans:
        planned = [line.utilisation for line in plan.instances]
        if plan.capacity is not None:
            planned.append(plan.capacity.utilisation)
        if planned:
            level = min(planned)
            ranges.append(_around("utilisation", level, -0.2, 0.1, lowest=0.05, highest=1.0, plan=plan.name))
    return ranges


def _around(
    name: str, value: float, down: float, up: float, *, lowest: float, highest: float, plan: str | None = None
) -> SensitivityRange:
    """value + down .. value + up, clipped to [lowest, highest] and rid of float noise."""
    low = round(max(value + down, lowest), 9)
    high = round(min(value + up, highest), 9)
    return SensitivityRange(name, low, high, plan)
