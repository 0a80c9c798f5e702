r"""The hybrid plan: a base of owned or reserved capacity plus burst capacity for the peaks.

A mixed-integer program over the demand grid, solved with HiGHS (`scipy.optimize.milp`).

Periods p are (month group g, hour group j): months with the same demand and the same base
availability form a group (one group per month with growth; two without growth, before and
after the owned hardware is delivered), hours with the same demand multiplier form an hour
group. w_p is the hours period p stands for over the horizon, D_p its request rate (req/s).

Inputs
    bases b       owned servers or reserved instances: capacity k_b req/s per unit (planned, i.e.
                  estimate x target utilisation), cost F_b per unit over the horizon (owned:
                  capital, maintenance, colocation, idle power; reserved: the whole commitment),
                  energy e_b USD per (req/s x hour) served (owned only), capex c_b per unit,
                  available a_bg in {0, 1} (owned hardware is absent during the lead time)
    bursts o      cloud instances, on demand or spot, autoscaled: capacity k_o per instance, price
                  P_o per instance-hour
    hosted API    A USD per (req/s x hour) served (price per request x 3600)
    staff         S_owned per month in service if any owned unit is bought; S_cloud and S_api
                  per month of each phase f (before / after the owned hardware's delivery) in
                  which that source is used at all. Above that minimum staff scales with the
                  fleet (costs/staff.py): q USD per accelerator-month, q = staff USD per FTE-month
                  / accelerators per FTE; n_b, n_o accelerators per unit
    spare         R = redundancy x the smallest planned replica capacity among the self-hosted
                  sources; required from self-hosted capacity unless a hosted API can take over

Variables
    x_b in Z+         units of base b (for the whole horizon)
    y_op in Z+        instances of burst o running in period p
    z_p >= 0          req/s sent to the hosted API in period p
    s_bp >= 0         req/s served by owned base b in period p (what its energy is paid on)
    u in {0,1}        any owned unit bought;   v_f, h_f in {0,1}: cloud / API used in phase f
    g_own, g_cloud >= 0   staff above the minimum (owned; rented), USD over the horizon

Minimise
    sum_b F_b x_b + sum_{b owned, p} e_b w_p s_bp + sum_{o,p} P_o w_p y_op + sum_p A w_p z_p
    + S_owned M_service u + sum_f M_f (S_cloud v_f + S_api h_f)          (M: months)
    + g_own + g_cloud

Subject to, for every period p in month group g and phase f
    sum_{b owned} s_bp + sum_{b reserved} k_b x_b + sum_o k_o y_op + z_p >= D_p     (demand)
    s_bp <= a_bg k_b x_b                                                           (owned serves what it has)
    sum_b a_bg k_b x_b + sum_o k_o y_op >= D_p + R        (spare; only without a hosted API)
    y_op <= Y v_f,  x_b(reserved) <= X v_f,  z_p <= D_p h_f,  x_b(owned) <= X u      (staff links)
    g_own >= q M_service sum_{b owned} n_b x_b - S_owned M_service u          (staff scales with the
    g_cloud >= q (sum_{b reserved} n_b x_b M + sum_{o,p} n_o y_op w_p / H)     fleet: max(minimum,
               - sum_f M_f S_cloud v_f                                         accelerators / N));
                                                                           H: hours per month
and, when the constraints set them,
    sum_{b owned} c_b x_b <= max_capex_usd,   objective <= max_usd_per_month x horizon months.

Solving. Small programs are solved as written. With many periods (monthly growth and a 24-hour
profile make up to 24 x horizon periods) whole-instance burst variables make branch-and-bound
slow, so the program is solved in two stages: first with burst instance-hours divisible, which
sizes the bases; then again with those bases fixed and whole burst instances, which prices the
bursts exactly. Bases dominated by a burst (a unit costs more per hour of capacity than the
burst, even fully used) are left out first. HiGHS is deterministic; a 1 s time limit only
guards against pathological inputs.

Every pure plan it is built from is a feasible point that costs no more than that plan's own
total (the pure plans add a minimum serving replica and whole-replica rounding on top), so the
optimum never costs more than the best of them; the solution is checked against them anyway and
the pure plan is returned when HiGHS stops within its gap above it.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.arrays import FloatArray
from wheretorun.engine.costs.candidate import CostedCandidate, Line
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.staff import SCALED_STAFF, STAFF
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.workload import Constraints, OptionKind

__all__ = [
    "TIME_LIMIT_RISK",
    "BaseOption",
    "BurstOption",
    "HybridInputs",
    "HybridPartValue",
    "HybridSolution",
    "solve_hybrid",
]

_MIP_GAP = 1e-6
_TIME_LIMIT_S = 1.0  # a guard against pathological inputs; a mix found at the limit says so (TIME_LIMIT_RISK)
_TIME_LIMIT_STATUS = 1  # scipy.optimize.milp: "Iteration or time limit reached"
TIME_LIMIT_RISK = (
    f"the mixed-integer program stopped at its {_TIME_LIMIT_S:g} s time limit: this mix is the best it "
    "found, not proven the cheapest, and the same request may find another on a busier or quieter machine"
)
_NOISE_USD = 0.01  # less than a cent in a variable's cost is the solver's rounding, not a real amount
_ONE_STAGE_BURST_INTEGERS = 24  # above this many whole-instance burst variables, solve in two stages


@dataclass(frozen=True, slots=True)
class BaseOption:
    """One unit kind of base capacity, derived from a pure plan."""

    plan: CostedCandidate
    unit: str  # "server of 8 x h100-sxm", "p5.48xlarge reserved-3y"
    owned: bool
    unit_rps: float  # planned capacity of one unit
    replica_rps: float  # planned capacity of one replica
    fixed_usd_per_unit: float  # over the horizon
    capital_usd_per_unit: float  # the part of it that is capital (depreciation, cost of capital)
    capex_usd_per_unit: float
    energy_usd_per_rps_hour: float  # owned: accelerator energy per req/s served for an hour
    available_from_month: int
    accelerators_per_unit: int = 0  # what operations staff scales with (costs/staff.py)


@dataclass(frozen=True, slots=True)
class BurstOption:
    """A source paid only when used: an autoscaled cloud offer or a hosted API."""

    plan: CostedCandidate
    unit: str
    api: bool
    unit_rps: float  # cloud: planned capacity per instance (unused for the API)
    replica_rps: float
    usd_per_unit_hour: float  # cloud: per instance-hour; API: per (req/s x hour)
    accelerators_per_unit: int = 0  # cloud: per instance (staff scales with it); API: none


@dataclass(frozen=True, slots=True)
class HybridInputs:
    bases: tuple[BaseOption, ...] = ()
    bursts: tuple[BurstOption, ...] = ()

    @property
    def plans(self) -> tuple[CostedCandidate, ...]:
        options: tuple[BaseOption | BurstOption, ...] = (*self.bases, *self.bursts)
        return tuple(option.plan for option in options)


@dataclass(frozen=True, slots=True)
class HybridPartValue:
    role: str  # base | burst
    label: str
    units: int | None
    share_of_requests: float
    usd: float


@dataclass(frozen=True, slots=True)
class HybridSolution:
    """`plan` is the hybrid (option HYBRID); `pure` is True when the optimum uses one source
    only, and then `plan` is that source's own pure plan."""

    plan: CostedCandidate
    pure: bool
    parts: tuple[HybridPartValue, ...]
    base_utilisation: float | None
    # HiGHS stopped at its time limit: a pure answer does not rule out a cheaper mix
    stopped_at_time_limit: bool = False


