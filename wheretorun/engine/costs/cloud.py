"""Cloud rental: whole instances, priced per instance-hour.

Sizing. A replica needs `g` accelerators (capacity.py); an instance of `n` accelerators holds
floor(n / g) replicas, and the layout g chosen for an instance type is the one with the most
capacity per instance. A replica never spans instances (multi-node serving is not modelled), so
a model that needs more accelerators than an instance has cannot run on it.

In each hour group of each month, replicas = max(ceil(demand / planned capacity), 1) +
redundancy, where the planned capacity is the estimate x target utilisation; instances =
ceil(replicas / replicas per instance).

Pricing modes:
* on-demand, autoscaled: instances follow demand hour by hour (at least one serving replica plus
  the spares stay up, so the first request never waits for a cold start);
* on-demand, always on: each month runs the instances of its busiest hour all month;
* spot, autoscaled: the spot price (x (1 + spot_interruption_overhead), 0 by default), plus a
  fallback sized for reclaims as its own line (on-demand standby or a hosted API;
  spot_reclaims.py); no fallback priced, no spot plan;
* reserved 1 y / 3 y, always on: the committed price for the peak instance count of the whole
  horizon, paid for whole terms (a 3-year term on a 2-year horizon is paid for 3 years). The
  committed price is the user's own discount for the provider when the request gives one
  (`assumptions.reserved_discounts_by_provider`, labelled as the user's), else the provider's
  published commitment term that applies to the offer (`offer.commitments`, from the catalog:
  a discount off on-demand or a price per accelerator-hour). A provider with neither has no
  reserved plan (`unpriced`): no discount is ever assumed.

GCP rows price the GPUs without their host VM (`accelerator_only`). The catalog has no VM
prices, so these offers are rejected as `incomplete_price` unless
`assumptions.host_vm_usd_per_accelerator_hour` supplies one.
Every plan adds the operations staff of a rented deployment (staff.py): serving for each month,
a batch job for the hours it runs, scaled with the accelerators it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeVar

import numpy as np

from wheretorun.engine import spot_reclaims
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.capacity import REPLICA_SIZES, CapacityTable, ReplicaCapacity
from wheretorun.engine.catalog import CloudOffer
from wheretorun.engine.costs.arrays import CEIL_TOLERANCE, FloatArray
from wheretorun.engine.costs.candidate import CostedCandidate, Line, PricedCandidate
from wheretorun.engine.costs.demand import BatchDemand, ServingDemand
from wheretorun.engine.costs.staff import staff_amounts, staff_lines
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.rules.spot_fallback import spot_fallback
from wheretorun.engine.workload import OptionKind

_PriceT = TypeVar("_PriceT", float, FloatArray)

__all__ = [
    "BATCH_START_UP_RISK",
    "JOB_MODES",
    "Listed",
    "ON_DEMAND_AUTOSCALED",
    "SERVING_MODES",
    "CloudMode",
    "BatchJobs",
    "Layout",
    "RepricedTotal",
    "ReservedRate",
    "ServingCost",
    "ServingHours",
    "batch_jobs",
    "batch_plan",
    "catalog_reserved_rate",
    "choose_layout",
    "hourly_price",
    "listed_prices",
    "offer_label",
    "price_source",
    "priced_serving_plan",
    "reserved_rate",
    "spot_price",
    "serving_cost",
    "serving_hours",
    "serving_plan",
    "serving_total",
    "serving_totals",
    "whole_accelerators",
]


@dataclass(frozen=True, slots=True)
class CloudMode:
    pricing: str  # on_demand | spot | reserved_1y | reserved_3y
    scaling: str  # autoscaled | always_on | job
    name: str = field(init=False, compare=False, repr=False)  # "on-demand autoscaled"
    # a commitment term (reserved_1y, reserved_3y); set once, as pricing reads it ~100 times a request
    reserved: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", f"{self.pricing.replace('_', '-')} {self.scaling.replace('_', '-')}")
        object.__setattr__(self, "reserved", self.pricing.startswith("reserved"))

    @property
    def term_years(self) -> int:
        return 3 if self.pricing == "reserved_3y" else 1


ON_DEMAND_AUTOSCALED = CloudMode("on_demand", "autoscaled")
SERVING_MODES = (
    ON_DEMAND_AUTOSCALED,
    CloudMode("on_demand", "always_on"),
    CloudMode("spot", "autoscaled"),
    CloudMode("reserved_1y", "always_on"),
    CloudMode("reserved_3y", "always_on"),
)
JOB_MODES = (CloudMode("on_demand", "job"), CloudMode("spot", "job"))


@dataclass(frozen=True, slots=True)
class Layout:
    """Replicas of `capacity` packed `per_instance` to an instance of `accelerators` accelerators."""

    capacity: ReplicaCapacity
    per_instance: int
    accelerators: int

    @property
    def idle_accelerators(self) -> int:
        return self.accelerators - self.per_instance * self.capacity.accelerators


def whole_accelerators(count: Decimal) -> int | None:
    """The offer's accelerator count when whole (GPU slices such as AWS g6f are not modelled)."""
    if count < 1 or count != count.to_integral_value():
        return None
    return int(count)


