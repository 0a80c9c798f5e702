"""Properties that must hold for any model, accelerator and workload (hypothesis).

The bounds are computed here from first principles (bytes an accelerator must move, FLOPs it must
do), not read back from the engine's own intermediate values.
"""

from __future__ import annotations

import dataclasses
import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.unit.test_engine_values import perfect_efficiency
from wheretorun.engine import (
    DEFAULT_EFFICIENCY,
    AcceleratorSpec,
    EfficiencyTable,
    InferenceConfig,
    MemoryKind,
    ModelArchitecture,
    Precision,
    ServingEngine,
    TrainingConfig,
    TrainingMethod,
    estimate_inference,
    estimate_training,
    kv_cache_bytes_per_sequence,
    weights_bytes,
)
from wheretorun.engine.precision import compute_dtype

TABLES = st.sampled_from([DEFAULT_EFFICIENCY, perfect_efficiency()])
WEIGHT_PRECISIONS = st.sampled_from(
    [
        Precision.FP32,
        Precision.BF16,
        Precision.FP8,
        Precision.INT8,
        Precision.AWQ_INT4,
        Precision.GGUF_Q4_K_M,
        Precision.GGUF_Q8_0,
        Precision.NF4,
        Precision.FP4,
    ]
)
KV_PRECISIONS = st.sampled_from([Precision.BF16, Precision.FP8, Precision.FP32])


@st.composite
def models(draw: st.DrawFn) -> ModelArchitecture:
    kv_heads = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4, 8]))
    experts = draw(st.sampled_from([1, 1, 8, 16, 64]))
    layers = draw(st.integers(1, 96))
    windowed = draw(st.integers(0, layers))
    return ModelArchitecture(
        name="random",
        layers=layers,
        hidden_size=draw(st.sampled_from([256, 512, 1024, 2048, 4096, 8192])),
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=draw(st.sampled_from([32, 64, 128, 256])),
        vocab_size=draw(st.integers(256, 256_000)),
        max_context=1 << 20,
        intermediate_size=draw(st.integers(64, 32_768)),
        experts=experts,
        experts_per_token=draw(st.integers(1, min(experts, 8))),
        gated_mlp=draw(st.booleans()),
        tied_embeddings=draw(st.booleans()),
        sliding_window=draw(st.integers(16, 8192)) if windowed else None,
        sliding_window_layers=windowed,
    )


@st.composite
def accelerators(draw: st.DrawFn) -> AcceleratorSpec:
    bf16 = draw(st.floats(5, 5000))
    return AcceleratorSpec(
        name="random",
        memory_gb=draw(st.floats(4, 512)),
        memory_bandwidth_gb_s=draw(st.floats(50, 10_000)),
        family=draw(st.sampled_from(["hopper", "ampere", "ada", "unknown"])),
        memory_kind=draw(st.sampled_from(list(MemoryKind))),
        bf16_tflops=bf16,
        fp8_tflops=draw(st.none() | st.floats(bf16, 2 * bf16)),
        int8_tops=draw(st.none() | st.floats(bf16, 2 * bf16)),
        fp32_tflops=draw(st.floats(1, 200)),
        interconnect_gb_s=draw(st.floats(10, 1000)),
    )


@st.composite
def inference_configs(draw: st.DrawFn, model: ModelArchitecture) -> InferenceConfig:
    tp = draw(st.sampled_from([d for d in (1, 2, 4, 8) if model.attention_heads % d == 0]))
    return InferenceConfig(
        accelerator_count=tp,
        weight_precision=draw(WEIGHT_PRECISIONS),
        kv_cache_precision=draw(KV_PRECISIONS),
        engine=draw(st.sampled_from(list(ServingEngine))),
        input_tokens=draw(st.integers(1, 32_768)),
        output_tokens=draw(st.integers(1, 4096)),
        concurrency=draw(st.integers(1, 512)),
    )


def _active_weight_bytes(model: ModelArchitecture, precision: Precision) -> float:
    """Bytes a token must read at least: its share of the stored weights (all of a dense model)."""
    return weights_bytes(model, precision) * model.active_params / model.total_params


@settings(max_examples=150, deadline=None)
@given(data=st.data(), model=models(), accelerator=accelerators(), table=TABLES)
def test_decode_never_beats_the_memory_bandwidth_roofline(
    data: st.DataObject, model: ModelArchitecture, accelerator: AcceleratorSpec, table: EfficiencyTable
) -> None:
    config = data.draw(inference_configs(model))
    performance = estimate_inference(model, accelerator, config, table).performance
    mean_context = config.input_tokens + config.output_tokens / 2
    kv = float(kv_cache_bytes_per_sequence(model, config.kv_cache_precision, mean_context))
    step_bytes = _active_weight_bytes(model, config.weight_precision) + config.concurrency * kv
    bound = config.tp * accelerator.memory_bandwidth_gb_s * 1e9 / step_bytes
    assert performance.output_tokens_per_s_per_sequence <= bound * (1 + 1e-9)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), model=models(), accelerator=accelerators(), table=TABLES)