@dataclass(frozen=True, slots=True)
class _Period:
    group: int
    before_delivery: bool
    rps: float
    hours: float  # over the horizon

    @property
    def phase(self) -> int:
        """0 before the owned hardware is delivered, 1 after."""
        return 0 if self.before_delivery else 1


@dataclass(slots=True)
class _Program:
    """Variables (cost, integrality, upper bound, tag) and sparse rows, built up in order."""

    cost: list[float] = field(default_factory=list)
    integer: list[int] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    rows: list[tuple[dict[int, float], float, float]] = field(default_factory=list)
    # True once a solve stopped at the time limit, with a mix not proven the cheapest or none
    stopped_at_time_limit: bool = False

    def var(self, cost: float, tag: str, *, integer: bool, upper: float = math.inf) -> int:
        self.cost.append(cost)
        self.integer.append(1 if integer else 0)
        self.upper.append(upper)
        self.tags.append(tag)
        return len(self.cost) - 1

    def row(self, coefs: dict[int, float], low: float = -math.inf, high: float = math.inf) -> None:
        self.rows.append((coefs, low, high))

    def solve(self, divisible: str | None = None, fixed: dict[int, float] | None = None) -> FloatArray | None:
        """Solve with HiGHS. Variables whose tag starts with `divisible` are made continuous;
        `fixed` pins variables to values."""
        # imported on first use: scipy.optimize takes ~0.3 s to import (the CLI answers in ~1 s)
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_array

        entries = [
            (i, col, value) for i, (coefs, _, _) in enumerate(self.rows) for col, value in coefs.items()
        ]
        matrix = coo_array(
            ([e[2] for e in entries], ([e[0] for e in entries], [e[1] for e in entries])),
            shape=(len(self.rows), len(self.cost)),
        ).tocsr()
        result = milp(
            np.asarray(self.cost),
            constraints=LinearConstraint(matrix, [r[1] for r in self.rows], [r[2] for r in self.rows]),
            integrality=np.asarray(
                [
                    0 if divisible and tag.startswith(divisible) else kind
                    for kind, tag in zip(self.integer, self.tags, strict=True)
                ]
            ),
            bounds=Bounds(*self._bounds(fixed or {})),
            options={"mip_rel_gap": _MIP_GAP, "time_limit": _TIME_LIMIT_S},
        )
        if result.status == _TIME_LIMIT_STATUS:
            self.stopped_at_time_limit = True
        return None if result.x is None else np.asarray(result.x, dtype=np.float64)

    def _bounds(self, fixed: dict[int, float]) -> tuple[FloatArray, FloatArray]:
        lower = np.zeros(len(self.cost))
        upper = np.asarray(self.upper, dtype=np.float64)
        for column, value in fixed.items():
            lower[column] = upper[column] = value
        return lower, upper

    def count(self, prefix: str) -> int:
        return sum(kind for kind, tag in zip(self.integer, self.tags, strict=True) if tag.startswith(prefix))

    def usd_by_tag(self, solution: FloatArray) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for cost, tag, value in zip(self.cost, self.tags, solution, strict=True):
            totals[tag] += cost * float(value)
        return totals


