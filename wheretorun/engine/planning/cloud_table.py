"""Pricing every (cloud offer, sizing, pricing mode) row at once, then choosing.

The callers size each distinct (accelerator, instance size, precision) once (a "sizing key") and
say, per pricing mode, how many instance-hours a key pays (NaN when the mode cannot meet the
workload with it, with the reason). This module multiplies by each offer's hourly price in that
mode, rejects unpriced and over-budget rows (counting them in the rejection book), and keeps the
cheapest row per (accelerator, provider) and mode: near-identical offers of one provider (the same
instance in 20 regions) would otherwise fill the ranking.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial

import numpy as np

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import CloudOffer
from wheretorun.engine.cluster_network import cluster_network
from wheretorun.engine.costs.arrays import BoolArray, FloatArray, IntArray, read_only
from wheretorun.engine.costs.cloud import CloudMode, catalog_reserved_rate, spot_price, whole_accelerators
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.budget import OVER_MONTHLY_BUDGET
from wheretorun.engine.rules.missing_price import HOST_VM, mode_price
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.rules.reserved_term import no_term

__all__ = [
    "CatalogColumns",
    "Choice",
    "ModeHours",
    "OfferTable",
    "RankedChoices",
    "SizedRows",
    "catalog_columns",
    "choose_cheapest",
    "clear_catalog_columns",
    "one_per_group",
]


def _price(value: Decimal | None) -> float:
    return float("nan") if value is None else float(value)


@dataclass(frozen=True, slots=True)
class CatalogColumns:
    """The catalog's cloud offers as parallel arrays, independent of any request. Strings are
    coded: `provider[i]` indexes `providers`, and so on."""

    offers: tuple[CloudOffer, ...]
    accelerators: IntArray  # whole accelerators per instance; 0 for GPU slices
    accelerator_count: FloatArray  # as published (fractional for slices)
    on_demand: FloatArray  # NaN: no price
    spot: FloatArray
    reserved_1y: FloatArray  # the catalog's committed USD per instance-hour; NaN: no term
    reserved_3y: FloatArray
    accelerator_only: BoolArray
    provider: IntArray
    providers: tuple[str, ...]
    region: IntArray
    regions: tuple[str, ...]
    accelerator: IntArray
    accelerator_ids: tuple[str, ...]
    group: IntArray  # one id per (accelerator, provider)
    network: FloatArray  # cluster network GB/s per accelerator (cluster_network.py); NaN: none
    id_order: IntArray  # each offer's place when the catalog is sorted by offer id


def _codes(values: Sequence[str]) -> tuple[IntArray, tuple[str, ...]]:
    names: dict[str, int] = {}
    codes = [names.setdefault(value, len(names)) for value in values]
    return np.asarray(codes, dtype=np.int64), tuple(names)


def _columns(offers: tuple[CloudOffer, ...]) -> CatalogColumns:
    counts: dict[Decimal, int] = {}
    for offer in offers:
        if offer.accelerator_count not in counts:
            counts[offer.accelerator_count] = whole_accelerators(offer.accelerator_count) or 0
    provider, providers = _codes([o.provider for o in offers])
    region, regions = _codes([o.region for o in offers])
    accelerator, accelerator_ids = _codes([o.accelerator_id for o in offers])
    group, _ = _codes([f"{o.accelerator_id}\t{o.provider}" for o in offers])
    place = {offer_id: k for k, offer_id in enumerate(sorted({o.id for o in offers}))}
    return CatalogColumns(
        offers=offers,
        accelerators=np.asarray([counts[o.accelerator_count] for o in offers], dtype=np.int64),
        accelerator_count=np.asarray([float(o.accelerator_count) for o in offers], dtype=np.float64),
        on_demand=np.asarray([_price(o.on_demand_usd_per_hour) for o in offers], dtype=np.float64),
        spot=np.asarray([_price(o.spot_usd_per_hour) for o in offers], dtype=np.float64),
        reserved_1y=_catalog_reserved(offers, 1),
        reserved_3y=_catalog_reserved(offers, 3),
        accelerator_only=np.asarray([o.accelerator_only for o in offers], dtype=bool),
        provider=provider,
        providers=providers,
        region=region,
        regions=regions,
        accelerator=accelerator,
        accelerator_ids=accelerator_ids,
        group=group,
        network=np.asarray([_network(o) for o in offers], dtype=np.float64),
        id_order=np.asarray([place[o.id] for o in offers], dtype=np.int64),
    )


def _network(offer: CloudOffer) -> float:
    network = cluster_network(offer.provider, offer.instance_type)
    return math.nan if network is None else network.gb_s_per_accelerator(int(offer.accelerator_count))


_COLUMNS: RecentResults[CatalogColumns] = RecentResults(kept=4)


def catalog_columns(offers: tuple[CloudOffer, ...]) -> CatalogColumns:
    """`_columns(offers)`, remembered for the last few catalogs by identity: a catalog snapshot is
    immutable and reused by every request, and converting ~3,700 offers costs more than the rest
    of a recommendation's cloud pricing. The result depends only on `offers`, so the memo
    changes timing, never answers."""
    return _COLUMNS.get((offers,), None, lambda: _columns(offers))


def clear_catalog_columns() -> None:
    """Forget the remembered catalog columns."""
    _COLUMNS.clear()


@dataclass(frozen=True, slots=True)
class SelectedOffers:
    """The catalog's offers at `rows`, in that order; each is looked up when read (a request
    reads a few dozen of its ~3,000 eligible offers)."""

    catalog: tuple[CloudOffer, ...]
    rows: IntArray

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> CloudOffer:
        return self.catalog[int(self.rows[index])]


@dataclass(frozen=True, slots=True)
class OfferTable:
    """The offers eligible for one request, as parallel arrays."""

    offers: SelectedOffers
    accelerators: IntArray
    on_demand: FloatArray  # NaN: no price
    spot: FloatArray
    host_vm: FloatArray  # added per instance-hour; NaN when a GPU-only price has no VM figure
    reserved_1y: FloatArray  # committed USD per instance-hour (before the host VM); NaN: no term
    reserved_3y: FloatArray
    group: IntArray  # one id per (accelerator, provider)
    network: FloatArray  # cluster network GB/s per accelerator; NaN: none
    id_order: IntArray  # the offer's place in the catalog sorted by offer id (ties in ranking)
    # `prices` made for each (pricing, spot overhead)
    _by_mode: dict[tuple[str, float], FloatArray] = field(
        init=False, default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def select(cls, columns: CatalogColumns, rows: IntArray, assumptions: Assumptions) -> OfferTable:
        """The table of `columns` rows `rows`, priced with `assumptions`."""
        vm = assumptions.host_vm_usd_per_accelerator_hour
        host_vm = np.where(
            columns.accelerator_only[rows],
            math.nan if vm is None else vm * columns.accelerator_count[rows],
            0.0,
        )
        return cls(
            offers=SelectedOffers(columns.offers, rows),
            accelerators=columns.accelerators[rows],
            on_demand=columns.on_demand[rows],
            spot=columns.spot[rows],
            host_vm=np.asarray(host_vm, dtype=np.float64),
            reserved_1y=_reserved(columns, rows, 1, assumptions),
            reserved_3y=_reserved(columns, rows, 3, assumptions),
            group=columns.group[rows],
            network=columns.network[rows],
            id_order=columns.id_order[rows],
        )

    def prices(self, mode: CloudMode, assumptions: Assumptions) -> FloatArray:
        """USD per instance-hour of every offer in `mode` (NaN: unpriced), as `cloud.hourly_price`;
        read-only, made once per table for each pricing and spot overhead (all they depend on
        besides the table): a table is remembered between requests (offers.eligible_offers), and
        the same arrays let `pair_minima` match them by identity."""
        key = (mode.pricing, assumptions.spot_interruption_overhead)
        prices = self._by_mode.get(key)
        if prices is None:
            prices = self._prices(mode, assumptions)
            read_only(prices)
            self._by_mode[key] = prices  # two threads may both make it: the same values
        return prices

    def _prices(self, mode: CloudMode, assumptions: Assumptions) -> FloatArray:
        if mode.pricing == "spot":
            return spot_price(self.spot + self.host_vm, assumptions)
        if mode.pricing == "reserved_1y":
            return self.reserved_1y + self.host_vm
        if mode.pricing == "reserved_3y":
            return self.reserved_3y + self.host_vm
        return self.on_demand + self.host_vm

    def incomplete(self) -> BoolArray:
        return np.asarray(np.isnan(self.host_vm), dtype=bool)


def _catalog_reserved(offers: Sequence[CloudOffer], term_years: int) -> FloatArray:
    """The catalog's committed USD per instance-hour of each offer (`cloud.catalog_reserved_rate`);
    NaN without a term."""
    rates = (catalog_reserved_rate(offer, term_years) for offer in offers)
    return np.asarray([math.nan if r is None else r.usd_per_hour for r in rates], dtype=np.float64)


def _reserved(
    columns: CatalogColumns, rows: IntArray, term_years: int, assumptions: Assumptions
) -> FloatArray:
    """Committed USD per instance-hour of each row, as `cloud.reserved_rate`: the user's discount
    off on-demand for a provider the request gives one for (NaN without an on-demand price), else
    the catalog's term, taken from the catalog columns (computed once per catalog)."""
    rates = (columns.reserved_1y if term_years == 1 else columns.reserved_3y)[rows]
    providers = columns.provider[rows]
    for code, provider in enumerate(columns.providers):
        given = assumptions.reserved_discount(provider, term_years)
        if given is not None:
            mine = providers == code
            rates[mine] = columns.on_demand[rows][mine] * (1 - given[0])
    return rates


