"""Precision support and unknown compute in the engine: a candidate never runs a format its
hardware cannot, and an accelerator without a compute peak is never sized from decode alone.

The specs are the catalog's figures (calibration gpus.csv T4 and V100 rows: 16 GB / 300 GB/s /
65 FP16 TFLOPS, 32 GB / 900 GB/s / 125 FP16 TFLOPS); the support sets are the `turing` and `volta`
rows of wheretorun/pricing/data/precision_support.csv (vLLM's supported-hardware table).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.recommend_catalog import LLAMA_8B
from wheretorun.engine import (
    AcceleratorSpec,
    InferenceConfig,
    InvalidSpec,
    Precision,
    PrecisionSupport,
    TrainingConfig,
    TrainingMethod,
    estimate_inference,
    estimate_training,
    parse_precision_list,
)
from wheretorun.engine.capacity import serving_capacities
from wheretorun.engine.config import ServingEngine
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.specs import MemoryKind

TURING = PrecisionSupport(
    family="turing",
    native=parse_precision_list("fp32;fp16;int8", "native"),
    served=parse_precision_list("fp32;fp16;int8;int4;gptq;awq-int4;nf4;gguf", "served"),
)
VOLTA = PrecisionSupport(
    family="volta",
    native=parse_precision_list("fp32;fp16", "native"),
    served=parse_precision_list("fp32;fp16;gptq;nf4;gguf", "served"),
)
T4 = AcceleratorSpec(
    name="t4",
    memory_gb=16,
    memory_bandwidth_gb_s=300,
    family="turing",
    memory_kind=MemoryKind.GDDR,
    bf16_tflops=65,
    int8_tops=130,
    fp32_tflops=8.1,
    tdp_w=70,
    precision_support=TURING,
)
V100 = AcceleratorSpec(
    name="v100-sxm2-32gb",
    memory_gb=32,
    memory_bandwidth_gb_s=900,
    family="volta",
    memory_kind=MemoryKind.HBM,
    bf16_tflops=125,
    fp32_tflops=15.7,
    tdp_w=300,
    interconnect_gb_s=150,
    precision_support=VOLTA,
)
SLOTS = (Precision.BF16, Precision.FP8, Precision.INT8, Precision.AWQ_INT4)


def _capacities(
    spec: AcceleratorSpec, ttft_ms: float | None = None
) -> dict[tuple[str, int, Precision], object]:
    return dict(
        serving_capacities(
            LLAMA_8B,
            [(spec.name, spec)],
            SLOTS,
            engine=ServingEngine.VLLM,
            input_tokens=1000,
            output_tokens=250,
            ttft_ms=ttft_ms,
            tpot_ms=None,
        )
    )


def test_group_names_expand_and_unknown_names_are_refused() -> None:
    assert Precision.GPTQ_INT4_G32 in parse_precision_list("gptq", "served")
    assert Precision.GGUF_Q4_K_M in parse_precision_list("fp16; gguf", "served")
    assert parse_precision_list("", "served") == frozenset()
    with pytest.raises(InvalidSpec) as caught:
        parse_precision_list("fp16;fp7", "served")
    assert caught.value.field == "served"


def test_a_chip_without_bf16_serves_fp16_and_trains_in_fp16() -> None:
    assert TURING.served_instead(Precision.BF16) == Precision.FP16
    assert VOLTA.trained_instead(Precision.BF16) == Precision.FP16
    assert TURING.served_instead(Precision.FP8) is None
    assert VOLTA.served_instead(Precision.AWQ_INT4) == Precision.GPTQ_INT4
    assert TURING.served_instead(Precision.AWQ_INT4) == Precision.AWQ_INT4


def test_fp8_on_a_t4_is_a_422_style_error_naming_weight_precision() -> None:
    config = InferenceConfig(accelerator_count=1, weight_precision=Precision.FP8)
    with pytest.raises(InvalidSpec) as caught:
        estimate_inference(LLAMA_8B, T4, config)
    assert caught.value.field == "weight_precision"
    assert "turing" in caught.value.reason
    assert "fp8" in caught.value.reason
    # the same request in a format the T4 runs is answered
    ok = estimate_inference(LLAMA_8B, T4, dataclasses.replace(config, weight_precision=Precision.INT8))
    assert ok.performance.ttft_ms is not None


def test_bf16_training_on_a_v100_names_precision_and_fp16_is_accepted() -> None:
    config = TrainingConfig(
        accelerator_count=8, method=TrainingMethod.LORA, precision=Precision.BF16, tokens=1e8
    )
    with pytest.raises(InvalidSpec) as caught:
        estimate_training(LLAMA_8B, V100, config)
    assert caught.value.field == "precision"
    fp16 = estimate_training(LLAMA_8B, V100, dataclasses.replace(config, precision=Precision.FP16))
    assert fp16.accelerator_hours is not None
    assert fp16.accelerator_hours > 0


def test_capacity_runs_the_bf16_slot_as_fp16_and_refuses_fp8_on_a_t4() -> None:
    capacities = _capacities(T4)
    sixteen = capacities[("t4", 1, Precision.BF16)]
    assert sixteen.precision == Precision.FP16
    # 8B at 16 bits (16.2 GB) does not fit 16 GB: sized, and refused for memory, not for the format
    assert sixteen.verdict == RejectReason.DOES_NOT_FIT_MEMORY
    assert capacities[("t4", 1, Precision.INT8)].ok
    for size in (1, 2, 4, 8):
        fp8 = capacities[("t4", size, Precision.FP8)]
        assert fp8.verdict == RejectReason.UNSUPPORTED_PRECISION, fp8


def test_capacity_on_a_v100_uses_gptq_for_the_4bit_slot_and_refuses_int8() -> None:
    capacities = _capacities(V100)
    four_bit = capacities[("v100-sxm2-32gb", 1, Precision.AWQ_INT4)]
    assert four_bit.precision == Precision.GPTQ_INT4
    assert capacities[("v100-sxm2-32gb", 1, Precision.INT8)].verdict == RejectReason.UNSUPPORTED_PRECISION


@pytest.mark.parametrize("ttft_ms", [None, 60_000.0])
def test_an_accelerator_without_a_compute_peak_is_unspecified_hardware(ttft_ms: float | None) -> None:
    """Before, without a TTFT target such a part was sized from decode alone (prefill dropped)."""
    no_compute = dataclasses.replace(T4, name="no-peak", bf16_tflops=None, int8_tops=None, fp32_tflops=None)
    capacities = _capacities(no_compute, ttft_ms)
    for (_, _, slot), capacity in capacities.items():
        if slot == Precision.FP8:
            assert capacity.verdict == RejectReason.UNSUPPORTED_PRECISION
        else:
            assert capacity.verdict == RejectReason.UNSPECIFIED_HARDWARE, capacity
            assert capacity.requests_per_s == 0


def test_unstated_support_checks_nothing() -> None:
    unstated = dataclasses.replace(T4, precision_support=None)
    assert unstated.serving_problem(Precision.FP8) is None
    assert unstated.training_problem(Precision.BF16) is None


@given(st.sampled_from(list(Precision)))
def test_served_instead_never_returns_a_format_that_is_not_served(precision: Precision) -> None:
    for support in (TURING, VOLTA):
        chosen = support.served_instead(precision)
        assert chosen is None or support.serves(chosen)
        trained = support.trained_instead(precision)
        assert trained is None or support.computes(trained)