def choose_layout(
    capacities: CapacityTable,
    accelerator_id: str,
    accelerators: int,
    precision: Precision,
) -> tuple[Layout | None, list[ReplicaCapacity]]:
    """The feasible replica size with the most capacity per instance, and the sizes considered."""
    considered = []
    for size in REPLICA_SIZES:
        if size <= accelerators:
            capacity = capacities.get((accelerator_id, size, precision))
            if capacity is not None:
                considered.append(capacity)
    best: tuple[ReplicaCapacity, int] | None = None
    best_rps = 0.0
    for capacity in considered:
        if not capacity.ok:
            continue
        per_instance = accelerators // capacity.accelerators
        instance_rps = per_instance * capacity.requests_per_s
        if best is None or instance_rps > best_rps * (1 + 1e-12):
            best, best_rps = (capacity, per_instance), instance_rps
    return (None if best is None else Layout(best[0], best[1], accelerators)), considered


@dataclass(frozen=True, slots=True)
class ServingHours:
    """Instance-hours over the horizon for N sizings (arrays of length N)."""

    autoscaled: FloatArray
    always_on: FloatArray
    peak_instances: FloatArray


def serving_hours(
    demand: ServingDemand, planned_rps: FloatArray, per_instance: FloatArray, minimum_replicas: int = 1
) -> ServingHours:
    """Instances needed hour group by hour group, summed three ways (see the module docstring)."""
    rates = demand.rates_rps[:, :, None]
    instances = _instances(rates, planned_rps, per_instance, demand.redundancy, minimum_replicas)
    return _summed_hours(instances, demand)


def _instances(
    rates: FloatArray,
    planned_rps: FloatArray,
    per_instance: FloatArray,
    redundancy: int,
    minimum_replicas: int,
) -> FloatArray:
    """Instances per (month, hour group, sizing) for `rates` (months, groups, 1 or N) and N
    sizings: max(ceil(rates / planned), minimum) + redundancy replicas, ceil(replicas / per
    instance).

    The sizings are the last axis, so every step runs along one contiguous row per (month, group)
    rather than along each sizing's few months (see `_summed_hours`). `ceil_array` is written out
    in place on one array. Its floor of 0 for the replicas is left to `minimum_replicas`
    (max(max(x, 0), m) is max(x, m) for m >= 0). For the instances it only matters when there can
    be no replica at all: at least one replica over a count per instance (at most an instance's
    accelerators), less the tolerance, rounds up to at least 1, while 0 replicas round up to -0.0,
    which the floor makes 0.0. The same figures in 8 array operations instead of 10 and 1 new array
    instead of 10 (with `_summed_hours`, 2.7% of the prototype's instructions per request and 3.7%
    of the 70B chat's, 2026-12-05)."""
    assert minimum_replicas >= 0, "a negative minimum would need the floor of 0"
    assert redundancy >= 0, "negative spares would need the floor of 0"
    replicas = rates / planned_rps
    replicas -= CEIL_TOLERANCE
    np.ceil(replicas, out=replicas)
    np.maximum(replicas, minimum_replicas, out=replicas)
    replicas += redundancy
    instances = replicas  # divided in place
    instances /= per_instance
    instances -= CEIL_TOLERANCE
    np.ceil(instances, out=instances)
    if minimum_replicas + redundancy == 0:
        np.maximum(instances, 0.0, out=instances)
    return instances


def _summed_hours(instances: FloatArray, demand: ServingDemand) -> ServingHours:
    """`instances` (months, hour groups, sizings) summed over the horizon three ways.

    With the sizings last, each reduction over months or hour groups is a few whole-row
    operations; numpy reducing each sizing's short run of months instead calls its inner loop
    once per sizing (the prototype's 896 sizings x 12 months; with `_instances` on that layout,
    0.77M -> 0.52M instructions a call, 23.93M -> 23.27M per request for the prototype and
    32.81M -> 31.79M for the 70B chat, 2026-12-05). The sums add in the order numpy's own `sum`
    over (months, groups) adds them (`_summed_rows`), so every figure is the same to the bit; the
    maxima are exact in any order, and a month's peak over one hour group is that group's row."""
    months, groups, sizings = instances.shape
    monthly_peak = instances[:, 0, :]
    for group in range(1, groups):
        monthly_peak = np.maximum(monthly_peak, instances[:, group, :])
    hourly = instances * demand.group_hours[:, None]
    return ServingHours(
        autoscaled=_summed_rows(hourly.reshape(months * groups, sizings)),
        always_on=_summed_rows(monthly_peak) * demand.hours_per_month,
        peak_instances=np.maximum.reduce(monthly_peak, axis=0),
    )


_PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE: longer runs are halved
_UNROLLED = 8  # numpy's pairwise sum keeps 8 partial sums


