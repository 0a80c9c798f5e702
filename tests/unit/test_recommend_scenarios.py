"""Scenarios with answers known from first principles, on a hand-built catalog of real figures
(tests/unit/recommend_catalog.py says where each figure comes from)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from tests.unit.recommend_catalog import GCP_H100, HARDWARE, P5, TOGETHER_70B, snapshot
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.config import ServingEngine
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import Recommendation, RejectReason
from wheretorun.engine.specs import MemoryKind
from wheretorun.engine.workload import (
    BatchWorkload,
    Constraints,
    InferenceWorkload,
    OptionKind,
    TrainingWorkload,
)

CHAT_70B = {"input_tokens": 1000, "output_tokens": 250, "ttft_ms": 2000.0, "tpot_ms": 60.0}


def _serve(model: str, requests_per_day: float, **fields: object) -> InferenceWorkload:
    return InferenceWorkload(models=(model,), requests_per_day=requests_per_day, **{**CHAT_70B, **fields})  # type: ignore[arg-type]


def _reasons(result: Recommendation) -> dict[RejectReason, int]:
    return {group.reason: group.count for group in result.rejected}


def _examples(result: Recommendation, reason: RejectReason) -> tuple[str, ...]:
    return next(group.examples for group in result.rejected if group.reason == reason)


def test_self_hosted_options_say_where_their_serving_efficiency_comes_from() -> None:
    """vLLM on HBM has no calibration rows of its own: every cloud and owned option (H100, HBM)
    says its throughput and latency borrow another engine's factors; a hosted API, which is not
    estimated, says nothing."""
    result = recommend(_serve("llama-3.3-70b", 2_000_000), Constraints(), Assumptions(), snapshot())
    borrowed = DEFAULT_EFFICIENCY.serving_for(ServingEngine.VLLM, MemoryKind.HBM).provenance
    assert "no calibration rows" in borrowed
    kinds = {option.option for option in [*result.options, *result.best_per_option.values()]}
    assert {OptionKind.CLOUD, OptionKind.OWNED, OptionKind.HOSTED_API} <= kinds
    for option in [*result.options, *result.best_per_option.values()]:
        if option.option == OptionKind.HOSTED_API:
            assert option.uncertainty is None
        elif option.option in (OptionKind.CLOUD, OptionKind.OWNED):
            assert option.uncertainty is not None, option.label
            assert option.uncertainty.endswith(f"vllm serving efficiency on hbm memory: {borrowed}")


def test_a_tiny_volume_goes_to_a_hosted_api() -> None:
    result = recommend(_serve("llama-3.3-70b", 100), Constraints(), Assumptions(), snapshot())
    best = result.options[0]
    assert best.option == OptionKind.HOSTED_API
    # the GPU plans pay for a whole 8 x H100 machine that idles: more than ten times dearer
    for kind in (OptionKind.CLOUD, OptionKind.OWNED):
        assert result.best_per_option[kind].total_usd > 10 * best.total_usd


def test_steady_high_volume_of_a_70b_model_favours_owned_or_reserved_capacity() -> None:
    """Ten million chat requests a day for three years, at Together's Llama 3.3 70B price."""
    catalog = snapshot(api_prices=(TOGETHER_70B,))
    result = recommend(_serve("llama-3.3-70b", 10_000_000), Constraints(), Assumptions(), catalog)
    committed = [
        o.total_usd
        for o in result.options
        if o.option == OptionKind.OWNED or (o.setup.pricing_mode or "").startswith("reserved")
    ]
    on_demand = [o.total_usd for o in result.options if o.setup.pricing_mode == "on_demand"]
    api = result.best_per_option[OptionKind.HOSTED_API].total_usd
    assert committed
    assert on_demand
    assert min(committed) < min(on_demand)
    assert min(committed) < api


def test_a_405b_model_never_fits_a_single_24_gb_card() -> None:
    result = recommend(
        _serve("llama-3.1-405b", 50, ttft_ms=None, tpot_ms=None), Constraints(), Assumptions(), snapshot()
    )
    assert all(o.setup.accelerator_id not in ("rtx-4090", "l4") for o in result.options)
    local_rejections = [
        e for e in _examples(result, RejectReason.DOES_NOT_FIT_MEMORY) if "rtx-4090" in e or "l4" in e
    ]
    assert local_rejections
    assert all("short by" in example for example in local_rejections)


def test_a_deadline_too_short_for_any_allowed_scale_is_missed() -> None:
    workload = TrainingWorkload(model="llama-3.3-70b", method="full", tokens=1e11, deadline_hours=1.0)
    result = recommend(workload, Constraints(), Assumptions(max_accelerators_per_job=64), snapshot())
    assert RejectReason.MISSES_DEADLINE in _reasons(result)
    assert result.options == ()


