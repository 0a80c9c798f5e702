"""Recommend where to run a workload: price every candidate, then choose.

    recommend(workload, constraints, assumptions, snapshot) -> Recommendation

1. Enumerate candidates for the workload kind (planning/serving_candidates.py,
   batch_candidates.py, training_candidates.py):
   option x accelerator x count x precision x offer x pricing mode. Rules (engine/rules/, one
   module each) reject what cannot run (memory, latency, deadline, constraints, missing prices)
   with the rule that decided;
   every remaining candidate is costed over the horizon (or the job).
2. Budget rules: `over_budget` when the average month (the job, for a batch: its cost against
   the budget of the months it spans) costs more than `max_usd_per_month`; `over_capex` when
   one purchase of the hardware costs more than `max_capex_usd`.
3. Rank by total cost, cheapest first. The option list keeps the cheapest candidate per
   (option, accelerator, provider, pricing mode) (per provider and model for hosted APIs), then
   the first `SHORTLIST` of those, plus the best of each option kind if it fell outside.
4. Inference also gets the hybrid plan (hybrid.py) and every workload the break-even between the
   best plan of each option kind, the #1 among them whatever its kind (the hybrid re-solves its
   mix at each volume; breakeven.py).

Deterministic: the same inputs give an identical result (ties break on labels).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import CatalogSnapshot, CloudOffer
from wheretorun.engine.costs.candidate import CostedCandidate, PricedCandidate
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.explain import rationale, unit_costs
from wheretorun.engine.hybrid import HybridSolution, solve_hybrid
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.money import rounded_to_places
from wheretorun.engine.planning.acceptable_models import rows_of_catalog_models
from wheretorun.engine.planning.batch_candidates import batch_candidates
from wheretorun.engine.planning.context import Context
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.planning.serving_candidates import serving_candidates
from wheretorun.engine.planning.training_candidates import training_candidates
from wheretorun.engine.recommendation import (
    BindingConstraint,
    CostLine,
    HybridPart,
    PlanOption,
    Recommendation,
    RejectReason,
)
from wheretorun.engine.rules.budget import over_limits
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.rules.suspect_price import candidates_snapshot, suspect_price
from wheretorun.engine.volume_break_even import volume_break_even
from wheretorun.engine.workload import (
    BatchWorkload,
    Constraints,
    InferenceWorkload,
    OptionKind,
    TrainingWorkload,
    Workload,
)

__all__ = ["SHORTLIST", "clear_recommend_memos", "recommend"]

SHORTLIST = 20
_CENTS = 2  # decimal places of money
_PER_TOKEN = 4  # decimal places of a cost per million tokens or per accelerator-hour
_HOURS_PER_BUDGET_MONTH = 730.0
_SAME_TOTAL = 0.005  # totals within half a percent are "the same total" when folding rows
_DEADLINE_RELAXATION = 10  # a batch deadline is required; relaxing it means ten times longer

# Option kinds read once: an enum member read from its class costs ~1k instructions (Python
# 3.11's EnumType), a module global ~50, and iterating the class 14.7k against 4.3k for a tuple of
# its members (2026-12-05)
_HOSTED_API = OptionKind.HOSTED_API
_HYBRID = OptionKind.HYBRID
_OPTION_KINDS = tuple(OptionKind)

# what is ranked: a written plan, or one priced whose plan is written only if the answer shows it
Candidate = CostedCandidate | PricedCandidate


def recommend(
    workload: Workload,
    constraints: Constraints,
    assumptions: Assumptions,
    snapshot: CatalogSnapshot,
    efficiency: EfficiencyTable = DEFAULT_EFFICIENCY,
    explain_infeasible: bool = True,
    limit: int | None = None,
) -> Recommendation:
    """Ranked, costed, explained options for `workload`, and the candidates rejected on the way.
    When nothing is feasible (and `explain_infeasible`), each constraint is relaxed alone to name
    the ones that bind and the cheapest option relaxing each would admit.

    `limit`: how many ranked options to write up (None: the whole shortlist). `options` are then
    the first `limit` of the whole shortlist's, and `best_per_option` is unchanged (the best of
    a kind that ranks lower is written up for it alone)."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    context = Context(constraints, assumptions, candidates_snapshot(snapshot, constraints), efficiency)
    _count_suspect(snapshot, workload, constraints, context)
    found = _candidates(workload, context)
    ranked = _ranked(_within_budgets(found.plans, workload, context))
    hybrid = found.hybrid
    if hybrid is not None and not hybrid.pure:
        ranked = _ranked([*ranked, hybrid.plan])
    elif hybrid is not None:
        context.notes.append(_pure_hybrid_note(hybrid))
    best_ranked = _best_per_option(ranked)
    rows = _shortlist(ranked, best_ranked)
    # plans are written from here on: those shown, the first two (the rationale compares with
    # them) and the best of each kind (the break-even re-prices them)
    leaders = [plan.written() for plan, _ in rows[:2]]
    best = {kind: plan.written() for kind, plan in best_ranked.items()}

    def option_at(rank: int) -> PlanOption:
        plan, others = rows[rank]
        return _option(plan.written(), rank, leaders, hybrid, others)

    options = tuple(option_at(rank) for rank in range(len(rows) if limit is None else min(limit, len(rows))))
    by_kind = {
        kind: options[rank] if rank < len(options) else option_at(rank)
        for kind, rank in _first_of_each_kind(rows).items()
    }
    binding = (
        _binding_constraints(workload, constraints, assumptions, snapshot, efficiency)
        if not options and explain_infeasible
        else ()
    )
    return Recommendation(
        workload_kind=found.kind,
        options=options,
        best_per_option=MappingProxyType(by_kind),
        rejected=context.book.groups(),
        assumptions=assumptions,
        assumption_sources=_assumption_sources(assumptions),
        catalog_version=snapshot.version,
        as_of=snapshot.as_of,
        break_even=volume_break_even(list(best.values()), found.volume_unit, found.volume),
        notes=tuple(dict.fromkeys(context.notes)),
        candidates_evaluated=found.evaluated,
        binding_constraints=binding,
    )