def _summed_rows(rows: FloatArray) -> FloatArray:
    """The rows of `rows` (n, sizings) added up, in the order numpy's pairwise summation
    (`pairwise_sum` in numpy/_core/src/umath/loops_utils.h.src) adds each column's n values, so
    each total is the bit `np.add.reduce` of that column gives (tested against it): under 8
    values one after another from 0.0; up to 128, 8 partial sums over blocks of 8, combined as a
    tree, then the rest one after another; beyond, the two halves (cut at a multiple of 8) each
    so. Each step is one operation on whole rows."""
    n = len(rows)
    if n < _UNROLLED:
        total: FloatArray = rows[0] + 0.0
        for row in rows[1:]:
            total += row
        return total
    if n <= _PAIRWISE_BLOCK:
        whole = n - n % _UNROLLED
        partial = rows[:_UNROLLED]
        for start in range(_UNROLLED, whole, _UNROLLED):
            partial = partial + rows[start : start + _UNROLLED]
        pairs = partial[0::2] + partial[1::2]  # (r0 + r1), (r2 + r3), (r4 + r5), (r6 + r7)
        # numpy adds the pairwise sum to its starting 0.0: a column of -0.0 totals +0.0
        total = (pairs[0] + pairs[1]) + (pairs[2] + pairs[3]) + 0.0
        for row in rows[whole:]:
            total += row
        return total
    half = n // 2
    half -= half % _UNROLLED
    return _summed_rows(rows[:half]) + _summed_rows(rows[half:])


def _layout_hours(
    layout: Layout, rates: FloatArray, demand: ServingDemand, assumptions: Assumptions
) -> ServingHours:
    """The hours of one layout at each volume of `rates` (months, groups, volumes) of `demand`'s
    shape (`serving_hours` of that layout at each volume)."""
    planned = np.asarray([layout.capacity.requests_per_s * assumptions.target_utilisation])
    per_instance = np.asarray([float(layout.per_instance)])
    return _summed_hours(_instances(rates, planned, per_instance, demand.redundancy, 1), demand)


def committed_months(mode: CloudMode, horizon_months: int) -> int:
    """Months paid for a reservation: whole terms covering the horizon."""
    term = 12 * mode.term_years
    return math.ceil(horizon_months / term) * term


@dataclass(frozen=True, slots=True)
class ReservedRate:
    """The committed price of an offer's accelerators per instance-hour (a host VM comes on top),
    and where it comes from (the user's discount or the catalog's term, with its source)."""

    usd_per_hour: float
    source: str
    users: bool  # the request's own discount, not a published term


def reserved_rate(offer: CloudOffer, term_years: int, assumptions: Assumptions) -> ReservedRate | None:
    """The committed price of `offer` for a `term_years` commitment, or None when neither the
    request nor the catalog gives one (see the module docstring)."""
    on_demand = None if offer.on_demand_usd_per_hour is None else float(offer.on_demand_usd_per_hour)
    given = assumptions.reserved_discount(offer.provider, term_years)
    if given is not None:
        discount, where = given
        if on_demand is None:
            return None
        return ReservedRate(
            on_demand * (1 - discount),
            f"the user's {discount:.0%} {term_years}-year discount ({where}) off the on-demand price "
            f"({offer.source})",
            users=True,
        )
    return catalog_reserved_rate(offer, term_years)


def catalog_reserved_rate(offer: CloudOffer, term_years: int) -> ReservedRate | None:
    """The committed price of `offer` from the catalog's own commitment term alone (what
    `reserved_rate` gives when the request sets no discount); None without a term."""
    on_demand = None if offer.on_demand_usd_per_hour is None else float(offer.on_demand_usd_per_hour)
    term = offer.commitment(12 * term_years)
    if term is None:
        return None
    if term.usd_per_accelerator_hour is not None:
        price = float(term.usd_per_accelerator_hour)
        return ReservedRate(
            price * float(offer.accelerator_count),
            f"{offer.provider} {term.term_months}-month committed price ${price:.2f}/accelerator-hour: "
            f"{term.source}",
            users=False,
        )
    if on_demand is None or term.discount_fraction is None:
        return None
    discount = float(term.discount_fraction)
    return ReservedRate(
        on_demand * (1 - discount),
        f"{offer.provider} {term.term_months}-month commitment, {discount:.1%} off on-demand "
        f"({offer.source}): {term.source}",
        users=False,
    )


def _host_vm(offer: CloudOffer, assumptions: Assumptions) -> float | None:
    """USD per instance-hour for the host VM of a GPU-only price (0 when the price includes it)."""
    if not offer.accelerator_only:
        return 0.0
    if assumptions.host_vm_usd_per_accelerator_hour is None:
        return None
    return assumptions.host_vm_usd_per_accelerator_hour * float(offer.accelerator_count)


