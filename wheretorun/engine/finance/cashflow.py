"""Monthly cash flows of each plan over the horizon, vectorised over samples.

Every figure is computed as an array of shape (samples, months): the deterministic `evaluate`
is a batch of one sample, Monte Carlo, sensitivity and break-even curves are batches of many.
The same arithmetic runs in both, so a Monte Carlo run without variance reproduces the
deterministic totals exactly.

Cash flows are costs, positive when money goes out:

    total(m) = capex(m) + opex(m) − residual value (in the last month only)

* capex is paid in the month of purchase (owned units: in the month they are ordered);
* depreciation is straight line from the month an asset enters service, over its life, down to
  its residual fraction; it is reported (with the book value) but is not a cash flow;
* with `ResidualValue.BOOK_VALUE` the assets held at the end are sold at their book value: a
  credit in the last month. Then the sum of opex + depreciation equals the total, and
  `usd_per_million_tokens` of a month, (opex + depreciation) / million tokens, is the amortised
  cost of that month's tokens;
* `npv_usd` is the present value of the cost stream (see `metrics` for the discounting).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from wheretorun.engine.finance.inputs import (
    InputKind,
    Knobs,
    NamedInput,
    PlanKnobs,
    build_knobs,
    with_horizon,
)
from wheretorun.engine.finance.metrics import monthly_rate
from wheretorun.engine.finance.plan import (
    CapexItem,
    CostCategory,
    InstanceLine,
    OpexLine,
    OwnedCapacity,
    Plan,
    ResidualValue,
    Scenario,
    UsageLine,
)

__all__ = [
    "Batch",
    "CostKind",
    "Evaluation",
    "LineFlow",
    "Metric",
    "MonthFlow",
    "PlanArrays",
    "PlanResult",
    "evaluate",
    "evaluate_batch",
    "evaluate_settings",
]

FloatArray = npt.NDArray[np.float64]

_TOKENS_PER_MILLION = 1e6
_UNIT_NOISE = 1e-9  # how far above a whole number of units float noise may push a ratio


class CostKind(StrEnum):
    CAPEX = "capex"
    OPEX = "opex"


class Metric(StrEnum):
    """Which figure of a plan break-even, sensitivity and Monte Carlo compare."""

    TOTAL = "total_usd"  # nominal sum of the cash flows
    NPV = "npv_usd"  # present value of the cash flows


# --- arrays (internal to engine.finance) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineArrays:
    name: str
    category: CostCategory
    kind: CostKind
    usd: FloatArray  # (samples, months)


@dataclass(frozen=True, slots=True)
class _Assets:
    """Value entering service each month, depreciated alike."""

    usd_in_service: FloatArray  # (samples, months)
    life_months: int
    residual_fraction: float


@dataclass(frozen=True, slots=True)
class PlanArrays:
    lines: tuple[LineArrays, ...]
    capex: FloatArray  # (samples, months)
    opex: FloatArray
    depreciation: FloatArray
    book_value: FloatArray  # at the end of each month
    residual: FloatArray  # (samples,): credited in the last month
    net: FloatArray  # capex + opex − residual in the last month
    units_in_service: FloatArray | None  # owned capacity only
    burst_tokens: FloatArray | None


@dataclass(frozen=True, slots=True)
class Batch:
    """Cash flows of every plan for every sample."""

    tokens: FloatArray  # (samples, months)
    discount: FloatArray  # (samples, months)
    plans: tuple[PlanArrays, ...]

    def totals(self) -> FloatArray:
        """(samples, plans) nominal totals."""
        return np.stack([plan.net.sum(axis=1) for plan in self.plans], axis=1)

    def npvs(self) -> FloatArray:
        """(samples, plans) present values."""
        return np.stack([(plan.net * self.discount).sum(axis=1) for plan in self.plans], axis=1)

    def metric(self, metric: Metric) -> FloatArray:
        return self.totals() if metric == Metric.TOTAL else self.npvs()


def evaluate_batch(scenario: Scenario, knobs: Knobs) -> Batch:
    """Cash flows of all plans for `knobs.size` samples of the inputs."""
    months = scenario.horizon_months
    tokens = _tokens(scenario, knobs, months)
    monthly = (1.0 + knobs.discount_rate_annual) ** (1.0 / 12.0) - 1.0
    discount = 1.0 / (1.0 + monthly) ** np.arange(months, dtype=np.float64)
    residual = scenario.assumptions.residual_value is ResidualValue.BOOK_VALUE
    plans = tuple(
        _plan_arrays(plan, plan_knobs, tokens, credit_residual=residual)
        for plan, plan_knobs in zip(scenario.plans, knobs.plans, strict=True)
    )
    return Batch(tokens=tokens, discount=discount, plans=plans)


def evaluate_settings(
    scenario: Scenario, settings: Sequence[tuple[NamedInput, FloatArray]], size: int
) -> Batch:
    """`evaluate_batch` with named inputs set to per-sample values (arrays of shape (size,)).
    A `horizon_months` setting must hold one value for the whole batch."""
    others = [(named, values) for named, values in settings if named.kind is not InputKind.HORIZON]
    for named, values in settings:
        if named.kind is InputKind.HORIZON:
            horizons = np.unique(values)
            if len(horizons) != 1:
                raise ValueError("one horizon per batch: the horizon sets the shape of the arrays")
            scenario = with_horizon(scenario, int(horizons[0]))
    return evaluate_batch(scenario, build_knobs(scenario, others, size))


def _tokens(scenario: Scenario, knobs: Knobs, months: int) -> FloatArray:
    traffic = scenario.traffic
    if traffic.monthly_tokens is not None:
        base = np.asarray(traffic.monthly_tokens[:months], dtype=np.float64)[None, :]
    else:
        assert knobs.growth_per_month is not None
        base = traffic.tokens_per_month * (1.0 + knobs.growth_per_month) ** np.arange(
            months, dtype=np.float64
        )
    return np.asarray(base * knobs.traffic_multiplier)


def _plan_arrays(plan: Plan, knobs: PlanKnobs, tokens: FloatArray, *, credit_residual: bool) -> PlanArrays:
    samples, months = tokens.shape
    lines: list[LineArrays] = []
    assets: list[_Assets] = []
    for item in plan.capex:
        line = _capex_line(item, knobs, samples, months)
        lines.append(line)
        assets.append(_Assets(line.usd, _life_months(item.depreciation_years), item.residual_fraction))
    lines += [_opex_line(line, knobs, months) for line in plan.opex]
    lines += [_usage_line(line, knobs, tokens) for line in plan.usage]
    lines += [_instance_line(line, knobs, tokens) for line in plan.instances]
    units = burst = None
    if plan.capacity is not None:
        owned = _owned(plan.capacity, knobs, tokens)
        lines += owned.lines
        assets.append(owned.assets)
        units, burst = owned.units_in_service, owned.burst_tokens
    return _assemble(lines, assets, units, burst, (samples, months), credit_residual=credit_residual)


def _assemble(
    lines: list[LineArrays],
    assets: list[_Assets],
    units: FloatArray | None,
    burst: FloatArray | None,
    shape: tuple[int, int],
    *,
    credit_residual: bool,
) -> PlanArrays:
    capex = np.zeros(shape)
    opex = np.zeros(shape)
    for line in lines:
        if line.kind is CostKind.CAPEX:
            capex = capex + line.usd
        else:
            opex = opex + line.usd
    depreciation = np.zeros(shape)
    book_value = np.zeros(shape)
    for group in assets:
        group_depreciation, group_book = _depreciation(group)
        depreciation = depreciation + group_depreciation
        book_value = book_value + group_book
    residual = book_value[:, -1].copy() if credit_residual else np.zeros(shape[0])
    net = capex + opex
    net[:, -1] -= residual
    return PlanArrays(
        lines=tuple(lines),
        capex=capex,
        opex=opex,
        depreciation=depreciation,
        book_value=book_value,
        residual=residual,
        net=net,
        units_in_service=units,
        burst_tokens=burst,
    )


# --- one line at a time ---------------------------------------------------------------------


def _life_months(years: float) -> int:
    return max(1, round(years * 12))


def _escalation(annual: float, start_month: int, months: int) -> FloatArray:
    """(1 + annual)^(whole years since `start_month`) for each month, 1 before the start."""
    years = np.floor((np.arange(months) - (start_month - 1)) / 12.0).clip(min=0.0)
    return np.asarray((1.0 + annual) ** years)


def _capex_line(item: CapexItem, knobs: PlanKnobs, samples: int, months: int) -> LineArrays:
    usd = np.zeros((samples, months))
    if item.month <= months:
        usd[:, item.month - 1] = item.amount_usd * knobs.price(item.category)[:, 0]
    return LineArrays(item.name, item.category, CostKind.CAPEX, usd)


def _opex_line(line: OpexLine, knobs: PlanKnobs, months: int) -> LineArrays:
    month_numbers = np.arange(1, months + 1)
    end = months if line.end_month is None else line.end_month
    active = (month_numbers >= line.start_month) & (month_numbers <= end)
    row = line.usd_per_month * _escalation(line.annual_escalation, line.start_month, months) * active
    return LineArrays(line.name, line.category, CostKind.OPEX, row * knobs.price(line.category))


def _usage_line(line: UsageLine, knobs: PlanKnobs, tokens: FloatArray) -> LineArrays:
    units = tokens / _TOKENS_PER_MILLION * line.units_per_million_tokens
    usd = units * line.usd_per_unit * knobs.price(line.category)
    return LineArrays(line.name, line.category, CostKind.OPEX, usd)


def _whole_units(tokens: FloatArray, tokens_per_unit: FloatArray | float) -> FloatArray:
    """The whole number of units that carry `tokens` (0 for no tokens)."""
    return np.asarray(np.ceil(tokens / tokens_per_unit - _UNIT_NOISE).clip(min=0.0))


def _instance_line(line: InstanceLine, knobs: PlanKnobs, tokens: FloatArray) -> LineArrays:
    utilisation = line.utilisation if knobs.utilisation is None else knobs.utilisation
    instances = np.maximum(
        _whole_units(tokens, line.tokens_per_month_per_instance * utilisation), line.minimum_instances
    )
    usd_per_hour: FloatArray | float = line.usd_per_instance_hour
    if line.fallback_usd_per_instance_hour is not None:
        spot = line.spot_availability if knobs.spot_availability is None else knobs.spot_availability
        usd_per_hour = spot * line.usd_per_instance_hour + (1.0 - spot) * line.fallback_usd_per_instance_hour
    usd = instances * line.hours_per_month * usd_per_hour * knobs.price(line.category)
    return LineArrays(line.name, line.category, CostKind.OPEX, usd)


@dataclass(frozen=True, slots=True)
class _Owned:
    lines: list[LineArrays]
    assets: _Assets
    units_in_service: FloatArray
    burst_tokens: FloatArray


def _owned(capacity: OwnedCapacity, knobs: PlanKnobs, tokens: FloatArray) -> _Owned:
    """Units bought as the traffic needs them, their running costs, and the burst traffic."""
    months = tokens.shape[1]
    utilisation = capacity.utilisation if knobs.utilisation is None else knobs.utilisation
    tokens_per_unit = capacity.tokens_per_month_per_unit * utilisation
    needed = _whole_units(tokens, tokens_per_unit)
    if capacity.max_units is not None:
        needed = np.minimum(needed, float(capacity.max_units))
    in_service = _units_in_service(needed, capacity.initial_units, capacity.lead_time_months)
    delivered = np.diff(in_service, axis=1, prepend=0.0)
    ordered = _orders(delivered, capacity.initial_units, capacity.lead_time_months)
    usd_per_unit = capacity.capex_usd_per_unit * knobs.price(CostCategory.HARDWARE)
    lines = [LineArrays(capacity.name, CostCategory.HARDWARE, CostKind.CAPEX, ordered * usd_per_unit)]
    for line in capacity.unit_opex:
        row = line.usd_per_unit_month * _escalation(line.annual_escalation, 1, months)
        lines.append(
            LineArrays(line.name, line.category, CostKind.OPEX, in_service * row * knobs.price(line.category))
        )
    burst = tokens - np.minimum(tokens, in_service * tokens_per_unit)
    burst_usd = burst / _TOKENS_PER_MILLION * capacity.burst_usd_per_million_tokens
    lines.append(
        LineArrays(
            capacity.burst_name,
            CostCategory.TOKENS,
            CostKind.OPEX,
            burst_usd * knobs.price(CostCategory.TOKENS),
        )
    )
    assets = _Assets(
        delivered * usd_per_unit, _life_months(capacity.depreciation_years), capacity.residual_fraction
    )
    return _Owned(lines, assets, in_service, burst)


def _units_in_service(needed: FloatArray, initial_units: int, lead_time_months: int) -> FloatArray:
    """Units in service each month: the initial ones, and from month lead + 1 on the most ever
    needed so far (units are kept once bought)."""
    deliverable = needed.copy()
    deliverable[:, :lead_time_months] = 0.0
    return np.maximum(np.maximum.accumulate(deliverable, axis=1), float(initial_units))


def _orders(delivered: FloatArray, initial_units: int, lead_time_months: int) -> FloatArray:
    """Units paid each month: the initial units in month 1, the others `lead_time_months` before
    their delivery."""
    months = delivered.shape[1]
    grown = delivered.copy()
    grown[:, 0] -= initial_units
    ordered = np.zeros_like(delivered)
    ordered[:, 0] = float(initial_units)
    if lead_time_months < months:
        ordered[:, : months - lead_time_months] += grown[:, lead_time_months:]
    return ordered


def _depreciation(assets: _Assets) -> tuple[FloatArray, FloatArray]:
    """Straight-line depreciation each month and book value at each month's end.

    A value V entering service in month s loses V × (1 − residual) / life in each of the months
    s .. s + life − 1; the value in its life in month m is what entered in the last `life` months.
    """
    life = assets.life_months
    entered = np.cumsum(assets.usd_in_service, axis=1)
    entered_before_life = np.zeros_like(entered)
    if life < entered.shape[1]:
        entered_before_life[:, life:] = entered[:, :-life]
    depreciation = (entered - entered_before_life) * (1.0 - assets.residual_fraction) / life
    book_value = (entered - np.cumsum(depreciation, axis=1)).clip(min=0.0)  # no float-noise negatives
    return depreciation, book_value


# --- the deterministic evaluation -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MonthFlow:
    """One month of one plan. Money in USD, costs positive."""

    month: int  # 1-based
    tokens: float
    capex_usd: float
    opex_usd: float
    residual_value_usd: float  # credit for the assets sold at the end (last month only)
    total_usd: float  # capex + opex − residual value
    cumulative_usd: float
    discount_factor: float
    present_value_usd: float
    depreciation_usd: float
    book_value_usd: float  # at the end of the month
    units_in_service: int | None  # owned capacity only
    burst_tokens: float | None  # owned capacity only: tokens beyond the units in service
    usd_per_million_tokens: float | None  # (opex + depreciation) / million tokens; None without tokens


@dataclass(frozen=True, slots=True)
class LineFlow:
    """One cost line of one plan, month by month."""

    name: str
    category: CostCategory
    kind: CostKind
    monthly_usd: tuple[float, ...]
    total_usd: float


@dataclass(frozen=True, slots=True)
class PlanResult:
    name: str
    months: tuple[MonthFlow, ...]
    lines: tuple[LineFlow, ...]
    capex_usd: float
    opex_usd: float
    residual_value_usd: float
    total_usd: float
    npv_usd: float
    tokens: float
    usd_per_million_tokens: float | None  # total / million tokens over the horizon

    @property
    def monthly_total_usd(self) -> tuple[float, ...]:
        return tuple(month.total_usd for month in self.months)

    def metric(self, metric: Metric) -> float:
        return self.total_usd if metric == Metric.TOTAL else self.npv_usd


@dataclass(frozen=True, slots=True)
class Evaluation:
    scenario: Scenario
    monthly_discount_rate: float
    plans: tuple[PlanResult, ...]

    def plan(self, name: str, field: str = "plan") -> PlanResult:
        """The result of the plan called `name`; InvalidSpec(`field`) when there is none."""
        return self.plans[self.scenario.plan_index(name, field)]

    def cheapest(self, metric: Metric = Metric.TOTAL) -> PlanResult:
        return min(self.plans, key=lambda plan: plan.metric(metric))


def evaluate(scenario: Scenario) -> Evaluation:
    """Monthly cash flows, totals and NPV of every plan of `scenario`."""
    batch = evaluate_batch(scenario, build_knobs(scenario, (), size=1))
    totals, npvs = batch.totals()[0], batch.npvs()[0]
    discount = batch.discount[0]
    return Evaluation(
        scenario=scenario,
        monthly_discount_rate=monthly_rate(scenario.assumptions.discount_rate_annual),
        plans=tuple(
            _plan_result(plan, arrays, batch.tokens[0], discount, float(total), float(present))
            for plan, arrays, total, present in zip(scenario.plans, batch.plans, totals, npvs, strict=True)
        ),
    )


def _plan_result(
    plan: Plan, arrays: PlanArrays, tokens: FloatArray, discount: FloatArray, total: float, present: float
) -> PlanResult:
    net = arrays.net[0]
    cumulative = np.cumsum(net)
    amortised = arrays.opex[0] + arrays.depreciation[0]
    residual = np.zeros_like(net)
    residual[-1] = arrays.residual[0]
    months = tuple(
        MonthFlow(
            month=index + 1,
            tokens=float(tokens[index]),
            capex_usd=float(arrays.capex[0, index]),
            opex_usd=float(arrays.opex[0, index]),
            residual_value_usd=float(residual[index]),
            total_usd=float(net[index]),
            cumulative_usd=float(cumulative[index]),
            discount_factor=float(discount[index]),
            present_value_usd=float(net[index] * discount[index]),
            depreciation_usd=float(arrays.depreciation[0, index]),
            book_value_usd=float(arrays.book_value[0, index]),
            units_in_service=None
            if arrays.units_in_service is None
            else int(arrays.units_in_service[0, index]),
            burst_tokens=None if arrays.burst_tokens is None else float(arrays.burst_tokens[0, index]),
            usd_per_million_tokens=_per_million(float(amortised[index]), float(tokens[index])),
        )
        for index in range(len(net))
    )
    lines = tuple(
        LineFlow(
            name=line.name,
            category=line.category,
            kind=line.kind,
            monthly_usd=tuple(float(value) for value in line.usd[0]),
            total_usd=float(line.usd[0].sum()),
        )
        for line in arrays.lines
    )
    return PlanResult(
        name=plan.name,
        months=months,
        lines=lines,
        capex_usd=float(arrays.capex[0].sum()),
        opex_usd=float(arrays.opex[0].sum()),
        residual_value_usd=float(arrays.residual[0]),
        total_usd=total,
        npv_usd=present,
        tokens=float(tokens.sum()),
        usd_per_million_tokens=_per_million(total, float(tokens.sum())),
    )


def _per_million(usd: float, tokens: float) -> float | None:
    return None if tokens <= 0 else usd / (tokens / _TOKENS_PER_MILLION)
