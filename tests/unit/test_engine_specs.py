"""Impossible inputs raise InvalidSpec naming the offending field; derived counts match model cards."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_engine_values import A100_SXM_80, H100_SXM, LLAMA2_7B, LLAMA3_70B, MIXTRAL_8X7B
from wheretorun.engine import (
    AcceleratorSpec,
    InferenceConfig,
    InvalidSpec,
    MemoryKind,
    ModelArchitecture,
    Precision,
    TrainingConfig,
    estimate_inference,
    estimate_training,
    parse_precision,
)


def _model(**changes: object) -> ModelArchitecture:
    fields = {f.name: getattr(LLAMA2_7B, f.name) for f in dataclasses.fields(LLAMA2_7B)}
    fields["total_params_b"] = None
    fields.update(changes)
    return ModelArchitecture(**fields)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"layers": 0}, "layers"),
        ({"hidden_size": 0}, "hidden_size"),
        ({"attention_heads": 32, "kv_heads": 5}, "kv_heads"),
        ({"attention_heads": 8, "kv_heads": 16}, "kv_heads"),
        ({"head_dim": 0}, "head_dim"),
        ({"vocab_size": -1}, "vocab_size"),
        ({"total_params_b": -7.0}, "total_params_b"),
        (
            {"experts": 8, "experts_per_token": 9, "total_params_b": 40.0, "active_params_b": 10.0},
            "experts_per_token",
        ),
        ({"total_params_b": 7.0, "active_params_b": 8.0}, "active_params_b"),
        ({"sliding_window_layers": 33}, "sliding_window_layers"),
        ({"sliding_window_layers": 4, "sliding_window": None}, "sliding_window"),
    ],
)
def test_impossible_model_names_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        _model(**changes)
    assert error.value.field == field


def test_moe_without_derivable_active_count_is_rejected() -> None:
    with pytest.raises(InvalidSpec) as error:
        _model(intermediate_size=None, total_params_b=40.0, experts=8, experts_per_token=2)
    assert error.value.field == "active_params_b"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"memory_gb": 0}, "memory_gb"),
        ({"memory_bandwidth_gb_s": -1}, "memory_bandwidth_gb_s"),
        ({"bf16_tflops": 0}, "bf16_tflops"),
        ({"usable_memory_fraction": 1.5}, "usable_memory_fraction"),
    ],
)
def test_impossible_accelerator_names_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        dataclasses.replace(H100_SXM, **changes)  # type: ignore[arg-type]
    assert error.value.field == field


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"input_tokens": -5}, "input_tokens"),
        ({"output_tokens": 0}, "output_tokens"),
        ({"concurrency": 0}, "concurrency"),
        ({"accelerator_count": 3, "tensor_parallel": 2}, "accelerator_count"),
        ({"kv_cache_precision": Precision.GGUF_Q4_0}, "kv_cache_precision"),
        ({"ttft_target_ms": -1.0}, "ttft_target_ms"),
    ],
)
def test_impossible_inference_config_names_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        InferenceConfig(**changes)  # type: ignore[arg-type]
    assert error.value.field == field


def test_tensor_parallel_degree_must_divide_the_heads() -> None:
    # Llama-2-7B has 32 heads; 3-way tensor parallelism cannot split them.
    with pytest.raises(InvalidSpec) as error:
        estimate_inference(LLAMA2_7B, H100_SXM, InferenceConfig(accelerator_count=3))
    assert error.value.field == "tensor_parallel"


def test_context_beyond_the_model_is_rejected() -> None:
    config = InferenceConfig(input_tokens=4000, output_tokens=200)  # Llama-2: 4096-token context
    with pytest.raises(InvalidSpec) as error:
        estimate_inference(LLAMA2_7B, H100_SXM, config)
    assert error.value.field == "input_tokens"


def test_tensor_parallel_needs_an_interconnect_figure() -> None:
    no_link = dataclasses.replace(A100_SXM_80, interconnect_gb_s=None)
    with pytest.raises(InvalidSpec) as error:
        estimate_inference(LLAMA3_70B, no_link, InferenceConfig(accelerator_count=2))
    assert error.value.field == "accelerator.interconnect_gb_s"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"tokens": -1e9}, "tokens"),
        ({"zero_stage": 4}, "zero_stage"),
        ({"precision": Precision.GGUF_Q4_K_M}, "precision"),
        ({"accelerator_count": 6, "tensor_parallel": 4}, "tensor_parallel"),
    ],
)
def test_impossible_training_config_names_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        TrainingConfig(**changes)  # type: ignore[arg-type]
    assert error.value.field == field


def test_training_tensor_parallel_must_divide_heads() -> None:
    # Mixtral has 32 heads; 8 accelerators split 8 x 1 work, 8 x 3 (tp=3) would not.
    with pytest.raises(InvalidSpec) as error:
        estimate_training(MIXTRAL_8X7B, H100_SXM, TrainingConfig(accelerator_count=24, tensor_parallel=3))
    assert error.value.field == "tensor_parallel"


def test_unknown_precision_string_names_the_field() -> None:
    with pytest.raises(InvalidSpec) as error:
        parse_precision("fp7", "weight_precision")
    assert error.value.field == "weight_precision"
    assert parse_precision(" GGUF-Q4_K_M ", "weight_precision") is Precision.GGUF_Q4_K_M


def test_llama2_7b_shapes_give_the_published_parameter_count() -> None:
    # llama.cpp reports 6.74 B parameters for LLaMA-7B (calibration models.csv note, PR #2917).
    assert LLAMA2_7B.total_params_b == pytest.approx(6.74, abs=0.005)


def test_llama3_70b_shapes_give_70_6b() -> None:
    # Meta's card rounds to 70B; the BF16 checkpoint is 130.9 GiB = 140.55 GB (memory_footprints
    # mem005), i.e. 70.3B parameters at 2 bytes, so the count lies between 70.0 and 70.6B.
    assert 70.0 < LLAMA3_70B.total_params_b < 70.6  # type: ignore[operator]


def test_mixtral_counts_match_the_model_card() -> None:
    # "46.7B total ... 12.9B per token" (Azure/azureml-assets Mixtral description, via models.csv).
    assert MIXTRAL_8X7B.total_params_b == pytest.approx(46.7, abs=0.05)
    assert MIXTRAL_8X7B.active_params_b == pytest.approx(12.9, abs=0.05)


def test_peak_falls_back_to_a_slower_unit_never_a_faster_one() -> None:
    from wheretorun.engine.precision import ComputeDtype

    a100 = A100_SXM_80  # no FP8 units: gpus.csv leaves fp8_dense_tflops empty
    assert a100.peak_tflops(ComputeDtype.FP8) == 312
    assert H100_SXM.peak_tflops(ComputeDtype.FP4) == 1979
    bare = AcceleratorSpec(
        name="x", memory_gb=16, memory_bandwidth_gb_s=100, family="f", memory_kind=MemoryKind.GDDR
    )
    assert bare.peak_tflops(ComputeDtype.BF16) is None
