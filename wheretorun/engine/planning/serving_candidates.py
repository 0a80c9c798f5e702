"""Candidates for online serving: hosted APIs, cloud rental, owned servers and local GPUs.

Each acceptable model is sized once per (accelerator, replica size, precision) (capacity.py);
every cloud offer, owned server and local card then reuses those figures. Cloud rows are priced
in bulk (cloud_table.py); owned and local candidates are few and costed one by one. The cheapest
plans of each kind also feed the hybrid program (hybrid.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.capacity import CapacityTable, ReplicaCapacity, serving_capacities
from wheretorun.engine.catalog import AcceleratorEntry, ApiPriceOffer, HardwarePrice
from wheretorun.engine.costs import cloud, hosted
from wheretorun.engine.costs.arrays import FloatArray, read_only
from wheretorun.engine.costs.candidate import CostedCandidate, PricedCandidate
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.owned import (
    Bridge,
    OwnedFleet,
    OwnedUnit,
    Rental,
    SizedServers,
    StackedBridge,
    local_totals,
    owned_sizing,
    owned_unit,
    priced_local_plan,
    priced_owned_plan,
    server_size,
)
from wheretorun.engine.costs.staff import SCALED_STAFF, STAFF
from wheretorun.engine.hybrid import BaseOption, BurstOption, HybridInputs
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.planning.acceptable_models import SelfHosted, acceptable_models
from wheretorun.engine.planning.cloud_sizing import CloudSizing, size_replica_groups
from wheretorun.engine.planning.cloud_table import (
    Choice,
    ModeHours,
    OfferTable,
    RankedChoices,
    choose_cheapest,
)
from wheretorun.engine.planning.context import SERVING_PRECISIONS, Context
from wheretorun.engine.planning.layouts import server_layouts
from wheretorun.engine.planning.offers import (
    EligibleOffers,
    eligible_hardware,
    eligible_offers,
)
from wheretorun.engine.planning.rejections import RejectionBook, described
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules import context_window, deadline, first_failing, local_capacity
from wheretorun.engine.rules.budget import over_limits
from wheretorun.engine.rules.constraints import precision_floor
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.rules.spot_fallback import spot_fallback
from wheretorun.engine.workload import InferenceWorkload, OptionKind

__all__ = ["ServingCandidates", "serving_candidates"]

_CLOUD_PLANS_KEPT = 20  # cheapest choices costed as candidates (= SHORTLIST)
_BASES_PER_KIND = 1  # the cheapest owned accelerator and the cheapest reservation


@dataclass(slots=True)
class ServingCandidates:
    demand: ServingDemand
    plans: list[PricedCandidate] = field(default_factory=list)  # written when shown (candidate.py)
    bases: list[BaseOption] = field(default_factory=list)
    bursts: list[BurstOption] = field(default_factory=list)
    evaluated: int = 0
    best_api: tuple[ApiPriceOffer, str] | None = None  # the cheapest hosted price and its model
    # each sizing's cloud rows priced for this demand, by the sizing's identity: models of the same
    # architecture (llama-3.3-70b and llama-3.1-70b) share a sizing and price the same rows
    priced_sizings: dict[int, _PricedRows] = field(default_factory=dict)

    @property
    def hybrid_inputs(self) -> HybridInputs:
        return HybridInputs(
            tuple(sorted(self.bases, key=lambda b: (b.plan.total_usd, b.unit))),
            tuple(self.bursts),
        )


def serving_candidates(workload: InferenceWorkload, context: Context) -> ServingCandidates:
    a = context.assumptions
    demand = ServingDemand.from_workload(workload, a.horizon_months, a.hours_per_month)
    result = ServingCandidates(demand)
    models = acceptable_models(workload.models, context.snapshot)
    context.notes.extend(models.notes)
    _hosted(models.hosted_rows, demand, context, result)
    if models.self_hosted:
        per_offer = len(models.self_hosted) * len(SERVING_PRECISIONS) * len(cloud.SERVING_MODES)
        per_entry = len(models.self_hosted) * len(SERVING_PRECISIONS)
        offers = eligible_offers(context, per_offer)
        owned = eligible_hardware(context, OptionKind.OWNED, per_entry)
        local = eligible_hardware(context, OptionKind.LOCAL, per_entry)
        for model in models.self_hosted:
            _self_hosted(model, demand, context, offers, owned, local, result)
    return result


# ---- hosted APIs --------------------------------------------------------------------------------


def _hosted(
    rows: tuple[tuple[ApiPriceOffer, str], ...],
    demand: ServingDemand,
    context: Context,
    result: ServingCandidates,
) -> None:
    kept: list[tuple[ApiPriceOffer, str]] = []
    tokens, limits = demand.tokens_per_request, context.constraints
    result.evaluated += len(rows)
    every_row = first_failing.hosted_api(limits)  # the same for every row
    for row in rows:
        rejection = every_row or first_failing.hosted_price(row[0], tokens, limits)
        if rejection is not None:
            context.book.record(rejection, hosted.label(row[0]))
            continue
        kept.append(row)
    priced = hosted.priced_serving_plans(kept, demand, context.assumptions)
    result.plans.extend(priced)
    if priced:
        cheapest = min(range(len(priced)), key=lambda i: (priced[i].total_usd, priced[i].label))
        result.best_api = kept[cheapest]
        price = kept[cheapest][0]
        per_rps_hour = hosted.usd_per_request(price, demand) * 3600
        best = priced[cheapest].written()
        result.bursts.append(BurstOption(best, best.label, True, 0.0, 0.0, per_rps_hour))


# ---- self-hosted --------------------------------------------------------------------------------


def _precisions(context: Context, reject: Callable[[Rejection, Precision], None]) -> list[Precision]:
    allowed = []
    for precision in SERVING_PRECISIONS:
        below = precision_floor(precision, context.constraints)
        if below is None:
            allowed.append(precision)
        else:
            reject(below, precision)
    return allowed


def _self_hosted(
    model: SelfHosted,
    demand: ServingDemand,
    context: Context,
    offers: EligibleOffers,
    owned: list[AcceleratorEntry],
    local: list[AcceleratorEntry],
    result: ServingCandidates,
) -> None:
    book = context.book
    modes = len(cloud.SERVING_MODES)
    candidates = len(offers.table.offers) * modes + len(owned) + len(local)
    too_long = context_window.model_context(demand.tokens_per_request, model.architecture.max_context)
    if too_long is not None:
        book.record(too_long, model.model_id, candidates * len(SERVING_PRECISIONS))
        return

    def floor_rejection(below: Rejection, precision: Precision) -> None:
        book.record(below, f"{model.model_id} at {precision.value}", candidates)

    precisions = _precisions(context, floor_rejection)
    entries = {entry.id: entry for entry in (*owned, *local)}
    ids = sorted(offers.accelerator_ids | set(entries))
    specs = [(i, context.snapshot.accelerators[i].spec) for i in ids]
    capacities = serving_capacities(
        model.architecture,
        [(i, spec) for i, spec in specs if spec is not None],
        precisions,
        engine=context.assumptions.serving_engine,
        input_tokens=demand.input_tokens,
        output_tokens=demand.output_tokens,
        ttft_ms=demand.ttft_ms,
        tpot_ms=demand.tpot_ms,
        efficiency=context.efficiency,
    )
    rental = _cloud(model, capacities, precisions, offers, demand, context, result)
    _owned(model, capacities, precisions, owned, demand, context, result, _bridge(rental, result, context))
    _local(model, capacities, precisions, local, demand, context, result)


# ---- cloud --------------------------------------------------------------------------------------


def _cloud(
    model: SelfHosted,
    capacities: CapacityTable,
    precisions: list[Precision],
    offers: EligibleOffers,
    demand: ServingDemand,
    context: Context,
    result: ServingCandidates,
) -> Bridge | None:
    """Cloud plans; returns the rental that bridges an owned plan's lead time (the cheapest
    on-demand autoscaled plan), if any."""
    a, book, table = context.assumptions, context.book, offers.table
    sized = size_replica_groups(offers, capacities, precisions, book, len(cloud.SERVING_MODES))
    result.evaluated += sized.rejected
    layouts = sized.sizings
    if not layouts:
        return None
    rows = result.priced_sizings.get(id(sized))  # the entry holds `sized`: its id is not reused
    if rows is None:
        rows = result.priced_sizings[id(sized)] = _priced_rows(sized, table, demand, context)
    book.merge(rows.rejected)
    result.evaluated += rows.priced
    hours, choices = rows.hours, rows.choices

    hosted_per_request = (
        None if result.best_api is None else hosted.usd_per_request(result.best_api[0], demand)
    )
    refused: set[int] = set()
    built: dict[_ChoiceKey, PricedCandidate | None] = {}  # the plans and bursts read the same choices

    def plan_of(choice: Choice) -> PricedCandidate | None:
        at = _key_of(choice)
        if at in built:
            return built[at]
        offer, layout = table.offers[choice.offer], layouts[choice.key]
        if at in rows.costs:
            cost = rows.costs[at]
        else:
            listed = _listed(table, choice, a)
            cost = rows.costs[at] = cloud.serving_cost(
                offer, choice.mode, layout, demand, a, hosted_per_request, hours, choice.key, listed
            )
        plan = built[at] = (
            None
            if cost is None
            else cloud.priced_serving_plan(
                offer, choice.mode, layout, model.model_id, demand, a, hosted_per_request, cost
            )
        )
        no_fallback = spot_fallback(choice.mode.pricing, fallback_priced=False) if plan is None else None
        if no_fallback is not None and choice.offer not in refused:
            refused.add(choice.offer)
            book.record(no_fallback, cloud.offer_label(offer, choice.mode))
        return plan

    _keep_cloud_plans(choices, table.group, plan_of, result)
    on_demand = _first(choices, ("on_demand",), "autoscaled")
    _cloud_bursts_and_base(choices, on_demand, plan_of, layouts, table, context, result)
    if on_demand is None:
        return None
    offer, mode, layout = table.offers[on_demand.offer], on_demand.mode, layouts[on_demand.key]
    label = cloud.offer_label(offer, mode)

    def rental(head: ServingDemand) -> Rental | None:
        total = cloud.serving_total(offer, mode, layout, head, a)
        return None if total is None else Rental(label, total)

    def rentals(heads: Sequence[ServingDemand]) -> list[Rental | None]:
        totals = cloud.serving_totals(offer, mode, layout, heads, a)
        return [None if total is None else Rental(label, total) for total in totals]

    return StackedBridge(rental, rentals)


@dataclass(frozen=True, slots=True)
class _PricedRows:
    """A sizing's cloud rows priced for one demand: the hours of each layout, the cheapest
    choices, the rows priced and the rejections made on the way (replayed for each model), and
    the cost of each choice made into a plan (the same for every model of the architecture)."""

    sized: CloudSizing[cloud.Layout]
    hours: cloud.ServingHours
    choices: RankedChoices
    priced: int
    rejected: RejectionBook
    costs: dict[_ChoiceKey, cloud.ServingCost | None] = field(default_factory=dict)


_ChoiceKey = tuple[int, int, str]  # a choice's offer, sizing key and mode name


def _key_of(choice: Choice) -> _ChoiceKey:
    """`choice` as a plain tuple: hashing and comparing a `Choice` (a frozen dataclass holding
    another) runs Python code for every field; 0.2 us against 1.6 a lookup (2026-12-05)."""
    return choice.offer, choice.key, choice.mode.name


def _listed(table: OfferTable, choice: Choice, a: Assumptions) -> cloud.Listed:
    """`cloud.listed_prices` of the choice's offer, read from the table's prices (the same rule,
    tested to the bit): a chosen row is priced, and spot's fallback reads the on-demand price."""
    price = float(table.prices(choice.mode, a)[choice.offer])
    if choice.mode.pricing != "spot":
        return price, None
    on_demand = float(table.prices(cloud.ON_DEMAND_AUTOSCALED, a)[choice.offer])
    return price, None if math.isnan(on_demand) else on_demand


