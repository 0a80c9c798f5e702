"""A scenario to evaluate: the traffic, the money assumptions and the plans' cost structures.

Every value here is frozen. The tree is validated as a whole when the `Scenario` is built, so an
error names the field by its full path as it appears in a request body
(`assumptions.horizon_months`, `plans[1].capex[0].amount_usd`); the parts (a `CapexItem`, a
`Plan`) are plain values until they are put into a scenario.

A plan pays for things in four ways:

* `capex`     one-off purchases paid in a given month, depreciated in a straight line from their
              price to `residual_fraction` × price over `depreciation_years`;
* `opex`      fixed monthly lines (staff, colocation, a support contract), with an optional
              start/end month and an annual escalation;
* `usage`     lines billed in proportion to the traffic (USD per million tokens; or any unit
              consumed per million tokens, such as instance-hours under perfect autoscaling);
* `instances` rented instances kept running in whole numbers, enough for each month's traffic,
              optionally on spot with an on-demand fallback price;

and, for a plan that owns its hardware, a `capacity`: servers bought when the traffic needs them
(ordered `lead_time_months` ahead), each with its own monthly running costs. Traffic that the
servers in service cannot carry — before the first delivery, or while a delivery is on its way —
is served at `burst_usd_per_million_tokens` (typically a hosted API), so the gap is priced, never
free.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from wheretorun.engine.errors import InvalidSpec

__all__ = [
    "HOURS_PER_MONTH",
    "MAX_HORIZON_MONTHS",
    "CapexItem",
    "CostCategory",
    "FinanceAssumptions",
    "InstanceLine",
    "OpexLine",
    "OwnedCapacity",
    "Plan",
    "ResidualValue",
    "Scenario",
    "Traffic",
    "UnitOpexLine",
    "UsageLine",
    "power_usd_per_month",
]

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12
MAX_HORIZON_MONTHS = 600
MAX_LEAD_TIME_MONTHS = 60


class CostCategory(StrEnum):
    """What a line pays for. Sensitivity and Monte Carlo move prices by category
    (`price:power`, `price:tokens`); `electricity` is another name for `price:power`."""

    HARDWARE = "hardware"
    COMPUTE = "compute"
    TOKENS = "tokens"
    POWER = "power"
    COLOCATION = "colocation"
    STAFF = "staff"
    MAINTENANCE = "maintenance"
    NETWORK = "network"
    STORAGE = "storage"
    SOFTWARE = "software"
    OTHER = "other"


class ResidualValue(StrEnum):
    """How assets still held at the end of the horizon count.

    BOOK_VALUE: they are sold at their book value, a positive cash flow in the last month.
    NONE:       they are worth nothing to this plan (a conservative view, and the one that
                makes a horizon break-even read like a payback period).
    """

    BOOK_VALUE = "book_value"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class CapexItem:
    """A purchase: `amount_usd` paid in `month` (1-based), in service from that month. A purchase
    after the horizon is outside the scenario (a shorter horizon in a sensitivity run drops it)."""

    name: str  # what it buys
    amount_usd: float
    month: int = 1
    depreciation_years: float = 5.0
    residual_fraction: float = 0.0  # of the price, left at the end of its depreciation life
    category: CostCategory = CostCategory.HARDWARE


@dataclass(frozen=True, slots=True)
class OpexLine:
    """A fixed monthly cost from `start_month` to `end_month` (inclusive; None = to the end).

    `annual_escalation` raises it on each anniversary of its start: 0.03 makes months 13-24 of
    the line cost 3% more than months 1-12.
    """

    name: str
    usd_per_month: float
    category: CostCategory = CostCategory.OTHER
    start_month: int = 1
    end_month: int | None = None
    annual_escalation: float = 0.0


@dataclass(frozen=True, slots=True)
class UsageLine:
    """Billed in proportion to traffic: units = million tokens × `units_per_million_tokens`.

    A hosted API is `UsageLine("tokens", usd_per_unit=3.0)` (USD per million tokens). A blended
    input/output price is the caller's arithmetic; so are instance-hours per million tokens
    when rented capacity scales perfectly with the load.
    """

    name: str
    usd_per_unit: float
    unit: str = "million tokens"
    units_per_million_tokens: float = 1.0
    category: CostCategory = CostCategory.TOKENS


@dataclass(frozen=True, slots=True)
class InstanceLine:
    """Rented instances kept running all month, in whole numbers:

        instances = max(minimum_instances, ceil(tokens / (tokens_per_month_per_instance × utilisation)))
        cost      = instances × hours_per_month × price per instance-hour

    On spot, `spot_availability` is the share of instance-hours obtained at
    `usd_per_instance_hour`; the rest is bought at `fallback_usd_per_instance_hour` (on-demand).
    Interruptions are priced here, not their effect on latency.
    """

    name: str
    usd_per_instance_hour: float
    tokens_per_month_per_instance: float  # at 100% utilisation
    utilisation: float = 1.0  # the share of that rated capacity that is planned to be used
    minimum_instances: int = 0
    hours_per_month: float = HOURS_PER_MONTH
    fallback_usd_per_instance_hour: float | None = None
    spot_availability: float = 1.0
    category: CostCategory = CostCategory.COMPUTE


@dataclass(frozen=True, slots=True)
class UnitOpexLine:
    """A monthly running cost of each owned unit in service (power, colocation, maintenance)."""

    name: str
    usd_per_unit_month: float
    category: CostCategory = CostCategory.OTHER
    annual_escalation: float = 0.0  # anniversaries counted from month 1


@dataclass(frozen=True, slots=True)
class OwnedCapacity:
    """Owned servers that grow with the traffic.

    Each unit carries `tokens_per_month_per_unit` × `utilisation` tokens a month. Units needed in
    month m = ceil(tokens(m) / that), capped at `max_units`; they are never sold before the end.

    Lead time: a unit needed in month m is ordered and paid in month m − `lead_time_months` and
    is in service from month m. Orders can be placed from month 1 at the earliest, so demand in
    the first `lead_time_months` months is carried by the `initial_units` (in service from month
    1, paid in month 1, ordered before the scenario starts) and, beyond them, by the burst price.
    Nothing is ordered for demand after the horizon. Each unit depreciates from its delivery.
    """

    tokens_per_month_per_unit: float
    capex_usd_per_unit: float
    burst_usd_per_million_tokens: float  # traffic beyond the units in service
    name: str = "servers"
    lead_time_months: int = 0
    utilisation: float = 1.0
    initial_units: int = 0
    max_units: int | None = None
    unit_opex: tuple[UnitOpexLine, ...] = ()
    depreciation_years: float = 5.0
    residual_fraction: float = 0.0
    burst_name: str = "burst"


@dataclass(frozen=True, slots=True)
class Plan:
    """One way of paying for the scenario's traffic, with all its cost lines."""

    name: str
    capex: tuple[CapexItem, ...] = ()
    opex: tuple[OpexLine, ...] = ()
    usage: tuple[UsageLine, ...] = ()
    instances: tuple[InstanceLine, ...] = ()
    capacity: OwnedCapacity | None = None

    @property
    def items(self) -> tuple[CapexItem | OpexLine | UsageLine | InstanceLine, ...]:
        """The lines given one by one (the owned capacity's lines are not among them)."""
        return (*self.capex, *self.opex, *self.usage, *self.instances)

    @property
    def line_names(self) -> tuple[str, ...]:
        """Every cost line the plan reports, in evaluation order."""
        names = [item.name for item in self.items]
        if self.capacity is not None:
            capacity = self.capacity
            names += [capacity.name, *(line.name for line in capacity.unit_opex), capacity.burst_name]
        return tuple(names)


