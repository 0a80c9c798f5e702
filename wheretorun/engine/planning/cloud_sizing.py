"""The one cloud sizing step of inference, batch and training: size each group of eligible
offers once, then hand the sized rows to the bulk pricing (cloud_table.choose_cheapest).

A group is offer rows that share what the sizing depends on: the accelerator and accelerators
per instance (offers.EligibleOffers.by_size), times the precision for serving and batch, times
the cluster network for training. Each group is sized once; a group that cannot be sized counts
every (row, pricing mode) as rejected under the rule that decided, with its first offer as the
example. A sized group's rows point at its sizing (`SizedRows.key`), so every row is priced with the
sizing of its group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from wheretorun.engine.capacity import CapacityTable
from wheretorun.engine.costs.arrays import IntArray
from wheretorun.engine.costs.cloud import Layout
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.planning.cloud_table import OfferTable, SizedRows
from wheretorun.engine.planning.layouts import instance_layouts
from wheretorun.engine.planning.offers import EligibleOffers, offer_name
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["CloudSizing", "clear_sized_groups", "size_offer_groups", "size_replica_groups"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CloudSizing(Generic[T]):
    """The sized groups: `sizings[k]` serves the table rows `rows.offer[i]` where `rows.key[i] == k`."""

    sizings: list[T]
    rows: SizedRows
    rejected: int  # (row, pricing mode) candidates rejected while sizing


def size_offer_groups(
    table: OfferTable, groups: Iterable[tuple[IntArray, T | Rejection]], book: RejectionBook, modes: int
) -> CloudSizing[T]:
    """Keep each group's sizing, or count its rows x `modes` pricing modes as rejected."""
    sizings: list[T] = []
    row_offer: list[IntArray] = []
    rows_per_sizing: list[int] = []
    rejected = 0
    uncounted: dict[RejectReason, int] = {}  # rejections past the examples, counted at the end
    for rows, sized in groups:
        if isinstance(sized, Rejection):
            count = len(rows) * modes
            rejected += count
            if book.wants_example(sized.reason):
                book.record(sized, offer_name(table.offers[int(rows[0])]), count)
            else:
                uncounted[sized.reason] = uncounted.get(sized.reason, 0) + count
            continue
        row_offer.append(rows)
        rows_per_sizing.append(len(rows))
        sizings.append(sized)
    for reason, count in uncounted.items():
        book.add_count(reason, count)
    if not sizings:
        empty = np.zeros(0, dtype=np.int64)
        return CloudSizing(sizings, SizedRows.of(table, empty, empty), rejected)
    row_key = np.repeat(np.arange(len(sizings), dtype=np.int64), rows_per_sizing)
    return CloudSizing(sizings, SizedRows.of(table, np.concatenate(row_offer), row_key), rejected)


def size_replica_groups(
    offers: EligibleOffers,
    capacities: CapacityTable,
    precisions: Sequence[Precision],
    book: RejectionBook,
    modes: int,
) -> CloudSizing[Layout]:
    """Serving and batch: `size_offer_groups` of the replica layouts (`replica_layouts`),
    remembered for the last few (eligible offers, capacity table, precisions, modes): a planning
    loop over volumes or prices sizes the same groups. The rejections are replayed into `book`."""
    sizing, rejected = _SIZED.get(
        (offers, capacities),
        (tuple(precisions), modes),
        lambda: _sized(offers, capacities, precisions, modes),
    )
    book.merge(rejected)
    return sizing


_SIZED: RecentResults[tuple[CloudSizing[Layout], RejectionBook]] = RecentResults(kept=16)


def clear_sized_groups() -> None:
    """Forget the remembered sizings."""
    _SIZED.clear()


def _sized(
    offers: EligibleOffers, capacities: CapacityTable, precisions: Sequence[Precision], modes: int
) -> tuple[CloudSizing[Layout], RejectionBook]:
    book = RejectionBook()
    return size_offer_groups(offers.table, replica_layouts(offers, capacities, precisions), book, modes), book


def replica_layouts(
    offers: EligibleOffers, capacities: CapacityTable, precisions: Iterable[Precision]
) -> Iterable[tuple[IntArray, Layout | Rejection]]:
    """Serving and batch groups: each (accelerator, accelerators per instance) x precision, with
    the replica layout that serves most per instance (layouts.instance_layouts) or why none does."""
    chosen = list(precisions)
    keys = [(accelerator_id, size, p) for accelerator_id, size in offers.by_size for p in chosen]
    rows = [group for group in offers.by_size.values() for _ in chosen]
    return zip(rows, instance_layouts(capacities, keys), strict=True)