def _periods(demand: ServingDemand, lead_months: int) -> list[_Period]:
    """Periods of month groups (same demand row, same side of the delivery date) x hour groups."""
    groups: dict[tuple[tuple[float, ...], bool], int] = {}
    sizes: list[int] = []
    first_month: list[int] = []
    for month in range(demand.months):
        key = (tuple(float(v) for v in demand.rates_rps[month]), month < lead_months)
        if key not in groups:
            groups[key] = len(sizes)
            sizes.append(0)
            first_month.append(month)
        sizes[groups[key]] += 1
    periods = [
        _Period(g, first_month[g] < lead_months, float(demand.rates_rps[first_month[g], j]), sizes[g] * hours)
        for g in range(len(sizes))
        for j, hours in enumerate(demand.group_hours.tolist())
    ]
    return periods


@dataclass(slots=True)
class _Builder:
    inputs: HybridInputs
    demand: ServingDemand
    assumptions: Assumptions
    constraints: Constraints
    pure_plans: tuple[CostedCandidate, ...]  # every pure plan offered, dominated bases' included
    program: _Program = field(default_factory=_Program)
    bases: list[int] = field(default_factory=list)
    cloud_staff: list[int] = field(default_factory=list)
    api_staff: list[int] = field(default_factory=list)
    owned_staff: tuple[int, float] | None = None  # (u, months in service)
    phase_months: tuple[int, int] = (0, 0)
    cloud_bursts: list[tuple[int, int, float]] = field(default_factory=list)  # (burst, column, hours)

    @property
    def spare(self) -> float:
        replicas = [b.replica_rps for b in self.inputs.bases] + [
            o.replica_rps for o in self.inputs.bursts if not o.api
        ]
        return self.demand.redundancy * min(replicas)

    @property
    def has_api(self) -> bool:
        return any(o.api for o in self.inputs.bursts)

    def add_bases(self) -> None:
        peak = self.demand.peak_rps + self.spare
        for i, b in enumerate(self.inputs.bases):
            top = float(math.ceil(peak / b.unit_rps) + 1)
            self.bases.append(self.program.var(b.fixed_usd_per_unit, f"base:{i}", integer=True, upper=top))

    def add_staff(self, phase_months: tuple[int, int]) -> None:
        """Staff binaries: owned for its months in service; cloud and API per phase (before and
        after the owned hardware's delivery) in which they are used."""
        a, program = self.assumptions, self.program
        owned = [(b, x) for b, x in zip(self.inputs.bases, self.bases, strict=True) if b.owned]
        if owned:
            months = a.horizon_months - min(b.available_from_month for b, _ in owned)
            u = program.var(a.operations_staff_usd_per_month * months, "staff:owned", integer=True, upper=1.0)
            for _, x in owned:
                program.row({x: 1.0, u: -program.upper[x]}, high=0.0)
            self.owned_staff = (u, float(months))
        self.phase_months = phase_months
        uses_cloud = any(not o.api for o in self.inputs.bursts) or any(not b.owned for b in self.inputs.bases)
        if uses_cloud:
            self.cloud_staff = [
                program.var(a.cloud_staff_usd_per_month * n, "staff:cloud", integer=True, upper=1.0)
                for n in phase_months
            ]
            for b, x in zip(self.inputs.bases, self.bases, strict=True):
                for v in [] if b.owned else self.cloud_staff:
                    program.row({x: 1.0, v: -program.upper[x]}, high=0.0)
        if self.has_api:
            self.api_staff = [
                program.var(a.hosted_staff_usd_per_month * n, "staff:api", integer=True, upper=1.0)
                for n in phase_months
            ]

    def add_period(self, period: _Period) -> None:
        program = self.program
        cover: dict[int, float] = {}
        capacity: dict[int, float] = {}
        for i, (b, x) in enumerate(zip(self.inputs.bases, self.bases, strict=True)):
            available = not (b.owned and period.before_delivery)
            if available:
                capacity[x] = b.unit_rps
            if b.owned:
                served = program.var(b.energy_usd_per_rps_hour * period.hours, f"energy:{i}", integer=False)
                program.row({served: 1.0, x: -b.unit_rps if available else 0.0}, high=0.0)
                cover[served] = 1.0
            elif available:
                cover[x] = b.unit_rps
        for i, o in enumerate(self.inputs.bursts):
            if o.api:
                z = program.var(
                    o.usd_per_unit_hour * period.hours, f"burst:{i}", integer=False, upper=period.rps
                )
                program.row({z: 1.0, self.api_staff[period.phase]: -period.rps}, high=0.0)
                cover[z] = 1.0
            else:
                top = float(math.ceil((period.rps + self.spare) / o.unit_rps))
                y = program.var(o.usd_per_unit_hour * period.hours, f"burst:{i}", integer=True, upper=top)
                self.cloud_bursts.append((i, y, period.hours))
                program.row({y: 1.0, self.cloud_staff[period.phase]: -top}, high=0.0)
                cover[y] = o.unit_rps
                capacity[y] = o.unit_rps
        program.row(cover, low=period.rps)
        if self.spare > 0 and not self.has_api:
            program.row(capacity, low=period.rps + self.spare)

    def add_scaled_staff(self) -> None:
        """Staff above the minimum, once every unit variable exists: max(minimum, fleet / N) is
        the minimum's binary plus a non-negative excess g >= q x fleet - minimum (the objective
        keeps g at the larger of zero and that difference)."""
        a, program = self.assumptions, self.program
        usd_per_accelerator_month = a.staff_usd_per_fte_month / a.accelerators_per_staff_fte
        if self.owned_staff is not None:
            u, months = self.owned_staff
            excess = program.var(1.0, "staff:owned_scaled", integer=False)
            row = {excess: 1.0, u: a.operations_staff_usd_per_month * months}
            for b, x in zip(self.inputs.bases, self.bases, strict=True):
                if b.owned:
                    row[x] = -usd_per_accelerator_month * months * b.accelerators_per_unit
            program.row(row, low=0.0)
        if self.cloud_staff:
            excess = program.var(1.0, "staff:cloud_scaled", integer=False)
            row = {excess: 1.0}
            for v, months in zip(self.cloud_staff, self.phase_months, strict=True):
                row[v] = a.cloud_staff_usd_per_month * months
            for b, x in zip(self.inputs.bases, self.bases, strict=True):
                if not b.owned:
                    row[x] = -usd_per_accelerator_month * self.demand.months * b.accelerators_per_unit
            usd_per_accelerator_hour = usd_per_accelerator_month / self.demand.hours_per_month
            for i, column, hours in self.cloud_bursts:
                row[column] = -usd_per_accelerator_hour * self.inputs.bursts[i].accelerators_per_unit * hours
            program.row(row, low=0.0)

    def add_budgets(self) -> None:
        constraints = self.constraints
        if constraints.max_capex_usd is not None:
            owned = {
                x: b.capex_usd_per_unit for b, x in zip(self.inputs.bases, self.bases, strict=True) if b.owned
            }
            if owned:
                self.program.row(owned, high=constraints.max_capex_usd)
        if constraints.max_usd_per_month is not None:
            self.program.row(
                dict(enumerate(self.program.cost)), high=constraints.max_usd_per_month * self.demand.months
            )


