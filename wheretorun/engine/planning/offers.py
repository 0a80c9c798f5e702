"""Cloud offers and hardware that pass the offer-level rules, grouped for sizing.

Offer-level rules (data residency, providers, accelerators, GPU slices, missing specs) do not
depend on the model, precision or pricing mode, so they run once; each rejected offer counts
for every candidate it would have produced (`candidates_per_offer`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from wheretorun.engine.capacity import ReplicaCapacity
from wheretorun.engine.catalog import AcceleratorEntry, CloudOffer
from wheretorun.engine.costs.arrays import BoolArray, IntArray
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.planning.cloud_table import CatalogColumns, OfferTable, catalog_columns
from wheretorun.engine.planning.context import Context
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules import constraints as limits
from wheretorun.engine.rules import data_residency, first_failing, hardware_spec, offer_support
from wheretorun.engine.rules.offer_support import LOCAL_KINDS, OWNED_KINDS
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import OptionKind

__all__ = [
    "EligibleOffers",
    "clear_screened_offers",
    "eligible_hardware",
    "eligible_offers",
    "offer_name",
    "sizing_failure",
]


def offer_name(offer: CloudOffer) -> str:
    return f"{offer.provider} {offer.instance_type} {offer.region}"


@dataclass(frozen=True, slots=True)
class EligibleOffers:
    table: OfferTable
    by_size: dict[tuple[str, int], IntArray]  # (accelerator id, accelerators per instance) -> table rows
    # the accelerators of `by_size`, gathered once per remembered screening: every request reads
    # them, and gathering the prototype's 256 sizes cost ~5 us a request (2026-12-05)
    accelerator_ids: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "accelerator_ids", frozenset(accelerator_id for accelerator_id, _ in self.by_size)
        )


@dataclass(frozen=True, slots=True)
class _Stage:
    """One offer-level rule applied to every offer: who fails it, and why."""

    fails: BoolArray
    reason: RejectReason
    detail: Callable[[int], str]  # by offer index into the catalog columns


def _stages(context: Context, columns: CatalogColumns) -> list[_Stage]:
    """The offer-level rules in order: option, region, provider, accelerator, GPU slice, spec.
    Per-value verdicts (a provider, an accelerator) are computed once per distinct value."""
    constraints = context.constraints
    stages = []
    option = first_failing.option(OptionKind.CLOUD, constraints)
    if option is not None:
        stages.append(
            _Stage(np.ones(len(columns.offers), dtype=bool), option.reason, _constant(option.detail))
        )
    specs = context.snapshot.accelerators
    for codes, names, check in (
        (columns.region, columns.regions, lambda name: data_residency.cloud_region(name, constraints)),
        (columns.provider, columns.providers, lambda name: limits.provider(name, constraints)),
        (columns.accelerator, columns.accelerator_ids, lambda name: limits.accelerator(name, constraints)),
    ):
        stages.extend(_per_value(codes, names, check))
    stages.append(
        _Stage(
            columns.accelerators == 0,  # costs/cloud.whole_accelerators: no whole accelerator
            RejectReason.UNSUPPORTED_OFFER,
            lambda i: _detail(offer_support.gpu_slice(columns.offers[i].accelerator_count)),
        )
    )
    stages.extend(
        _per_value(
            columns.accelerator,
            columns.accelerator_ids,
            lambda name: hardware_spec.spec(specs.get(name), name),
        )
    )
    return stages


def _detail(rejection: Rejection | None) -> str:
    assert rejection is not None, "the stage's mask and its rule agree"
    return rejection.detail


def _per_value(
    codes: IntArray, names: tuple[str, ...], check: Callable[[str], Rejection | None]
) -> list[_Stage]:
    """A rule whose outcome depends on one coded column, evaluated once per distinct value."""
    outcomes = [check(name) for name in names]
    stages = []
    for reason in dict.fromkeys(r.reason for r in outcomes if r is not None):
        failing = np.asarray([r is not None and r.reason == reason for r in outcomes], dtype=bool)
        details = [r.detail if r is not None else "" for r in outcomes]
        stages.append(_Stage(failing[codes], reason, _lookup(details, codes)))
    return stages


def _constant(text: str) -> Callable[[int], str]:
    return lambda _: text


def _lookup(details: list[str], codes: IntArray) -> Callable[[int], str]:
    return lambda offer: details[int(codes[offer])]


def _describe(columns: CatalogColumns, rows: IntArray, stage: _Stage) -> Callable[[int], str]:
    def example(k: int) -> str:
        offer = int(rows[k])
        return f"{offer_name(columns.offers[offer])}: {stage.detail(offer)}"

    return example


# The offers a request's constraints and assumptions leave, for the last few (catalog, constraints,
# assumptions): a planning loop over volumes asks the same. Matched by the catalog's identity.
_SCREENED: RecentResults[tuple[EligibleOffers, RejectionBook]] = RecentResults(kept=16)
# The purchasable hardware, for the last few (catalog, constraints, option kind).
_PURCHASABLE: RecentResults[tuple[list[AcceleratorEntry], RejectionBook]] = RecentResults(kept=32)


def eligible_offers(context: Context, candidates_per_offer: int) -> EligibleOffers:
    """Offers that pass the offer-level rules; each rejected offer counts `candidates_per_offer`
    times under the first rule it fails."""
    snapshot = context.snapshot
    offers, rejected = _SCREENED.get(
        (snapshot.cloud_offers, snapshot.accelerators),
        (context.constraints, context.assumptions, candidates_per_offer),
        lambda: _screen(context, candidates_per_offer),
    )
    context.book.merge(rejected)
    return offers


def clear_screened_offers() -> None:
    """Forget the remembered eligible offers and hardware."""
    _SCREENED.clear()
    _PURCHASABLE.clear()


def _screen(context: Context, candidates_per_offer: int) -> tuple[EligibleOffers, RejectionBook]:
    """The eligible offers, and a book of the offers rejected (merged into each request's)."""
    book = RejectionBook()
    columns = catalog_columns(context.snapshot.cloud_offers)
    undecided = np.ones(len(columns.offers), dtype=bool)
    for stage in _stages(context, columns):
        failing = np.flatnonzero(stage.fails & undecided)
        undecided[failing] = False
        book.reject_rows(stage.reason, len(failing), _describe(columns, failing, stage))
        book.add_count(stage.reason, len(failing) * (candidates_per_offer - 1))
    kept = np.flatnonzero(undecided)
    table = OfferTable.select(columns, kept, context.assumptions)
    return EligibleOffers(table=table, by_size=_by_size(columns, kept, table.accelerators)), book


def _by_size(columns: CatalogColumns, kept: IntArray, counts: IntArray) -> dict[tuple[str, int], IntArray]:
    """Table rows grouped by (accelerator id, accelerators per instance), keys sorted, rows in
    table order."""
    if len(kept) == 0:
        return {}
    pairs = columns.accelerator[kept] * (int(counts.max()) + 1) + counts
    distinct, group = np.unique(pairs, return_inverse=True)
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(len(distinct) + 1))
    rows = {
        (columns.accelerator_ids[int(code)], int(count)): order[starts[i] : starts[i + 1]]
        for i, (code, count) in enumerate(zip(*np.divmod(distinct, int(counts.max()) + 1), strict=True))
    }
    return {key: np.asarray(rows[key], dtype=np.int64) for key in sorted(rows)}