@dataclass(frozen=True, slots=True)
class Traffic:
    """Tokens a month: `tokens_per_month` in month 1 growing by `growth_per_month` (compound,
    0.05 = +5% a month), or an explicit `monthly_tokens` series from month 1 (at least as long as
    the horizon; months after it are unused)."""

    tokens_per_month: float = 0.0
    growth_per_month: float = 0.0
    monthly_tokens: tuple[float, ...] | None = None

    @property
    def is_series(self) -> bool:
        return self.monthly_tokens is not None

    @property
    def first_month_tokens(self) -> float:
        if self.monthly_tokens is not None:
            return self.monthly_tokens[0]
        return self.tokens_per_month


@dataclass(frozen=True, slots=True)
class FinanceAssumptions:
    """Money conventions. Cash flows of month m are discounted by (1 + i)^(m − 1), with the
    monthly rate i = (1 + `discount_rate_annual`)^(1/12) − 1: month 1 is today."""

    horizon_months: int = 36
    discount_rate_annual: float = 0.08
    residual_value: ResidualValue = ResidualValue.BOOK_VALUE


@dataclass(frozen=True, slots=True)
class Scenario:
    """Plans to compare under one traffic forecast and one set of money assumptions."""

    plans: tuple[Plan, ...]
    traffic: Traffic
    assumptions: FinanceAssumptions = field(default_factory=FinanceAssumptions)
    name: str = ""

    def __post_init__(self) -> None:
        _check_assumptions(self.assumptions)
        _check_traffic(self.traffic, self.assumptions.horizon_months)
        _require(len(self.plans) >= 1, "plans", "name at least one plan")
        for index, plan in enumerate(self.plans):
            _check_plan(plan, f"plans[{index}]")
        _check_unique((plan.name for plan in self.plans), "plans", "name")
        # A request may spell the enums as plain strings: hold the members from here on.
        residual = ResidualValue(self.assumptions.residual_value)
        object.__setattr__(
            self, "assumptions", dataclasses.replace(self.assumptions, residual_value=residual)
        )
        object.__setattr__(self, "plans", tuple(_with_members(plan) for plan in self.plans))

    @property
    def horizon_months(self) -> int:
        return self.assumptions.horizon_months

    @property
    def plan_names(self) -> tuple[str, ...]:
        return tuple(plan.name for plan in self.plans)

    def plan_index(self, name: str, field: str) -> int:
        """The position of the plan called `name`; InvalidSpec(`field`) when there is none."""
        for index, plan in enumerate(self.plans):
            if plan.name == name:
                return index
        raise InvalidSpec(field, f"unknown plan {name!r}; the plans are {list(self.plan_names)}")


