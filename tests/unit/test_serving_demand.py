"""A serving demand's derived figures, as the plain formulas give them, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from wheretorun.engine.costs.demand import ServingDemand


@pytest.mark.parametrize(("months", "groups"), [(1, 1), (12, 1), (12, 2), (36, 3), (60, 24), (130, 7)])
def test_requests_are_the_rates_times_the_hours_as_matmul_gives_them(months: int, groups: int) -> None:
    """`__post_init__` multiplies by `ndarray.dot` (half the cost of `@`): the same BLAS product,
    for a demand, its heads (row slices) and its scaled copies."""
    rng = np.random.default_rng(months * 100 + groups)
    demand = ServingDemand(
        rates_rps=rng.random((months, groups)) * 10 ** rng.uniform(-3, 3),
        group_hours=rng.uniform(0.5, 730, groups),
        hours_per_month=730.0,
        input_tokens=100,
        cached_input_tokens=0,
        output_tokens=100,
        redundancy=1,
        ttft_ms=None,
        tpot_ms=None,
    )
    for derived in (demand, demand.head(max(months // 2, 1)), demand.scaled(1.37)):
        per_month = derived.rates_rps @ derived.group_hours * 3600.0
        assert derived.requests_per_month.tobytes() == per_month.tobytes()
        assert derived.total_requests == float(per_month.sum())
        assert derived.peak_rps == float(derived.rates_rps.max())
