"""Owned servers sized all at once (`OwnedFleet.totals`) cost exactly what each costs sized on
its own (`owned_sizing`), for any demand, to the last bit: the serving planner ranks and filters
owned servers on the fleet's totals and writes up only the cheapest. The break-even's totals
(`owned_total`) are the sizing's too, and its staff amounts are `staff_lines`'."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import ACCELERATORS, HARDWARE, P5, replica_capacity, snapshot
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.caches import clear_caches
from wheretorun.engine.costs import cloud
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.owned import OwnedFleet, Rental, owned_sizing, owned_total, owned_unit
from wheretorun.engine.costs.staff import staff_lines
from wheretorun.engine.recommend import recommend
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind

# (accelerator, replica requests/s, accelerators per replica, replicas per server, server size)
_SERVERS = (
    ("h100-sxm", 10.0, 4, 2, 8),
    ("h100-sxm", 0.37, 8, 1, 8),
    ("h100-sxm", 123.4, 1, 8, 8),
    ("l4", 2.5, 1, 4, 4),
    ("l4", 0.9, 2, 2, 4),
)
_TDP_W = {"h100-sxm": 700.0, "l4": 72.0}


def _servers() -> list[tuple[str, cloud.Layout]]:
    return [
        (name, cloud.Layout(replica_capacity(rps, accelerators=size), per_instance=per, accelerators=server))
        for name, rps, size, per, server in _SERVERS
    ]


def _workload(requests_per_day: float, **shape: float) -> InferenceWorkload:
    return InferenceWorkload(
        models=("m",), requests_per_day=requests_per_day, input_tokens=900, output_tokens=300, **shape
    )


def _demand(workload: InferenceWorkload, assumptions: Assumptions) -> ServingDemand:
    return ServingDemand.from_workload(workload, assumptions.horizon_months, assumptions.hours_per_month)


@settings(max_examples=150, deadline=None)
@given(
    requests_per_day=st.floats(1, 5e8),
    growth=st.sampled_from([0.0, 0.03, -0.02]),
    redundancy=st.integers(0, 2),
    lead_months=st.sampled_from([0, 3, 9]),
    bridged=st.booleans(),
    staff_usd=st.sampled_from([0.0, 300.0, 10_800.0]),
    per_fte=st.sampled_from([8.0, 64.0]),
)
def test_the_fleets_totals_are_each_servers_own_sizing(
    requests_per_day: float,
    growth: float,
    redundancy: int,
    lead_months: int,
    bridged: bool,
    staff_usd: float,
    per_fte: float,
) -> None:
    assumptions = Assumptions(
        hardware_lead_time_months=lead_months,
        operations_staff_usd_per_month=staff_usd,
        accelerators_per_staff_fte=per_fte,
    )
    workload = _workload(requests_per_day, growth_per_month=growth, redundancy=redundancy)
    demand = _demand(workload, assumptions)
    rented = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    mode = cloud.CloudMode("on_demand", "autoscaled")

    def rent(head: ServingDemand) -> Rental | None:
        cost = cloud.serving_cost(P5, mode, rented, head, assumptions)
        return None if cost is None else Rental("p5 on demand", cost.total_usd)

    bridge = rent if bridged else None
    servers = _servers()
    units = [
        owned_unit(ACCELERATORS[name], HARDWARE[name], _TDP_W[name], layout, assumptions)
        for name, layout in servers
    ]
    totals, capex, counts = OwnedFleet.of(units, assumptions).totals(demand, bridge)
    for (name, layout), unit, total, fleet_capex, count in zip(
        servers, units, totals, capex, counts, strict=True
    ):
        alone = owned_sizing(
            ACCELERATORS[name], HARDWARE[name], _TDP_W[name], layout, demand, assumptions, bridge, unit
        )
        assert float(total) == alone.total_usd  # exactly: the planner ranks on one, answers the other
        assert float(fleet_capex) == alone.capex_usd
        assert count == alone.servers
        assert owned_total(unit, demand, assumptions, bridge) == alone.total_usd
        lines = staff_lines(
            staff_usd,
            alone.servers * layout.accelerators,
            unit.schedule.in_service_months,
            assumptions,
            "owned deployment",
        )
        assert alone.staff == tuple((line.name, line.usd) for line in lines)


def test_an_empty_fleet_has_no_totals() -> None:
    assumptions = Assumptions()
    demand = _demand(_workload(1000), assumptions)
    totals, capex, counts = OwnedFleet.of([], assumptions).totals(demand, None)
    assert totals.shape == (0,)
    assert capex.shape == (0,)
    assert counts.shape == (0,)


@pytest.mark.parametrize(
    "changed",
    [
        {"electricity_usd_per_kwh": 0.31},
        {"target_utilisation": 0.6},
        {"accelerators_per_staff_fte": 2.0},
        {"hardware_lead_time_months": 0},
    ],
)
def test_a_remembered_fleet_is_not_reused_under_other_assumptions(changed: dict[str, float]) -> None:
    """The fleet is remembered per capacity table and catalog (by identity) and per assumptions
    (by value): a request that changes only an assumption behind the servers' figures gets the
    answer computed afresh, not the servers of the request before."""
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=5_000_000, input_tokens=900, output_tokens=300
    )
    only_owned = Constraints(allowed_options=(OptionKind.OWNED,))
    catalog = snapshot()
    before = recommend(workload, only_owned, Assumptions(), catalog)
    after = recommend(workload, only_owned, Assumptions(**changed), catalog)  # type: ignore[arg-type]
    clear_caches()
    fresh = recommend(workload, only_owned, Assumptions(**changed), catalog)  # type: ignore[arg-type]
    totals = [[option.total_usd for option in answer.options] for answer in (before, after, fresh)]
    assert totals[0], "the test catalog must have owned options"
    assert totals[1] == totals[2]
    assert totals[1] != totals[0]


def test_past_a_floats_whole_numbers_the_fleet_declines_and_each_server_is_sized_alone() -> None:
    """From 2^53 replicas on, float counts round where the sizing's integers do not: the fleet
    gives no totals, and the planner sizes each server on its own, as before the fleet."""
    assumptions = Assumptions()
    demand = _demand(_workload(1e17), assumptions)
    name, layout = _servers()[1]  # 0.37 requests/s a replica: ~3e12 replicas at this volume ...
    unit = owned_unit(ACCELERATORS[name], HARDWARE[name], _TDP_W[name], layout, assumptions)
    assert OwnedFleet.of([unit], assumptions).totals(demand, None) is not None
    huge_demand = _demand(_workload(1e21), assumptions)
    assert OwnedFleet.of([unit], assumptions).totals(huge_demand, None) is None  # ... ~3e16 here
    planned = recommend(
        InferenceWorkload(
            models=("llama-3.1-8b",), requests_per_day=1e21, input_tokens=900, output_tokens=300
        ),
        Constraints(allowed_options=(OptionKind.OWNED,)),
        assumptions,
        snapshot(),
    )
    assert planned.options, "the owned servers are still sized and ranked"