def _priced_rows(
    sized: CloudSizing[cloud.Layout], table: OfferTable, demand: ServingDemand, context: Context
) -> _PricedRows:
    a, layouts = context.assumptions, sized.sizings
    replica_rps, per_instance = _layout_columns(sized)
    hours = cloud.serving_hours(demand, replica_rps * a.target_utilisation, per_instance)
    budget = context.constraints.max_usd_per_month
    rejected = RejectionBook()
    choices, priced = choose_cheapest(
        table,
        sized.rows,
        [ModeHours(mode, cloud.paid_hours(hours, mode, demand)) for mode in cloud.SERVING_MODES],
        fixed_usd=a.cloud_staff_usd_per_month * demand.months,
        max_total_usd=None if budget is None else budget * demand.months,
        assumptions=a,
        book=rejected,
        describe=lambda offer, key, mode: (
            f"{cloud.offer_label(table.offers[offer], mode)} {layouts[key].capacity.precision.value}"
        ),
    )
    return _PricedRows(sized, hours, choices, priced, rejected)


_LAYOUT_COLUMNS: RecentResults[tuple[FloatArray, FloatArray]] = RecentResults(kept=16)


def _layout_columns(sized: CloudSizing[cloud.Layout]) -> tuple[FloatArray, FloatArray]:
    """Each layout's replica requests/s and replicas per instance, as read-only arrays;
    remembered by the sizing's identity (sizings are themselves remembered, and a layout never
    changes)."""

    def columns() -> tuple[FloatArray, FloatArray]:
        layouts = sized.sizings
        rps = np.asarray([layout.capacity.requests_per_s for layout in layouts], dtype=np.float64)
        per_instance = np.asarray([float(layout.per_instance) for layout in layouts], dtype=np.float64)
        read_only(rps, per_instance)
        return rps, per_instance

    return _LAYOUT_COLUMNS.get((sized,), None, columns)