def _pure_hybrid_note(hybrid: HybridSolution) -> str:
    if hybrid.stopped_at_time_limit:
        return (
            f"hybrid: the mixed-integer program stopped at its time limit without a mix cheaper than "
            f"{hybrid.plan.label} alone; a cheaper mix is not ruled out"
        )
    return f"hybrid: no mix of base and burst capacity beats {hybrid.plan.label} alone"


def _hosted_models(workload: Workload) -> set[str]:
    return set() if isinstance(workload, TrainingWorkload) else set(workload.models)


def _count_suspect(
    snapshot: CatalogSnapshot, workload: Workload, constraints: Constraints, context: Context
) -> None:
    """Suspect prices left out count under `suspect_price`: every suspect cloud offer, and the
    suspect hosted prices of the workload's models. When they are used, a note says so."""
    models = _hosted_models(workload)
    hosted = rows_of_catalog_models(snapshot.suspect_api_prices, models)
    if constraints.include_suspect_prices:
        if snapshot.suspect_cloud_offers or hosted:
            context.notes.append(
                f"include_suspect_prices: {len(snapshot.suspect_cloud_offers)} suspect cloud offer(s) and "
                f"{len(hosted)} suspect hosted price(s) are candidates; their options carry the reason "
                "as a risk"
            )
        return
    for price in hosted:
        rejection = suspect_price(price.suspect_reason, constraints)
        if rejection is not None:
            context.book.record(rejection, f"{price.provider} {price.model_id}")
    offers = snapshot.suspect_cloud_offers
    context.book.merge(
        # `rules.suspect_price` reads only `include_suspect_prices` of the constraints: the key
        # holds just that, so requests that differ in other constraints share the entry
        _SUSPECT_OFFERS.get(
            (offers,), constraints.include_suspect_prices, lambda: _suspect_offers_book(offers, constraints)
        )
    )


