"""Owned servers sized all at once (`OwnedFleet.totals`) cost exactly what each costs sized on
its own (`owned_sizing`), for any demand: the serving planner ranks and filters owned servers on
the fleet's totals and writes up only the cheapest."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import ACCELERATORS, HARDWARE, P5, replica_capacity
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs import cloud
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.costs.owned import OwnedFleet, Rental, owned_sizing, owned_unit
from wheretorun.engine.workload import InferenceWorkload

# (accelerator, replica requests/s, accelerators per replica, replicas per server, server size)
_SERVERS = (
    ("h100-sxm", 10.0, 4, 2, 8),
    ("h100-sxm", 0.37, 8, 1, 8),
    ("h100-sxm", 123.4, 1, 8, 8),
    ("l4", 2.5, 1, 4, 4),
    ("l4", 0.9, 2, 2, 4),
)
_TDP_W = {"h100-sxm": 700.0, "l4": 72.0}


def _units(assumptions: Assumptions) -> list[tuple[str, cloud.Layout]]:
    return [
        (name, cloud.Layout(replica_capacity(rps, accelerators=size), per_instance=per, accelerators=server))
        for name, rps, size, per, server in _SERVERS
    ]


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
    workload = InferenceWorkload(
        models=("m",),
        requests_per_day=requests_per_day,
        input_tokens=900,
        output_tokens=300,
        growth_per_month=growth,
        redundancy=redundancy,
    )
    demand = ServingDemand.from_workload(workload, assumptions.horizon_months, assumptions.hours_per_month)
    rented = cloud.Layout(replica_capacity(10.0), per_instance=2, accelerators=8)
    mode = cloud.CloudMode("on_demand", "autoscaled")

    def rent(head: ServingDemand) -> Rental | None:
        cost = cloud.serving_cost(P5, mode, rented, head, assumptions)
        return None if cost is None else Rental("p5 on demand", cost.total_usd)

    bridge = rent if bridged else None
    servers = _units(assumptions)
    units = [
        owned_unit(ACCELERATORS[name], HARDWARE[name], _TDP_W[name], layout, assumptions)
        for name, layout in servers
    ]
    totals, capex = OwnedFleet.of(units, assumptions).totals(demand, assumptions, bridge)
    for (name, layout), unit, total, fleet_capex in zip(servers, units, totals, capex, strict=True):
        alone = owned_sizing(
            ACCELERATORS[name], HARDWARE[name], _TDP_W[name], layout, demand, assumptions, bridge, unit
        )
        assert float(total) == alone.total_usd  # exactly: the planner ranks on one, answers the other
        assert float(fleet_capex) == alone.capex_usd


def test_an_empty_fleet_has_no_totals() -> None:
    assumptions = Assumptions()
    workload = InferenceWorkload(models=("m",), requests_per_day=1000, input_tokens=900, output_tokens=300)
    demand = ServingDemand.from_workload(workload, assumptions.horizon_months, assumptions.hours_per_month)
    totals, capex = OwnedFleet.of([], assumptions).totals(demand, assumptions, None)
    assert totals.shape == (0,)
    assert capex.shape == (0,)