def hourly_price(offer: CloudOffer, mode: CloudMode, assumptions: Assumptions) -> float | None:
    """USD per instance-hour in `mode`, or None when the catalog lacks the price."""
    host_vm = _host_vm(offer, assumptions)
    if host_vm is None:
        return None
    if mode.reserved:
        rate = reserved_rate(offer, mode.term_years, assumptions)
        return None if rate is None else rate.usd_per_hour + host_vm
    base = offer.spot_usd_per_hour if mode.pricing == "spot" else offer.on_demand_usd_per_hour
    if base is None:
        return None
    price = float(base) + host_vm
    return spot_price(price, assumptions) if mode.pricing == "spot" else price


def spot_price(usd_per_hour: _PriceT, assumptions: Assumptions) -> _PriceT:
    """The one spot-price rule: the listed spot price (host VM included) plus the request's flat
    interruption overhead (0 by default; reclaims themselves are priced in spot_reclaims.py)."""
    return usd_per_hour * (1 + assumptions.spot_interruption_overhead)


def price_source(offer: CloudOffer, mode: CloudMode, assumptions: Assumptions) -> str:
    """Where the hourly price of `offer` in `mode` comes from, for a reader to check it."""
    parts = []
    if mode.reserved:
        rate = reserved_rate(offer, mode.term_years, assumptions)
        parts.append(rate.source if rate is not None else "no commitment term")
    elif mode.pricing == "spot":
        parts.append(f"spot price of {offer.source}; reclaims priced as their own cost")
        if assumptions.spot_interruption_overhead:
            parts.append(f"+{assumptions.spot_interruption_overhead:.0%} flat interruption overhead")
    else:
        parts.append(f"on-demand price of {offer.source}")
    if offer.accelerator_only:
        parts.append("host VM from assumptions.host_vm_usd_per_accelerator_hour")
    return "; ".join(parts)


def paid_hours(hours: ServingHours, mode: CloudMode, demand: ServingDemand) -> FloatArray:
    """Instance-hours paid in `mode` for the sizings in `hours`."""
    return _paid_of(hours.autoscaled, hours.always_on, hours.peak_instances, mode, demand)


def _paid_of(
    autoscaled: _PriceT, always_on: _PriceT, peak_instances: _PriceT, mode: CloudMode, demand: ServingDemand
) -> _PriceT:
    """`paid_hours` of the sizings' hours, or of one sizing's as floats."""
    if mode.reserved:
        return peak_instances * demand.hours_per_month * committed_months(mode, demand.months)
    if mode.scaling == "always_on":
        return always_on
    return autoscaled


def offer_label(offer: CloudOffer, mode: CloudMode) -> str:
    return f"{offer.provider} {offer.instance_type} {offer.region} {mode.name}"


def _risks(
    offer: CloudOffer, mode: CloudMode, precision: Precision, demand_months: int, assumptions: Assumptions
) -> tuple[str, ...]:
    risks = [f"vendor concentration: capacity, price and region depend on {offer.provider}"]
    if offer.suspect_reason:
        risks.append(f"suspect price, used because the request asked for it: {offer.suspect_reason}")
    if mode.pricing == "spot":
        risks.append(spot_reclaims.SERVING_RISK)
    if mode.reserved:
        rate = reserved_rate(offer, mode.term_years, assumptions)
        risks.append(f"a {mode.term_years}-year commitment is paid whether or not the capacity is used")
        if rate is not None and rate.users:
            risks.append("the committed price is the user's own discount, not a published term")
        if committed_months(mode, demand_months) > demand_months:
            risks.append("the commitment runs past the planning horizon and is paid in full")
    if offer.accelerator_only:
        risks.append("the price covers the GPUs only; the host VM is priced from the assumption given")
    return (*risks, *quantisation_risks(precision))


def quantisation_risks(precision: Precision) -> tuple[str, ...]:
    if precision in (Precision.BF16, Precision.FP16, Precision.FP32):
        return ()
    if precision in (Precision.FP8, Precision.INT8):
        return (
            f"{precision.value} weights: small quality loss against bf16 is usual; check on your evaluations",
        )
    return (f"{precision.value} (4-bit) weights: measurable quality loss against bf16 is possible",)


@dataclass(frozen=True, slots=True)
class ServingCost:
    """What serving on instances of one offer in one mode costs over the horizon, and the figures
    its plan is described with (`serving_cost`).

    Most costs are only added up (to rank them, re-price them at another volume or bridge an
    owned plan's lead time), so the cost lines with their notes are written when asked for
    (`lines`, for a plan); `total_usd` adds the same amounts in the lines' order, so it is their
    total to the bit (with the fallback's notes written the same way, 1.1% of the
    prototype's instructions per request and 2.0% of the 70B chat's, 2026-12-05)."""

    price: float  # USD per instance-hour
    paid_hours: float  # instance-hours paid
    peak_instances: int
    instance_usd: float  # the instance-hours at the price
    staff: tuple[float, float | None]  # staff_amounts: the minimum, and what the fleet adds above it
    fallback: spot_reclaims.SpotFallback | None  # spot's fallback
    # the instance line and `staff_lines` (the same amounts as `staff`), with their notes
    write_lines: Callable[[], tuple[Line, ...]] = field(compare=False, repr=False)

    @property
    def lines(self) -> tuple[Line, ...]:
        fallback = self.fallback
        if fallback is None:
            return self.write_lines()
        return (*self.write_lines(), Line("spot fallback", fallback.usd, fallback.note))

    @property
    def total_usd(self) -> float:
        """`lines_total(self.lines)` without writing the notes: the same amounts, in their order."""
        return _added(self.instance_usd, self.staff, self.fallback)