def solve_hybrid(
    inputs: HybridInputs,
    demand: ServingDemand,
    assumptions: Assumptions,
    constraints: Constraints,
    pure_plans: tuple[CostedCandidate, ...] | None = None,
) -> HybridSolution | None:
    """The cheapest mix of bases and bursts (see the module docstring); None without at least
    one base and one burst, or when no mix meets the budget. `pure_plans` are the pure plans the
    mix must beat, at this demand (by default the inputs' own)."""
    if not inputs.bases or not inputs.bursts or demand.peak_rps <= 0:
        return None
    pure = inputs.plans if pure_plans is None else pure_plans
    if not pure:
        return None
    useful = HybridInputs(_undominated(inputs, assumptions), inputs.bursts)
    if not useful.bases:
        return _pure(pure, constraints)
    lead = min((b.available_from_month for b in useful.bases if b.owned), default=0)
    periods = _periods(demand, lead)
    cheapest_pure = _pure(pure, constraints)
    if (
        _no_budget(constraints)
        and _least_mix_usd(useful, periods, assumptions, lead) >= cheapest_pure.plan.total_usd
    ):
        return cheapest_pure  # no mix with a base can beat it: the program would answer the same
    builder = _Builder(useful, demand, assumptions, constraints, pure_plans=pure)
    builder.add_bases()
    builder.add_staff((lead, demand.months - lead))
    for period in periods:
        builder.add_period(period)
    builder.add_scaled_staff()
    builder.add_budgets()
    solution = _solve(builder)
    if solution is None:
        # no mix found in time: the pure plan stands, and the answer says a mix is not ruled out
        stopped = builder.program.stopped_at_time_limit
        return dataclasses.replace(cheapest_pure, stopped_at_time_limit=True) if stopped else None
    return _result(builder, periods, solution)