def _keep_cloud_plans(
    choices: RankedChoices,
    groups: np.ndarray,
    plan_of: Callable[[Choice], PricedCandidate | None],
    result: ServingCandidates,
) -> None:
    """Plans for the cheapest choices, one per (accelerator, provider) and pricing mode. The
    columns are read directly and a `Choice` made only for the choices kept (2026-12-05)."""
    pricing = [mode.pricing for mode in choices.modes]
    seen: set[tuple[int, str]] = set()
    for index, (offer, mode) in enumerate(zip(choices.offer, choices.mode, strict=True)):
        key = (int(groups[offer]), pricing[mode])
        if key in seen:
            continue
        seen.add(key)
        plan = plan_of(choices[index])
        if plan is not None:
            result.plans.append(plan)
        if len(seen) >= _CLOUD_PLANS_KEPT:
            break


def _first(choices: RankedChoices, pricing: tuple[str, ...], scaling: str) -> Choice | None:
    return choices.first(lambda mode: mode.pricing in pricing and mode.scaling == scaling)


def _cloud_bursts_and_base(
    choices: RankedChoices,
    on_demand: Choice | None,
    plan_of: Callable[[Choice], PricedCandidate | None],
    layouts: list[cloud.Layout],
    table: OfferTable,
    context: Context,
    result: ServingCandidates,
) -> None:
    """The hybrid program's cloud inputs: the cheapest on-demand autoscaled offer as a burst, the
    cheapest reservation as a base (`on_demand`: the cheapest on-demand autoscaled choice). Spot is
    not a burst: its reclaims would need the on-demand burst as their fallback anyway
    (spot_reclaims.py)."""
    a = context.assumptions
    for choice in (on_demand,):
        priced = plan_of(choice) if choice is not None else None
        if choice is None or priced is None:
            continue
        plan = priced.written()
        layout = layouts[choice.key]
        price, _ = _listed(table, choice, a)
        assert price is not None, "choose_cheapest keeps priced rows only"
        replica_rps = layout.capacity.requests_per_s * a.target_utilisation
        result.bursts.append(
            BurstOption(
                plan,
                plan.label,
                False,
                layout.per_instance * replica_rps,
                replica_rps,
                price,
                accelerators_per_unit=layout.accelerators,
            )
        )
    reserved = _first(choices, ("reserved_1y", "reserved_3y"), "always_on")
    priced_base = plan_of(reserved) if reserved is not None else None
    if reserved is None or priced_base is None:
        return
    plan = priced_base.written()
    layout = layouts[reserved.key]
    replica_rps = layout.capacity.requests_per_s * a.target_utilisation
    commitment = plan.total_usd - plan.line_usd(STAFF) - plan.line_usd(SCALED_STAFF)
    result.bases.append(
        BaseOption(
            plan=plan,
            unit=plan.label,
            owned=False,
            unit_rps=layout.per_instance * replica_rps,
            replica_rps=replica_rps,
            fixed_usd_per_unit=commitment / (plan.setup.instance_count or 1),
            capital_usd_per_unit=0.0,
            capex_usd_per_unit=0.0,
            energy_usd_per_rps_hour=0.0,
            available_from_month=0,
            accelerators_per_unit=layout.accelerators,
        )
    )