def _added(
    instance_usd: float, staff: tuple[float, float | None], fallback: spot_reclaims.SpotFallback | None
) -> float:
    """A serving cost's amounts added one after another in its lines' order, as `added` adds them
    (written out: building the tuple for `added` cost 0.8% of the prototype's instructions)."""
    fixed, above = staff
    total = 0.0
    total += instance_usd
    total += fixed
    if above is not None:
        total += above
    if fallback is not None:
        total += fallback.usd
    return total


Listed = tuple[float | None, float | None]  # `listed_prices`


def listed_prices(offer: CloudOffer, mode: CloudMode, assumptions: Assumptions) -> Listed:
    """(`hourly_price` of `offer` in `mode`, and on demand when `mode` is spot, for the fallback's
    standby; None otherwise): the prices a serving cost reads. A caller holding an offer table
    (cloud_table.py) reads the same figures from its prices; `hourly_price` builds a reserved
    price's source text, 25k instructions a call (2026-12-05)."""
    on_demand = hourly_price(offer, ON_DEMAND_AUTOSCALED, assumptions) if mode.pricing == "spot" else None
    return hourly_price(offer, mode, assumptions), on_demand


def serving_cost(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None = None,
    hours: ServingHours | None = None,
    sizing: int = 0,
    listed: Listed | None = None,
) -> ServingCost | None:
    """The cost lines of serving `demand` on instances of `offer` in `mode`; None when unpriced,
    or on spot when no fallback is priced (neither the offer's on-demand price nor
    `hosted_usd_per_request`, the cheapest hosted API's price of a request of the same model).
    `hours` are the `serving_hours` of all layouts when the caller computed them already, this
    layout's at index `sizing`; `listed` the offer's `listed_prices` when the caller has them."""
    amounts = _amounts(
        offer, mode, layout, demand, assumptions, hosted_usd_per_request, hours, sizing, listed
    )
    if amounts is None:
        return None
    price, paid, peak, fallback, accelerators, staff = amounts
    instance_usd = price * paid

    def write_lines() -> tuple[Line, ...]:
        note = f"{paid:,.0f} instance-hours x ${price:.4f} ({mode.name}); peak {peak} x {offer.instance_type}"
        minimum, months = assumptions.cloud_staff_usd_per_month, demand.months
        return (
            Line("instance hours", instance_usd, note),
            *staff_lines(minimum, accelerators, months, assumptions, "rented serving deployment"),
        )

    return ServingCost(price, paid, peak, instance_usd, staff, fallback, write_lines)


def serving_total(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None = None,
    hours: ServingHours | None = None,
    sizing: int = 0,
    listed: Listed | None = None,
) -> float | None:
    """`serving_cost(...).total_usd` from the same amounts, without making the cost (what a
    lead-time rental and a re-priced total read)."""
    amounts = _amounts(
        offer, mode, layout, demand, assumptions, hosted_usd_per_request, hours, sizing, listed
    )
    if amounts is None:
        return None
    price, paid, _, fallback, _, staff = amounts
    return _added(price * paid, staff, fallback)


def serving_totals(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    demands: Sequence[ServingDemand],
    assumptions: Assumptions,
    hosted_usd_per_request: float | None = None,
) -> list[float | None]:
    """`serving_total` of each of `demands` (one shape: the same months, hour groups and
    redundancy, as one demand at several volumes or their lead-time heads), their instances sized
    in one array operation per step (the volumes stacked; numpy sums each volume's slice as it
    sums that volume alone), the offer's prices read once."""
    if not demands:
        return []
    rates = np.stack([demand.rates_rps for demand in demands], axis=-1)
    hours = _layout_hours(layout, rates, demands[0], assumptions)
    listed = listed_prices(offer, mode, assumptions)
    return [
        serving_total(offer, mode, layout, demand, assumptions, hosted_usd_per_request, hours, index, listed)
        for index, demand in enumerate(demands)
    ]