@dataclass(frozen=True, slots=True)
class SizedRows:
    """The rows to price: row i is table offer `offer[i]` with sizing key `key[i]`; and the rows
    ordered by their (accelerator, provider) group once, as every pricing mode keeps the
    cheapest row of each group. `by_group` lists the rows group by group (groups ascending, rows
    ascending within a group); group g is `by_group[starts[g]:starts[g] + lengths[g]]`."""

    offer: IntArray
    key: IntArray
    by_group: IntArray
    starts: IntArray
    lengths: IntArray
    group_of: IntArray  # the group number (0, 1, ...) of each position of `by_group`

    @classmethod
    def of(cls, table: OfferTable, offer: IntArray, key: IntArray) -> SizedRows:
        return cls.grouped(offer, key, table.group[offer])

    @classmethod
    def grouped(cls, offer: IntArray, key: IntArray, groups: IntArray) -> SizedRows:
        """The rows, with `groups[i]` the (accelerator, provider) group of row i."""
        by_group = np.argsort(groups, kind="stable")
        ordered = groups[by_group]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else ordered
        lengths = np.diff(np.r_[starts, len(ordered)])
        group_of = np.repeat(np.arange(len(starts), dtype=np.int64), lengths)
        return cls(offer, key, by_group, starts, lengths, group_of)

    def cheapest_per_group(self, totals: FloatArray, feasible: BoolArray) -> IntArray:
        """The cheapest feasible row of each group, groups ascending (ties: the earlier row)."""
        if len(self.by_group) == 0:
            return self.by_group
        by_group = self.by_group
        ordered = np.where(feasible, totals, np.nan)[by_group]
        first = self.first_at(ordered, self.lowest(ordered))
        return np.asarray(by_group[first], dtype=np.int64)

    def lowest(self, ordered: FloatArray) -> FloatArray:
        """Each group's lowest value, repeated over the group's positions, of values already in
        group order (`ordered`; NaN: not a candidate, and a group of none has NaN)."""
        return np.repeat(np.fmin.reduceat(ordered, self.starts), self.lengths)

    def first_at(self, ordered: FloatArray, lowest: FloatArray) -> IntArray:
        """The first position of each group whose value in `ordered` is the group's `lowest`
        (groups ascending; none for a group of no candidates: NaN equals nothing)."""
        positions = np.flatnonzero(ordered == lowest)
        groups = self.group_of[positions]
        first = np.ones(len(positions), dtype=bool)
        np.not_equal(groups[1:], groups[:-1], out=first[1:])
        return positions[first]


