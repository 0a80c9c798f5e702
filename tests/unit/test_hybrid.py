"""The hybrid plan: a mixed-integer program choosing a base and burst capacity hour by hour."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import P5, TOGETHER_70B, snapshot
from wheretorun.engine import DEFAULT_EFFICIENCY, hybrid
from wheretorun.engine import recommend as recommend_module
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.candidate import CostedCandidate, Line
from wheretorun.engine.costs.demand import ServingDemand
from wheretorun.engine.hybrid import BaseOption, BurstOption, HybridInputs, solve_hybrid
from wheretorun.engine.planning.context import Context
from wheretorun.engine.planning.serving_candidates import serving_candidates
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind

NO_STAFF = Assumptions(
    operations_staff_usd_per_month=0.0,
    cloud_staff_usd_per_month=0.0,
    hosted_staff_usd_per_month=0.0,
    hardware_lead_time_months=0,
    horizon_months=12,
)
# 23 quiet hours at 1 request/s and one busy hour at 10 requests/s.
PROFILE = (1.0,) * 23 + (10.0,)


def _demand() -> ServingDemand:
    workload = InferenceWorkload(
        models=("m",),
        requests_per_day=33 * 3600.0,
        input_tokens=100,
        output_tokens=100,
        hourly_profile=PROFILE,
    )
    return ServingDemand.from_workload(workload, NO_STAFF.horizon_months, NO_STAFF.hours_per_month)


def _plan(option: OptionKind, total: float, capex: float = 0.0) -> CostedCandidate:
    return CostedCandidate(
        option, f"pure {option.value}", Setup("m"), (Line("all", total),), months=12, capex_usd=capex
    )


def _server(plan: CostedCandidate, unit_cost: float, accelerators: int = 0) -> BaseOption:
    """An owned base unit of 1 req/s, costing `unit_cost` over the horizon, at hand from month 0."""
    return BaseOption(
        plan=plan,
        unit="server",
        owned=True,
        unit_rps=1.0,
        replica_rps=1.0,
        fixed_usd_per_unit=unit_cost,
        capital_usd_per_unit=unit_cost,
        capex_usd_per_unit=1000.0,
        energy_usd_per_rps_hour=0.0,
        available_from_month=0,
        accelerators_per_unit=accelerators,
    )


def test_the_base_covers_the_quiet_hours_and_the_api_the_busy_one() -> None:
    demand = _demand()
    hours = 12 * 730.0
    unit_cost, api_per_rps_hour = 0.5 * hours, 1.0  # a base unit costs half of what the API charges for it
    api_total = float((demand.rates_rps @ demand.group_hours).sum()) * api_per_rps_hour
    inputs = HybridInputs(
        bases=(_server(_plan(OptionKind.OWNED, 10 * unit_cost), unit_cost),),
        bursts=(
            BurstOption(_plan(OptionKind.HOSTED_API, api_total), "api", True, 0.0, 0.0, api_per_rps_hour),
        ),
    )
    solution = solve_hybrid(inputs, demand, NO_STAFF, Constraints())
    assert solution is not None
    assert not solution.pure
    base, burst = solution.parts
    # one unit serves the quiet hours fully (half price); a second unit would idle 23 h a day
    assert base.units == 1
    expected = unit_cost + 9 * hours / 24 * api_per_rps_hour
    assert solution.plan.total_usd == pytest.approx(expected)
    assert base.share_of_requests + burst.share_of_requests == pytest.approx(1.0)
    assert solution.plan.total_usd < min(plan.total_usd for plan in inputs.plans)


def _quiet_base_and_busy_api() -> HybridInputs:
    """A base unit at half the API's price for the hours it serves (the test above)."""
    demand = _demand()
    hours = 12 * 730.0
    unit_cost, api_per_rps_hour = 0.5 * hours, 1.0
    api_total = float((demand.rates_rps @ demand.group_hours).sum()) * api_per_rps_hour
    return HybridInputs(
        bases=(_server(_plan(OptionKind.OWNED, 10 * unit_cost), unit_cost),),
        bursts=(
            BurstOption(_plan(OptionKind.HOSTED_API, api_total), "api", True, 0.0, 0.0, api_per_rps_hour),
        ),
    )