# The suspect cloud offers' rejections, for the last few (catalog's suspect offers, whether suspect
# prices are included):
# they depend on nothing else, and counting the seeded catalog's 39 one by one cost ~200k
# instructions a request (the 8B prototype, 2026-12-05). Matched by the offers' identity (the
# snapshot's tuple); merged into each request's book as if recorded there.
_SUSPECT_OFFERS: RecentResults[RejectionBook] = RecentResults(kept=16)
# Where each assumption in use comes from, for the last few assumptions values, matched by
# identity (the service hands out one value per exact overrides): its 35 fields read and compared
# with their defaults cost ~63k instructions a request (2026-12-05). A read-only view, so answers
# may share it.
_ASSUMPTION_SOURCES: RecentResults[Mapping[str, str]] = RecentResults(kept=32)


def clear_recommend_memos() -> None:
    """Forget the remembered rejections of suspect cloud offers and sources of assumptions."""
    _SUSPECT_OFFERS.clear()
    _ASSUMPTION_SOURCES.clear()


def _assumption_sources(assumptions: Assumptions) -> Mapping[str, str]:
    return _ASSUMPTION_SOURCES.get((assumptions,), None, lambda: MappingProxyType(assumptions.sources()))


def _suspect_offers_book(offers: Sequence[CloudOffer], constraints: Constraints) -> RejectionBook:
    book = RejectionBook()
    _count_suspect_offers(offers, constraints, book)
    return book


def _count_suspect_offers(
    offers: Sequence[CloudOffer], constraints: Constraints, book: RejectionBook
) -> None:
    """The suspect cloud offers' rejections, as if recorded one by one: an example while the
    group wants one, the others counted together at the end; the rule asked once per distinct
    reason (a few dozen offers share a handful)."""
    outcomes: dict[str | None, Rejection | None] = {}
    uncounted: dict[RejectReason, int] = {}
    for offer in offers:
        if offer.suspect_reason not in outcomes:
            outcomes[offer.suspect_reason] = suspect_price(offer.suspect_reason, constraints)
        rejection = outcomes[offer.suspect_reason]
        if rejection is None:
            continue
        if book.wants_example(rejection.reason):
            book.record(rejection, f"{offer.provider} {offer.instance_type} {offer.region}")
        else:
            uncounted[rejection.reason] = uncounted.get(rejection.reason, 0) + 1
    for reason, count in uncounted.items():
        book.add_count(reason, count)


@dataclass(frozen=True, slots=True)
class _Found:
    kind: str
    volume_unit: str
    volume: float
    plans: Sequence[Candidate]
    evaluated: int
    hybrid: HybridSolution | None = None


def _candidates(workload: Workload, context: Context) -> _Found:
    """Every costed candidate of the workload's kind (and the hybrid plan, for serving)."""
    if isinstance(workload, InferenceWorkload):
        serving = serving_candidates(workload, context)
        hybrid = solve_hybrid(serving.hybrid_inputs, serving.demand, context.assumptions, context.constraints)
        return _Found(
            "inference",
            "requests_per_day",
            workload.requests_per_day,
            serving.plans,
            serving.evaluated,
            hybrid,
        )
    if isinstance(workload, BatchWorkload):
        plans, evaluated = batch_candidates(workload, context)
        tokens = workload.input_tokens_total + workload.output_tokens_total
        return _Found("batch", "tokens", tokens, plans, evaluated)
    plans, evaluated = training_candidates(workload, context)
    return _Found("training", "runs_per_year", workload.runs_per_year, plans, evaluated)


# ---- rules on money ----------------------------------------------------------------------------


def _budget_usd(plan: Candidate, workload: Workload) -> float:
    """What the monthly budget is compared with: the average month, or for a batch job its cost
    spread over the months its deadline spans (at least one)."""
    if plan.usd_per_month is not None:
        return plan.usd_per_month
    months = 1.0
    if isinstance(workload, BatchWorkload):
        months = max(1.0, workload.deadline_hours / _HOURS_PER_BUDGET_MONTH)
    return plan.total_usd / months


def _within_budgets(plans: Sequence[Candidate], workload: Workload, context: Context) -> list[Candidate]:
    constraints = context.constraints
    if constraints.max_usd_per_month is None and constraints.max_capex_usd is None:
        return list(plans)  # no money limit: no plan is over one (the rule not asked once per plan)
    kept = []
    for plan in plans:
        rejection = over_limits(_budget_usd(plan, workload), plan.capex_usd, constraints)
        if rejection is None:
            kept.append(plan)
        else:
            context.book.record(rejection, plan.label)
    return kept