def _no_budget(constraints: Constraints) -> bool:
    return constraints.max_capex_usd is None and constraints.max_usd_per_month is None


def _least_mix_usd(
    inputs: HybridInputs, periods: list[_Period], assumptions: Assumptions, lead: int
) -> float:
    """A lower bound on the total of any mix that uses a base: every request-second served at the
    cheapest rate any source offers when fully used, plus the smallest staff minimum a base brings
    (owned staff for its months in service, rented staff for the horizon). Without a budget the
    program always has a solution, and a solution without a base is answered by the pure plan; so
    when this bound reaches the cheapest pure plan, solving cannot change the answer."""
    served = sum(period.rps * period.hours for period in periods)
    rates = [_burst_rate(o) for o in inputs.bursts]
    for b in inputs.bases:
        hours = sum(p.hours for p in periods if not (b.owned and p.before_delivery))
        if hours > 0:
            rates.append(b.fixed_usd_per_unit / hours / b.unit_rps + b.energy_usd_per_rps_hour)
    months = assumptions.horizon_months
    staff = [
        assumptions.operations_staff_usd_per_month * (months - lead)
        if b.owned
        else assumptions.cloud_staff_usd_per_month * months
        for b in inputs.bases
    ]
    return served * min(rates) + min(staff)


def _burst_rate(option: BurstOption) -> float:
    """USD per (req/s x hour) a burst source charges."""
    return option.usd_per_unit_hour if option.api else option.usd_per_unit_hour / option.unit_rps


def _per_rps_hour(option: BaseOption | BurstOption, assumptions: Assumptions) -> float:
    """USD per (req/s x hour) of capacity when fully used."""
    if isinstance(option, BurstOption):
        return _burst_rate(option)
    hours = (assumptions.horizon_months - option.available_from_month) * assumptions.hours_per_month
    return option.fixed_usd_per_unit / hours / option.unit_rps + option.energy_usd_per_rps_hour