@dataclass(frozen=True, slots=True)
class ModeHours:
    """Instance-hours each sizing key pays in `mode`; NaN where the mode cannot serve (`reason`)."""

    mode: CloudMode
    hours: FloatArray
    reason: RejectReason = RejectReason.MISSES_DEADLINE
    detail: Callable[[int], str] | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    offer: int
    key: int
    mode: CloudMode
    total_usd: float


@dataclass(frozen=True, slots=True)
class RankedChoices:
    """Choices cheapest first (ties: offer id, then mode name), kept as columns; a `Choice` is
    made when read, as the planners read only the first few dozen of hundreds."""

    offer: list[int]
    key: list[int]
    mode: list[int]  # index into `modes`
    total_usd: list[float]
    modes: tuple[CloudMode, ...]

    def __len__(self) -> int:
        return len(self.offer)

    def __getitem__(self, index: int) -> Choice:
        return Choice(self.offer[index], self.key[index], self.modes[self.mode[index]], self.total_usd[index])

    def first(self, wanted: Callable[[CloudMode], bool]) -> Choice | None:
        """The cheapest choice in a mode that is `wanted`, or None."""
        # each wanted mode's first place by `list.index` (a C loop), not a generator over the
        # hundreds of choices before a reserved one (2026-12-05)
        places = [_place(self.mode, index) for index, mode in enumerate(self.modes) if wanted(mode)]
        found = [place for place in places if place is not None]
        return self[min(found)] if found else None

    def __iter__(self) -> Iterator[Choice]:
        return (self[index] for index in range(len(self.offer)))