def _amounts(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None,
    hours: ServingHours | None,
    sizing: int,
    listed: Listed | None,
) -> tuple[float, float, int, spot_reclaims.SpotFallback | None, float, tuple[float, float | None]] | None:
    """What `serving_cost` and `serving_total` read: `_paid`'s (price, instance-hours, peak,
    fallback), the accelerators the staff scales with, and the staff amounts (`staff_amounts`,
    without their lines: 0.14 us against 0.63 for the lines, 2026-12-05); None when unpriced."""
    if listed is None:
        listed = listed_prices(offer, mode, assumptions)
    priced = _paid(offer, mode, layout, demand, assumptions, hosted_usd_per_request, hours, sizing, listed)
    if priced is None:
        return None
    price, paid, peak, fallback = priced
    accelerators = _staff_accelerators(paid, layout, demand)
    staff = staff_amounts(assumptions.cloud_staff_usd_per_month, accelerators, demand.months, assumptions)
    return price, paid, peak, fallback, accelerators, staff


def _paid(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None,
    hours: ServingHours | None,
    sizing: int,
    listed: Listed,
) -> tuple[float, float, int, spot_reclaims.SpotFallback | None] | None:
    """(price per instance-hour, instance-hours paid, peak instances, spot's fallback) of
    `serving_cost`; None when it is None. The layout's hours are read as floats (`_paid_of` of
    floats gives `paid_hours`' figures to the bit), not as a row of arrays: 0.9% of the prototype's
    instructions per request and 0.5% of the 70B chat's (2026-12-05)."""
    price, on_demand = listed
    if price is None:
        return None
    if hours is None:
        hours, sizing = _layout_hours(layout, demand.rates_rps[:, :, None], demand, assumptions), 0
    autoscaled, peak = float(hours.autoscaled[sizing]), float(hours.peak_instances[sizing])
    hosted = hosted_usd_per_request
    fallback = _spot_fallback(mode, on_demand, autoscaled, int(peak), demand, assumptions, hosted)
    if spot_fallback(mode.pricing, fallback_priced=fallback is not None) is not None:
        return None
    paid = _paid_of(autoscaled, float(hours.always_on[sizing]), peak, mode, demand)
    return price, float(paid), int(peak), fallback


def _staff_accelerators(paid: float, layout: Layout, demand: ServingDemand) -> float:
    """The accelerators a serving plan runs on average over the horizon (its staff scales with)."""
    return paid * layout.accelerators / (demand.months * demand.hours_per_month)


def serving_plan(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None = None,
    cost: ServingCost | None = None,
) -> CostedCandidate | None:
    """Serving `model_id` on instances of `offer` for the horizon (`serving_cost` as a plan);
    None when `serving_cost` is. `cost` is that `serving_cost` when the caller has it already
    (priced from the hours of all layouts at once, and shared by the models of one architecture)."""
    if cost is None:
        cost = serving_cost(offer, mode, layout, demand, assumptions, hosted_usd_per_request)
    if cost is None:
        return None
    setup = _serving_setup(offer, mode, layout, model_id, cost.peak_instances, assumptions)
    return _written_plan(
        offer,
        mode,
        layout,
        model_id,
        demand,
        assumptions,
        hosted_usd_per_request,
        cost,
        (offer_label(offer, mode), setup),
    )


def _written_plan(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None,
    cost: ServingCost,
    named: tuple[str, Setup],
) -> CostedCandidate:
    """`serving_plan` of its `cost`, with its label and setup (`named`) as a priced plan made them."""
    price, paid, peak, lines = cost.price, cost.paid_hours, cost.peak_instances, cost.lines
    capacity = layout.capacity
    months = demand.months
    capacity_hours = paid * layout.per_instance * capacity.requests_per_s * 3600
    replicas = peak * layout.per_instance
    return CostedCandidate(
        option=OptionKind.CLOUD,
        label=named[0],
        setup=named[1],
        lines=lines,
        months=months,
        opex_usd_per_month=sum(line.usd for line in lines) / months,
        tokens=demand.total_tokens,
        utilisation=demand.total_requests / capacity_hours if capacity_hours else None,
        ttft_ms=capacity.ttft_ms,
        tpot_ms=capacity.tpot_ms,
        headroom=replicas * capacity.requests_per_s / demand.peak_rps - 1 if demand.peak_rps else None,
        risks=_risks(offer, mode, capacity.precision, months, assumptions),
        uncertainty=capacity.efficiency_source or None,
        facts=(
            f"{capacity.accelerators} x {offer.accelerator_id} per replica at {capacity.precision.value}, "
            f"{layout.per_instance} replica(s) per instance, {capacity.requests_per_s:.2f} requests/s each "
            f"within the latency targets",
            f"Pays ${price:.2f} per instance-hour ({mode.name}), "
            f"${price / layout.accelerators:.2f} per {offer.accelerator_id}-hour",
        ),
        usd_per_accelerator_hour=price / layout.accelerators,
        price_source=price_source(offer, mode, assumptions),
        reprice=lambda multiplier: serving_plan(
            offer, mode, layout, model_id, demand.scaled(multiplier), assumptions, hosted_usd_per_request
        ),
        repriced_total_usd=RepricedTotal(offer, mode, layout, demand, assumptions, hosted_usd_per_request),
    )