def _undominated(inputs: HybridInputs, assumptions: Assumptions) -> tuple[BaseOption, ...]:
    """Bases that cost less per hour of capacity than the cheapest burst, even fully used; the
    others can only lose to bursting."""
    cheapest = min(_per_rps_hour(o, assumptions) for o in inputs.bursts)
    return tuple(b for b in inputs.bases if _per_rps_hour(b, assumptions) < cheapest)


def _pure(plans: tuple[CostedCandidate, ...], constraints: Constraints) -> HybridSolution:
    """The cheapest pure plan (within the budget constraints when any is) as the answer."""
    allowed = [plan for plan in plans if _within(plan, constraints)] or list(plans)
    return HybridSolution(min(allowed, key=lambda plan: (plan.total_usd, plan.label)), True, (), None)


def _solve(builder: _Builder) -> FloatArray | None:
    """One program when it is small; otherwise two stages: bases sized against divisible burst
    instance-hours, then whole burst instances for those bases (exact for the bases chosen)."""
    program = builder.program
    if program.count("burst:") <= _ONE_STAGE_BURST_INTEGERS:
        return program.solve()
    sizing = program.solve(divisible="burst:")
    if sizing is None:
        return None
    return program.solve(fixed={x: float(round(sizing[x])) for x in builder.bases})


def _result(builder: _Builder, periods: list[_Period], solution: FloatArray) -> HybridSolution:
    inputs, program = builder.inputs, builder.program
    usd = program.usd_by_tag(solution)
    units = [round(float(solution[x])) for x in builder.bases]
    shares = _shares(builder, periods, units, solution)
    used = [i for i, n in enumerate(units) if n > 0]
    used_bursts = [i for i, o in enumerate(inputs.bursts) if usd.get(f"burst:{i}", 0.0) >= _NOISE_USD]
    total = sum(usd.values())
    options: list[BaseOption | BurstOption] = [
        *(inputs.bases[i] for i in used),
        *(inputs.bursts[i] for i in used_bursts),
    ]
    pure = _pure(builder.pure_plans, builder.constraints)
    if not used or len(options) == 1 or total >= pure.plan.total_usd:
        # No base, one source alone, or a mix no cheaper than a pure plan: the pure plan is the answer
        # (the program's one-source cost leaves out the pure plans' minimum serving replica).
        return dataclasses.replace(pure, stopped_at_time_limit=program.stopped_at_time_limit)
    parts = [
        HybridPartValue(
            "base",
            f"{units[i]} x {inputs.bases[i].unit}",
            units[i],
            shares[f"base:{i}"],
            usd.get(f"base:{i}", 0.0) + usd.get(f"energy:{i}", 0.0),
        )
        for i in used
    ] + [
        HybridPartValue("burst", inputs.bursts[i].unit, None, shares[f"burst:{i}"], usd[f"burst:{i}"])
        for i in used_bursts
    ]
    plan = _plan(builder, parts, usd, used, units, periods)
    return HybridSolution(plan, False, tuple(parts), plan.utilisation)


def _within(plan: CostedCandidate, constraints: Constraints) -> bool:
    """Whether a pure plan meets the budget constraints the program was given."""
    if constraints.max_capex_usd is not None and plan.capex_usd > constraints.max_capex_usd:
        return False
    monthly = plan.usd_per_month
    return (
        constraints.max_usd_per_month is None or monthly is None or monthly <= constraints.max_usd_per_month
    )


def _shares(
    builder: _Builder, periods: list[_Period], units: list[int], solution: FloatArray
) -> dict[str, float]:
    """Share of all requests each source serves: bases first, then bursts in their order."""
    inputs = builder.inputs
    served: dict[str, float] = defaultdict(float)
    burst_columns = _burst_columns(builder, periods)
    for k, period in enumerate(periods):
        left = period.rps
        for i, b in enumerate(inputs.bases):
            available = not (b.owned and period.before_delivery)
            take = min(left, units[i] * b.unit_rps) if available else 0.0
            served[f"base:{i}"] += take * period.hours
            left -= take
        for i, o in enumerate(inputs.bursts):
            take = min(left, float(solution[burst_columns[k][i]]) * (1.0 if o.api else o.unit_rps))
            served[f"burst:{i}"] += take * period.hours
            left -= take
    total = sum(p.rps * p.hours for p in periods)
    return {key: value / total for key, value in served.items()}