def _place(column: list[int], value: int) -> int | None:
    """Where `value` first is in `column`, or None."""
    try:
        return column.index(value)
    except ValueError:
        return None


def choose_cheapest(
    table: OfferTable,
    rows: SizedRows,
    modes: Sequence[ModeHours],
    *,
    fixed_usd: float,
    max_total_usd: float | None,
    assumptions: Assumptions,
    book: RejectionBook,
    describe: Callable[[int, int, CloudMode], str],
) -> tuple[RankedChoices, int]:
    """The cheapest feasible row per (accelerator, provider) and pricing mode, cheapest first, and
    the number of (row, mode) candidates considered. Every rejected row is counted in `book`.

    Without a budget, the modes are priced together over each (mode, group, sizing key)'s
    cheapest row (`PairMinima`, a sixth of the rows for the full catalog), and over every row only
    when that could choose otherwise (`PairMinima.cheapest`)."""
    prices = [table.prices(spec.mode, assumptions) for spec in modes]
    priced = len(rows.offer) * len(modes)
    chosen = None
    if max_total_usd is None:
        minima = pair_minima(table, rows, prices)
        for index, spec in enumerate(modes):
            minima.count(index, book, spec, rows, describe)
        chosen = minima.cheapest([spec.hours for spec in modes], fixed_usd)
    if chosen is None:
        chosen = _cheapest_of_every_row(table, rows, modes, prices, fixed_usd, max_total_usd, book, describe)
    return _ranked(table, rows, *chosen, tuple(spec.mode for spec in modes)), priced


Chosen = tuple[IntArray, FloatArray, IntArray]  # sized rows, their totals, their mode's index


def _cheapest_of_every_row(
    table: OfferTable,
    rows: SizedRows,
    modes: Sequence[ModeHours],
    prices: list[FloatArray],
    fixed_usd: float,
    max_total_usd: float | None,
    book: RejectionBook,
    describe: Callable[[int, int, CloudMode], str],
) -> Chosen:
    """Every row of every mode priced; with a budget, the rejected rows counted."""
    kept: list[Chosen] = []
    for index, (spec, mode_prices) in enumerate(zip(modes, prices, strict=True)):
        row_prices, hours = mode_prices[rows.offer], spec.hours[rows.key]
        with np.errstate(invalid="ignore"):  # NaN: cannot be priced (NaN hours, or 0 x inf)
            totals = row_prices * hours + fixed_usd
        if max_total_usd is not None:
            _count(book, spec, table, rows, row_prices, hours, totals, max_total_usd, describe)
        cheapest = rows.cheapest_per_group(totals, ~np.isnan(totals) & _within(totals, max_total_usd))
        kept.append((cheapest, totals[cheapest], np.full(len(cheapest), index, dtype=np.int64)))
    if not kept:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    return (
        np.concatenate([k[0] for k in kept]),
        np.concatenate([k[1] for k in kept]),
        np.concatenate([k[2] for k in kept]),
    )