@dataclass(frozen=True, slots=True, eq=False)  # its demand's arrays do not compare
class RepricedTotal:
    """A serving plan's total at `multiplier` x its volume (`CostedCandidate.repriced_total_usd`):
    `serving_cost` at the scaled demand, without the plan; `totals` prices many volumes at once.
    Nothing is remembered: the break-even search asks for each volume once."""

    offer: CloudOffer
    mode: CloudMode
    layout: Layout
    demand: ServingDemand
    assumptions: Assumptions
    hosted_usd_per_request: float | None

    def __call__(self, multiplier: float) -> float | None:
        demand = self.demand.scaled(multiplier)
        return serving_total(
            self.offer, self.mode, self.layout, demand, self.assumptions, self.hosted_usd_per_request
        )

    def totals(self, multipliers: Sequence[float]) -> list[float | None]:
        """The totals at each of `multipliers` (`serving_totals`): the break-even grid's 6 volumes
        in 1 `serving_hours` instead of 6 (1.1% of the prototype's instructions per request, 0.8%
        of the 70B chat's, 2026-12-05)."""
        demands = [self.demand.scaled(multiplier) for multiplier in multipliers]
        return serving_totals(
            self.offer, self.mode, self.layout, demands, self.assumptions, self.hosted_usd_per_request
        )


def priced_serving_plan(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None,
    cost: ServingCost,
) -> PricedCandidate:
    """`serving_plan` priced from its `cost`, written only when it is shown (with the label and
    setup made here: a setup is a dataclass of 17 fields)."""
    label = offer_label(offer, mode)
    setup = _serving_setup(offer, mode, layout, model_id, cost.peak_instances, assumptions)

    def write() -> CostedCandidate:
        named = (label, setup)
        return _written_plan(
            offer, mode, layout, model_id, demand, assumptions, hosted_usd_per_request, cost, named
        )

    return PricedCandidate(
        option=OptionKind.CLOUD,
        label=label,
        setup=setup,
        total_usd=cost.total_usd,
        months=demand.months,
        capex_usd=0.0,
        write=write,
    )


def _serving_setup(
    offer: CloudOffer, mode: CloudMode, layout: Layout, model_id: str, peak: int, assumptions: Assumptions
) -> Setup:
    capacity = layout.capacity
    return Setup.for_cloud(
        model_id,
        offer,
        pricing_mode=mode.pricing,
        scaling=mode.scaling,
        instances=peak,
        accelerators=peak * layout.accelerators,
        accelerators_per_replica=capacity.accelerators,
        replicas=peak * layout.per_instance,
        precision=capacity.precision.value,
        serving_engine=assumptions.serving_engine.value,
    )


def _spot_fallback(
    mode: CloudMode,
    on_demand: float | None,
    autoscaled: float,
    peak: int,
    demand: ServingDemand,
    assumptions: Assumptions,
    hosted_usd_per_request: float | None,
) -> spot_reclaims.SpotFallback | None:
    """Spot serving's fallback (spot_reclaims.py) for the layout's `autoscaled` instance-hours
    and `peak` instances, `on_demand` the offer's on-demand price; None for other modes."""
    if mode.pricing != "spot":
        return None
    hosted = None if hosted_usd_per_request is None else hosted_usd_per_request * demand.total_requests
    return spot_reclaims.serving_fallback(
        autoscaled,
        peak,
        on_demand,
        hosted,
        demand.months * demand.hours_per_month,
        assumptions,
    )


def batch_plan(
    offer: CloudOffer,
    mode: CloudMode,
    layout: Layout,
    model_id: str,
    demand: BatchDemand,
    assumptions: Assumptions,
    job: tuple[int, float, float] | None = None,
) -> CostedCandidate | None:
    """One batch job on as many instances of `offer` as the deadline needs; None when unpriced or
    when even the largest allowed job (`max_accelerators_per_job`) misses the deadline. `job` is
    the layout's `batch_job` when the caller sized it already (for all layouts at once)."""
    price = hourly_price(offer, mode, assumptions)
    if price is None:
        return None
    if job is None:
        job = batch_job(layout, demand, mode, assumptions)
    if job is None:
        return None
    instances, wall_hours, instance_hours = job
    capacity = layout.capacity
    return CostedCandidate(
        option=OptionKind.CLOUD,
        label=offer_label(offer, mode),
        setup=Setup.for_cloud(
            model_id,
            offer,
            pricing_mode=mode.pricing,
            scaling="job",
            instances=instances,
            accelerators=instances * layout.accelerators,
            accelerators_per_replica=capacity.accelerators,
            replicas=instances * layout.per_instance,
            precision=capacity.precision.value,
            serving_engine=assumptions.serving_engine.value,
        ),
        lines=(
            Line(
                "instance hours",
                price * instance_hours,
                f"{instances} x {offer.instance_type} for {wall_hours:.1f} h; {instance_hours:,.1f} "
                f"instance-hours x ${price:.4f} ({mode.name})",
            ),
            *staff_lines(
                assumptions.cloud_staff_usd_per_month,
                instances * layout.accelerators,
                wall_hours / assumptions.hours_per_month,
                assumptions,
                "rented batch job, for the hours it runs",
            ),
        ),
        months=None,
        tokens=demand.total_tokens,
        utilisation=1.0,
        risks=(*_risks(offer, mode, capacity.precision, 0, assumptions), BATCH_START_UP_RISK),
        uncertainty=capacity.efficiency_source or None,
        facts=(
            f"{instances} instance(s) finish in {wall_hours:.1f} h "
            f"of the {demand.deadline_hours:g} h deadline",
            _batch_rate_fact(layout, demand),
        ),
        usd_per_accelerator_hour=price / layout.accelerators,
        price_source=price_source(offer, mode, assumptions),
        reprice=lambda multiplier: batch_plan(
            offer, mode, layout, model_id, demand.scaled(multiplier), assumptions
        ),
    )