def power_usd_per_month(
    watts: float, pue: float, usd_per_kwh: float, hours_per_month: float = HOURS_PER_MONTH
) -> float:
    """The electricity bill of a load of `watts` (IT power) in a facility of power usage
    effectiveness `pue`: watts / 1000 × pue × hours × USD/kWh."""
    return watts / 1000.0 * pue * hours_per_month * usd_per_kwh


_Line = TypeVar("_Line", CapexItem, OpexLine, UsageLine, InstanceLine, UnitOpexLine)


def _member(line: _Line) -> _Line:
    return dataclasses.replace(line, category=CostCategory(line.category))


def _with_members(plan: Plan) -> Plan:
    """`plan` with every category a `CostCategory` member and every list a tuple."""
    capacity = plan.capacity
    if capacity is not None:
        capacity = dataclasses.replace(capacity, unit_opex=tuple(map(_member, capacity.unit_opex)))
    return dataclasses.replace(
        plan,
        capex=tuple(map(_member, plan.capex)),
        opex=tuple(map(_member, plan.opex)),
        usage=tuple(map(_member, plan.usage)),
        instances=tuple(map(_member, plan.instances)),
        capacity=capacity,
    )


# --- validation ------------------------------------------------------------------------------


def _require(condition: bool, field: str, reason: str) -> None:
    if not condition:
        raise InvalidSpec(field, reason)


