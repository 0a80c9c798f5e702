"""Spot capacity is reclaimed: serving carries a fallback, training loses work per reclaim."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import poisson

from tests.unit.recommend_catalog import P5, cloud_offer, snapshot
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.spot_reclaims import (
    batch_spot_hours,
    poisson_quantile,
    serving_fallback,
    training_spot_hours,
)
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind, TrainingWorkload

RATE = 0.20 / 730  # reclaims per instance-hour at the defaults


def test_a_training_run_loses_the_replacement_and_half_a_checkpoint_interval_per_reclaim() -> None:
    a = Assumptions()
    # 10 h on 4 instances: 4 x 0.2 / 730 reclaims an hour, each losing 0.25 h + 1 h / 2
    lost_share = 4 * RATE * (0.25 + 0.5)
    assert training_spot_hours(10.0, 4, a) == pytest.approx(10.0 / (1 - lost_share))
    # a run shorter than the checkpoint interval redoes half of itself: 0.25 + 0.5 / 2
    assert training_spot_hours(0.5, 4, a) == pytest.approx(0.5 / (1 - 4 * RATE * 0.5))
    # more instances lose more
    assert training_spot_hours(10.0, 64, a) > training_spot_hours(10.0, 4, a)


def test_a_batch_job_loses_one_replacement_time_per_reclaim() -> None:
    assert batch_spot_hours(100.0, Assumptions()) == pytest.approx(100.0 / (1 - RATE * 0.25))


def test_one_spot_instance_needs_one_on_demand_standby_unless_a_hosted_api_is_cheaper() -> None:
    a = Assumptions(horizon_months=12)
    hours = 12 * 730.0
    # one instance at the peak: 0.2 / 730 x 1 x 0.25 = 6.8e-5 reclaims per window -> the 99th
    # percentile is 0, and the standby is at least one instance, always on
    standby = serving_fallback(hours, 1, 55.04, None, hours, a)
    assert standby is not None
    assert standby.usd == pytest.approx(55.04 * hours)
    # the hosted API takes the reclaimed share of requests: 0.2 / 730 x 0.25 of a $100,000 bill
    hosted = serving_fallback(hours, 1, 55.04, 100_000.0, hours, a)
    assert hosted is not None
    assert hosted.usd == pytest.approx(RATE * 0.25 * 100_000.0)
    assert "hosted API" in hosted.note
    assert serving_fallback(hours, 1, None, None, hours, a) is None


@given(
    low=st.floats(0.0, 5.0),
    extra=st.floats(0.0, 5.0),
    peak=st.integers(1, 500),
    on_demand=st.one_of(st.none(), st.floats(0.1, 100.0)),
    hosted=st.one_of(st.none(), st.floats(1.0, 1e7)),
    wall=st.floats(0.1, 1000.0),
)
def test_more_interruption_never_makes_spot_cheaper(
    low: float, extra: float, peak: int, on_demand: float | None, hosted: float | None, wall: float
) -> None:
    calm = Assumptions(spot_reclaims_per_instance_month=low)
    stormy = Assumptions(spot_reclaims_per_instance_month=low + extra)
    hours = 8760.0
    calm_fallback = serving_fallback(hours, peak, on_demand, hosted, hours, calm)
    stormy_fallback = serving_fallback(hours, peak, on_demand, hosted, hours, stormy)
    if calm_fallback is not None:
        assert stormy_fallback is not None
        assert stormy_fallback.usd >= calm_fallback.usd * (1 - 1e-12)
    assert training_spot_hours(wall, peak, stormy) >= training_spot_hours(wall, peak, calm)
    assert batch_spot_hours(wall, stormy) >= batch_spot_hours(wall, calm)


_SERVE_70B = InferenceWorkload(
    models=("llama-3.3-70b",), requests_per_day=200_000, input_tokens=1000, output_tokens=250
)


def test_every_spot_serving_option_carries_its_fallback_as_a_cost_line() -> None:
    result = recommend(
        _SERVE_70B,
        Constraints(allowed_options=(OptionKind.CLOUD,)),
        Assumptions(horizon_months=12),
        snapshot(),
    )
    spot = [option for option in result.options if option.setup.pricing_mode == "spot"]
    assert spot
    for option in spot:
        lines = {line.name: line for line in option.breakdown}
        assert "spot fallback" in lines
        assert float(lines["spot fallback"].usd) > 0


def test_spot_serving_without_any_fallback_is_not_offered() -> None:
    # a spot-only H100 offer and a model no hosted API serves in this catalog
    spot_only = cloud_offer(9, "p5.48xlarge", "h100-sxm", "8", None, "14.582", region="us-west-2")
    workload = InferenceWorkload(
        models=("llama-3.1-405b",), requests_per_day=1000, input_tokens=500, output_tokens=100
    )
    result = recommend(
        workload,
        Constraints(allowed_options=(OptionKind.CLOUD,)),
        Assumptions(horizon_months=12),
        snapshot(cloud_offers=(spot_only,)),
    )
    assert all(option.setup.pricing_mode != "spot" for option in result.options)
    reasons = {group.reason for group in result.rejected}
    assert RejectReason.NO_SPOT_FALLBACK in reasons


def test_a_multi_instance_training_job_needs_a_cluster_network() -> None:
    # the 70B full fine-tune needs 16 H100 (two 8-GPU instances): AWS p5 publishes 3,200 Gbps EFA;
    # the same box from a provider with no published cluster network cannot be joined
    workload = TrainingWorkload(model="llama-3.3-70b", method="full", tokens=1e9, sequence_length=4096)
    unnetworked = cloud_offer(8, "gpu_8x_h100_sxm5", "h100-sxm", "8", "23.92", None, provider="lambda")
    result = recommend(
        workload,
        Constraints(allowed_options=(OptionKind.CLOUD,)),
        Assumptions(horizon_months=12),
        snapshot(cloud_offers=(P5, unnetworked)),
    )
    assert result.options
    assert all(option.setup.provider == "aws" for option in result.options)
    assert all(option.setup.accelerator_count == 16 for option in result.options)
    groups = {group.reason: group for group in result.rejected}
    assert RejectReason.NO_CLUSTER_NETWORK in groups
    assert any("gpu_8x_h100_sxm5" in example for example in groups[RejectReason.NO_CLUSTER_NETWORK].examples)


def test_the_standby_quantile_is_scipys_poisson_quantile() -> None:
    # hand-checked: P(X <= 0 | mu = 0.001) = 0.999; P(X <= 3 | mu = 1) = 0.981 < 0.99 <= P(X <= 4) = 0.996
    assert poisson_quantile(0.99, 0.0) == 0
    assert poisson_quantile(0.99, 0.001) == 0
    assert poisson_quantile(0.99, 1.0) == 4
    means = [0.0, 1e-12, *(k / 997 for k in range(1, 20_000, 7)), 123.4, 5_000.0]
    for q in (0.5, 0.9, 0.99, 0.999):
        assert [poisson_quantile(q, mu) for mu in means] == [int(poisson.ppf(q, mu)) for mu in means]


@given(st.floats(min_value=0.0, max_value=1e4), st.floats(min_value=0.001, max_value=0.999))
def test_the_poisson_quantile_agrees_with_scipy_stats(mu: float, q: float) -> None:
    assert poisson_quantile(q, mu) == int(poisson.ppf(q, mu))