@dataclass(frozen=True, slots=True)
class PairMinima:
    """The rows of every pricing mode reduced to the cheapest row of each (mode, group, sizing key)
    for any demand: a row's total is `price x hours[key] + fixed`, the same hours for every row
    of a key, so within one only the lowest price can win (at equal prices, the first row, as
    `SizedRows.cheapest_per_group` breaks ties). The rows that cannot be priced are counted here
    once per mode, by reason, for the rejection book.

    A "pair" is one (mode, group, sizing key) and its cheapest row. `pairs` holds them as
    `SizedRows` grouped by (mode, group), in row order within a group, and stored in that order
    (`pairs.by_group` is 0, 1, 2, ...: the totals need no reordering); its `offer` column holds
    each pair's row in the sized rows (not an offer). Shared between requests and threads, so
    every array is read-only and the per-mode lists are tuples."""

    pairs: SizedRows
    mode: IntArray  # each pair's mode index
    price: FloatArray  # its price
    next_price: FloatArray  # the lowest price above it among the same mode, group and key; inf: none
    keys: int  # sizing keys with rows (1 + the largest)
    hours_at: IntArray  # where its hours are in the modes' first `keys` hours laid end to end
    priced: tuple[BoolArray, ...]  # per mode: which sized rows have a price
    priced_per_key: tuple[IntArray, ...]  # per mode: the priced rows of each sizing key
    incomplete: tuple[IntArray, ...]  # per mode: rows with no price for want of a host VM figure
    unpriced: tuple[IntArray, ...]  # per mode: rows with no price in the mode otherwise

    def cheapest(self, hours: list[FloatArray], fixed_usd: float) -> Chosen | None:
        """The cheapest feasible row of each (mode, group) and its total, as pricing every row
        gives, or None when a row left out might tie or win.

        The rows left out of a (mode, group, key) are dearer than its cheapest; the lowest total
        among them is `next_price x hours + fixed`, exactly (rounding never reverses the order of
        two prices; inf when there is none). A group's answer stands when that total is above the
        group's lowest total for every pair of the group. A comparison with NaN is false, as it
        should be: NaN hours price no row, `inf x 0` hours has no dearer row to price, and a group
        whose lowest is NaN has no feasible row.

        Each step is one operation over all pairs, with the groups' lowest totals repeated over
        their pairs once for both the check and the winners: 0.92M -> 0.50M instructions a call
        for the prototype's 5,249 pairs against three `reduceat`s, two `np.where`s and `np.r_`
        (2026-12-05)."""
        if not len(self.price):
            return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
        # the modes' hours end to end, read at each pair's (mode, key): 20 us against 55 for
        # stacking them and indexing two ways (5,249 pairs of the prototype, 2026-12-05)
        keys = self.keys
        pair_hours = np.concatenate([mode_hours[:keys] for mode_hours in hours])[self.hours_at]
        with np.errstate(invalid="ignore"):  # NaN: cannot be priced (NaN hours, or 0 x inf)
            totals = self.price * pair_hours + fixed_usd
            dearer = self.next_price * pair_hours + fixed_usd  # inf: no dearer row
        pairs = self.pairs  # in group order: `pairs.cheapest_per_group` without its reordering
        lowest = pairs.lowest(totals)
        if (dearer <= lowest).any():
            return None
        winners = pairs.first_at(totals, lowest)
        return np.asarray(self.pairs.offer[winners], dtype=np.int64), totals[winners], self.mode[winners]

    def count(
        self,
        index: int,
        book: RejectionBook,
        spec: ModeHours,
        rows: SizedRows,
        describe: Callable[[int, int, CloudMode], str],
    ) -> None:
        """Count mode `index`'s rejected rows by reason, as `_count` does without a budget."""
        infeasible_keys = np.isnan(spec.hours)
        per_key, priced = self.priced_per_key[index], self.priced[index]
        missing = _missing_price(spec.mode)

        def infeasible_rows() -> IntArray:
            return np.flatnonzero(priced & infeasible_keys[rows.key])

        for count, found, reason, why in (
            (len(self.incomplete[index]), lambda: self.incomplete[index], HOST_VM.reason, HOST_VM.detail),
            (len(self.unpriced[index]), lambda: self.unpriced[index], missing.reason, missing.detail),
            (int(per_key[infeasible_keys[: len(per_key)]].sum()), infeasible_rows, spec.reason, ""),
        ):
            _reject_rows(book, spec, rows, count, found, reason, why, describe)