def test_a_training_deadline_is_met_by_adding_accelerators() -> None:
    workload = TrainingWorkload(
        model="llama-3.1-8b", method="lora", tokens=2e9, deadline_hours=4.0, runs_per_year=4
    )
    result = recommend(workload, Constraints(), Assumptions(), snapshot())
    assert result.options
    assert all(o.usd_per_run is not None and o.usd_per_run > 0 for o in result.options)
    assert any("fine-tuning" in note for note in result.notes)


def test_the_monthly_budget_rejects_what_costs_more() -> None:
    budget = 8_000.0
    result = recommend(
        _serve("llama-3.3-70b", 1_000_000), Constraints(max_usd_per_month=budget), Assumptions(), snapshot()
    )
    assert _reasons(result)[RejectReason.OVER_BUDGET] > 0
    assert result.options
    assert all(o.usd_per_month is not None and float(o.usd_per_month) <= budget for o in result.options)


def test_the_capex_cap_rejects_owned_servers() -> None:
    result = recommend(
        _serve("llama-3.3-70b", 1_000_000), Constraints(max_capex_usd=100_000), Assumptions(), snapshot()
    )
    assert _reasons(result)[RejectReason.OVER_CAPEX] > 0
    assert all(float(o.capex_usd) <= 100_000 for o in result.options)
    assert OptionKind.OWNED not in result.best_per_option


def test_on_premises_only_keeps_to_owned_and_local_hardware() -> None:
    result = recommend(
        _serve("llama-3.1-8b", 20_000), Constraints(on_premises_only=True), Assumptions(), snapshot()
    )
    assert result.options
    assert {o.option for o in result.options} <= {OptionKind.OWNED, OptionKind.LOCAL}
    assert _reasons(result)[RejectReason.VIOLATES_DATA_RESIDENCY] > 0


def test_regions_and_providers_restrict_the_cloud() -> None:
    regional = recommend(
        _serve("llama-3.3-70b", 1_000_000),
        Constraints(allowed_regions=("eu-north-1",)),
        Assumptions(),
        snapshot(),
    )
    assert {o.setup.region for o in regional.options if o.option == OptionKind.CLOUD} == {"eu-north-1"}
    assert OptionKind.HOSTED_API not in regional.best_per_option  # hosted APIs publish no region
    no_aws = recommend(
        _serve("llama-3.3-70b", 1_000_000),
        Constraints(excluded_providers=("aws",)),
        Assumptions(),
        snapshot(),
    )
    assert all(o.setup.provider != "aws" for o in no_aws.options)
    assert _reasons(no_aws)[RejectReason.VIOLATES_CONSTRAINT] > 0


def test_the_precision_floor_keeps_weights_at_or_above_it() -> None:
    result = recommend(
        _serve("llama-3.3-70b", 1_000_000), Constraints(min_precision="bf16"), Assumptions(), snapshot()
    )
    self_hosted = [o for o in result.options if o.option in (OptionKind.CLOUD, OptionKind.OWNED)]
    assert self_hosted
    assert {o.setup.precision for o in self_hosted} == {"bf16"}


def test_a_gpu_only_price_is_never_ranked_unless_its_vm_is_priced() -> None:
    catalog = snapshot(cloud_offers=(P5, GCP_H100))
    plain = recommend(_serve("llama-3.3-70b", 1_000_000), Constraints(), Assumptions(), catalog)
    assert all(o.setup.provider != "gcp" for o in plain.options)
    assert _reasons(plain)[RejectReason.INCOMPLETE_PRICE] > 0
    priced = recommend(
        _serve("llama-3.3-70b", 1_000_000),
        Constraints(),
        Assumptions(host_vm_usd_per_accelerator_hour=2.0),
        catalog,
    )
    gcp = [o for o in priced.options if o.setup.provider == "gcp"]
    assert gcp
    assert all(any("GPUs only" in risk for risk in o.risks) for o in gcp)


def test_a_missing_price_is_unpriced_never_free() -> None:
    result = recommend(
        _serve("llama-3.1-8b", 1000, ttft_ms=None, tpot_ms=None), Constraints(), Assumptions(), snapshot()
    )
    assert RejectReason.UNPRICED in _reasons(result)
    assert all(o.setup.api_price_id != 14 for o in result.options)
    assert all(o.total_usd > 0 for o in result.options)


def test_hardware_without_a_purchase_price_is_not_bought() -> None:
    catalog = snapshot(hardware_prices={"l4": HARDWARE["l4"]})
    result = recommend(_serve("llama-3.3-70b", 1_000_000), Constraints(), Assumptions(), catalog)
    assert OptionKind.OWNED not in result.best_per_option
    assert any("no purchase price for h100-sxm" in e for e in _examples(result, RejectReason.UNPRICED))


