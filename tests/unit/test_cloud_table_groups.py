"""The cheapest row of each (accelerator, provider) group, found once per pricing mode in linear
time, against the plain definition."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from wheretorun.engine.planning.cloud_table import SizedRows

_ROW = st.tuples(
    st.integers(0, 5),  # group
    st.one_of(st.sampled_from([1.0, 2.0, 3.0, math.nan]), st.floats(0, 100)),  # total; ties likely
    st.booleans(),  # within the budget
)


def _plain(rows: list[tuple[int, float, bool]]) -> list[int]:
    """Groups ascending; in each, the feasible row with the lowest total, the earlier on a tie."""
    best: dict[int, int] = {}
    for index, (group, total, within) in enumerate(rows):
        if math.isnan(total) or not within:
            continue
        if group not in best or total < rows[best[group]][1]:
            best[group] = index
    return [best[group] for group in sorted(best)]


@given(st.lists(_ROW, max_size=40))
def test_the_cheapest_row_of_each_group_is_the_plain_definitions(rows: list[tuple[int, float, bool]]) -> None:
    groups = np.asarray([group for group, _, _ in rows], dtype=np.int64)
    totals = np.asarray([total for _, total, _ in rows], dtype=np.float64)
    feasible = np.asarray([within for _, _, within in rows], dtype=bool) & ~np.isnan(totals)
    positions = np.arange(len(rows), dtype=np.int64)
    sized = SizedRows.grouped(positions, positions, groups)
    assert sized.cheapest_per_group(totals, feasible).tolist() == _plain(rows)


def test_a_group_with_no_feasible_row_is_left_out() -> None:
    groups = np.asarray([0, 0, 1, 2, 2], dtype=np.int64)
    totals = np.asarray([5.0, 4.0, math.nan, 7.0, 7.0])
    feasible = np.asarray([True, True, False, True, True])
    positions = np.arange(5, dtype=np.int64)
    assert SizedRows.grouped(positions, positions, groups).cheapest_per_group(totals, feasible).tolist() == [
        1,
        3,
    ]
