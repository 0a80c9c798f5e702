"""Cloud serving hours as `serving_hours` computes them (in place, the sizings last, the sums in
numpy's own order) against the plain formula of the module docstring, to the bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheretorun.engine.costs import cloud
from wheretorun.engine.costs.arrays import ceil_array
from wheretorun.engine.costs.demand import ServingDemand


def _plain(
    demand: ServingDemand, planned_rps: np.ndarray, per_instance: np.ndarray, minimum_replicas: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(autoscaled, always on, peak instances): the formula as it was first written."""
    rates = demand.rates_rps[None, :, :]
    replicas = (
        np.maximum(ceil_array(rates / planned_rps[:, None, None]), minimum_replicas) + demand.redundancy
    )
    instances = ceil_array(replicas / per_instance[:, None, None])
    hours = demand.group_hours[None, None, :]
    monthly_peak = instances.max(axis=2)
    return (
        (instances * hours).sum(axis=(1, 2)),
        monthly_peak.sum(axis=1) * demand.hours_per_month,
        monthly_peak.max(axis=1),
    )


_RATE = st.one_of(st.sampled_from([0.0, 1.0, 3.0, 6.0]), st.floats(0, 1e4))


@st.composite
def _cases(draw: st.DrawFn) -> tuple[ServingDemand, np.ndarray, np.ndarray, int]:
    months, groups, sizings = draw(st.integers(1, 40)), draw(st.integers(1, 5)), draw(st.integers(1, 6))
    rates = np.asarray(draw(st.lists(_RATE, min_size=months * groups, max_size=months * groups)))
    hours = np.asarray(draw(st.lists(st.floats(0.5, 730), min_size=groups, max_size=groups)))
    demand = ServingDemand(
        rates_rps=rates.reshape(months, groups),
        group_hours=hours,
        hours_per_month=draw(st.sampled_from([730.0, 720.0, 730.5])),
        input_tokens=100,
        cached_input_tokens=0,
        output_tokens=100,
        redundancy=draw(st.integers(0, 3)),
        ttft_ms=None,
        tpot_ms=None,
    )
    planned = np.asarray(draw(st.lists(st.floats(0.01, 50), min_size=sizings, max_size=sizings)))
    per_instance = np.asarray(
        draw(st.lists(st.sampled_from([1.0, 2.0, 4.0, 8.0]), min_size=sizings, max_size=sizings))
    )
    return demand, planned, per_instance, draw(st.integers(0, 2))


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_serving_hours_are_the_plain_formulas_to_the_bit(
    case: tuple[ServingDemand, np.ndarray, np.ndarray, int],
) -> None:
    demand, planned, per_instance, minimum = case
    hours = cloud.serving_hours(demand, planned, per_instance, minimum)
    autoscaled, always_on, peak = _plain(demand, planned, per_instance, minimum)
    assert hours.autoscaled.tobytes() == autoscaled.tobytes()
    assert hours.always_on.tobytes() == always_on.tobytes()
    assert hours.peak_instances.tobytes() == peak.tobytes()


@pytest.mark.parametrize(("months", "groups"), [(60, 2), (120, 1), (129, 1), (65, 2), (140, 5), (300, 3)])
def test_long_horizons_are_the_plain_formulas_to_the_bit(months: int, groups: int) -> None:
    """Past 128 (month, group) values numpy's pairwise sum halves the run: the sums still agree."""
    rng = np.random.default_rng(months * 10 + groups)
    levels = rng.choice([0.0, 1.0, 3.0, 6.0, 17.3, 250.0], size=(months, groups))
    demand = ServingDemand(
        rates_rps=levels * rng.random((1, groups)),
        group_hours=rng.uniform(0.5, 730, groups),
        hours_per_month=730.0,
        input_tokens=100,
        cached_input_tokens=0,
        output_tokens=100,
        redundancy=1,
        ttft_ms=None,
        tpot_ms=None,
    )
    planned, per_instance = rng.uniform(0.01, 50, 40), rng.choice([1.0, 2.0, 4.0, 8.0], 40)
    hours = cloud.serving_hours(demand, planned, per_instance)
    autoscaled, always_on, peak = _plain(demand, planned, per_instance, 1)
    assert hours.autoscaled.tobytes() == autoscaled.tobytes()
    assert hours.always_on.tobytes() == always_on.tobytes()
    assert hours.peak_instances.tobytes() == peak.tobytes()


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 300).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(1, 4),
            st.lists(st.floats(0, 1e6), min_size=n, max_size=n),
        )
    )
)
def test_rows_are_summed_as_numpy_sums_each_column(case: tuple[int, int, list[float]]) -> None:
    """`_summed_rows` adds whole rows in the order numpy's pairwise summation adds a column."""
    n, columns, values = case
    rows = np.asarray(values)[:, None] * np.linspace(0.3, 3.7, columns)[None, :]
    expected = np.asarray([np.add.reduce(np.ascontiguousarray(rows[:, c])) for c in range(columns)])
    assert cloud._summed_rows(rows).tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 7, 8, 9, 128, 129, 300])
def test_zeros_of_either_sign_are_summed_as_numpy_sums_them(n: int) -> None:
    """numpy adds a column's pairwise sum to a starting +0.0, so a column of -0.0 totals +0.0."""
    rows = np.stack([np.full(n, -0.0), np.zeros(n), np.resize([-0.0, 0.0], n)], axis=1)
    expected = np.asarray([np.add.reduce(np.ascontiguousarray(rows[:, c])) for c in range(3)])
    assert cloud._summed_rows(rows).tobytes() == expected.tobytes()