# ---- ranking ------------------------------------------------------------------------------------


def _rank_key(plan: Candidate) -> tuple[float, str, str]:
    """Cheapest first, ties by option kind then label. `OptionKind` is a `StrEnum`: a member
    compares as its value, without the `.value` descriptor (~0.2 us a read, 2026-12-05)."""
    return (plan.total_usd, plan.option, plan.label)


def _ranked(plans: Sequence[Candidate]) -> list[Candidate]:
    return sorted(plans, key=_rank_key)


def _dedupe_key(plan: Candidate) -> tuple[str, str, str, str]:
    """Near-identical plans share a key: the same option on the same accelerator (the same model,
    for hosted APIs) from the same provider in the same pricing mode; so one instance type in
    twenty regions shows once, while its on-demand, spot and reserved prices all show."""
    setup = plan.setup
    return (
        plan.option,  # a StrEnum member: hashes and compares as its value
        setup.accelerator_id or setup.model_id,
        setup.provider or "",
        setup.pricing_mode or "",
    )


def _best_per_option(ranked: Sequence[Candidate]) -> dict[OptionKind, Candidate]:
    best: dict[OptionKind, Candidate] = {}
    for plan in ranked:
        best.setdefault(plan.option, plan)
    return best


def _same_total_tolerance(head_usd: float) -> float:
    """How far a total may lie from the head's to be worth one row: half a percent of the head's
    total (at least half a cent)."""
    return _SAME_TOTAL * max(abs(head_usd), 1.0)


# the rows of one source a plan may fold into: (head's total, its tolerance, row index), in row order
_SourceRows = list[tuple[float, float, int]]


def _fold(plans: Sequence[Candidate]) -> list[tuple[Candidate, list[str]]]:
    """Ranked plans (totals never decrease) with those of the same option kind from the same
    provider (for hosted APIs: or the same model, whoever resells it) at the same total
    (`_same_total_tolerance`) folded into the first such row."""
    rows: list[tuple[Candidate, list[str]]] = []
    # each plan is compared with the rows of its sources only (by kind and provider; by model for
    # hosted APIs), each row's tolerance computed once; plain loops and no helper per plan: the
    # prototype's 77 plans 0.41M instructions against 0.77M with the sources as a list of tagged
    # tuples and every earlier row compared (2026-12-05)
    by_provider: dict[tuple[OptionKind, str | None], _SourceRows] = {}
    by_model: dict[str, _SourceRows] = {}
    for plan in plans:
        total = plan.total_usd
        setup = plan.setup
        provider_rows = by_provider.setdefault((plan.option, setup.provider), [])
        head = _first_same_total(provider_rows, total)
        model_rows = None
        if plan.option == _HOSTED_API:
            model_rows = by_model.setdefault(setup.model_id, [])
            same_model = _first_same_total(model_rows, total)
            if same_model is not None and (head is None or same_model < head):
                head = same_model
        if head is None:
            row = (total, _same_total_tolerance(total), len(rows))
            provider_rows.append(row)
            if model_rows is not None:
                model_rows.append(row)
            rows.append((plan, []))
        else:
            rows[head][1].append(plan.label)
    return rows


def _first_same_total(rows: _SourceRows, total_usd: float) -> int | None:
    """The index of the first of `rows` at the same total as `total_usd`, if any. The plans come
    cheapest first, so a row whose tolerance `total_usd` lies beyond lies beyond every later
    plan's total too: such rows at the front are dropped, each passed over once (the prototype's
    77 plans were compared with a row 363 times, most of them with rows long passed: its 25 owned
    servers are one source; 2026-12-05)."""
    while rows and total_usd - rows[0][0] > rows[0][1]:
        del rows[0]
    for head_usd, tolerance, index in rows:
        if abs(total_usd - head_usd) <= tolerance:
            return index
    return None