def _bridge(
    rental: Bridge | None,
    result: ServingCandidates,
    context: Context,
) -> Bridge | None:
    """What serves the months before owned hardware arrives: the cheaper of the cheapest
    on-demand autoscaled cloud plan and the cheapest hosted API (the sources the hybrid program
    can burst to), or None when neither is allowed."""
    sources: list[Bridge] = []
    if rental is not None:
        sources.append(rental)
    if result.best_api is not None:
        price = result.best_api[0]
        api_label = hosted.label(price)

        def api(head: ServingDemand) -> Rental:
            return Rental(api_label, hosted.serving_total(price, head, context.assumptions))

        sources.append(api)
    if not sources:
        return None

    # every owned candidate bridges the same months: the same head demand object (ServingDemand.head
    # makes it once), remembered by identity with the head itself, so the identity is not reused
    memo: dict[int, tuple[ServingDemand, Rental | None]] = {}

    def cheaper(best: Rental | None, rental: Rental | None) -> Rental | None:
        """min by (total, label), the first on a tie, without a list and a key function."""
        if rental is None or best is None:
            return best if rental is None else rental
        return rental if (rental.total_usd, rental.label) < (best.total_usd, best.label) else best

    def cheapest(head: ServingDemand) -> Rental | None:
        known = memo.get(id(head))
        if known is not None:
            return known[1]
        best: Rental | None = None
        for source in sources:
            best = cheaper(best, source(head))
        memo[id(head)] = head, best
        return best

    def cheapest_of_all(heads: Sequence[ServingDemand]) -> list[Rental | None]:
        """`cheapest` of each head; the cloud rentals of the heads not yet known priced at once
        (a re-priced owned plan's grid of volumes)."""
        unknown = [head for head in heads if id(head) not in memo]
        offered: list[list[Rental | None]] = [
            source.many(unknown) if isinstance(source, StackedBridge) else [source(head) for head in unknown]
            for source in sources
        ]
        for index, head in enumerate(unknown):
            best: Rental | None = None
            for rentals in offered:
                best = cheaper(best, rentals[index])
            memo[id(head)] = head, best
        return [memo[id(head)][1] for head in heads]

    return StackedBridge(cheapest, cheapest_of_all)