def eligible_hardware(
    context: Context, kind: OptionKind, candidates_per_entry: int
) -> list[AcceleratorEntry]:
    """Accelerators that may be bought as `kind`; the others are counted as rejected. Only
    accelerators of the kinds the option uses are candidates (no consumer cards as owned servers).
    Remembered per (catalog, constraints) like the eligible offers."""
    snapshot = context.snapshot
    kept, rejected = _PURCHASABLE.get(
        (snapshot.accelerators, snapshot.hardware_prices),
        (context.constraints, kind, candidates_per_entry),
        lambda: _purchasable(context, kind, candidates_per_entry),
    )
    context.book.merge(rejected)
    return list(kept)


def _purchasable(
    context: Context, kind: OptionKind, candidates_per_entry: int
) -> tuple[list[AcceleratorEntry], RejectionBook]:
    book = RejectionBook()
    kinds = OWNED_KINDS | {"tpu"} if kind == OptionKind.OWNED else LOCAL_KINDS
    kept = []
    for entry in sorted(context.snapshot.accelerators.values(), key=lambda e: e.id):
        if entry.kind not in kinds:
            continue
        priced = entry.id in context.snapshot.hardware_prices
        rejection = first_failing.hardware(entry, kind, context.constraints, priced)
        if rejection is None:
            kept.append(entry)
        else:
            book.record(rejection, f"{kind.value} {entry.id}", candidates_per_entry)
    return kept, book


_FAILURE_ORDER = (  # (reason, invalid layout): closest to working first
    (RejectReason.MISSES_LATENCY_TARGET, False),
    (RejectReason.UNSPECIFIED_HARDWARE, False),
    (RejectReason.UNSUPPORTED_PRECISION, False),
    (RejectReason.DOES_NOT_FIT_MEMORY, False),
    (RejectReason.DOES_NOT_FIT_MEMORY, True),
)


def sizing_failure(considered: list[ReplicaCapacity]) -> Rejection:
    """The reason a set of replica sizes cannot serve: the failure closest to working (too slow
    beats unknown spec beats too small beats a layout that cannot exist), described for the
    largest replica tried."""
    for reason, invalid_layout in _FAILURE_ORDER:
        failing = [c for c in considered if c.verdict == reason and c.invalid_layout == invalid_layout]
        if failing:
            worst = max(failing, key=lambda c: c.accelerators)
            return Rejection(
                reason,
                f"{worst.accelerators} x {worst.accelerator_id} at {worst.precision.value}: {worst.detail}",
            )
    return Rejection(RejectReason.DOES_NOT_FIT_MEMORY, "no replica size fits in one instance")
