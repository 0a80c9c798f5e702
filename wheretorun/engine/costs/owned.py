"""Owned hardware (servers in a colocation facility) and local GPUs (a card in one user's machine).

Owned servers
* Whole servers of `server_size` accelerators: 8 for SXM/OAM parts (an HGX/OAM baseboard),
  4 for PCIe cards (a 2U/4U PCIe server), see `assumptions.accelerators_per_*_server`.
  Replicas of g accelerators pack server_size / g to a server.
* Sized for the peak: ceil(peak demand / planned replica capacity) + redundancy replicas, the
  peak being the busiest hour of the whole horizon (growth included). Bought once, up front.
* capex per server = accelerators x price per accelerator x (1 + server_overhead_fraction) for a
  chip price (the card or module alone); a system price (a whole server, `basis` system) already
  includes the server and gets no overhead (`server_capex_usd`).
* Capital: purchases (replacement after `depreciation_years`), resale at the residual value or
  book value at the horizon's end, and the cost of capital (finance.py).
* From delivery (after the lead time) to the horizon's end: maintenance (fraction of capex a
  year), colocation per kW of nameplate IT load (accelerator TDP x count + base server power),
  operations staff (a minimum per deployment, growing with the accelerators; staff.py), and
  power billed at PUE x electricity:
      (accelerator TDP x busy share + base server power) x PUE x USD/kWh,
  the busy share of the fleet being demand / raw capacity hour by hour.
* During the lead time the owned plan rents: the cheapest on-demand autoscaled cloud plan
  serves the first months (`bridge`). When renting is not allowed there is no bridge, the
  first months go unserved, and a risk says so.

Local GPU
* One workstation or consumer card, one user: it must serve the peak hour one request at a time
  (planned at target utilisation), else `exceeds_local_capacity`. No SLA and no redundancy.
* Cost: the card (the host machine is assumed to exist), its resale and cost of capital, its
  power at the busy share (office power, no PUE, no colocation), and upkeep at the hosted-API
  staff rate: a model on a local card needs at least the integration and care a hosted API
  needs (configiq's 0.05 FTE), so the two compare like with like at small volumes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.capacity import REPLICA_SIZES, CapacityTable, ReplicaCapacity
from wheretorun.engine.catalog import AcceleratorEntry, HardwarePrice
from wheretorun.engine.costs.arrays import FloatArray, ceil_array, ceil_count, read_only
from wheretorun.engine.costs.candidate import CostedCandidate, Line, PricedCandidate, added
from wheretorun.engine.costs.cloud import Layout, quantisation_risks
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.finance import CapitalSchedule, capital_schedule
from wheretorun.engine.costs.staff import SCALED_STAFF, STAFF, fleet_staff_usd, staff_amounts
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.rules.local_capacity import serves_one_stream
from wheretorun.engine.workload import OptionKind

__all__ = [
    "Bridge",
    "OwnedFleet",
    "OwnedSizing",
    "OwnedUnit",
    "Rental",
    "SizedServers",
    "StackedBridge",
    "choose_server_layout",
    "local_lines",
    "local_plan",
    "local_total",
    "local_totals",
    "lead_months",
    "owned_plan",
    "owned_sizing",
    "owned_total",
    "owned_unit",
    "priced_local_plan",
    "priced_owned_plan",
    "server_capex_usd",
    "server_price_note",
    "server_size",
]

_W_PER_KW = 1000.0
_LOW_UTILISATION = 0.5
_EXACT_WHOLE_FLOATS = 2.0**53  # every whole number below it is a float


@dataclass(frozen=True, slots=True)
class Rental:
    """What serves an owned plan's months before delivery: the plan rented, by label, and what
    it costs over those months (the total of its cost lines)."""

    label: str
    total_usd: float


# the cheapest rental for the first months of a demand, or None when nothing may be rented
Bridge = Callable[[ServingDemand], Rental | None]


@dataclass(frozen=True, slots=True)
class StackedBridge:
    """A `Bridge` that also prices several heads of one shape (the same months and hour groups:
    the heads of one demand at several volumes) at once, `many(heads)` being
    `[one(head) for head in heads]` to the bit."""

    one: Bridge
    many: Callable[[Sequence[ServingDemand]], list[Rental | None]]

    def __call__(self, head: ServingDemand) -> Rental | None:
        return self.one(head)


def server_capex_usd(price: HardwarePrice, accelerators: int, assumptions: Assumptions) -> float:
    """What a server of `accelerators` costs: chip prices plus the server overhead, or the
    accelerators' share of a system price (which already includes the server)."""
    overhead = 0.0 if price.includes_server else assumptions.server_overhead_fraction
    return accelerators * price.usd_per_accelerator * (1 + overhead)


