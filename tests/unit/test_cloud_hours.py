"""Cloud serving hours as `serving_hours` computes them (in place, by the reductions themselves)
against the plain formula of the module docstring, to the bit."""

from __future__ import annotations

import numpy as np
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


@settings(max_examples=300)
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
