"""Pricing a mode over each (group, sizing key) pair's cheapest row (`PairMinima`) chooses the
same rows, at the same totals, and counts the same rejections with the same examples, as pricing
every row: checked against `choose_cheapest` with an infinite budget, which prices every row."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.cloud import SERVING_MODES
from wheretorun.engine.planning.cloud_table import (
    ModeHours,
    OfferTable,
    SelectedOffers,
    SizedRows,
    choose_cheapest,
    clear_pair_minima,
    pair_minima,
)
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.recommendation import RejectReason

# few distinct prices and hours, so that ties within and across pairs are common (hours are
# finite or NaN: cloud.serving_hours divides by a replica's positive capacity)
_PRICE = st.one_of(st.sampled_from([0.0, 1.0, 2.0, 2.5, math.nan]), st.floats(0.01, 50))
_HOURS = st.one_of(st.sampled_from([0.0, 1.0, 730.0, math.nan]), st.floats(0.5, 9000))


def _table(on_demand: list[float], spot: list[float], host_vm: list[float], groups: list[int]) -> OfferTable:
    n = len(on_demand)
    array = np.asarray
    return OfferTable(
        offers=SelectedOffers((), np.arange(n, dtype=np.int64)),
        accelerators=np.ones(n, dtype=np.int64),
        on_demand=array(on_demand, dtype=np.float64),
        spot=array(spot, dtype=np.float64),
        host_vm=array(host_vm, dtype=np.float64),
        reserved_1y=array(on_demand, dtype=np.float64) * 0.6,
        reserved_3y=np.full(n, math.nan),
        group=array(groups, dtype=np.int64),
        network=np.full(n, math.nan),
        id_order=np.arange(n, dtype=np.int64)[::-1].copy(),
    )


@st.composite
def _priced_rows(draw: st.DrawFn) -> tuple[OfferTable, SizedRows, list[ModeHours], float]:
    offers = draw(st.integers(1, 12))
    on_demand = draw(st.lists(_PRICE, min_size=offers, max_size=offers))
    spot = draw(st.lists(_PRICE, min_size=offers, max_size=offers))
    host_vm = draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, math.nan]), min_size=offers, max_size=offers))
    groups = draw(st.lists(st.integers(0, 3), min_size=offers, max_size=offers))
    keys = draw(st.integers(1, 5))
    pairs = draw(st.lists(st.tuples(st.integers(0, offers - 1), st.integers(0, keys - 1)), max_size=40))
    row_offer = np.asarray([offer for offer, _ in pairs], dtype=np.int64)
    row_key = np.asarray([key for _, key in pairs], dtype=np.int64)
    table = _table(on_demand, spot, host_vm, groups)
    modes = [
        ModeHours(
            mode,
            np.asarray(draw(st.lists(_HOURS, min_size=keys, max_size=keys)), dtype=np.float64),
            detail=lambda key: f"key {key} misses it",
        )
        for mode in SERVING_MODES
    ]
    fixed = draw(st.sampled_from([0.0, 10_800.0, 1e-3]))
    return table, SizedRows.of(table, row_offer, row_key), modes, fixed


def _choose(
    table: OfferTable, rows: SizedRows, modes: list[ModeHours], fixed: float, cap: float | None
) -> tuple[list[tuple[int, int, str, float]], tuple[object, ...], int]:
    book = RejectionBook()
    choices, priced = choose_cheapest(
        table,
        rows,
        modes,
        fixed_usd=fixed,
        max_total_usd=cap,
        assumptions=Assumptions(),
        book=book,
        describe=lambda offer, key, mode: f"offer {offer} key {key} {mode.name}",
    )
    return [(c.offer, c.key, c.mode.name, c.total_usd) for c in choices], book.groups(), priced


@settings(max_examples=300, deadline=None)  # a loaded machine took 623 ms for one example
@given(_priced_rows())
def test_pricing_each_pairs_cheapest_row_chooses_what_pricing_every_row_does(
    case: tuple[OfferTable, SizedRows, list[ModeHours], float],
) -> None:
    table, rows, modes, fixed = case
    clear_pair_minima()
    assert _choose(table, rows, modes, fixed, None) == _choose(table, rows, modes, fixed, math.inf)
    # a second time, from the remembered minima
    assert _choose(table, rows, modes, fixed, None) == _choose(table, rows, modes, fixed, math.inf)


def test_a_dearer_row_that_ties_after_rounding_falls_back_to_every_row() -> None:
    """Two offers of one pair one float step apart in price: at zero hours both totals are the fixed
    cost, and the earlier row (the dearer one) is the cheapest row of the group. The reduction
    sees that its dearer rows may tie and prices every row instead."""
    cheap = 2.0
    dearer = math.nextafter(cheap, math.inf)
    table = _table([dearer, cheap], [math.nan] * 2, [0.0, 0.0], [0, 0])
    rows = SizedRows.of(table, np.asarray([0, 1], dtype=np.int64), np.asarray([0, 0], dtype=np.int64))
    hours = [ModeHours(SERVING_MODES[0], np.asarray([0.0]))]
    minima = pair_minima(table, rows, [table.prices(SERVING_MODES[0], Assumptions())])
    assert minima.pairs.offer.tolist() == [1]  # the pair's cheapest row
    assert minima.cheapest([hours[0].hours], 100.0) is None
    chosen, _, _ = _choose(table, rows, hours, 100.0, None)
    assert chosen == [(0, 0, "on-demand autoscaled", 100.0)]  # the earlier row, as every row gives
    an_hour = [ModeHours(SERVING_MODES[0], np.asarray([1.0]))]
    chosen_at_an_hour, _, _ = _choose(table, rows, an_hour, 0.0, None)
    assert chosen_at_an_hour == [(1, 0, "on-demand autoscaled", cheap)]


def test_rows_without_a_price_or_a_feasible_sizing_are_counted_with_examples() -> None:
    table = _table([1.0, math.nan, 3.0], [math.nan] * 3, [0.0, math.nan, 0.0], [0, 0, 1])
    rows = SizedRows.of(
        table, np.asarray([0, 1, 2, 2], dtype=np.int64), np.asarray([0, 0, 0, 1], dtype=np.int64)
    )
    hours = ModeHours(
        SERVING_MODES[0], np.asarray([10.0, math.nan]), detail=lambda key: f"key {key} too slow"
    )
    _, groups, priced = _choose(table, rows, [hours], 0.0, None)
    assert priced == 4
    counted = {group.reason: (group.count, group.examples) for group in groups}
    too_slow = "offer 2 key 1 on-demand autoscaled: key 1 too slow"
    assert counted[RejectReason.MISSES_DEADLINE] == (1, (too_slow,))
    assert sum(count for count, _ in counted.values()) == 2  # the unpriced row, the too-slow row


def test_the_reduced_rows_answer_when_no_left_out_row_can_tie() -> None:
    """The ordinary case does not fall back: two rows of one key a cent apart, another group
    whose only key cannot serve (NaN hours), another whose key has a single row."""
    table = _table([2.0, 2.01, 5.0, 3.0], [math.nan] * 4, [0.0] * 4, [0, 0, 1, 2])
    rows = SizedRows.of(
        table, np.asarray([0, 1, 2, 3], dtype=np.int64), np.asarray([0, 0, 1, 2], dtype=np.int64)
    )
    prices = [table.prices(SERVING_MODES[0], Assumptions())]
    minima = pair_minima(table, rows, prices)
    chosen = minima.cheapest([np.asarray([730.0, math.nan, 730.0])], 10.0)
    assert chosen is not None
    chosen_rows, totals, modes = chosen
    assert chosen_rows.tolist() == [0, 3]  # group 0's cheaper row, group 2's only row
    assert totals.tolist() == [2.0 * 730 + 10, 3.0 * 730 + 10]
    assert modes.tolist() == [0, 0]


def test_the_remembered_reduction_is_read_only() -> None:
    table = _table([2.0, 3.0], [math.nan] * 2, [0.0] * 2, [0, 0])
    rows = SizedRows.of(table, np.asarray([0, 1], dtype=np.int64), np.asarray([0, 0], dtype=np.int64))
    minima = pair_minima(table, rows, [table.prices(SERVING_MODES[0], Assumptions())])
    for array in (minima.price, minima.next_price, minima.pairs.offer, minima.priced[0]):
        assert not array.flags.writeable


def test_a_tables_prices_are_made_once_per_pricing_and_spot_overhead_and_read_only() -> None:
    """`pair_minima` matches a mode's prices by identity: the table hands out the same array for
    the same pricing and spot overhead, and another for another overhead."""
    table = _table([2.0, 3.0], [1.0, math.nan], [0.0, 0.5], [0, 1])
    spot, calm, stormy = SERVING_MODES[2], Assumptions(), Assumptions(spot_interruption_overhead=0.1)
    prices = table.prices(spot, calm)
    assert table.prices(spot, calm) is prices
    assert not prices.flags.writeable
    assert table.prices(spot, stormy).tolist()[0] == 1.0 * 1.1
    assert table.prices(spot, calm) is prices
    assert table.prices(SERVING_MODES[0], calm).tolist() == [2.0, 3.5]