def test_a_batch_job_uses_the_batch_tier_and_does_not_buy_hardware() -> None:
    job = BatchWorkload(
        models=("gpt-4o",), input_tokens_total=1e9, output_tokens_total=2e8, deadline_hours=48
    )
    result = recommend(job, Constraints(), Assumptions(), snapshot())
    best = result.best_per_option[OptionKind.HOSTED_API]
    assert best.setup.pricing_mode == "api_batch"
    # tokens at the batch tier + the hosted staff minimum ($900 a month) for the 48 h until the deadline
    tokens_usd = 1e9 * 1.25 / 1e6 + 2e8 * 5.00 / 1e6
    staff_usd = 900.0 * 48 / 730
    assert float(best.total_usd) == pytest.approx(tokens_usd + staff_usd, abs=0.01)
    assert float(best.marginal_usd_per_million_tokens) == pytest.approx(
        tokens_usd / (1e9 + 2e8) * 1e6, abs=1e-4
    )
    urgent = recommend(dataclasses.replace(job, deadline_hours=6), Constraints(), Assumptions(), snapshot())
    assert urgent.best_per_option[OptionKind.HOSTED_API].setup.pricing_mode == "api"
    open_model = recommend(
        BatchWorkload(
            models=("llama-3.1-8b",), input_tokens_total=1e9, output_tokens_total=2e8, deadline_hours=48
        ),
        Constraints(),
        Assumptions(),
        snapshot(),
    )
    assert RejectReason.ONE_OFF_JOB in _reasons(open_model)
    assert OptionKind.CLOUD in open_model.best_per_option


def test_an_unknown_model_is_a_named_error() -> None:
    with pytest.raises(InvalidSpec) as error:
        recommend(_serve("no-such-model", 10), Constraints(), Assumptions(), snapshot())
    assert error.value.field == "workload.model"


def test_the_same_input_gives_the_same_answer_and_echoes_the_catalog() -> None:
    workload = _serve("llama-3.3-70b", 2_000_000, peak_to_average=3.0, redundancy=1)
    first = recommend(workload, Constraints(), Assumptions(), snapshot())
    again = recommend(workload, Constraints(), Assumptions(), snapshot())
    assert first == again
    assert first.catalog_version == 7
    assert first.as_of == snapshot().as_of


def test_a_breakdown_adds_up_to_its_total_and_rationales_cite_the_numbers() -> None:
    result = recommend(_serve("llama-3.3-70b", 2_000_000), Constraints(), Assumptions(), snapshot())
    for option in result.options:
        assert abs(sum(line.usd for line in option.breakdown) - option.total_usd) <= Decimal("0.01") * len(
            option.breakdown
        )
        assert option.label in option.rationale
    assert "cheapest" in result.options[0].rationale


def test_the_break_even_names_where_the_winner_changes() -> None:
    catalog = snapshot(api_prices=(TOGETHER_70B,))
    result = recommend(_serve("llama-3.3-70b", 1_000_000), Constraints(), Assumptions(), catalog)
    break_even = result.break_even
    assert break_even is not None
    assert break_even.volume_unit == "requests_per_day"
    assert break_even.crossovers
    for crossover in break_even.crossovers:
        below = [p for p in break_even.points if p.multiplier < crossover.multiplier]
        above = [p for p in break_even.points if p.multiplier > crossover.multiplier * 1.05]
        assert below[-1].winner == crossover.from_label
        assert above[0].winner != crossover.from_label


def test_a_local_card_over_budget_at_some_precisions_is_offered_at_one_within_it() -> None:
    """A local card is costed at every precision that serves one stream, and only its cheapest
    becomes an option; the precisions over the monthly budget are still counted as rejected
    over budget, as every candidate over a budget is."""
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
    )
    assumptions = Assumptions(horizon_months=12)

    def local_only(**limits: object) -> Recommendation:
        return recommend(
            workload, Constraints(allowed_options=(OptionKind.LOCAL,), **limits), assumptions, snapshot()
        )

    cheapest = local_only().options[0]
    eight_bit = local_only(min_precision="int8").options[0]  # the cheapest at 8 bits or more
    assert cheapest.usd_per_month is not None
    assert eight_bit.usd_per_month is not None
    assert cheapest.usd_per_month < eight_bit.usd_per_month
    budget = float(cheapest.usd_per_month + eight_bit.usd_per_month) / 2
    result = local_only(max_usd_per_month=budget)
    assert [(o.label, o.setup.precision) for o in result.options] == [
        (cheapest.label, cheapest.setup.precision)
    ]
    over = [group for group in result.rejected if group.reason == RejectReason.OVER_BUDGET]
    assert len(over) == 1
    assert over[0].count >= 2  # bf16 and fp8 at least: every precision of 8 bits or more
    assert all(example.startswith(cheapest.label) for example in over[0].examples)
