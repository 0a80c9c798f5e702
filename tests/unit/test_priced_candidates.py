"""Candidates ranked on their totals and written as plans only when shown (`PricedCandidate`):
what is ranked must be what is written, for every cost model that prices this way, and a plan
is written once."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

import pytest

from tests.unit.recommend_catalog import (
    ACCELERATORS,
    DEEPINFRA_70B,
    HARDWARE,
    P5,
    TOGETHER_8B,
    cloud_offer,
    replica_capacity,
    snapshot,
)
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs import cloud, hosted
from wheretorun.engine.costs.candidate import CostedCandidate, Line, PricedCandidate, added, lines_total
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.owned import (
    OwnedRepricedTotal,
    Rental,
    SizedServers,
    StackedBridge,
    local_plan,
    owned_plan,
    owned_sizing,
    owned_total,
    priced_local_plan,
    priced_owned_plan,
)
from wheretorun.engine.planning.context import Context
from wheretorun.engine.planning.rejections import EXAMPLES_PER_GROUP
from wheretorun.engine.planning.serving_candidates import ServingCandidates, _bridge
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind

H100 = ACCELERATORS["h100-sxm"]
VOLUMES_RPS = (0.001, 0.05, 3.0, 40.0)


def _demand(requests_per_s: float) -> ServingDemand:
    workload = InferenceWorkload(
        models=("m",), requests_per_day=requests_per_s * 86_400, input_tokens=900, output_tokens=300
    )
    return ServingDemand.from_workload(workload, 36, 730.0)


def _same_ranking_fields(priced: PricedCandidate, plan: CostedCandidate) -> None:
    assert priced.option == plan.option
    assert priced.label == plan.label
    assert priced.setup == plan.setup
    assert priced.total_usd == plan.total_usd  # exactly: the ranking and the answer must agree
    assert priced.months == plan.months
    assert priced.capex_usd == plan.capex_usd
    assert priced.usd_per_month == plan.usd_per_month


@pytest.mark.parametrize("requests_per_s", VOLUMES_RPS)
@pytest.mark.parametrize("bridged", [False, True])
def test_an_owned_candidate_is_ranked_on_what_its_plan_costs(requests_per_s: float, bridged: bool) -> None:
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    assumptions = Assumptions()
    demand = _demand(requests_per_s)
    mode = cloud.CloudMode("on_demand", "autoscaled")

    def bridge(head: ServingDemand) -> Rental | None:
        cost = cloud.serving_cost(P5, mode, layout, head, assumptions)
        return None if cost is None else Rental("p5 on demand", cost.total_usd)

    rental = bridge if bridged else None
    sizing = owned_sizing(H100, HARDWARE["h100-sxm"], 700.0, layout, demand, assumptions, rental)
    priced = priced_owned_plan(
        H100,
        HARDWARE["h100-sxm"],
        700.0,
        layout,
        "m",
        demand,
        assumptions,
        rental,
        SizedServers(sizing.unit, sizing.servers, sizing.total_usd),
    )
    plan = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, rental)
    _same_ranking_fields(priced, plan)
    assert priced.written() == plan
    assert bridged == (plan.line_usd("rental during lead time") > 0)


def test_owned_re_pricing_with_the_same_server_figures_costs_what_a_new_plan_costs() -> None:
    """The break-even search re-prices the owned plan from the server figures it already has."""
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    assumptions = Assumptions(hardware_lead_time_months=0)
    demand = _demand(3.0)
    plan = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, None)
    assert plan.repriced_total_usd is not None
    for multiplier in (1 / 64, 0.25, 4.0, 64.0):
        again = owned_plan(
            H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand.scaled(multiplier), assumptions, None
        )
        assert plan.repriced_total_usd(multiplier) == again.total_usd
    assert plan.repriced_total_usd(64.0) > plan.total_usd  # more load needs more servers


@pytest.mark.parametrize("api_usd_per_request", [None, 1e-9, 1.0])
@pytest.mark.parametrize("shape", [{}, {"growth_per_month": 0.08, "peak_to_average": 2.5}])
def test_owned_totals_at_many_volumes_at_once_are_those_of_each_volume_alone(
    api_usd_per_request: float | None, shape: dict[str, float]
) -> None:
    """The break-even prices an owned plan's grid with the lead-time rentals of all its heads
    sized at once (`OwnedRepricedTotal.totals`, `cloud.serving_totals`): to the bit `owned_total`
    at each volume, the cheaper of the cloud rental and the API (if any) chosen for each head."""
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    mode = cloud.CloudMode("on_demand", "autoscaled")
    workload = InferenceWorkload(
        models=("m",), requests_per_day=3.0 * 86_400, input_tokens=900, output_tokens=300, **shape
    )
    demand, assumptions = ServingDemand.from_workload(workload, 36, 730.0), Assumptions()

    def cloud_rental(head: ServingDemand) -> Rental | None:
        total = cloud.serving_total(P5, mode, layout, head, assumptions)
        return None if total is None else Rental("p5", total)

    def cheapest(head: ServingDemand) -> Rental | None:
        rental = cloud_rental(head)
        if api_usd_per_request is None or rental is None:
            return rental
        api = Rental("api", api_usd_per_request * head.total_requests)
        return min((rental, api), key=lambda r: (r.total_usd, r.label))

    def cheapest_of_all(heads: Sequence[ServingDemand]) -> list[Rental | None]:
        totals = cloud.serving_totals(P5, mode, layout, heads, assumptions)
        rentals = [None if total is None else Rental("p5", total) for total in totals]
        if api_usd_per_request is None:
            return rentals
        apis = [Rental("api", api_usd_per_request * head.total_requests) for head in heads]
        return [
            api if rental is None else min((rental, api), key=lambda r: (r.total_usd, r.label))
            for rental, api in zip(rentals, apis, strict=True)
        ]

    stacked = StackedBridge(cheapest, cheapest_of_all)
    plan = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, stacked)
    repriced = plan.repriced_total_usd
    assert isinstance(repriced, OwnedRepricedTotal)
    multipliers = [1 / 64, 1 / 16, 0.25, 4.0, 16.0, 64.0, 1.7, 300.0]
    unit = repriced.unit
    alone = [owned_total(unit, demand.scaled(m), assumptions, cheapest) for m in multipliers]
    assert repriced.totals(multipliers) == alone
    assert [repriced(m) for m in multipliers] == alone
    for multiplier, total in zip(multipliers, alone, strict=True):
        again = owned_plan(
            H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand.scaled(multiplier), assumptions, cheapest
        )
        assert total == again.total_usd
    heads = [demand.scaled(m).head(unit.lead_months) for m in multipliers]
    assert cloud.serving_totals(P5, mode, layout, heads, assumptions) == [
        cloud.serving_total(P5, mode, layout, head, assumptions) for head in heads
    ]


@pytest.mark.parametrize("with_api", [False, True])
@pytest.mark.parametrize("with_cloud", [False, True])
def test_the_bridge_prices_many_heads_as_it_prices_each(with_api: bool, with_cloud: bool) -> None:
    """`_bridge`'s stacked rentals: the cheaper of the cloud rental and the API for each head, by
    (total, label), as it chooses for one head."""
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    mode = cloud.CloudMode("on_demand", "autoscaled")
    demand, assumptions = _demand(3.0), Assumptions()

    def rental(head: ServingDemand) -> Rental | None:
        total = cloud.serving_total(P5, mode, layout, head, assumptions)
        return None if total is None else Rental("p5", total)

    def rentals(heads: Sequence[ServingDemand]) -> list[Rental | None]:
        return [
            None if total is None else Rental("p5", total)
            for total in cloud.serving_totals(P5, mode, layout, heads, assumptions)
        ]

    def made() -> StackedBridge | None:
        result = ServingCandidates(demand, best_api=(DEEPINFRA_70B, "m") if with_api else None)
        context = cast(Context, SimpleNamespace(assumptions=assumptions))
        bridge = _bridge(StackedBridge(rental, rentals) if with_cloud else None, result, context)
        assert bridge is None or isinstance(bridge, StackedBridge)
        return bridge

    one, many = made(), made()  # each remembers its heads: one asked head by head, one at once
    assert (one is None) == (not with_api and not with_cloud)
    if one is None or many is None:
        return
    heads = [demand.scaled(m).head(3) for m in (1 / 64, 1 / 16, 0.25, 1.0, 4.0, 16.0, 64.0)]
    chosen = [one(head) for head in heads]
    assert many.many(heads) == chosen
    assert many.many(heads[2:]) == chosen[2:]  # remembered
    for head, rental_chosen in zip(heads, chosen, strict=True):
        offered = [rental(head)] if with_cloud else []
        if with_api:
            api_total = hosted.serving_total(DEEPINFRA_70B, head, assumptions)
            offered.append(Rental(hosted.label(DEEPINFRA_70B), api_total))
        assert rental_chosen == min(
            (r for r in offered if r is not None), key=lambda r: (r.total_usd, r.label), default=None
        )


@pytest.mark.parametrize("requests_per_s", VOLUMES_RPS)
def test_a_local_card_is_priced_exactly_when_it_can_serve(requests_per_s: float) -> None:
    card = ACCELERATORS["rtx-4090"]
    capacity = replica_capacity(5.0, accelerators=1, single_stream=0.5)
    demand, assumptions = _demand(requests_per_s), Assumptions()
    priced = priced_local_plan(card, HARDWARE["rtx-4090"], 450.0, capacity, "m", demand, assumptions)
    plan = local_plan(card, HARDWARE["rtx-4090"], 450.0, capacity, "m", demand, assumptions)
    assert (priced is None) == (plan is None)
    if plan is not None:
        assert priced is not None
        _same_ranking_fields(priced, plan)
        assert priced.written() == plan
        assert plan.repriced_total_usd is not None
        assert plan.repriced_total_usd(1.0) == plan.total_usd
    else:
        assert requests_per_s > 0.05  # one stream at 0.5 requests/s serves the small volumes


@pytest.mark.parametrize("pricing", ["on_demand", "spot", "reserved_1y"])
@pytest.mark.parametrize("requests_per_s", VOLUMES_RPS)
def test_a_cloud_candidate_is_ranked_on_what_its_plan_costs(pricing: str, requests_per_s: float) -> None:
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    mode = cloud.CloudMode(pricing, "always_on" if pricing.startswith("reserved") else "autoscaled")
    demand, assumptions = _demand(requests_per_s), Assumptions()
    per_request = hosted.usd_per_request(DEEPINFRA_70B, demand)
    cost = cloud.serving_cost(P5, mode, layout, demand, assumptions, per_request)
    assert cost is not None, "P5 has on-demand, spot and committed prices"
    priced = cloud.priced_serving_plan(P5, mode, layout, "m", demand, assumptions, per_request, cost)
    plan = cloud.serving_plan(P5, mode, layout, "m", demand, assumptions, per_request)
    assert plan is not None
    _same_ranking_fields(priced, plan)
    assert priced.written() == plan


@pytest.mark.parametrize("pricing", ["on_demand", "spot", "reserved_3y"])
@pytest.mark.parametrize("shape", [{}, {"growth_per_month": 0.08, "peak_to_average": 2.5}])
def test_cloud_totals_at_many_volumes_at_once_are_those_of_each_volume_alone(
    pricing: str, shape: dict[str, float]
) -> None:
    """The break-even search prices its grid in one sizing (`RepricedTotal.totals`): to the bit
    what each volume's own plan costs, and the lines' total without the lines."""
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    mode = cloud.CloudMode(pricing, "always_on" if pricing.startswith("reserved") else "autoscaled")
    workload = InferenceWorkload(
        models=("m",), requests_per_day=3.0 * 86_400, input_tokens=900, output_tokens=300, **shape
    )
    demand, assumptions = ServingDemand.from_workload(workload, 36, 730.0), Assumptions()
    per_request = hosted.usd_per_request(DEEPINFRA_70B, demand)
    plan = cloud.serving_plan(P5, mode, layout, "m", demand, assumptions, per_request)
    assert plan is not None
    repriced = plan.repriced_total_usd
    assert isinstance(repriced, cloud.RepricedTotal)
    multipliers = [1 / 64, 1 / 16, 0.25, 4.0, 16.0, 64.0, 1.7, 300.0]
    totals = repriced.totals(multipliers)
    assert totals == [repriced(multiplier) for multiplier in multipliers]
    for multiplier, total in zip(multipliers, totals, strict=True):
        scaled = demand.scaled(multiplier)
        again = cloud.serving_plan(P5, mode, layout, "m", scaled, assumptions, per_request)
        cost = cloud.serving_cost(P5, mode, layout, scaled, assumptions, per_request)
        assert again is not None
        assert cost is not None
        assert total == again.total_usd == cost.total_usd == lines_total(cost.lines)


@pytest.mark.parametrize("requests_per_s", VOLUMES_RPS)
def test_a_hosted_candidate_is_ranked_on_what_its_plan_costs(requests_per_s: float) -> None:
    demand, assumptions = _demand(requests_per_s), Assumptions()
    priced = hosted.priced_serving_plan(TOGETHER_8B, "llama-3.1-8b", demand, assumptions)
    plan = hosted.serving_plan(TOGETHER_8B, "llama-3.1-8b", demand, assumptions)
    _same_ranking_fields(priced, plan)
    assert priced.written() == plan


def test_a_plan_is_written_once() -> None:
    writes: list[int] = []
    demand, assumptions = _demand(1.0), Assumptions()
    plan = hosted.serving_plan(TOGETHER_8B, "llama-3.1-8b", demand, assumptions)

    def write() -> CostedCandidate:
        writes.append(1)
        return plan

    priced = dataclasses.replace(
        hosted.priced_serving_plan(TOGETHER_8B, "llama-3.1-8b", demand, assumptions), write=write
    )
    assert priced.written() is priced.written() is plan
    assert writes == [1]


def test_a_written_plan_that_costs_other_than_its_ranking_is_refused() -> None:
    demand, assumptions = _demand(1.0), Assumptions()
    priced = hosted.priced_serving_plan(TOGETHER_8B, "llama-3.1-8b", demand, assumptions)
    dearer = hosted.serving_plan(TOGETHER_8B, "llama-3.1-8b", demand.scaled(2.0), assumptions)
    with pytest.raises(AssertionError):
        dataclasses.replace(priced, write=lambda: dearer).written()


@pytest.mark.parametrize("suspect", [0, 1, EXAMPLES_PER_GROUP, EXAMPLES_PER_GROUP + 4])
def test_every_suspect_offer_is_counted_and_the_first_ones_are_the_examples(suspect: int) -> None:
    offers = tuple(
        dataclasses.replace(
            cloud_offer(100 + index, f"p5.suspect{index}", "h100-sxm", "8", "1.00", None),
            suspect_reason=f"implausibly cheap ({index})",
        )
        for index in range(suspect)
    )
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
    )
    result = recommend(workload, Constraints(), Assumptions(), snapshot(suspect_cloud_offers=offers))
    groups = {group.reason: group for group in result.rejected}
    if not suspect:
        assert RejectReason.SUSPECT_PRICE not in groups
        return
    group = groups[RejectReason.SUSPECT_PRICE]
    assert group.count == suspect
    shown = min(suspect, EXAMPLES_PER_GROUP)
    assert group.examples == tuple(
        f"aws p5.suspect{index} us-east-1: implausibly cheap ({index})" for index in range(shown)
    )
    # asked for, they are candidates and nothing is rejected as suspect
    included = recommend(
        workload,
        Constraints(include_suspect_prices=True),
        Assumptions(),
        snapshot(suspect_cloud_offers=offers),
    )
    assert RejectReason.SUSPECT_PRICE not in {group.reason for group in included.rejected}
    assert any(option.option == OptionKind.CLOUD for option in included.options)


def test_a_plans_total_adds_its_lines_in_their_order_to_the_bit() -> None:
    """`lines_total` loops over the lines itself; it must add as `added` adds (and as CPython 3.11's
    `sum` does), in the lines' order: amounts whose sum depends on the order tell."""
    amounts = [1e16, 1.0, -1e16, 0.1, 0.2, 3.3e-5, 7.0]
    lines = [Line(f"line {index}", usd) for index, usd in enumerate(amounts)]
    assert lines_total(lines).hex() == added(amounts).hex()
    assert lines_total(reversed(lines)).hex() == added(reversed(amounts)).hex()
    assert lines_total(lines) != lines_total(reversed(lines))  # the order is part of the total
    assert lines_total([]) == 0.0
