"""Replica capacity for sizing: the vectorised search agrees with `estimate_inference`."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.recommend_catalog import H100, L4, LLAMA_8B, LLAMA_70B, LLAMA_405B, RTX_4090
from wheretorun.engine import InferenceConfig, ServingEngine, estimate_inference
from wheretorun.engine.capacity import max_batch, serving_capacities
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.specs import AcceleratorSpec


def _capacities(model, precisions, ttft=2000.0, tpot=60.0):  # type: ignore[no-untyped-def]
    return serving_capacities(
        model,
        [("h100-sxm", H100), ("l4", L4), ("rtx-4090", RTX_4090)],
        precisions,
        engine=ServingEngine.VLLM,
        input_tokens=1000,
        output_tokens=250,
        ttft_ms=ttft,
        tpot_ms=tpot,
    )


@pytest.mark.parametrize(
    ("size", "precision"), [(1, Precision.FP8), (2, Precision.BF16), (4, Precision.FP8), (8, Precision.BF16)]
)
def test_capacity_matches_the_exact_search_from_below(size: int, precision: Precision) -> None:
    capacity = _capacities(LLAMA_70B, [precision])[("h100-sxm", size, precision)]
    exact = estimate_inference(
        LLAMA_70B,
        H100,
        InferenceConfig(
            accelerator_count=size,
            weight_precision=precision,
            input_tokens=1000,
            output_tokens=250,
            ttft_target_ms=2000.0,
            tpot_target_ms=60.0,
        ),
    ).max_request_rate
    if exact is None:
        assert not capacity.ok
        return
    assert capacity.ok
    assert capacity.requests_per_s <= exact.requests_per_s * (1 + 1e-9)
    assert capacity.requests_per_s >= exact.requests_per_s * 0.93  # the refinement's documented bound
    assert capacity.tpot_ms is not None
    assert capacity.tpot_ms <= 60.0


def test_a_405b_model_does_not_fit_one_24_gb_card_at_any_precision() -> None:
    precisions = [Precision.BF16, Precision.FP8, Precision.AWQ_INT4]
    capacities = _capacities(LLAMA_405B, precisions, ttft=None, tpot=None)
    for card in ("l4", "rtx-4090"):
        for precision in precisions:
            capacity = capacities[(card, 1, precision)]
            assert capacity.verdict == RejectReason.DOES_NOT_FIT_MEMORY
            assert capacity.memory_gb > capacity.available_gb
            assert "short by" in capacity.detail


def test_cards_without_an_interconnect_figure_cannot_be_tensor_parallel() -> None:
    capacity = _capacities(LLAMA_70B, [Precision.AWQ_INT4])[("rtx-4090", 2, Precision.AWQ_INT4)]
    assert capacity.verdict == RejectReason.UNSPECIFIED_HARDWARE


def test_a_target_that_one_request_cannot_meet_is_a_latency_miss() -> None:
    capacity = _capacities(LLAMA_8B, [Precision.BF16], tpot=1.0)[("l4", 1, Precision.BF16)]
    assert capacity.verdict == RejectReason.MISSES_LATENCY_TARGET
    assert "TPOT" in capacity.detail


def test_without_targets_a_replica_runs_as_full_as_memory_and_the_engine_allow() -> None:
    capacity = _capacities(LLAMA_8B, [Precision.FP8], ttft=None, tpot=None)[("h100-sxm", 1, Precision.FP8)]
    config = InferenceConfig(weight_precision=Precision.FP8, input_tokens=1000, output_tokens=250)
    memory_limit = estimate_inference(LLAMA_8B, H100, config).memory.max_concurrency
    limit = min(memory_limit, max_batch(ServingEngine.VLLM, H100))
    assert max_batch(ServingEngine.VLLM, H100) == 1024
    assert limit * 0.94 <= capacity.concurrency <= limit
    a100 = AcceleratorSpec(
        name="a100-sxm-80gb",
        memory_gb=80,
        memory_bandwidth_gb_s=2039,
        family="ampere",
        memory_kind=H100.memory_kind,
    )
    assert max_batch(ServingEngine.VLLM, a100) == 256
    assert max_batch(ServingEngine.VLLM, L4) == 256


def test_a_capacity_on_a_family_never_measured_serving_says_so() -> None:
    """The serving fit has rows of NVIDIA's Hopper, Ampere, Ada and Blackwell parts and none of
    AMD's: the MI300X row (inf124) runs AMD's own vLLM fork, which has no engine profile. A
    capacity estimated on an AMD part says its factors were never checked on one; an H100's
    does not."""
    assert {"hopper", "ampere", "ada", "blackwell"} <= set(DEFAULT_EFFICIENCY.serving_families)
    assert "cdna3" not in DEFAULT_EFFICIENCY.serving_families
    amd_like = dataclasses.replace(H100, name="an AMD-family part", family="cdna3")
    capacities = serving_capacities(
        LLAMA_70B,
        [("h100-sxm", H100), ("amd-part", amd_like)],
        [Precision.FP8],
        engine=ServingEngine.VLLM,
        input_tokens=1000,
        output_tokens=250,
        ttft_ms=2000.0,
        tpot_ms=60.0,
    )
    unmeasured = "no serving measurement of a cdna3 accelerator is in the fit"
    assert unmeasured in capacities[("amd-part", 1, Precision.FP8)].efficiency_source
    assert "no serving measurement" not in capacities[("h100-sxm", 1, Precision.FP8)].efficiency_source
    # the same figures otherwise: only what is said about them differs
    assert capacities[("amd-part", 1, Precision.FP8)].requests_per_s == pytest.approx(
        capacities[("h100-sxm", 1, Precision.FP8)].requests_per_s
    )