def _reject_rows(
    book: RejectionBook,
    spec: ModeHours,
    rows: SizedRows,
    count: int,
    found: Callable[[], IntArray],
    reason: RejectReason,
    why: str,
    describe: Callable[[int, int, CloudMode], str],
) -> None:
    """`book.reject_rows` of `count` sized rows, `found()` listing them (read only for examples)."""
    listed: list[IntArray] = []

    def example(i: int) -> str:
        if not listed:
            listed.append(found())
        row = int(listed[0][i])
        offer, key = int(rows.offer[row]), int(rows.key[row])
        detail = why or (spec.detail(key) if spec.detail else "")
        return f"{describe(offer, key, spec.mode)}: {detail}"

    book.reject_rows(reason, count, example)


def _mode_minima(
    table: OfferTable, rows: SizedRows, row_prices: FloatArray
) -> tuple[IntArray, IntArray, FloatArray]:
    """One mode's cheapest row of each (group, sizing key), in row order: the rows, their groups,
    and the lowest price above each within the same (group, key) (inf: none)."""
    groups = table.group[rows.offer]
    candidates = np.flatnonzero(~np.isnan(row_prices))
    # priced rows by (group, key, price, row): each pair's first row is its cheapest
    order = np.lexsort((candidates, row_prices[candidates], rows.key[candidates], groups[candidates]))
    ordered = candidates[order]
    if not len(ordered):
        return ordered, ordered, np.zeros(0)
    pair_group, pair_key = groups[ordered], rows.key[ordered]
    starts = np.flatnonzero(
        np.r_[True, (pair_group[1:] != pair_group[:-1]) | (pair_key[1:] != pair_key[:-1])]
    )
    first = ordered[starts]
    ordered_prices = row_prices[ordered]
    dearer = ordered_prices > np.repeat(row_prices[first], np.diff(np.r_[starts, len(ordered)]))
    next_price = np.minimum.reduceat(np.where(dearer, ordered_prices, np.inf), starts)
    by_row = np.argsort(first, kind="stable")
    return first[by_row], pair_group[starts][by_row], next_price[by_row]


def _pair_minima(table: OfferTable, rows: SizedRows, prices: list[FloatArray]) -> PairMinima:
    """`rows` reduced for every mode (`prices[i]`: mode i's USD per instance-hour of each table
    offer), and each mode's unpriced rows sorted out by reason."""
    group_count = int(table.group.max(initial=-1)) + 1
    keys = int(rows.key.max(initial=-1)) + 1
    firsts, groups, next_prices, modes, row_prices = [], [], [], [], []
    priced, priced_per_key, incomplete, unpriced = [], [], [], []
    for index, mode_prices in enumerate(prices):
        prices_of_rows = mode_prices[rows.offer]
        first, group, next_price = _mode_minima(table, rows, prices_of_rows)
        firsts.append(first)
        groups.append(group + index * group_count)  # (mode, group) as one group
        next_prices.append(next_price)
        modes.append(np.full(len(first), index, dtype=np.int64))
        row_prices.append(prices_of_rows[first])
        has_price = ~np.isnan(prices_of_rows)
        no_vm = ~has_price & table.incomplete()[rows.offer]
        priced.append(has_price)
        priced_per_key.append(np.bincount(rows.key[has_price], minlength=keys))
        incomplete.append(np.flatnonzero(no_vm))
        unpriced.append(np.flatnonzero(~has_price & ~no_vm))
    first = np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.int64)
    group = np.concatenate(groups) if groups else first
    # the pairs stored in group order (row order within a group, as `SizedRows.grouped` orders them)
    in_order = np.argsort(group, kind="stable")
    first, group = first[in_order], group[in_order]
    pairs = SizedRows.grouped(first, rows.key[first], group)
    assert np.array_equal(pairs.by_group, np.arange(len(first))), "stored in group order"
    mode = (np.concatenate(modes) if modes else first)[in_order]
    minima = PairMinima(
        pairs=pairs,
        mode=mode,
        price=(np.concatenate(row_prices) if row_prices else np.zeros(0))[in_order],
        next_price=(np.concatenate(next_prices) if next_prices else np.zeros(0))[in_order],
        keys=keys,
        hours_at=mode * keys + pairs.key,
        priced=tuple(priced),
        priced_per_key=tuple(priced_per_key),
        incomplete=tuple(incomplete),
        unpriced=tuple(unpriced),
    )
    read_only(
        *(pairs.offer, pairs.key, pairs.by_group, pairs.starts, pairs.lengths, pairs.group_of),
        *(minima.mode, minima.price, minima.next_price, minima.hours_at),
        *priced,
        *priced_per_key,
        *incomplete,
        *unpriced,
    )
    return minima