def server_price_note(price: HardwarePrice, assumptions: Assumptions, described: str | None = None) -> str:
    """The price a server's capex comes from (`described`: `price.describe()`, when at hand)."""
    described = price.describe() if described is None else described
    if price.includes_server:
        return f"{described}; no server overhead added"
    return f"{described} + {assumptions.server_overhead_fraction:.0%} server"


def server_size(entry: AcceleratorEntry, assumptions: Assumptions) -> int:
    """Accelerators per server: a baseboard of 8 for SXM/OAM modules, 4 for PCIe cards."""
    form = (entry.form_factor or "").upper()
    if "SXM" in form or "OAM" in form:
        return assumptions.accelerators_per_sxm_server
    return assumptions.accelerators_per_pcie_server


def choose_server_layout(
    capacities: CapacityTable,
    accelerator_id: str,
    size: int,
    precision: Precision,
) -> tuple[Layout | None, list[ReplicaCapacity]]:
    """The feasible replica size that divides the server with the most capacity per server."""
    considered = [
        capacities[(accelerator_id, replica, precision)]
        for replica in REPLICA_SIZES
        if size % replica == 0 and (accelerator_id, replica, precision) in capacities
    ]
    layouts = [Layout(c, size // c.accelerators, size) for c in considered if c.ok]
    if not layouts:
        return None, considered
    return max(
        layouts,
        key=lambda layout: (
            layout.per_instance * layout.capacity.requests_per_s,
            -layout.capacity.accelerators,
        ),
    ), considered


@dataclass(frozen=True, slots=True)
class OwnedUnit:
    """One server of a layout and what it costs over the horizon (the hybrid plan uses it too)."""

    accelerator_id: str
    layout: Layout
    capex_usd: float
    schedule: CapitalSchedule
    maintenance_usd: float
    colocation_usd: float
    idle_power_usd: float  # base server power from delivery to the horizon's end
    energy_usd_per_rps_hour: float  # accelerator energy per request/s served for one hour
    lead_months: int

    @property
    def hardware_usd(self) -> float:
        """Capital consumed (purchases - resale) plus the cost of capital."""
        return self.capex_usd * (self.schedule.depreciation + self.schedule.cost_of_capital)

    @property
    def fixed_usd(self) -> float:
        """Everything one server costs over the horizon whether it serves or not."""
        return self.hardware_usd + self.maintenance_usd + self.colocation_usd + self.idle_power_usd

    @property
    def planned_rps(self) -> float:
        return self.layout.per_instance * self.layout.capacity.requests_per_s


def lead_months(assumptions: Assumptions) -> int:
    """Months from ordering hardware to its delivery, within the horizon."""
    return min(assumptions.hardware_lead_time_months, assumptions.horizon_months)


def owned_unit(
    entry: AcceleratorEntry, price: HardwarePrice, tdp_w: float, layout: Layout, assumptions: Assumptions
) -> OwnedUnit:
    a = assumptions
    size = layout.accelerators
    capex = server_capex_usd(price, size, a)
    lead = lead_months(a)
    schedule = capital_schedule(
        lead, a.horizon_months, a.life_months, a.residual_value_fraction, a.cost_of_capital_annual
    )
    months = schedule.in_service_months
    kw = (size * tdp_w + a.base_server_power_w) / _W_PER_KW
    energy_usd_per_kwh = a.pue * a.electricity_usd_per_kwh
    capacity = layout.capacity
    return OwnedUnit(
        accelerator_id=entry.id,
        layout=layout,
        capex_usd=capex,
        schedule=schedule,
        maintenance_usd=capex * a.maintenance_fraction_annual / 12 * months,
        colocation_usd=kw * a.colocation_usd_per_kw_month * months,
        idle_power_usd=a.base_server_power_w / _W_PER_KW * energy_usd_per_kwh * a.hours_per_month * months,
        energy_usd_per_rps_hour=capacity.accelerators
        * tdp_w
        / _W_PER_KW
        * energy_usd_per_kwh
        / capacity.requests_per_s,
        lead_months=lead,
    )


@dataclass(frozen=True, slots=True)
class OwnedSizing:
    """The numbers of an owned plan: servers sized for the peak and what they cost."""

    unit: OwnedUnit
    servers: int
    energy_usd: float  # accelerator energy at the served load
    served_rps_hours: float  # from delivery to the horizon's end
    bridged: Rental | None  # what serves the lead time
    staff: tuple[tuple[str, float], ...]  # the staff lines' names and amounts (`_staff_amounts`)
    # the amounts and their sum, worked out once: the planner compares and filters on the sum, and
    # a plan written from the sizing reads both
    _amounts: tuple[tuple[str, float], ...] = field(init=False, default=(), compare=False, repr=False)
    _total_usd: float = field(init=False, default=0.0, compare=False, repr=False)

    def __post_init__(self) -> None:
        amounts = _owned_amounts(self.unit, self.servers, self.energy_usd, self.staff, self.bridged)
        object.__setattr__(self, "_amounts", tuple(amounts))
        object.__setattr__(self, "_total_usd", added(usd for _, usd in amounts))

    def amounts(self) -> tuple[tuple[str, float], ...]:
        """The cost lines' names and amounts; their sum is the plan's total."""
        return self._amounts

    @property
    def total_usd(self) -> float:
        return self._total_usd

    @property
    def capex_usd(self) -> float:
        return self.unit.capex_usd * self.servers


def _owned_amounts(
    unit: OwnedUnit,
    servers: int,
    energy_usd: float,
    staff: Sequence[tuple[str, float]],
    bridged: Rental | None,
) -> list[tuple[str, float]]:
    """An owned plan's cost lines' names and amounts (`OwnedSizing.amounts`, and the total that
    `owned_total` adds from them without the sizing)."""
    amounts = [
        ("hardware purchase", unit.capex_usd * servers * unit.schedule.purchases),
        ("resale value", -unit.capex_usd * servers * unit.schedule.resale),
        ("cost of capital", unit.capex_usd * servers * unit.schedule.cost_of_capital),
        ("maintenance", unit.maintenance_usd * servers),
        ("colocation", unit.colocation_usd * servers),
        ("power", unit.idle_power_usd * servers + energy_usd),
        *staff,
    ]
    if bridged is not None:
        amounts.append(("rental during lead time", bridged.total_usd))
    return amounts


def _staff_amounts(accelerators: int, months: int, assumptions: Assumptions) -> tuple[tuple[str, float], ...]:
    """`staff_lines`' names and amounts for an owned deployment, without their notes (an owned
    plan's staff lines carry none, owned_plan): the minimum, and what the fleet adds above it.
    ~0.5 us against 5 for the lines with their notes, which the break-even wrote for each volume
    (2026-12-05)."""
    fixed, above = staff_amounts(
        assumptions.operations_staff_usd_per_month, accelerators, months, assumptions
    )
    return ((STAFF, fixed),) if above is None else ((STAFF, fixed), (SCALED_STAFF, above))


@dataclass(frozen=True, slots=True)
class SizedServers:
    """What ranking an owned plan needs of its sizing: the server, how many, and the total (an
    `OwnedSizing`'s, or the fleet's column of it)."""

    unit: OwnedUnit
    servers: int
    total_usd: float


def owned_sizing(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    layout: Layout,
    demand: ServingDemand,
    assumptions: Assumptions,
    bridge: Bridge | None,
    unit: OwnedUnit | None = None,
) -> OwnedSizing:
    """Servers for the peak of `demand` and what they cost (`unit`: the same server's figures,
    when already known; they do not depend on the demand)."""
    if unit is None:
        unit = owned_unit(entry, price, tdp_w, layout, assumptions)
    servers, served, bridged = _sized(unit, demand, assumptions, bridge)
    return OwnedSizing(
        unit=unit,
        servers=servers,
        energy_usd=unit.energy_usd_per_rps_hour * served,
        served_rps_hours=served,
        bridged=bridged,
        staff=_staff_amounts(
            servers * unit.layout.accelerators, unit.schedule.in_service_months, assumptions
        ),
    )


def owned_total(
    unit: OwnedUnit, demand: ServingDemand, assumptions: Assumptions, bridge: Bridge | None
) -> float:
    """`owned_sizing(...).total_usd` of `unit`'s servers, from the same amounts without the sizing
    around them (what the break-even asks for each volume)."""
    servers, served, bridged = _sized(unit, demand, assumptions, bridge)
    return _owned_total_of(unit, servers, served, bridged, assumptions)


def _owned_total_of(
    unit: OwnedUnit, servers: int, served: float, bridged: Rental | None, assumptions: Assumptions
) -> float:
    """The total of `_owned_amounts` of `servers` of `unit` serving `served` request-rate hours."""
    staff = _staff_amounts(servers * unit.layout.accelerators, unit.schedule.in_service_months, assumptions)
    amounts = _owned_amounts(unit, servers, unit.energy_usd_per_rps_hour * served, staff, bridged)
    return added(usd for _, usd in amounts)


@dataclass(frozen=True, slots=True, eq=False)  # its demand's arrays do not compare
class OwnedRepricedTotal:
    """An owned plan's total at `multiplier` x its volume (`CostedCandidate.repriced_total_usd`):
    `owned_total` at the scaled demand; `totals` prices many volumes at once, their lead-time
    rentals from one stacked sizing when the bridge can (`StackedBridge`). Nothing is remembered."""

    unit: OwnedUnit
    demand: ServingDemand
    assumptions: Assumptions
    bridge: Bridge | None

    def __call__(self, multiplier: float) -> float:
        return owned_total(self.unit, self.demand.scaled(multiplier), self.assumptions, self.bridge)

    def totals(self, multipliers: Sequence[float]) -> list[float]:
        """`owned_total` at each of `multipliers`, to the bit; the rental of the grid's heads sized
        in one `serving_hours` instead of one each (the rental is ~55% of a re-priced owned total;
        1.8% of the prototype's instructions per request, 1.1% of the 70B chat's, 2026-12-05)."""
        unit, assumptions, bridge, lead = self.unit, self.assumptions, self.bridge, self.unit.lead_months
        demands = [self.demand.scaled(multiplier) for multiplier in multipliers]
        if not lead or bridge is None:
            rentals: list[Rental | None] = [None] * len(demands)
        elif isinstance(bridge, StackedBridge):
            rentals = bridge.many([demand.head(lead) for demand in demands])
        else:
            rentals = [bridge(demand.head(lead)) for demand in demands]
        return [
            _owned_total_of(unit, *_servers_for(unit, demand, assumptions), rental, assumptions)
            for demand, rental in zip(demands, rentals, strict=True)
        ]


def _sized(
    unit: OwnedUnit, demand: ServingDemand, assumptions: Assumptions, bridge: Bridge | None
) -> tuple[int, float, Rental | None]:
    """Servers of `unit` for the peak of `demand`, the request-rate hours they serve, and the
    rental that bridges their lead time."""
    servers, served = _servers_for(unit, demand, assumptions)
    lead = unit.lead_months
    return servers, served, bridge(demand.head(lead)) if lead and bridge is not None else None


def _servers_for(unit: OwnedUnit, demand: ServingDemand, assumptions: Assumptions) -> tuple[int, float]:
    """Servers of `unit` for the peak of `demand` and the request-rate hours they serve."""
    layout = unit.layout
    planned = layout.capacity.requests_per_s * assumptions.target_utilisation
    replicas = ceil_count(demand.peak_rps / planned) + demand.redundancy
    served = demand.served_rps_hours(unit.lead_months)
    return max(ceil_count(replicas / layout.per_instance), 1), served


@dataclass(frozen=True, slots=True)
class OwnedFleet:
    """Owned servers of many layouts as columns (column i is `units[i]`, bought under one set of
    assumptions), to size them all for one demand at once: `totals` are each server's
    `owned_sizing(...).total_usd` to the last bit, the same figures added one after another in
    the order of `OwnedSizing.amounts()` (costs/candidate.added), or none past 2^53 replicas.
    None of it depends on the demand, so one fleet serves every request that sizes the same
    servers. The arrays are read-only: a fleet is shared between requests and threads."""

    units: tuple[OwnedUnit, ...]
    planned_rps: FloatArray  # a replica's requests/s at the target utilisation
    replicas_per_server: FloatArray
    accelerators: FloatArray  # per server
    capex_usd: FloatArray  # per server
    purchases: FloatArray
    resale: FloatArray
    cost_of_capital: FloatArray
    maintenance_usd: FloatArray
    colocation_usd: FloatArray
    idle_power_usd: FloatArray
    energy_usd_per_rps_hour: FloatArray
    in_service_months: FloatArray
    # figures of the totals that do not depend on the demand, worked out once (the same operations)
    negated_capex_usd: FloatArray  # -capex_usd: the resale's sign
    fixed_staff_usd: FloatArray  # the staff minimum over the months in service
    assumptions: Assumptions  # the units were bought under them

    @classmethod
    def of(cls, units: Sequence[OwnedUnit], assumptions: Assumptions) -> OwnedFleet:
        def column(values: list[float]) -> FloatArray:
            array = np.asarray(values, dtype=np.float64)
            read_only(array)
            return array

        capex_usd = column([u.capex_usd for u in units])
        in_service_months = column([u.schedule.in_service_months for u in units])
        negated_capex_usd, fixed_staff_usd = (
            -capex_usd,
            assumptions.operations_staff_usd_per_month * in_service_months,
        )
        read_only(negated_capex_usd, fixed_staff_usd)
        return cls(
            units=tuple(units),
            planned_rps=column(
                [u.layout.capacity.requests_per_s * assumptions.target_utilisation for u in units]
            ),
            replicas_per_server=column([u.layout.per_instance for u in units]),
            accelerators=column([u.layout.accelerators for u in units]),
            capex_usd=capex_usd,
            purchases=column([u.schedule.purchases for u in units]),
            resale=column([u.schedule.resale for u in units]),
            cost_of_capital=column([u.schedule.cost_of_capital for u in units]),
            maintenance_usd=column([u.maintenance_usd for u in units]),
            colocation_usd=column([u.colocation_usd for u in units]),
            idle_power_usd=column([u.idle_power_usd for u in units]),
            energy_usd_per_rps_hour=column([u.energy_usd_per_rps_hour for u in units]),
            in_service_months=in_service_months,
            negated_capex_usd=negated_capex_usd,
            fixed_staff_usd=fixed_staff_usd,
            assumptions=assumptions,
        )

    def totals(
        self, demand: ServingDemand, bridge: Bridge | None
    ) -> tuple[FloatArray, FloatArray, FloatArray] | None:
        """Each server's plan total for `demand`, its capex (servers x capex per server) and how
        many servers (whole numbers, as floats); None from 2^53 replicas on, where a float no
        longer holds every whole count and the sizing's integer arithmetic could round otherwise
        (size each server on its own there)."""
        replicas = ceil_array(demand.peak_rps / self.planned_rps) + demand.redundancy
        if (replicas >= _EXACT_WHOLE_FLOATS).any():
            return None
        servers = np.maximum(ceil_array(replicas / self.replicas_per_server), 1.0)
        a, lead = self.assumptions, lead_months(self.assumptions)
        bought = self.capex_usd * servers
        fixed_staff = self.fixed_staff_usd
        scaled_staff = fleet_staff_usd(servers * self.accelerators, self.in_service_months, a)
        # added in place, the same sums in the same order (~25 us a fleet, 2026-12-05)
        total = bought * self.purchases
        total += self.negated_capex_usd * servers * self.resale
        total += bought * self.cost_of_capital
        total += self.maintenance_usd * servers
        total += self.colocation_usd * servers
        total += self.idle_power_usd * servers + self.energy_usd_per_rps_hour * demand.served_rps_hours(lead)
        total += fixed_staff
        total += np.where(scaled_staff > fixed_staff, scaled_staff - fixed_staff, 0.0)
        bridged = bridge(demand.head(lead)) if lead and bridge is not None else None
        if bridged is not None:
            total += bridged.total_usd
        return total, bought, servers


def owned_plan(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    layout: Layout,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    bridge: Bridge | None,
    sizing: OwnedSizing | None = None,
    setup: Setup | None = None,
) -> CostedCandidate:
    """Serving `model_id` on owned servers for the horizon (`sizing` and `setup`, when already
    known: a priced plan's setup is the plan's)."""
    if sizing is None:
        sizing = owned_sizing(entry, price, tdp_w, layout, demand, assumptions, bridge)
    if setup is None:
        setup = _owned_setup(entry, layout, sizing.servers, model_id, assumptions)
    unit, servers, capacity = sizing.unit, sizing.servers, layout.capacity
    months_in_service = unit.schedule.in_service_months
    described = price.describe()  # once for the note and the source (1.3 us each, 2026-12-05)
    notes = {
        "hardware purchase": f"{servers} server(s) x {layout.accelerators} x {entry.id} at "
        f"{server_price_note(price, assumptions, described)} = "
        f"${unit.capex_usd / layout.accelerators:,.0f} per accelerator; "
        f"{unit.schedule.purchases} purchase(s) in the horizon",
        "resale value": "residual or book value",
        "colocation": f"{months_in_service} months in service",
        "power": "at the estimated utilisation x PUE",
    }
    if sizing.bridged is not None:
        notes["rental during lead time"] = f"{unit.lead_months} months on {sizing.bridged.label}"
    lines = tuple([Line(name, usd, notes.get(name, "")) for name, usd in sizing.amounts()])
    raw_capacity_hours = servers * unit.planned_rps * assumptions.hours_per_month * months_in_service
    utilisation = sizing.served_rps_hours / raw_capacity_hours if raw_capacity_hours else None
    total = sizing.total_usd  # lines_total(lines): the same amounts added in the same order
    opex = sum(
        line.usd for line in lines if line.name in ("maintenance", "colocation", "power", STAFF, SCALED_STAFF)
    )
    return CostedCandidate(
        option=OptionKind.OWNED,
        label=_owned_label(entry, layout, sizing.servers),
        setup=setup,
        lines=lines,
        months=demand.months,
        capex_usd=sizing.capex_usd,
        opex_usd_per_month=opex / months_in_service if months_in_service else 0.0,
        tokens=_served_tokens(demand, sizing),
        utilisation=utilisation,
        ttft_ms=capacity.ttft_ms,
        tpot_ms=capacity.tpot_ms,
        headroom=servers * unit.planned_rps / demand.peak_rps - 1 if demand.peak_rps else None,
        risks=_owned_risks(sizing, capacity, utilisation, bridge is not None),
        uncertainty=capacity.efficiency_source or None,
        facts=(
            f"{servers} server(s) sized for the peak hour of the horizon, bought up front",
            f"Total ${total:,.0f} spreads ${sizing.capex_usd:,.0f} of hardware "
            f"(${unit.capex_usd / layout.accelerators:,.0f} per {entry.id}) over {demand.months} months",
        ),
        usd_per_accelerator_hour=total
        / (servers * layout.accelerators * assumptions.hours_per_month * demand.months),
        price_source=f"purchase price {described}: {price.source}",
        reprice=lambda multiplier: owned_plan(
            entry, price, tdp_w, layout, model_id, demand.scaled(multiplier), assumptions, bridge
        ),
        repriced_total_usd=OwnedRepricedTotal(sizing.unit, demand, assumptions, bridge),
    )


def _served_tokens(demand: ServingDemand, sizing: OwnedSizing) -> float:
    """The tokens the plan serves over the horizon: all of them when a rental bridges the lead
    time (or there is none), else only those from delivery on. The months before go unserved
    (a risk says so), so the cost per million tokens is not spread over them."""
    lead = sizing.unit.lead_months
    if sizing.bridged is not None or not lead:
        return demand.total_tokens
    return demand.tokens_from(lead)


def _owned_label(entry: AcceleratorEntry, layout: Layout, servers: int) -> str:
    return f"owned {servers} x {layout.accelerators} x {entry.id} servers"


def _owned_setup(
    entry: AcceleratorEntry, layout: Layout, servers: int, model_id: str, assumptions: Assumptions
) -> Setup:
    return Setup.for_purchase(
        model_id,
        entry.id,
        scaling="always_on",
        units=servers,
        accelerators=servers * layout.accelerators,
        accelerators_per_replica=layout.capacity.accelerators,
        replicas=servers * layout.per_instance,
        # a StrEnum's str() is its value: 26 ns against `.value`'s 97 (a plan's setup; 2026-12-05)
        precision=str(layout.capacity.precision),
        serving_engine=str(assumptions.serving_engine),
    )


def priced_owned_plan(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    layout: Layout,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    bridge: Bridge | None,
    sized: SizedServers,
) -> PricedCandidate:
    """`owned_plan` priced from the servers' count and total (`OwnedFleet.totals` gives them for
    every server at once), its sizing and plan written only when it is shown."""

    setup = _owned_setup(entry, layout, sized.servers, model_id, assumptions)

    def write() -> CostedCandidate:
        sizing = owned_sizing(entry, price, tdp_w, layout, demand, assumptions, bridge, sized.unit)
        return owned_plan(entry, price, tdp_w, layout, model_id, demand, assumptions, bridge, sizing, setup)

    return PricedCandidate(
        option=OptionKind.OWNED,
        label=_owned_label(entry, layout, sized.servers),
        setup=setup,
        total_usd=sized.total_usd,
        months=demand.months,
        capex_usd=sized.unit.capex_usd * sized.servers,
        write=write,
    )


def _owned_risks(
    sizing: OwnedSizing, capacity: ReplicaCapacity, utilisation: float | None, can_rent: bool
) -> tuple[str, ...]:
    risks = [*quantisation_risks(capacity.precision)]
    lead = sizing.unit.lead_months
    if lead and sizing.bridged is not None:
        risks.append(
            f"hardware lead time {lead} months: the first months are served by renting {sizing.bridged.label}"
        )
    elif lead:
        why = "no rental could serve them" if can_rent else "renting is not allowed"
        risks.append(f"hardware lead time {lead} months: no capacity until delivery ({why})")
    if utilisation is not None and utilisation < _LOW_UTILISATION:
        risks.append(
            f"low utilisation ({utilisation:.0%}): capacity bought for the peak idles most of the time"
        )
    return tuple(risks)


def _local_amounts(
    price: HardwarePrice, tdp_w: float, capacity: ReplicaCapacity, demand: ServingDemand, a: Assumptions
) -> tuple[float, float, float, float, float] | None:
    """Card purchase, resale value, cost of capital, power and upkeep of one local card serving
    `demand`, in the order of its cost lines; None when the peak needs more than one stream."""
    if not serves_one_stream(capacity.single_stream_rps, demand.peak_rps, a.target_utilisation):
        return None
    return _card_amounts(price.usd_per_accelerator, _card_schedule(a), tdp_w, capacity, demand, a)


def _card_schedule(a: Assumptions) -> CapitalSchedule:
    """A local card's capital: bought at month 0 and in service at once."""
    return capital_schedule(
        0, a.horizon_months, a.life_months, a.residual_value_fraction, a.cost_of_capital_annual
    )


def _card_amounts(
    card_usd: float,
    schedule: CapitalSchedule,
    tdp_w: float,
    capacity: ReplicaCapacity,
    demand: ServingDemand,
    a: Assumptions,
) -> tuple[float, float, float, float, float]:
    """`_local_amounts` of a card that serves the peak with one stream, from its price and
    capital schedule (the same for every precision of the card)."""
    busy_hours = demand.served_rps_hours(0) / capacity.single_stream_rps
    return (
        card_usd * schedule.purchases,
        -card_usd * schedule.resale,
        card_usd * schedule.cost_of_capital,
        tdp_w / _W_PER_KW * busy_hours * a.electricity_usd_per_kwh,
        a.hosted_staff_usd_per_month * demand.months,
    )


def local_total(
    price: HardwarePrice, tdp_w: float, capacity: ReplicaCapacity, demand: ServingDemand, a: Assumptions
) -> float | None:
    """What `local_lines` add up to, without writing them (None: more than one stream)."""
    amounts = _local_amounts(price, tdp_w, capacity, demand, a)
    return None if amounts is None else added(amounts)  # as `lines_total` adds the lines


def local_totals(
    price: HardwarePrice,
    tdp_w: float,
    capacities: Sequence[ReplicaCapacity],
    demand: ServingDemand,
    a: Assumptions,
) -> list[float]:
    """`local_total` of one card at each of `capacities`, every one of which serves the peak with
    one stream (`one_stream` admitted it); the card's price and capital schedule read once
    (0.4 us of a local total's 1.5, 2026-12-05)."""
    card_usd, schedule = price.usd_per_accelerator, _card_schedule(a)
    return [added(_card_amounts(card_usd, schedule, tdp_w, capacity, demand, a)) for capacity in capacities]


def local_lines(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    capacity: ReplicaCapacity,
    demand: ServingDemand,
    assumptions: Assumptions,
) -> tuple[Line, ...] | None:
    """The cost lines of one local card serving `demand`; None when the peak needs more than one
    stream."""
    amounts = _local_amounts(price, tdp_w, capacity, demand, assumptions)
    if amounts is None:
        return None
    busy_hours = demand.served_rps_hours(0) / capacity.single_stream_rps
    return _local_lines_of(entry, price, tdp_w, busy_hours, amounts)


def _local_lines_of(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    busy_hours: float,
    amounts: tuple[float, float, float, float, float],
) -> tuple[Line, ...]:
    """`local_lines` of a card busy `busy_hours` from its `_local_amounts`."""
    purchase, resale, capital, energy, upkeep = amounts
    return (
        Line(
            "card purchase",
            purchase,
            f"{entry.id} at ${price.usd_per_accelerator:,.0f}; the host machine is not costed",
        ),
        Line("resale value", resale),
        Line("cost of capital", capital),
        Line("power", energy, f"{tdp_w:.0f} W while busy ({busy_hours:,.0f} h), office power without PUE"),
        Line("upkeep", upkeep, "integration and care, at the hosted-API staff rate"),
    )


def _local_setup(entry: AcceleratorEntry, capacity: ReplicaCapacity, model_id: str, a: Assumptions) -> Setup:
    return Setup.for_purchase(
        model_id,
        entry.id,
        scaling="always_on",
        units=1,
        accelerators=1,
        accelerators_per_replica=1,
        replicas=1,
        precision=str(capacity.precision),  # the value, faster than `.value` (_owned_setup)
        serving_engine=str(a.serving_engine),
    )


def priced_local_plan(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    capacity: ReplicaCapacity,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    total_usd: float | None = None,
) -> PricedCandidate | None:
    """`local_plan` priced, written only when it is shown; None when the peak needs more than
    one stream (`total_usd`: its `local_total`, when already known)."""
    total = local_total(price, tdp_w, capacity, demand, assumptions) if total_usd is None else total_usd
    if total is None:
        return None

    setup = _local_setup(entry, capacity, model_id, assumptions)

    def write() -> CostedCandidate:
        plan = local_plan(entry, price, tdp_w, capacity, model_id, demand, assumptions, setup)
        assert plan is not None, "priced: it serves the peak with one stream"
        return plan

    return PricedCandidate(
        option=OptionKind.LOCAL,
        label=f"local {entry.id}",
        setup=setup,
        total_usd=total,
        months=demand.months,
        capex_usd=price.usd_per_accelerator,
        write=write,
    )


def local_plan(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    capacity: ReplicaCapacity,
    model_id: str,
    demand: ServingDemand,
    assumptions: Assumptions,
    setup: Setup | None = None,
) -> CostedCandidate | None:
    """One local card serving one user; None when the peak needs more than one stream (`setup`:
    its priced plan's, when priced first)."""
    a = assumptions
    # the amounts read once for the lines, the opex and the cost per hour (a local plan ~17.6 us
    # to write, the lines read back by name and added twice ~1.5 us of it; 2026-12-05)
    amounts = _local_amounts(price, tdp_w, capacity, demand, a)
    if amounts is None:
        return None
    busy_hours = demand.served_rps_hours(0) / capacity.single_stream_rps
    lines = _local_lines_of(entry, price, tdp_w, busy_hours, amounts)
    card, energy, upkeep = price.usd_per_accelerator, amounts[3], amounts[4]
    utilisation = busy_hours / (a.hours_per_month * demand.months)
    risks = [
        "no SLA: a single card in one machine, no failover",
        "serves one request at a time; more users queue",
        *quantisation_risks(capacity.precision),
    ]
    if demand.redundancy:
        risks.append("the requested redundancy is not provided by a local GPU")
    return CostedCandidate(
        option=OptionKind.LOCAL,
        label=f"local {entry.id}",
        setup=_local_setup(entry, capacity, model_id, a) if setup is None else setup,
        lines=lines,
        months=demand.months,
        capex_usd=card,
        opex_usd_per_month=(energy + upkeep) / demand.months,
        tokens=demand.total_tokens,
        utilisation=utilisation,
        ttft_ms=capacity.single_stream_ttft_ms,
        tpot_ms=capacity.single_stream_tpot_ms,
        headroom=capacity.single_stream_rps / demand.peak_rps - 1 if demand.peak_rps else None,
        risks=tuple(risks),
        uncertainty=capacity.efficiency_source or None,
        facts=(
            f"One {entry.id} answers one request at a time, "
            f"{capacity.single_stream_rps * 3600:,.0f} requests/h",
        ),
        # the lines' total (`lines_total`): their amounts added in order
        usd_per_accelerator_hour=added(amounts) / (a.hours_per_month * demand.months),
        price_source=f"purchase price {price.describe()}: {price.source}",
        reprice=lambda multiplier: local_plan(
            entry, price, tdp_w, capacity, model_id, demand.scaled(multiplier), a
        ),
        repriced_total_usd=lambda multiplier: local_total(
            price, tdp_w, capacity, demand.scaled(multiplier), a
        ),
    )
