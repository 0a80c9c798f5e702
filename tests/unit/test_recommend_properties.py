"""Properties every recommendation must have, for random workloads, constraints and catalogs."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import ACCELERATORS, HARDWARE, snapshot
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.engine.costs.candidate import CostedCandidate
from wheretorun.engine.recommend import recommend
from wheretorun.engine.workload import (
    BatchWorkload,
    Constraints,
    InferenceWorkload,
    OptionKind,
    TrainingWorkload,
    Workload,
)

MODELS = st.sampled_from(["llama-3.1-8b", "llama-3.3-70b", "gpt-4o"])
ASSUMPTIONS = Assumptions(horizon_months=24)


@st.composite
def serving(draw: st.DrawFn) -> InferenceWorkload:
    targets = draw(st.booleans())
    return InferenceWorkload(
        models=(draw(MODELS),),
        requests_per_day=draw(st.floats(10, 2e7)),
        input_tokens=draw(st.integers(50, 4000)),
        output_tokens=draw(st.integers(20, 1000)),
        peak_to_average=draw(st.floats(1, 5)),
        growth_per_month=draw(st.sampled_from([0.0, 0.03])),
        ttft_ms=3000.0 if targets else None,
        tpot_ms=80.0 if targets else None,
        redundancy=draw(st.integers(0, 1)),
    )


@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    kind = draw(st.sampled_from(["inference", "inference", "batch", "training"]))
    if kind == "inference":
        return draw(serving())
    if kind == "batch":
        return BatchWorkload(
            models=(draw(MODELS),),
            input_tokens_total=draw(st.floats(1e6, 1e10)),
            output_tokens_total=draw(st.floats(1e5, 1e9)),
            deadline_hours=draw(st.floats(2, 200)),
        )
    return TrainingWorkload(
        model=draw(st.sampled_from(["llama-3.1-8b", "llama-3.3-70b"])),
        method=draw(st.sampled_from(["lora", "qlora", "full"])),
        tokens=draw(st.floats(1e7, 1e10)),
        deadline_hours=draw(st.one_of(st.none(), st.floats(1, 500))),
        runs_per_year=draw(st.floats(1, 50)),
    )


@st.composite
def constraints(draw: st.DrawFn) -> Constraints:
    return Constraints(
        on_premises_only=draw(st.booleans()),
        excluded_providers=draw(st.sampled_from([(), ("aws",), ("together_ai",)])),
        min_precision=draw(st.sampled_from([None, "fp8", "bf16"])),
        max_usd_per_month=draw(st.one_of(st.none(), st.floats(100, 1e6))),
        max_capex_usd=draw(st.one_of(st.none(), st.floats(1e3, 1e6))),
    )


@st.composite
def gappy_catalogs(draw: st.DrawFn) -> CatalogSnapshot:
    """The test catalog with prices knocked out at random."""
    base = snapshot()

    def maybe_none(value: object) -> object:
        return None if draw(st.booleans()) else value

    offers = tuple(
        dataclasses.replace(
            o,
            on_demand_usd_per_hour=maybe_none(o.on_demand_usd_per_hour),
            spot_usd_per_hour=maybe_none(o.spot_usd_per_hour),
        )  # type: ignore[arg-type]
        for o in base.cloud_offers
    )
    prices = tuple(
        dataclasses.replace(
            p,
            input_usd_per_million_tokens=maybe_none(p.input_usd_per_million_tokens),  # type: ignore[arg-type]
            output_usd_per_million_tokens=maybe_none(p.output_usd_per_million_tokens),  # type: ignore[arg-type]
        )
        for p in base.api_prices
    )
    hardware = {k: v for k, v in HARDWARE.items() if draw(st.booleans())}
    return snapshot(cloud_offers=offers, api_prices=prices, hardware_prices=hardware)


@settings(max_examples=30, deadline=None)
@given(workload=workloads(), limits=constraints())
def test_the_top_option_is_never_dearer_than_any_feasible_one(
    workload: Workload, limits: Constraints
) -> None:
    result = recommend(workload, limits, ASSUMPTIONS, snapshot())
    totals = [o.total_usd for o in result.options]
    assert totals == sorted(totals)
    if result.options:
        assert all(result.options[0].total_usd <= o.total_usd for o in result.best_per_option.values())


@settings(max_examples=30, deadline=None)
@given(workload=workloads(), limits=constraints())
def test_on_premises_only_never_yields_hosted_or_cloud_options(
    workload: Workload, limits: Constraints
) -> None:
    result = recommend(workload, dataclasses.replace(limits, on_premises_only=True), ASSUMPTIONS, snapshot())
    assert {o.option for o in result.options} <= {OptionKind.OWNED, OptionKind.LOCAL}


@settings(max_examples=30, deadline=None)
@given(workload=workloads(), catalog=gappy_catalogs())
def test_a_missing_price_never_produces_a_free_option(workload: Workload, catalog: CatalogSnapshot) -> None:
    result = recommend(workload, Constraints(), ASSUMPTIONS, catalog)
    offers = {o.id: o for o in catalog.cloud_offers}
    prices = {p.id: p for p in catalog.api_prices}
    for option in result.options:
        assert option.total_usd > 0
        setup = option.setup
        for offer_id in setup.offer_ids:
            offer = offers[offer_id]
            needed = offer.spot_usd_per_hour if setup.pricing_mode == "spot" else offer.on_demand_usd_per_hour
            assert needed is not None
        if setup.api_price_id is not None:
            row = prices[setup.api_price_id]
            assert row.input_usd_per_million_tokens is not None
            assert row.output_usd_per_million_tokens is not None
        if option.option in (OptionKind.OWNED, OptionKind.LOCAL):
            assert setup.accelerator_id in catalog.hardware_prices


def _best_repriceable(workload: InferenceWorkload) -> list[CostedCandidate]:
    """The pure plans recommend() compares in its break-even, as the cost models build them."""
    from wheretorun.engine import DEFAULT_EFFICIENCY
    from wheretorun.engine.planning.context import Context
    from wheretorun.engine.planning.serving_candidates import serving_candidates

    candidates = serving_candidates(
        workload, Context(Constraints(), ASSUMPTIONS, snapshot(), DEFAULT_EFFICIENCY)
    )
    best: dict[OptionKind, CostedCandidate] = {}
    for plan in sorted(candidates.plans, key=lambda p: p.total_usd):
        if plan.option not in best:
            best[plan.option] = plan.written()
    return [plan for plan in best.values() if plan.reprice is not None]


@settings(max_examples=25, deadline=None)
@given(workload=serving(), low=st.floats(0.05, 4.0), factor=st.floats(1.0, 8.0))
def test_more_traffic_never_lowers_a_fixed_plans_cost(
    workload: InferenceWorkload, low: float, factor: float
) -> None:
    for plan in _best_repriceable(workload):
        assert plan.reprice is not None
        smaller, larger = plan.reprice(low), plan.reprice(low * factor)
        if smaller is not None and larger is not None:  # None: the plan cannot serve that volume
            assert larger.total_usd >= smaller.total_usd - 1e-6


def test_the_catalog_used_by_the_properties_has_every_kind_of_option() -> None:
    """Guard: the properties above are only meaningful if the catalog offers every option."""
    result = recommend(
        InferenceWorkload(models=("llama-3.1-8b",), requests_per_day=50, input_tokens=200, output_tokens=100),
        Constraints(),
        ASSUMPTIONS,
        snapshot(),
    )
    assert {OptionKind.HOSTED_API, OptionKind.CLOUD, OptionKind.OWNED, OptionKind.LOCAL} <= set(
        result.best_per_option
    )
    assert ACCELERATORS["rtx-4090"].kind == "consumer"