_PAIR_MINIMA: RecentResults[PairMinima] = RecentResults(kept=16)


def pair_minima(table: OfferTable, rows: SizedRows, prices: list[FloatArray]) -> PairMinima:
    """`_pair_minima`, remembered for the last few (table, sized rows, each mode's prices) by
    identity: the sizings and the eligible offers are themselves remembered, and a table makes
    each mode's read-only prices once (`OfferTable.prices`), so a planning loop over volumes
    reduces the rows once."""
    return _PAIR_MINIMA.get((table, rows, *prices), (), lambda: _pair_minima(table, rows, prices))


def clear_pair_minima() -> None:
    """Forget the remembered pair minima."""
    _PAIR_MINIMA.clear()


def _ranked(
    table: OfferTable,
    rows: SizedRows,
    chosen_rows: IntArray,
    totals: FloatArray,
    mode: IntArray,
    modes: tuple[CloudMode, ...],
) -> RankedChoices:
    """The chosen rows of every mode in one list, cheapest first; equal totals are ordered by
    offer id, then by mode name."""
    name_place = {m.name: k for k, m in enumerate(sorted(modes, key=lambda m: m.name))}
    mode_order = np.asarray([name_place[m.name] for m in modes], dtype=np.int64)
    offer = rows.offer[chosen_rows]
    order = np.lexsort((mode_order[mode], table.id_order[offer], totals))
    return RankedChoices(
        offer[order].tolist(),
        rows.key[chosen_rows][order].tolist(),
        mode[order].tolist(),
        totals[order].tolist(),
        modes,
    )


def one_per_group(choices: Iterable[Choice], table: OfferTable, most: int) -> list[Choice]:
    """The first (cheapest) choice of each (accelerator, provider) group, for at most `most`
    groups: the jobs' choices that become full plans."""
    kept: dict[int, Choice] = {}
    for choice in choices:
        group = int(table.group[choice.offer])
        if group not in kept:
            kept[group] = choice
            if len(kept) == most:
                break
    return list(kept.values())


def _within(totals: FloatArray, cap: float | None) -> BoolArray:
    if cap is None:
        return np.ones(totals.shape, dtype=bool)
    return np.asarray(totals <= cap, dtype=bool)


def _count(
    book: RejectionBook,
    spec: ModeHours,
    table: OfferTable,
    rows: SizedRows,
    prices: FloatArray,
    hours: FloatArray,
    totals: FloatArray,
    cap: float | None,
    describe: Callable[[int, int, CloudMode], str],
) -> None:
    """Count this mode's rejected rows by reason (the first failing rule decides); `prices`,
    `hours` and `totals` are each sized row's."""
    unpriced = np.isnan(prices)
    incomplete = unpriced & table.incomplete()[rows.offer]
    missing = _missing_price(spec.mode)
    infeasible = ~unpriced & np.isnan(hours)
    over = ~unpriced & ~infeasible & ~_within(totals, cap)
    for mask, reason, why in (
        (incomplete, HOST_VM.reason, HOST_VM.detail),
        (unpriced & ~incomplete, missing.reason, missing.detail),
        (infeasible, spec.reason, ""),
        (over, OVER_MONTHLY_BUDGET.reason, OVER_MONTHLY_BUDGET.detail),
    ):
        rejected = partial(np.flatnonzero, mask)  # listed only when an example is wanted
        _reject_rows(book, spec, rows, int(mask.sum()), rejected, reason, why, describe)


def _missing_price(mode: CloudMode) -> Rejection:
    """Why a row has no price in `mode` (when its host VM is not the reason)."""
    return no_term(mode.pricing) if mode.reserved else mode_price(mode.pricing)