def test_a_mix_found_at_the_solvers_time_limit_says_it_is_not_proven_the_cheapest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HiGHS stops at the time limit with the best mix found so far; how far it got depends on the
    machine's load, so the plan must say its mix is not proven the cheapest. The solver's own
    answer is kept; only its status is made the time limit's, as a busy machine would return it."""
    import scipy.optimize

    solved = solve_hybrid(_quiet_base_and_busy_api(), _demand(), NO_STAFF, Constraints())
    assert solved is not None
    assert not solved.pure
    assert hybrid.TIME_LIMIT_RISK not in solved.plan.risks
    real_milp = scipy.optimize.milp

    def stopped_at_the_limit(*args: object, **kwargs: object) -> scipy.optimize.OptimizeResult:
        result = real_milp(*args, **kwargs)
        return scipy.optimize.OptimizeResult({**result, "status": 1})

    monkeypatch.setattr(scipy.optimize, "milp", stopped_at_the_limit)
    stopped = solve_hybrid(_quiet_base_and_busy_api(), _demand(), NO_STAFF, Constraints())
    assert stopped is not None
    assert stopped.plan.total_usd == solved.plan.total_usd
    assert hybrid.TIME_LIMIT_RISK in stopped.plan.risks


def test_no_mix_found_before_the_time_limit_leaves_the_pure_plan_and_says_a_mix_is_not_ruled_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HiGHS can stop at its time limit before it finds any mix: the cheapest pure plan stands,
    flagged, and the answer's note says a cheaper mix is not ruled out (not that none exists)."""
    import scipy.optimize

    real_milp = scipy.optimize.milp

    def nothing_in_time(*args: object, **kwargs: object) -> scipy.optimize.OptimizeResult:
        return scipy.optimize.OptimizeResult({**real_milp(*args, **kwargs), "status": 1, "x": None})

    monkeypatch.setattr(scipy.optimize, "milp", nothing_in_time)
    inputs = _quiet_base_and_busy_api()
    stopped = solve_hybrid(inputs, _demand(), NO_STAFF, Constraints())
    assert stopped is not None
    assert stopped.pure
    assert stopped.stopped_at_time_limit
    assert stopped.plan is min(inputs.plans, key=lambda plan: plan.total_usd)
    assert "a cheaper mix is not ruled out" in recommend_module._pure_hybrid_note(stopped)


def test_staff_of_a_hybrid_base_scales_with_its_accelerators() -> None:
    """Issue 13: staff is max(minimum, accelerators / 250 FTE) in the hybrid too. One base unit of
    100 accelerators needs 100 / 250 = 0.4 FTE x $18,000 = $7,200 a month, above the owned minimum of
    $4,500 (0.25 FTE): $2,700 a month more, over 12 months $32,400."""
    demand = _demand()
    hours = 12 * 730.0
    api_per_rps_hour = 100.0
    unit_cost = 0.5 * hours * api_per_rps_hour  # $438,000: half what the API charges for 1 req/s
    api_total = float((demand.rates_rps @ demand.group_hours).sum()) * api_per_rps_hour
    staffed = dataclasses.replace(
        NO_STAFF,
        operations_staff_usd_per_month=4_500.0,
        staff_usd_per_fte_month=18_000.0,
        accelerators_per_staff_fte=250.0,
    )
    base = _server(_plan(OptionKind.OWNED, 10 * unit_cost), unit_cost, accelerators=100)
    api = BurstOption(_plan(OptionKind.HOSTED_API, api_total), "api", True, 0.0, 0.0, api_per_rps_hour)
    solution = solve_hybrid(HybridInputs((base,), (api,)), demand, staffed, Constraints())
    assert solution is not None
    assert not solution.pure
    assert solution.parts[0].units == 1
    staff = {line.name: line.usd for line in solution.plan.lines if "staff" in line.name}
    assert staff["operations staff"] == pytest.approx(4_500.0 * 12)
    assert staff["operations staff per accelerator"] == pytest.approx(2_700.0 * 12)
    busy_hour_by_api = 9 * hours / 24 * api_per_rps_hour  # 10 req/s in the busy hour, 1 from the base
    assert solution.plan.total_usd == pytest.approx(unit_cost + 7_200.0 * 12 + busy_hour_by_api)