def _check_number(
    value: float, field: str, *, low: float, high: float = math.inf, open_low: bool = False
) -> None:
    """`value` must be a finite number, at least `low` (above it with `open_low`), at most `high`."""
    finite = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if finite and (value > low if open_low else value >= low) and value <= high:
        return
    lower = f"> {low:g}" if open_low else f">= {low:g}"
    upper = "" if math.isinf(high) else f" and <= {high:g}"
    raise InvalidSpec(field, f"must be a finite number {lower}{upper}, got {value!r}")


def _check_whole(value: int, field: str, *, low: int, high: int | None = None) -> None:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    within = is_int and value >= low and (high is None or value <= high)
    bound = f"between {low} and {high}" if high is not None else f"at least {low}"
    _require(within, field, f"must be a whole number {bound}, got {value!r}")


def _check_name(value: str, field: str) -> None:
    _require(isinstance(value, str) and value.strip() != "", field, "must not be empty")


def _check_unique(names: Iterable[str], container: str, attribute: str) -> None:
    seen: set[str] = set()
    for index, name in enumerate(names):
        _require(name not in seen, f"{container}[{index}].{attribute}", f"{name!r} is used twice")
        seen.add(name)


def _check_assumptions(assumptions: FinanceAssumptions) -> None:
    _check_whole(assumptions.horizon_months, "assumptions.horizon_months", low=1, high=MAX_HORIZON_MONTHS)
    _check_number(assumptions.discount_rate_annual, "assumptions.discount_rate_annual", low=0.0, high=1.0)
    _require(
        assumptions.residual_value in tuple(ResidualValue),
        "assumptions.residual_value",
        f"must be one of {[member.value for member in ResidualValue]}",
    )


def _check_traffic(traffic: Traffic, horizon_months: int) -> None:
    if traffic.monthly_tokens is None:
        _check_number(traffic.tokens_per_month, "traffic.tokens_per_month", low=0.0)
        _check_number(traffic.growth_per_month, "traffic.growth_per_month", low=-1.0, high=1.0, open_low=True)
        return
    _require(
        traffic.tokens_per_month == 0 and traffic.growth_per_month == 0,
        "traffic.monthly_tokens",
        "give either monthly_tokens or tokens_per_month with growth_per_month, not both",
    )
    _require(
        len(traffic.monthly_tokens) >= horizon_months,
        "traffic.monthly_tokens",
        f"needs a value for each of the {horizon_months} months, got {len(traffic.monthly_tokens)}",
    )
    for month, tokens in enumerate(traffic.monthly_tokens):
        _check_number(tokens, f"traffic.monthly_tokens[{month}]", low=0.0)


def _check_plan(plan: Plan, path: str) -> None:
    _check_name(plan.name, f"{path}.name")
    for index, item in enumerate(plan.capex):
        _check_capex(item, f"{path}.capex[{index}]")
    for index, line in enumerate(plan.opex):
        _check_opex(line, f"{path}.opex[{index}]")
    for index, usage in enumerate(plan.usage):
        _check_usage(usage, f"{path}.usage[{index}]")
    for index, instance in enumerate(plan.instances):
        _check_instances(instance, f"{path}.instances[{index}]")
    if plan.capacity is not None:
        _check_capacity(plan.capacity, f"{path}.capacity")
    names = plan.line_names
    _require(len(names) > 0, path, "a plan needs at least one cost line (a missing price is not $0)")
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    _require(not duplicates, path, f"line names must be unique within a plan, repeated: {duplicates}")


def _check_category(category: CostCategory, field: str) -> None:
    _require(
        category in tuple(CostCategory),
        field,
        f"must be one of {[member.value for member in CostCategory]}",
    )


def _check_depreciation(years: float, residual_fraction: float, path: str) -> None:
    _check_number(years, f"{path}.depreciation_years", low=1 / 12, high=50.0)
    _check_number(residual_fraction, f"{path}.residual_fraction", low=0.0, high=1.0)


def _check_capex(item: CapexItem, path: str) -> None:
    _check_name(item.name, f"{path}.name")
    _check_number(item.amount_usd, f"{path}.amount_usd", low=0.0)
    _check_whole(item.month, f"{path}.month", low=1)
    _check_depreciation(item.depreciation_years, item.residual_fraction, path)
    _check_category(item.category, f"{path}.category")


