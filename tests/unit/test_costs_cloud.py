"""Cloud rental: whole instances hour by hour, pricing modes, GPU-only prices, batch jobs."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

import numpy as np
import pytest

from tests.unit.recommend_catalog import GCP_H100, P5, replica_capacity
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.capacity import ReplicaCapacity
from wheretorun.engine.catalog import CommitmentTerm
from wheretorun.engine.costs import cloud
from wheretorun.engine.costs.demand import BatchDemand, ServingDemand
from wheretorun.engine.workload import BatchWorkload, InferenceWorkload

ON_DEMAND = cloud.CloudMode("on_demand", "autoscaled")


def _demand(requests_per_day: float, redundancy: int = 0, **fields: object) -> ServingDemand:
    workload = InferenceWorkload(
        models=("m",),
        requests_per_day=requests_per_day,
        input_tokens=100,
        output_tokens=100,
        redundancy=redundancy,
        **fields,  # type: ignore[arg-type]
    )
    return ServingDemand.from_workload(workload, 12, 730.0)


def test_replicas_cover_demand_plus_spares_packed_into_whole_instances() -> None:
    demand = _demand(10 * 86_400, redundancy=1)  # a flat 10 requests/s
    hours = cloud.serving_hours(demand, planned_rps=np.asarray([3.0]), per_instance=np.asarray([2.0]))
    # ceil(10 / 3) = 4 replicas + 1 spare = 5 -> 3 instances of 2 replicas, all year
    assert hours.peak_instances[0] == 3
    assert hours.autoscaled[0] == pytest.approx(3 * 730 * 12)


def test_one_serving_replica_stays_up_when_there_is_no_traffic() -> None:
    hours = cloud.serving_hours(_demand(0.0), np.asarray([3.0]), np.asarray([2.0]))
    assert hours.autoscaled[0] == pytest.approx(730 * 12)


def test_autoscaling_follows_the_day_and_always_on_pays_the_busiest_hour() -> None:
    demand = _demand(4 * 86_400, peak_to_average=6.0)
    hours = cloud.serving_hours(demand, np.asarray([1.0]), np.asarray([1.0]))
    assert hours.autoscaled[0] < hours.always_on[0]
    assert hours.always_on[0] == pytest.approx(hours.peak_instances[0] * 730 * 12)


def test_spot_pays_its_price_plus_any_flat_overhead_and_reservations_their_discount() -> None:
    assumptions = Assumptions()
    spot = cloud.CloudMode("spot", "autoscaled")
    # reclaims are modelled as their own costs; the flat extra share is 0 unless a request sets it
    assert cloud.hourly_price(P5, spot, assumptions) == pytest.approx(14.582)
    pessimistic = Assumptions(spot_interruption_overhead=0.10)
    assert cloud.hourly_price(P5, spot, pessimistic) == pytest.approx(14.582 * 1.10)
    reserved = cloud.CloudMode("reserved_3y", "always_on")
    # the AWS 3-year term of the catalog: 64% off on-demand
    assert cloud.hourly_price(P5, reserved, assumptions) == pytest.approx(55.04 * (1 - 0.64))
    assert cloud.committed_months(reserved, 24) == 36


def test_a_provider_without_a_commitment_term_has_no_reserved_price() -> None:
    mithril = dataclasses.replace(P5, provider="mithril", commitments=())
    reserved = cloud.CloudMode("reserved_3y", "always_on")
    assert cloud.hourly_price(mithril, reserved, Assumptions()) is None
    assert cloud.hourly_price(mithril, ON_DEMAND, Assumptions()) == pytest.approx(55.04)


def test_the_users_discount_wins_and_is_labelled_as_theirs() -> None:
    reserved = cloud.CloudMode("reserved_1y", "always_on")
    mine = Assumptions(reserved_discounts_by_provider=(("aws", 0.5, 0.7),))
    assert cloud.hourly_price(P5, reserved, mine) == pytest.approx(55.04 * 0.5)
    rate = cloud.reserved_rate(P5, 1, mine)
    assert rate is not None
    assert rate.users
    assert "the user's 50%" in cloud.price_source(P5, reserved, mine)
    published = cloud.reserved_rate(P5, 1, Assumptions())
    assert published is not None
    assert not published.users
    assert "41.0% off" in published.source


def test_a_committed_price_per_accelerator_hour_prices_the_whole_instance() -> None:
    term = CommitmentTerm("aws", "h100-sxm", "p5", 36, None, Decimal("2.10"), "a published reserved price")
    offer = dataclasses.replace(P5, commitments=(term,))
    reserved = cloud.CloudMode("reserved_3y", "always_on")
    assert cloud.hourly_price(offer, reserved, Assumptions()) == pytest.approx(8 * 2.10)
    assert cloud.hourly_price(offer, cloud.CloudMode("reserved_1y", "always_on"), Assumptions()) is None


def test_a_gpu_only_price_is_not_a_whole_price() -> None:
    assert cloud.hourly_price(GCP_H100, ON_DEMAND, Assumptions()) is None
    with_vm = cloud.hourly_price(GCP_H100, ON_DEMAND, Assumptions(host_vm_usd_per_accelerator_hour=1.5))
    assert with_vm == pytest.approx(33.60609 + 8 * 1.5)


def test_gpu_slices_are_not_whole_accelerators() -> None:
    assert cloud.whole_accelerators(Decimal("0.5")) is None
    assert cloud.whole_accelerators(Decimal("8")) == 8


def _capacity(requests_per_s: float) -> ReplicaCapacity:
    return replica_capacity(requests_per_s, single_stream=0.5)


def _job_of_7_2m_requests() -> BatchDemand:
    """1e9 input and 7.2e8 output tokens in requests of 1,000 / 100: the output needs 7.2e6."""
    return BatchDemand.from_workload(
        BatchWorkload(
            models=("m",),
            input_tokens_total=1e9,
            output_tokens_total=7.2e8,
            deadline_hours=5.0,
            input_tokens_per_request=1000,
            output_tokens_per_request=100,
        )
    )


def test_a_batch_job_takes_enough_instances_to_meet_its_deadline() -> None:
    layout = cloud.Layout(_capacity(10.0), per_instance=2, accelerators=8)
    demand = _job_of_7_2m_requests()
    job = cloud.batch_job(layout, demand, cloud.JOB_MODES[0], Assumptions())
    assert job is not None
    instances, wall_hours, instance_hours = job
    # 7.2e6 requests / 20 requests/s per instance = 100 instance-hours -> 20 instances for 5 h
    assert instance_hours == pytest.approx(100.0)
    assert instances == 20
    assert wall_hours == pytest.approx(5.0)
    spot = cloud.batch_job(layout, demand, cloud.JOB_MODES[1], Assumptions())
    assert spot is not None
    # each reclaim (20% of instances a month / 730 h) loses 0.25 h of one instance:
    # 100 / (1 - 0.2 / 730 x 0.25) = 100.0068 instance-hours -> 21 instances for 5 h
    assert spot[2] == pytest.approx(100 / (1 - 0.2 / 730 * 0.25))
    assert spot[0] == 21
    pessimistic = cloud.batch_job(
        layout, demand, cloud.JOB_MODES[1], Assumptions(spot_interruption_overhead=0.1)
    )
    assert pessimistic is not None
    assert pessimistic[0] == 23  # and 10% more on top: 110.007 instance-hours in 5 h


def test_a_batch_plan_states_the_rate_its_hours_follow_from() -> None:
    """An expert re-reading the answer divides the stated requests by the stated rate and gets
    the instance-hours billed (on demand: no reclaims)."""
    layout = cloud.Layout(_capacity(10.0), per_instance=2, accelerators=8)
    demand = _job_of_7_2m_requests()
    plan = cloud.batch_plan(P5, cloud.JOB_MODES[0], layout, "m", demand, Assumptions())
    assert plan is not None
    stated = next(fact for fact in plan.facts if "requests/s per instance" in fact)
    pattern = (
        r"([\d,]+) requests of 1,000 input / 100 output tokens at ([\d,.]+) requests/s per instance, "
        r"7,200M input tokens against the job's 1,000M"
    )
    match = re.fullmatch(pattern, stated)
    assert match is not None, stated
    requests = float(match[1].replace(",", ""))
    requests_per_s = float(match[2].replace(",", ""))
    assert requests == 7.2e6  # the output side needs more requests than the input side's 1e6
    assert requests / requests_per_s / 3600 == pytest.approx(100.0)  # the job's instance-hours


def test_a_batch_job_beyond_the_accelerator_limit_misses_its_deadline() -> None:
    layout = cloud.Layout(_capacity(10.0), per_instance=2, accelerators=8)
    demand = BatchDemand.from_workload(
        BatchWorkload(models=("m",), input_tokens_total=1e12, output_tokens_total=1e11, deadline_hours=1.0)
    )
    assert (
        cloud.batch_job(layout, demand, cloud.JOB_MODES[0], Assumptions(max_accelerators_per_job=64)) is None
    )


@pytest.mark.parametrize(
    "assumptions",
    [
        Assumptions(),
        Assumptions(host_vm_usd_per_accelerator_hour=1.5),
        Assumptions(
            host_vm_usd_per_accelerator_hour=1.37,
            spot_interruption_overhead=0.13,
            reserved_discounts_by_provider=(("aws", 0.33, 0.57),),
        ),
    ],
)
def test_bulk_prices_agree_with_the_single_offer_price(assumptions: Assumptions) -> None:
    """The vectorised table that prices ~3,700 offers at once and `hourly_price` are one rule, to
    the bit: a serving plan reads its prices from the table (`serving_candidates._listed`)."""
    from tests.unit.recommend_catalog import G6, P5_EU
    from wheretorun.engine.planning.cloud_table import OfferTable, catalog_columns

    offers = (P5, G6, GCP_H100, P5_EU)
    table = OfferTable.select(catalog_columns(offers), np.arange(len(offers)), assumptions)
    for mode in (*cloud.SERVING_MODES, *cloud.JOB_MODES):
        bulk = table.prices(mode, assumptions)
        for offer, price in zip(offers, bulk.tolist(), strict=True):
            single = cloud.hourly_price(offer, mode, assumptions)
            if single is None:
                assert np.isnan(price)
            else:
                assert price == single


def test_a_batch_plan_says_where_its_capacity_comes_from_and_what_its_hours_leave_out() -> None:
    """The batch job runs on the same replica capacity as online serving: its uncertainty is
    that capacity's efficiency source, and a risk says start-up and model loading are not in the
    hours (the catalog has no figure for them)."""
    borrowed = "no calibration rows for vllm on hbm memory; borrowed from tensorrt-llm/hbm"
    capacity = dataclasses.replace(_capacity(10.0), efficiency_source=borrowed)
    layout = cloud.Layout(capacity, per_instance=2, accelerators=8)
    plan = cloud.batch_plan(P5, cloud.JOB_MODES[0], layout, "m", _job_of_7_2m_requests(), Assumptions())
    assert plan is not None
    assert plan.uncertainty == borrowed
    assert cloud.BATCH_START_UP_RISK in plan.risks