BATCH_START_UP_RISK = (
    "the job's hours leave out starting its instances and loading the model, for which the catalog "
    "has no figure: a short job may take and cost more than stated"
)
_SHAPE_MISMATCH = 0.01  # tokens made beyond the job's by more than this share are said


def _batch_rate_fact(layout: Layout, demand: BatchDemand) -> str:
    """The figures the job's hours follow from: its requests of the stated shape
    (`BatchDemand.requests`: enough for both token totals) and their rate per instance (Little's
    law over a request's time in the system); and, when that shape does not match the totals'
    ratio, the tokens it makes against the job's."""
    requests_per_s = layout.per_instance * layout.capacity.requests_per_s
    fact = (
        f"{demand.requests:,.0f} requests of {demand.input_tokens_per_request:,} input / "
        f"{demand.output_tokens_per_request:,} output tokens at {requests_per_s:,.2f} requests/s "
        "per instance"
    )
    for kind, per_request, total in (
        ("output", demand.output_tokens_per_request, demand.output_tokens_total),
        ("input", demand.input_tokens_per_request, demand.input_tokens_total),
    ):
        made = demand.requests * per_request  # at most one kind is over: requests cover the larger
        if made > total * (1 + _SHAPE_MISMATCH):
            fact += f", {_tokens(made)} {kind} tokens against the job's {_tokens(total)}"
    return fact


def _tokens(count: float) -> str:
    return f"{count / 1e6:,.0f}M" if count >= 1e6 else f"{count:,.0f}"


def batch_job(
    layout: Layout, demand: BatchDemand, mode: CloudMode, assumptions: Assumptions
) -> tuple[int, float, float] | None:
    """(instances, wall-clock hours, instance-hours billed at the mode's price) to finish by the
    deadline, or None when `max_accelerators_per_job` accelerators cannot (`batch_jobs` of one
    layout)."""
    return batch_jobs([layout], demand, mode, assumptions).job(0)


@dataclass(frozen=True, slots=True)
class BatchJobs:
    """One batch job per layout (arrays of the layouts' length); NaN where a layout cannot."""

    instances: FloatArray
    wall_hours: FloatArray
    instance_hours: FloatArray  # billed at the mode's price

    def job(self, index: int) -> tuple[int, float, float] | None:
        """(instances, wall-clock hours, instance-hours) of layout `index`; None when it cannot."""
        if math.isnan(self.instance_hours[index]):
            return None
        return int(self.instances[index]), float(self.wall_hours[index]), float(self.instance_hours[index])


def batch_jobs(
    layouts: Sequence[Layout], demand: BatchDemand, mode: CloudMode, assumptions: Assumptions
) -> BatchJobs:
    """The job on each layout that finishes by the deadline, all layouts at once.

    Each replica works at its full concurrency. On spot the instance-hours include the work the
    reclaims lose (spot_reclaims.py); a flat extra share, when the request sets one, is in
    the hourly price and lengthens the wall-clock time. A layout whose job would need more than
    `max_accelerators_per_job` accelerators gets NaN. Model loading is not charged."""
    per_instance_rps = np.asarray([lay.per_instance * lay.capacity.requests_per_s for lay in layouts])
    accelerators = np.asarray([float(lay.accelerators) for lay in layouts])
    slowdown = 1 + assumptions.spot_interruption_overhead if mode.pricing == "spot" else 1.0
    serving = per_instance_rps > 0
    instance_hours = demand.requests / np.where(serving, per_instance_rps, np.nan) / 3600
    if mode.pricing == "spot":
        instance_hours = spot_reclaims.batch_spot_hours(instance_hours, assumptions)
    instances = np.maximum(np.ceil(instance_hours * slowdown / demand.deadline_hours - 1e-9), 1.0)
    too_large = ~np.isfinite(instance_hours) | (
        instances * accelerators > assumptions.max_accelerators_per_job
    )
    instance_hours = np.where(too_large, np.nan, instance_hours)
    instances = np.where(too_large, np.nan, instances)
    return BatchJobs(instances, instance_hours * slowdown / instances, instance_hours)