def _shortlist(
    ranked: Sequence[Candidate], best: dict[OptionKind, Candidate]
) -> list[tuple[Candidate, tuple[str, ...]]]:
    seen: set[tuple[str, str, str, str]] = set()
    unique = []
    for plan in ranked:
        key = _dedupe_key(plan)
        if key not in seen:
            seen.add(key)
            unique.append(plan)
    rows = _fold(unique)
    shortlist = rows[:SHORTLIST]
    kept = {id(plan) for plan, _ in shortlist}
    folded = {label for _, others in rows for label in others}
    shortlist += [(plan, []) for plan in best.values() if id(plan) not in kept and plan.label not in folded]
    shortlist.sort(key=lambda row: _rank_key(row[0]))
    return [(plan, tuple(others)) for plan, others in shortlist]


def _first_of_each_kind(rows: Sequence[tuple[Candidate, tuple[str, ...]]]) -> dict[OptionKind, int]:
    """The rank (index) of the first row of each option kind, in the order of `OptionKind`."""
    first: dict[OptionKind, int] = {}
    for rank, (plan, _) in enumerate(rows):
        first.setdefault(plan.option, rank)
    return {kind: first[kind] for kind in _OPTION_KINDS if kind in first}


# ---- when nothing is feasible ------------------------------------------------------------------


_Relaxation = tuple[str, str, Workload, Constraints]


def _relaxations(workload: Workload, constraints: Constraints) -> list[_Relaxation]:
    """Each limit the request sets, lifted alone: (field, what it became, workload, constraints)."""
    out: list[_Relaxation] = []
    for item in dataclasses.fields(constraints):
        if getattr(constraints, item.name) != item.default:
            lifted: dict[str, Any] = {item.name: item.default}
            out.append(
                (f"constraints.{item.name}", "no limit", workload, dataclasses.replace(constraints, **lifted))
            )
    if isinstance(workload, InferenceWorkload):
        if workload.ttft_ms is not None:
            out.append(
                ("workload.ttft_ms", "no target", dataclasses.replace(workload, ttft_ms=None), constraints)
            )
        if workload.tpot_ms is not None:
            out.append(
                ("workload.tpot_ms", "no target", dataclasses.replace(workload, tpot_ms=None), constraints)
            )
    elif isinstance(workload, BatchWorkload):
        longer = workload.deadline_hours * _DEADLINE_RELAXATION
        relaxed = f"{longer:g} h ({_DEADLINE_RELAXATION}x)"
        out.append(
            (
                "workload.deadline_hours",
                relaxed,
                dataclasses.replace(workload, deadline_hours=longer),
                constraints,
            )
        )
    elif workload.deadline_hours is not None:
        lifted_run = dataclasses.replace(workload, deadline_hours=None)
        out.append(("workload.deadline_hours", "no deadline", lifted_run, constraints))
    return out


def _figure(option: PlanOption) -> str | None:
    if option.usd_per_million_tokens is not None:
        return f"${option.usd_per_million_tokens} per million tokens"
    if option.usd_per_run is not None:
        return f"${option.usd_per_run} per run"
    return None


def _binding_constraints(
    workload: Workload,
    constraints: Constraints,
    assumptions: Assumptions,
    snapshot: CatalogSnapshot,
    efficiency: EfficiencyTable,
) -> tuple[BindingConstraint, ...]:
    """Every limit whose lifting alone admits an option, with that option; then the limits whose
    lifting alone admits nothing (they bind only together with others)."""
    admitted, alone = [], []
    for field, relaxed_to, relaxed_workload, relaxed_constraints in _relaxations(workload, constraints):
        try:
            result = recommend(
                relaxed_workload,
                relaxed_constraints,
                assumptions,
                snapshot,
                efficiency,
                explain_infeasible=False,
                limit=1,  # only the cheapest option each relaxation admits is read
            )
        except InvalidSpec:
            continue
        if result.options:
            best = result.options[0]
            admitted.append(BindingConstraint(field, relaxed_to, best.label, best.total_usd, _figure(best)))
        else:
            alone.append(BindingConstraint(field, relaxed_to, None, None, None))
    admitted.sort(key=lambda b: (b.cheapest_total_usd or 0, b.constraint))
    return (*admitted, *alone)


# ---- at the edge: Decimal money ------------------------------------------------------------------