# ---- owned and local ----------------------------------------------------------------------------


def _owned(
    model: SelfHosted,
    capacities: CapacityTable,
    precisions: list[Precision],
    entries: list[AcceleratorEntry],
    demand: ServingDemand,
    context: Context,
    result: ServingCandidates,
    bridge: Bridge | None,
) -> None:
    """Owned servers: every (accelerator, precision) is sized and costed (all at once, as an
    `OwnedFleet`); the cheapest precision of each accelerator that meets the budgets becomes a
    plan (the others cost more on the same hardware and would be deduplicated from the ranking
    anyway)."""
    a, book = context.assumptions, context.book
    lead = deadline.lead_time(a.hardware_lead_time_months, a.horizon_months)
    if lead is not None:
        result.evaluated += len(entries) * len(precisions)
        _record_rejected(
            book, lead.reason, [(entry.id, lead) for entry in entries for _ in precisions], "owned"
        )
        return
    fleet, columns, unsized_columns = _owned_fleet(capacities, precisions, entries, context)
    # recorded ahead of the budgets' rejections below: a sizing's reasons are never theirs, and a
    # reason's examples keep the order of its candidates
    for reason, rejected in unsized_columns:
        _record_rejected(book, reason, rejected, "owned")
    totals, capex, servers = fleet.totals(demand, bridge) or _each_sized(
        fleet, entries, columns, demand, context, bridge
    )
    # read as lists once: a numpy scalar read and its float() cost ~100 ns a column (2026-12-05)
    totals_usd, capex_usd, counts = totals.tolist(), capex.tolist(), servers.tolist()
    months, constraints = demand.months, context.constraints
    result.evaluated += len(entries) * len(precisions)
    bases: list[tuple[PricedCandidate, AcceleratorEntry, OwnedUnit]] = []
    for entry, entry_columns in zip(entries, columns, strict=True):
        sized: list[tuple[float, int, int]] = []  # (total, precision order, column)
        for order, column in entry_columns:
            total = totals_usd[column]
            over = over_limits(total / months, capex_usd[column], constraints)
            if over is not None:
                book.record(over, f"owned {entry.id} at {precisions[order].value}")
                continue
            sized.append((total, order, column))
        if sized:
            total, _, column = min(sized)
            price, tdp, server = context.snapshot.hardware_prices[entry.id], _tdp(entry), fleet.units[column]
            chosen = SizedServers(server, int(counts[column]), total)
            plan = priced_owned_plan(
                entry, price, tdp, server.layout, model.model_id, demand, a, bridge, chosen
            )
            result.plans.append(plan)
            bases.append((plan, entry, server))
    if not bases:
        return
    # the hybrid's owned base: the cheapest server by total and name (only its plan is written
    # here); names written only for the servers that cost no more than the last one kept
    bases.sort(key=lambda base: base[0].total_usd)
    last = bases[min(_BASES_PER_KIND, len(bases)) - 1][0].total_usd
    named = [
        (plan, _base_unit(server.layout, entry), server)
        for plan, entry, server in bases
        if plan.total_usd <= last
    ]
    cheapest = sorted(named, key=lambda base: (base[0].total_usd, base[1]))[:_BASES_PER_KIND]
    for plan, unit_name, server in cheapest:
        result.bases.append(_owned_base(plan.written(), unit_name, server, a))