def test_cheap_enough_owned_capacity_takes_all_hours_unless_capex_is_capped() -> None:
    demand = _demand()
    unit_cost = 0.02 * 12 * 730.0  # below the API's price for even the one busy hour a day
    owned = _plan(OptionKind.OWNED, 10 * unit_cost, capex=10 * 1000.0)
    base = _server(owned, unit_cost)
    api_plan = _plan(OptionKind.HOSTED_API, 1e9)
    api = BurstOption(api_plan, "api", True, 0.0, 0.0, 1.0)
    free = solve_hybrid(HybridInputs((base,), (api,)), demand, NO_STAFF, Constraints())
    capped = solve_hybrid(HybridInputs((base,), (api,)), demand, NO_STAFF, Constraints(max_capex_usd=5_000.0))
    assert free is not None
    assert free.pure
    assert free.plan is owned  # ten units, no burst: the pure owned plan
    assert capped is not None
    assert not capped.pure
    assert capped.parts[0].units == 5  # $5,000 of capex buys five units; the API takes the rest


def _context(assumptions: Assumptions) -> Context:
    """The test catalog without spot prices (spot would beat every mix) and with one API price."""
    without_spot = snapshot(
        cloud_offers=(dataclasses.replace(P5, spot_usd_per_hour=None),), api_prices=(TOGETHER_70B,)
    )
    return Context(Constraints(), assumptions, without_spot, DEFAULT_EFFICIENCY)


@settings(max_examples=12, deadline=None)
@given(
    requests_per_day=st.floats(2e5, 2e7),
    peak=st.floats(1.0, 6.0),
    redundancy=st.integers(0, 1),
    growth=st.sampled_from([0.0, 0.02]),
)
def test_hybrid_never_costs_more_than_the_pure_plans_it_is_built_from(
    requests_per_day: float, peak: float, redundancy: int, growth: float
) -> None:
    """Built from real candidates (owned H100 servers, a p5 reservation, p5 on demand, Together's
    API), costed by the same cost models as the pure plans."""
    assumptions = Assumptions(horizon_months=24)
    workload = InferenceWorkload(
        models=("llama-3.3-70b",),
        requests_per_day=requests_per_day,
        input_tokens=1000,
        output_tokens=250,
        peak_to_average=peak,
        ttft_ms=2000,
        tpot_ms=60,
        redundancy=redundancy,
        growth_per_month=growth,
    )
    candidates = serving_candidates(workload, _context(assumptions))
    inputs = candidates.hybrid_inputs
    assert inputs.bases
    assert inputs.bursts
    solution = solve_hybrid(inputs, candidates.demand, assumptions, Constraints())
    assert solution is not None
    cheapest_pure = min(plan.total_usd for plan in inputs.plans)
    assert solution.plan.total_usd <= cheapest_pure * (1 + 1e-9)