def _burst_columns(builder: _Builder, periods: list[_Period]) -> list[list[int]]:
    """The variable id of each burst in each period (in creation order)."""
    columns: list[list[int]] = [[] for _ in periods]
    bursts = [i for i, tag in enumerate(builder.program.tags) if tag.startswith("burst:")]
    per_period = len(builder.inputs.bursts)
    for k in range(len(periods)):
        columns[k] = bursts[k * per_period : (k + 1) * per_period]
    return columns


def _plan(
    builder: _Builder,
    parts: list[HybridPartValue],
    usd: dict[str, float],
    used: list[int],
    units: list[int],
    periods: list[_Period],
) -> CostedCandidate:
    inputs, demand = builder.inputs, builder.demand
    lines = [
        Line(f"{part.role}: {part.label}", part.usd, f"{part.share_of_requests:.0%} of requests")
        for part in parts
    ]
    for tag, name in (("staff:owned", "owned"), ("staff:cloud", "rented"), ("staff:api", "hosted-API")):
        if usd.get(tag, 0.0) > 0:
            lines.append(Line(STAFF, usd[tag], f"{name} operations; the minimum per deployment"))
        if usd.get(f"{tag}_scaled", 0.0) >= _NOISE_USD:
            lines.append(
                Line(SCALED_STAFF, usd[f"{tag}_scaled"], f"{name} operations: the fleet above the minimum")
            )
    base_capacity_hours = sum(
        units[i] * inputs.bases[i].unit_rps / builder.assumptions.target_utilisation * p.hours
        for i in used
        for p in periods
        if not (inputs.bases[i].owned and p.before_delivery)
    )
    base_served = sum(part.share_of_requests for part in parts if part.role == "base") * sum(
        p.rps * p.hours for p in periods
    )
    base = inputs.bases[used[0]].plan.setup
    used_plans = [inputs.bases[i].plan for i in used] + [
        burst.plan for burst in inputs.bursts if any(part.label == burst.unit for part in parts)
    ]
    pure_only = ("lead time", "low utilisation")  # statements about the pure plan, not the mix
    risks = sorted(
        {risk for plan in used_plans for risk in plan.risks if not any(p in risk for p in pure_only)}
    )
    lead = max((inputs.bases[i].available_from_month for i in used if inputs.bases[i].owned), default=0)
    if lead:
        risks.insert(0, f"hardware lead time {lead} months: the bursts serve everything until delivery")
    if builder.program.stopped_at_time_limit:
        risks.insert(0, TIME_LIMIT_RISK)
    total = sum(line.usd for line in lines)
    capital = sum(inputs.bases[i].capital_usd_per_unit * units[i] for i in used)
    return CostedCandidate(
        option=OptionKind.HYBRID,
        label="hybrid: " + " + ".join(part.label for part in parts),
        setup=Setup(
            model_id=base.model_id,
            accelerator_id=base.accelerator_id,
            precision=base.precision,
            serving_engine=base.serving_engine,
            pricing_mode="mixed",
            scaling="base_and_burst",
        ),
        lines=tuple(lines),
        months=demand.months,
        capex_usd=sum(inputs.bases[i].capex_usd_per_unit * units[i] for i in used),
        opex_usd_per_month=(total - capital) / demand.months,
        tokens=demand.total_tokens,
        utilisation=base_served / base_capacity_hours if base_capacity_hours else None,
        risks=("two platforms to operate: base and burst capacity", *risks),
        facts=tuple(
            f"{part.role.capitalize()} {part.label} serves {part.share_of_requests:.0%} of requests"
            for part in parts
        ),
        reprice=lambda multiplier: _resolved(builder, multiplier),
    )


def _resolved(builder: _Builder, multiplier: float) -> CostedCandidate | None:
    """The hybrid at `multiplier` x the volume: the same bases and bursts to choose from, the
    mix solved again against the pure plans re-priced at that volume (break-even uses it)."""
    pure = tuple(
        scaled
        for plan in builder.pure_plans
        if plan.reprice is not None and (scaled := plan.reprice(multiplier)) is not None
    )
    solution = solve_hybrid(
        builder.inputs, builder.demand.scaled(multiplier), builder.assumptions, builder.constraints, pure
    )
    return None if solution is None else solution.plan