def _each_sized(
    fleet: OwnedFleet,
    entries: list[AcceleratorEntry],
    columns: _Columns,
    demand: ServingDemand,
    context: Context,
    bridge: Bridge | None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """`fleet.totals` server by server, as `OwnedSizing` (for the demands it declines)."""
    totals, capex = np.full(len(fleet.units), math.nan), np.full(len(fleet.units), math.nan)
    servers = np.full(len(fleet.units), math.nan)
    for entry, entry_columns in zip(entries, columns, strict=True):
        price, tdp = context.snapshot.hardware_prices[entry.id], _tdp(entry)
        for _, column in entry_columns:
            server = fleet.units[column]
            sizing = owned_sizing(
                entry, price, tdp, server.layout, demand, context.assumptions, bridge, server
            )
            totals[column], capex[column] = sizing.total_usd, sizing.capex_usd
            servers[column] = sizing.servers
    return totals, capex, servers


# per accelerator, the (precision order, fleet column) of each precision with a server
_Columns = tuple[tuple[tuple[int, int], ...], ...]
# each reason the columns without a server have, with their (accelerator id, rejection) in order
_Unsized = tuple[tuple[RejectReason, tuple[tuple[str, Rejection], ...]], ...]
_FLEETS: RecentResults[tuple[OwnedFleet, _Columns, _Unsized]] = RecentResults(kept=16)


def _owned_fleet(
    capacities: CapacityTable, precisions: list[Precision], entries: list[AcceleratorEntry], context: Context
) -> tuple[OwnedFleet, _Columns, _Unsized]:
    """The servers of every (accelerator, precision) that has a layout, for each accelerator the
    precisions with one and their columns in the fleet, and those without one by reason
    (counted in bulk: 52 of each model in the 70B chat example); remembered for the last few
    capacity tables, catalogs' hardware prices and accelerators (by identity) and precisions and
    assumptions (by value): none of it depends on the demand."""
    prices = context.snapshot.hardware_prices
    return _FLEETS.get(
        (capacities, prices, *entries),
        (tuple(precisions), context.assumptions),
        lambda: _new_fleet(capacities, precisions, entries, prices, context.assumptions),
    )


def _new_fleet(
    capacities: CapacityTable,
    precisions: list[Precision],
    entries: list[AcceleratorEntry],
    prices: Mapping[str, HardwarePrice],
    a: Assumptions,
) -> tuple[OwnedFleet, _Columns, _Unsized]:
    keys = [(entry.id, server_size(entry, a), precision) for entry in entries for precision in precisions]
    layouts = iter(server_layouts(capacities, keys))
    units: list[OwnedUnit] = []
    columns: list[tuple[tuple[int, int], ...]] = []
    unsized_columns: dict[RejectReason, list[tuple[str, Rejection]]] = {}
    for entry in entries:
        entry_columns: list[tuple[int, int]] = []
        for order in range(len(precisions)):
            layout = next(layouts)
            if isinstance(layout, Rejection):
                unsized_columns.setdefault(layout.reason, []).append((entry.id, layout))
                continue
            entry_columns.append((order, len(units)))
            units.append(owned_unit(entry, prices[entry.id], _tdp(entry), layout, a))
        columns.append(tuple(entry_columns))
    by_reason = tuple((reason, tuple(rejected)) for reason, rejected in unsized_columns.items())
    return OwnedFleet.of(units, a), tuple(columns), by_reason


def clear_serving_memos() -> None:
    """Forget the remembered owned fleets and cloud layout columns."""
    _FLEETS.clear()
    _LAYOUT_COLUMNS.clear()


def _base_unit(layout: cloud.Layout, entry: AcceleratorEntry) -> str:
    return f"server of {layout.accelerators} x {entry.id} ({layout.capacity.precision.value})"


def _owned_base(plan: CostedCandidate, unit_name: str, unit: OwnedUnit, a: Assumptions) -> BaseOption:
    layout = unit.layout
    return BaseOption(
        plan=plan,
        unit=unit_name,
        owned=True,
        unit_rps=unit.planned_rps * a.target_utilisation,
        replica_rps=layout.capacity.requests_per_s * a.target_utilisation,
        fixed_usd_per_unit=unit.fixed_usd,
        capital_usd_per_unit=unit.hardware_usd,
        capex_usd_per_unit=unit.capex_usd,
        energy_usd_per_rps_hour=unit.energy_usd_per_rps_hour,
        available_from_month=unit.lead_months,
        accelerators_per_unit=layout.accelerators,
    )


def _tdp(entry: AcceleratorEntry) -> float:
    assert entry.spec is not None, "first_failing.hardware checked the spec"
    assert entry.spec.tdp_w is not None, "first_failing.hardware checked the TDP"
    return entry.spec.tdp_w


def _local(
    model: SelfHosted,
    capacities: CapacityTable,
    precisions: list[Precision],
    entries: list[AcceleratorEntry],
    demand: ServingDemand,
    context: Context,
    result: ServingCandidates,
) -> None:
    """Local cards: each (card, precision) that serves the peak with one stream is costed, and
    the cheapest precision of each card becomes a plan (the others cost more on the same card
    and would be deduplicated from the ranking anyway, as for owned servers). A precision over
    a budget is kept as a plan too, for the budget check (recommend._within_budgets) to reject
    and count as before; the precisions of a card share its capex and their monthly cost rises
    with the total, so the cheapest is within the budgets whenever any is."""
    a, book = context.assumptions, context.book
    peak_rps, utilisation = demand.peak_rps, a.target_utilisation
    result.evaluated += len(entries) * len(precisions)
    # a card is a server of one, its layout the card's one-accelerator replica or why that does not
    # serve (the same `unsized` rejection), remembered with the capacity table: finding the reason
    # (offers.sizing_failure) for each card every request cost ~4 us a card (2026-12-05)
    cards = iter(server_layouts(capacities, [(entry.id, 1, p) for entry in entries for p in precisions]))
    # recorded after the loop, by reason (a card's reasons are never `exceeds_local_capacity`)
    unsized_cards: dict[RejectReason, list[tuple[str, Rejection]]] = {}
    for entry in entries:
        price, tdp = context.snapshot.hardware_prices[entry.id], _tdp(entry)
        admitted: list[ReplicaCapacity] = []
        for _ in precisions:
            card = next(cards)
            if isinstance(card, Rejection):
                unsized_cards.setdefault(card.reason, []).append((entry.id, card))
                continue
            capacity = card.capacity
            if local_capacity.serves_one_stream(capacity.single_stream_rps, peak_rps, utilisation):
                admitted.append(capacity)
            elif book.wants_example(RejectReason.EXCEEDS_LOCAL_CAPACITY):
                too_busy = local_capacity.one_stream(capacity.single_stream_rps, peak_rps, utilisation)
                assert too_busy is not None, "serves_one_stream said it does not"
                book.record(too_busy, f"local {entry.id} at {capacity.precision.value}")
            else:  # counted only: the book keeps a few examples of a reason, built when wanted
                book.add_count(RejectReason.EXCEEDS_LOCAL_CAPACITY, 1)
        if not admitted:
            continue
        totals = local_totals(price, tdp, admitted, demand, a)
        # (total, precision order, capacity); the orders differ, so min compares no capacities
        costed = list(zip(totals, range(len(admitted)), admitted, strict=True))
        cheapest, card_usd = min(costed), price.usd_per_accelerator
        for item in costed:
            if item is cheapest or _over_budget(item[0], card_usd, demand, context):
                plan = priced_local_plan(
                    entry, price, tdp, item[2], model.model_id, demand, a, total_usd=item[0]
                )
                assert plan is not None, "local_capacity.one_stream admitted it"
                result.plans.append(plan)
    for reason, rejected in unsized_cards.items():
        _record_rejected(book, reason, rejected, "local")


def _over_budget(total_usd: float, capex_usd: float, demand: ServingDemand, context: Context) -> bool:
    """What recommend._within_budgets will decide for a serving plan of this total and capex."""
    return over_limits(total_usd / demand.months, capex_usd, context.constraints) is not None


def _record_rejected(
    book: RejectionBook, reason: RejectReason, rejected: Sequence[tuple[str, Rejection]], kind: str
) -> None:
    """Record each (accelerator id, rejection for `reason`) of an owned server or local card
    (`kind`): the same book as recording each, with only the examples it keeps written."""

    def example(index: int) -> str:
        accelerator_id, rejection = rejected[index]
        return described(rejection, f"{kind} {accelerator_id}")

    book.reject_rows(reason, len(rejected), example)
