"""Owned servers and local cards: whole servers sized for the peak, capital and running costs."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.unit.recommend_catalog import ACCELERATORS, DEEPINFRA_70B, HARDWARE, P5, replica_capacity
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import HardwarePrice
from wheretorun.engine.costs import cloud, hosted
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.owned import (
    Rental,
    local_lines,
    local_plan,
    owned_plan,
    server_capex_usd,
    server_size,
)
from wheretorun.engine.workload import InferenceWorkload, OptionKind

H100 = ACCELERATORS["h100-sxm"]


def _demand(requests_per_s: float, redundancy: int = 0) -> ServingDemand:
    workload = InferenceWorkload(
        models=("m",),
        requests_per_day=requests_per_s * 86_400,
        input_tokens=100,
        output_tokens=100,
        redundancy=redundancy,
    )
    return ServingDemand.from_workload(workload, 36, 730.0)


def test_server_sizes_follow_the_form_factor() -> None:
    assert server_size(H100, Assumptions()) == 8
    assert server_size(ACCELERATORS["l4"], Assumptions()) == 4


def test_servers_are_sized_for_the_peak_with_spares_and_the_lines_add_up() -> None:
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    assumptions = Assumptions(hardware_lead_time_months=0)
    plan = owned_plan(
        H100, HARDWARE["h100-sxm"], 700.0, layout, "m", _demand(40.0, redundancy=1), assumptions, None
    )
    # ceil(40 / (10 x 0.9)) = 5 replicas + 1 spare = 6 -> 3 servers of 2 replicas
    assert plan.setup.instance_count == 3
    # a DGX price includes the server: no overhead on top
    assert plan.capex_usd == pytest.approx(3 * 268_800)
    assert plan.total_usd == pytest.approx(sum(line.usd for line in plan.lines))
    assert plan.line_usd("operations staff") == pytest.approx(4_500 * 36)
    colocation_kw = 3 * (8 * 700 + 450) / 1000
    assert plan.line_usd("colocation") == pytest.approx(colocation_kw * 184.06 * 36)


def test_the_lead_time_is_bridged_by_renting_or_flagged() -> None:
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    demand = _demand(5.0)
    mode = cloud.CloudMode("on_demand", "autoscaled")
    assumptions = Assumptions()

    def bridge(head: ServingDemand) -> Rental | None:
        cost = cloud.serving_cost(P5, mode, layout, head, assumptions)
        return None if cost is None else Rental("p5 on demand", cost.total_usd)

    bridged = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, bridge)
    rented = cloud.serving_plan(P5, mode, layout, "m", demand.head(3), assumptions)
    assert rented is not None
    assert rented.total_usd > 0
    # the rental's cost is exactly what the same plan costs for the first three months
    assert bridged.line_usd("rental during lead time") == rented.total_usd
    assert any("renting p5 on demand" in risk for risk in bridged.risks)
    unbridged = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, None)
    assert any("no capacity until delivery" in risk for risk in unbridged.risks)


def test_the_cost_per_token_counts_only_the_tokens_served() -> None:
    """With no rental for the 3-month lead time, months 0-2 go unserved: a million tokens costs
    the total over the 33 months' tokens, not over all 36 months'."""
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    demand = _demand(5.0)  # flat: 5 requests/s of 200 tokens, 730 hours a month
    assumptions = Assumptions(hardware_lead_time_months=3)
    unbridged = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, None)
    served = 5.0 * 3600 * 730 * 33 * 200
    assert unbridged.tokens == pytest.approx(served)
    assert unbridged.usd_per_million_tokens == pytest.approx(unbridged.total_usd / served * 1e6)

    def bridge(head: ServingDemand) -> Rental:
        return Rental("a rental", 1_000.0)

    bridged = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, bridge)
    assert bridged.tokens == pytest.approx(served * 36 / 33)
    on_time = Assumptions(hardware_lead_time_months=0)
    delivered = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, on_time, None)
    assert delivered.tokens == demand.total_tokens


def test_a_local_card_serves_one_user_only() -> None:
    card = ACCELERATORS["rtx-4090"]
    capacity = replica_capacity(5.0, accelerators=1, single_stream=0.5)
    assumptions = Assumptions()
    assert local_plan(card, HARDWARE["rtx-4090"], 450.0, capacity, "m", _demand(1.0), assumptions) is None
    plan = local_plan(card, HARDWARE["rtx-4090"], 450.0, capacity, "m", _demand(0.01), assumptions)
    assert plan is not None
    assert plan.capex_usd == 2300.0
    assert plan.line_usd("power") > 0


def test_server_overhead_applies_to_chip_prices_only() -> None:
    assumptions = Assumptions()
    dgx = HardwarePrice("h100-sxm", Decimal("268800"), "DGX", basis="system", accelerators_per_unit=8)
    chip = HardwarePrice("h100-sxm", Decimal("33600"), "chip")
    assert server_capex_usd(dgx, 8, assumptions) == pytest.approx(268_800)
    assert server_capex_usd(chip, 8, assumptions) == pytest.approx(8 * 33_600 * 1.64)
    # half a system's accelerators cost half the system
    assert server_capex_usd(dgx, 4, assumptions) == pytest.approx(134_400)


def test_owned_and_local_options_state_their_price_per_accelerator_hour() -> None:
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    assumptions = Assumptions(hardware_lead_time_months=0)
    plan = owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", _demand(40.0), assumptions, None)
    accelerator_hours = plan.setup.accelerator_count * 730 * 36  # type: ignore[operator]
    assert plan.usd_per_accelerator_hour == pytest.approx(plan.total_usd / accelerator_hours)
    assert plan.price_source is not None
    assert "server included" in plan.price_source


@pytest.mark.parametrize("multiplier", [1 / 64, 0.3, 1.0, 7.0, 64.0])
def test_a_repriced_total_is_the_total_of_the_plan_repriced(multiplier: float) -> None:
    """The break-even search reads `repriced_total_usd`: it must be exactly the total of the plan
    `reprice` builds, for owned servers (with their lead-time rental), cloud spot serving (with
    its fallback), a hosted API and a local card (None past one stream), at volumes from 1/64 x
    to 64 x."""
    layout = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    demand, assumptions, card = _demand(5.0), Assumptions(), ACCELERATORS["rtx-4090"]
    on_demand, spot = cloud.CloudMode("on_demand", "autoscaled"), cloud.CloudMode("spot", "autoscaled")

    def bridge(head: ServingDemand) -> Rental | None:
        cost = cloud.serving_cost(P5, on_demand, layout, head, assumptions)
        return None if cost is None else Rental("p5", cost.total_usd)

    plans = [
        owned_plan(H100, HARDWARE["h100-sxm"], 700.0, layout, "m", demand, assumptions, bridge),
        cloud.serving_plan(P5, spot, layout, "m", demand, assumptions, hosted_usd_per_request=0.002),
        hosted.serving_plan(DEEPINFRA_70B, "llama-3.3-70b", demand, assumptions),
        local_plan(
            card,
            HARDWARE["rtx-4090"],
            450.0,
            replica_capacity(1.0, 1, 50.0),
            "m",
            demand,
            assumptions,
        ),
    ]
    for plan in plans:
        assert plan is not None
        assert plan.reprice is not None
        assert plan.repriced_total_usd is not None
        repriced = plan.reprice(multiplier)
        if repriced is None:  # a local card past one stream at this volume
            assert plan.option == OptionKind.LOCAL
            assert plan.repriced_total_usd(multiplier) is None
            continue
        assert repriced.total_usd > 0
        assert plan.repriced_total_usd(multiplier) == repriced.total_usd


def test_a_local_plan_reads_its_figures_from_its_lines() -> None:
    """A local plan's amounts are worked out once for its lines, opex and cost per hour: they
    must be the figures its lines give (`local_lines`, read back by name and added in order)."""
    card, price, assumptions = ACCELERATORS["rtx-4090"], HARDWARE["rtx-4090"], Assumptions()
    capacity = replica_capacity(5.0, accelerators=1, single_stream=0.5)
    demand = _demand(0.01)
    plan = local_plan(card, price, 450.0, capacity, "m", demand, assumptions)
    assert plan is not None
    assert plan.lines == local_lines(card, price, 450.0, capacity, demand, assumptions)
    total = 0.0
    for line in plan.lines:
        total += line.usd
    assert plan.usd_per_accelerator_hour == total / (730.0 * 36)
    assert plan.opex_usd_per_month == (plan.line_usd("power") + plan.line_usd("upkeep")) / 36