def test_the_hybrid_is_repriced_at_another_volume_for_the_break_even() -> None:
    """Break-even compares the #1 option, hybrid included: the mix is solved again at each volume
    against the pure plans re-priced there."""
    demand = _demand()
    hours = 12 * 730.0
    unit_cost = 0.5 * hours
    api_total = float((demand.rates_rps @ demand.group_hours).sum())

    def linear(option: OptionKind, total: float) -> CostedCandidate:
        return dataclasses.replace(_plan(option, total), reprice=lambda m: _plan(option, total * m))

    inputs = HybridInputs(
        bases=(_server(linear(OptionKind.OWNED, 10 * unit_cost), unit_cost),),
        bursts=(BurstOption(linear(OptionKind.HOSTED_API, api_total), "api", True, 0.0, 0.0, 1.0),),
    )
    solution = solve_hybrid(inputs, demand, NO_STAFF, Constraints())
    assert solution is not None
    assert solution.plan.reprice is not None
    assert solution.plan.reprice(1.0).total_usd == pytest.approx(solution.plan.total_usd)
    doubled = solution.plan.reprice(2.0)
    # twice the traffic: 2 req/s for 23 quiet hours -> 2 base units; the busy hour's 20 - 2 = 18
    # req/s go to the API at $1 per (req/s x hour), one hour a day
    assert doubled is not None
    assert doubled.option == OptionKind.HYBRID
    assert doubled.total_usd == pytest.approx(2 * unit_cost + 18 * hours / 24)


@settings(max_examples=40, deadline=None)
@given(
    unit_share=st.floats(0.05, 3.0),
    api_per_rps_hour=st.floats(0.1, 50.0),
    staff=st.sampled_from([0.0, 300.0, 4_500.0, 50_000.0]),
    accelerators=st.integers(0, 400),
)
def test_the_bound_that_skips_the_program_never_changes_the_answer(
    unit_share: float, api_per_rps_hour: float, staff: float, accelerators: int
) -> None:
    """Issue 14: when no mix with a base can beat the cheapest pure plan (every request at the
    cheapest rate plus a base's staff minimum), the program is not solved. Solving it anyway
    must give the same answer."""
    demand = _demand()
    hours = 12 * 730.0
    unit_cost = unit_share * hours * api_per_rps_hour
    api_total = float((demand.rates_rps @ demand.group_hours).sum()) * api_per_rps_hour
    assumptions = dataclasses.replace(
        NO_STAFF, operations_staff_usd_per_month=staff, hosted_staff_usd_per_month=staff / 10
    )
    base = _server(_plan(OptionKind.OWNED, 10 * unit_cost), unit_cost, accelerators=accelerators)
    api = BurstOption(_plan(OptionKind.HOSTED_API, api_total), "api", True, 0.0, 0.0, api_per_rps_hour)
    inputs = HybridInputs((base,), (api,))
    quick = solve_hybrid(inputs, demand, assumptions, Constraints())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hybrid, "_least_mix_usd", lambda *_args: -math.inf)
        solved = solve_hybrid(inputs, demand, assumptions, Constraints())
    assert quick is not None
    assert solved is not None
    assert quick.pure == solved.pure
    assert quick.plan.total_usd == pytest.approx(solved.plan.total_usd)


def test_a_hosted_api_far_cheaper_than_any_base_skips_the_program() -> None:
    # The API charges $1 per req/s-hour; a base unit costs $0.9 per req/s-hour of its capacity but
    # brings $50,000 a month of staff: 12 months x $50,000 alone exceed the API's whole bill
    # (33 req/s-hours a day x 365 = $12,045), so the answer is the API's pure plan, unsolved.
    demand = _demand()
    hours = 12 * 730.0
    api_total = float((demand.rates_rps @ demand.group_hours).sum())
    api_plan = _plan(OptionKind.HOSTED_API, api_total)
    base = _server(_plan(OptionKind.OWNED, 1e9), 0.9 * hours)
    staffed = dataclasses.replace(NO_STAFF, operations_staff_usd_per_month=50_000.0)
    inputs = HybridInputs((base,), (BurstOption(api_plan, "api", True, 0.0, 0.0, 1.0),))
    assert hybrid._least_mix_usd(inputs, hybrid._periods(demand, 0), staffed, 0) > api_total
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hybrid, "_solve", lambda _builder: pytest.fail("the program was solved"))
        solution = solve_hybrid(inputs, demand, staffed, Constraints())
    assert solution is not None
    assert solution.pure
    assert solution.plan is api_plan
