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
from wheretorun.engine.specs import AcceleratorSpec, MemoryKind


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


@pytest.mark.parametrize(
    ("family", "memory_kind", "measured"),
    [
        ("hopper", MemoryKind.HBM, True),
        ("Hopper", MemoryKind.HBM, True),  # a request may spell a family in capitals
        ("cdna3", MemoryKind.HBM, False),  # AMD: the one MI300X row runs a vLLM fork with no profile
        ("blackwell", MemoryKind.GDDR, False),  # Blackwell is measured on B200's HBM only
        ("ampere", MemoryKind.UNIFIED, False),  # Jetson's memory: no row
    ],
)
def test_a_capacity_on_a_family_and_memory_never_measured_serving_says_so(
    family: str, memory_kind: MemoryKind, measured: bool
) -> None:
    """The serving fit has rows of NVIDIA Ampere (HBM, GDDR), Hopper (HBM), Ada (GDDR),
    Blackwell (HBM) and Apple M2 (unified memory) parts, and none of AMD's. A capacity estimated
    on a family and memory kind never measured says its factors were never checked on one; the
    figures themselves are the same."""
    assert {"hopper/hbm", "ampere/hbm", "ada/gddr", "blackwell/hbm"} <= set(
        DEFAULT_EFFICIENCY.serving_families
    )
    part = dataclasses.replace(H100, name="a part", family=family, memory_kind=memory_kind)
    capacities = serving_capacities(
        LLAMA_70B,
        [("h100-sxm", H100), ("part", part)],
        [Precision.FP8],
        engine=ServingEngine.VLLM,
        input_tokens=1000,
        output_tokens=250,
        ttft_ms=2000.0,
        tpot_ms=60.0,
    )
    source = capacities[("part", 1, Precision.FP8)].efficiency_source
    unmeasured = f"no serving measurement of {family.lower()}/{memory_kind.value} is in the fit"
    assert (unmeasured in source) is not measured, source
    assert "no serving measurement" not in capacities[("h100-sxm", 1, Precision.FP8)].efficiency_source