def test_prefill_never_beats_the_compute_roofline(
    data: st.DataObject, model: ModelArchitecture, accelerator: AcceleratorSpec, table: EfficiencyTable
) -> None:
    config = data.draw(inference_configs(model))
    prefill_ms = estimate_inference(model, accelerator, config, table).performance.prefill_ms
    peak = accelerator.peak_tflops(compute_dtype(config.weight_precision))
    assert prefill_ms is not None
    assert peak is not None
    # Every prompt token passes through every block's active matmuls.
    embeddings = model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2)
    flops = 2 * (model.active_params - embeddings) * config.input_tokens
    fastest_ms = flops / (config.tp * peak * 1e12) * 1e3
    assert prefill_ms >= fastest_ms * (1 - 1e-9)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), model=models(), accelerator=accelerators(), extra=st.integers(1, 1000))
def test_more_concurrency_never_lowers_memory(
    data: st.DataObject, model: ModelArchitecture, accelerator: AcceleratorSpec, extra: int
) -> None:
    config = data.draw(inference_configs(model))
    more = dataclasses.replace(config, concurrency=config.concurrency + extra)
    before = estimate_inference(model, accelerator, config).memory
    after = estimate_inference(model, accelerator, more).memory
    assert after.total_gb >= before.total_gb
    assert after.kv_cache_gb >= before.kv_cache_gb


TRAINING_METHODS = st.sampled_from(list(TrainingMethod))


@st.composite
def training_configs(draw: st.DrawFn) -> TrainingConfig:
    return TrainingConfig(
        accelerator_count=draw(st.integers(1, 4096)),
        method=draw(TRAINING_METHODS),
        precision=draw(st.sampled_from([Precision.BF16, Precision.FP8, Precision.FP32])),
        tokens=draw(st.floats(1e6, 1e13)),
        sequence_length=draw(st.integers(1, 32_768)),
        micro_batch_size=draw(st.integers(1, 64)),
        zero_stage=draw(st.integers(0, 3)),
        activation_checkpointing=draw(st.booleans()),
        lora_rank=draw(st.integers(1, 256)),
        internode_bandwidth_gb_s=draw(st.none() | st.floats(0.1, 400)),
    )


@settings(max_examples=150, deadline=None)
@given(model=models(), accelerator=accelerators(), config=training_configs(), factor=st.floats(1.0, 100.0))
def test_more_tokens_never_lower_training_hours(
    model: ModelArchitecture, accelerator: AcceleratorSpec, config: TrainingConfig, factor: float
) -> None:
    more = dataclasses.replace(config, tokens=config.tokens * factor)
    fewer_hours = estimate_training(model, accelerator, config).accelerator_hours
    more_hours = estimate_training(model, accelerator, more).accelerator_hours
    assert fewer_hours is not None
    assert more_hours is not None
    assert more_hours >= fewer_hours * (1 - 1e-12)


@settings(max_examples=150, deadline=None)
@given(model=models(), accelerator=accelerators(), config=training_configs(), extra=st.integers(1, 4096))
def test_more_accelerators_never_raise_memory_per_accelerator(
    model: ModelArchitecture, accelerator: AcceleratorSpec, config: TrainingConfig, extra: int
) -> None:
    more = dataclasses.replace(config, accelerator_count=config.accelerator_count + extra)
    before = estimate_training(model, accelerator, config).memory_per_accelerator_gb
    after = estimate_training(model, accelerator, more).memory_per_accelerator_gb
    assert after <= before * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(model=models(), accelerator=accelerators(), config=training_configs())
def test_training_utilisation_is_a_fraction_and_min_accelerators_fit(
    model: ModelArchitecture, accelerator: AcceleratorSpec, config: TrainingConfig
) -> None:
    estimate = estimate_training(model, accelerator, config)
    assert estimate.mfu is not None
    assert estimate.hfu is not None
    assert 0 < estimate.mfu <= estimate.hfu <= 1
    if estimate.min_accelerators is not None:
        assume(estimate.min_accelerators <= 1 << 20)
        fitted = dataclasses.replace(config, accelerator_count=estimate.min_accelerators)
        assert estimate_training(model, accelerator, fitted).fits
        if estimate.min_accelerators > 1:
            fewer = dataclasses.replace(config, accelerator_count=estimate.min_accelerators - 1)
            assert not estimate_training(model, accelerator, fewer).fits
    assert math.isfinite(estimate.total_flops)