def _check_escalation(value: float, field: str) -> None:
    _check_number(value, field, low=-1.0, high=1.0, open_low=True)


def _check_opex(line: OpexLine, path: str) -> None:
    _check_name(line.name, f"{path}.name")
    _check_number(line.usd_per_month, f"{path}.usd_per_month", low=0.0)
    _check_category(line.category, f"{path}.category")
    _check_whole(line.start_month, f"{path}.start_month", low=1)
    if line.end_month is not None:
        _check_whole(line.end_month, f"{path}.end_month", low=line.start_month)
    _check_escalation(line.annual_escalation, f"{path}.annual_escalation")


def _check_usage(line: UsageLine, path: str) -> None:
    _check_name(line.name, f"{path}.name")
    _check_number(line.usd_per_unit, f"{path}.usd_per_unit", low=0.0)
    _check_name(line.unit, f"{path}.unit")
    _check_number(line.units_per_million_tokens, f"{path}.units_per_million_tokens", low=0.0, open_low=True)
    _check_category(line.category, f"{path}.category")


def _check_instances(line: InstanceLine, path: str) -> None:
    _check_name(line.name, f"{path}.name")
    _check_number(line.usd_per_instance_hour, f"{path}.usd_per_instance_hour", low=0.0)
    _check_number(
        line.tokens_per_month_per_instance, f"{path}.tokens_per_month_per_instance", low=0.0, open_low=True
    )
    _check_number(line.utilisation, f"{path}.utilisation", low=0.0, high=1.0, open_low=True)
    _check_whole(line.minimum_instances, f"{path}.minimum_instances", low=0)
    _check_number(line.hours_per_month, f"{path}.hours_per_month", low=0.0, high=744.0, open_low=True)
    _check_number(line.spot_availability, f"{path}.spot_availability", low=0.0, high=1.0)
    if line.fallback_usd_per_instance_hour is None:
        _require(
            line.spot_availability == 1.0,
            f"{path}.fallback_usd_per_instance_hour",
            "needed when spot_availability is below 1: the hours spot cannot supply must be priced",
        )
    else:
        _check_number(line.fallback_usd_per_instance_hour, f"{path}.fallback_usd_per_instance_hour", low=0.0)
    _check_category(line.category, f"{path}.category")


def _check_capacity(capacity: OwnedCapacity, path: str) -> None:
    _check_name(capacity.name, f"{path}.name")
    _check_name(capacity.burst_name, f"{path}.burst_name")
    _check_number(
        capacity.tokens_per_month_per_unit, f"{path}.tokens_per_month_per_unit", low=0.0, open_low=True
    )
    _check_number(capacity.capex_usd_per_unit, f"{path}.capex_usd_per_unit", low=0.0)
    _check_number(capacity.burst_usd_per_million_tokens, f"{path}.burst_usd_per_million_tokens", low=0.0)
    _check_whole(capacity.lead_time_months, f"{path}.lead_time_months", low=0, high=MAX_LEAD_TIME_MONTHS)
    _check_number(capacity.utilisation, f"{path}.utilisation", low=0.0, high=1.0, open_low=True)
    _check_whole(capacity.initial_units, f"{path}.initial_units", low=0)
    if capacity.max_units is not None:
        _check_whole(capacity.max_units, f"{path}.max_units", low=max(capacity.initial_units, 1))
    _check_depreciation(capacity.depreciation_years, capacity.residual_fraction, path)
    for index, line in enumerate(capacity.unit_opex):
        line_path = f"{path}.unit_opex[{index}]"
        _check_name(line.name, f"{line_path}.name")
        _check_number(line.usd_per_unit_month, f"{line_path}.usd_per_unit_month", low=0.0)
        _check_category(line.category, f"{line_path}.category")
        _check_escalation(line.annual_escalation, f"{line_path}.annual_escalation")