def _money(value: float, places: int = _CENTS) -> Decimal:
    if not math.isfinite(value):
        raise ValueError(f"a cost must be finite, got {value}")
    return rounded_to_places(value, places)


def _optional_money(value: float | None, places: int = _CENTS) -> Decimal | None:
    return None if value is None else _money(value, places)


def _per_unit_money(value: float | None, places: int = _CENTS) -> Decimal | None:
    """A cost per unit (per million tokens, per run, per accelerator-hour), or None where the
    volume it divides by is too small for the figure to be finite (a vanishing traffic or run
    rate): the totals stay, the per-unit figure is not defined."""
    return None if value is None or not math.isfinite(value) else rounded_to_places(value, places)


def _total_and_breakdown(plan: CostedCandidate) -> tuple[Decimal, tuple[CostLine, ...]]:
    """The plan's total and its lines as money. Each line is finite when the total is (an
    infinite line makes the total infinite or NaN), so only the total is checked: the prototype's
    `_option` (12 a request) 6k instructions less a call (2026-12-05)."""
    total = _money(plan.total_usd)
    lines = [CostLine(line.name, rounded_to_places(line.usd, _CENTS), line.note) for line in plan.lines]
    return total, tuple(lines)


_NO_MONEY = rounded_to_places(0.0, _CENTS)  # Decimal("0.00"), as `_money(0.0)` gives it


def _monthly_money(
    plan: CostedCandidate, usd_per_month: float | None
) -> tuple[Decimal | None, Decimal, Decimal]:
    """The plan's monthly cost (`usd_per_month`, its `usd_per_month`), capex and monthly opex as
    money, none rounded twice: no capex (hosted, cloud) is zero, and an all-opex plan's opex is its
    monthly cost: ~10k instructions less an option (2026-12-05)."""
    per_month = _optional_money(usd_per_month)
    capex = plan.capex_usd
    opex = plan.opex_usd_per_month
    return (
        per_month,
        _NO_MONEY if capex == 0 else _money(capex),
        per_month if per_month is not None and opex == usd_per_month else _money(opex),
    )


def _option(
    plan: CostedCandidate,
    rank: int,
    leaders: Sequence[CostedCandidate],
    hybrid: HybridSolution | None,
    same_total: tuple[str, ...] = (),
) -> PlanOption:
    runner_up = leaders[1] if len(leaders) > 1 else None
    units = unit_costs(plan)
    parts: tuple[HybridPart, ...] = ()
    if plan.option == _HYBRID and hybrid is not None:
        parts = tuple(
            HybridPart(p.role, p.label, p.units, p.share_of_requests, _money(p.usd)) for p in hybrid.parts
        )
    total, breakdown = _total_and_breakdown(plan)
    per_month, capex, opex = _monthly_money(plan, units.per_month)
    return PlanOption(
        rank=rank + 1,
        option=plan.option,
        label=plan.label,
        setup=plan.setup,
        total_usd=total,
        usd_per_month=per_month,
        usd_per_million_tokens=_per_unit_money(units.per_million_tokens, _PER_TOKEN),
        usd_per_run=_per_unit_money(units.per_run),
        capex_usd=capex,
        opex_usd_per_month=opex,
        breakdown=breakdown,
        utilisation=plan.utilisation,
        ttft_ms=plan.ttft_ms,
        tpot_ms=plan.tpot_ms,
        headroom=plan.headroom,
        risks=plan.risks,
        rationale=rationale(plan, rank, leaders[0], runner_up, units),
        hybrid_parts=parts,
        marginal_usd_per_million_tokens=_per_unit_money(units.marginal_per_million_tokens, _PER_TOKEN),
        marginal_usd_per_run=_per_unit_money(units.marginal_per_run),
        accelerator_hours_per_run=plan.accelerator_hours_per_run,
        wall_clock_hours_per_run=plan.wall_clock_hours_per_run,
        setting=plan.setting,
        uncertainty=plan.uncertainty,
        same_total=same_total,
        usd_per_accelerator_hour=_per_unit_money(plan.usd_per_accelerator_hour, _PER_TOKEN),
        price_source=plan.price_source,
    )
