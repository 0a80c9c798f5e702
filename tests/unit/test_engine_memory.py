"""Weights and KV-cache sizes against published figures (calibration memory_footprints.csv and
models.csv rows are named in each test)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.unit.test_engine_values import DEEPSEEK_V3, H100_SXM, LLAMA2_7B, LLAMA3_70B, MIXTRAL_8X7B
from wheretorun.engine import (
    DEFAULT_EFFICIENCY,
    InferenceConfig,
    Precision,
    ServingEngine,
    estimate_inference,
    kv_cache_bytes_per_sequence,
    kv_cache_bytes_per_token,
    weights_bytes,
)
from wheretorun.engine.inference_estimate import build_deployment
from wheretorun.engine.roofline import decode_pass

GIB = 2**30

LLAMA2_70B = dataclasses.replace(LLAMA3_70B, name="Llama-2-70B", vocab_size=32000, total_params_b=None)


def test_llama2_7b_fp16_weights() -> None:
    # 6.74B parameters x 2 bytes = 13.48 GB; llama-bench prints 12.55 GiB = 13.48 GB (mem013).
    assert weights_bytes(LLAMA2_7B, Precision.FP16) / 1e9 == pytest.approx(13.48, rel=0.005)


def test_fp32_is_four_bytes_and_fp8_one() -> None:
    fp16 = weights_bytes(LLAMA2_7B, Precision.FP16)
    assert weights_bytes(LLAMA2_7B, Precision.FP32) == pytest.approx(2 * fp16)
    assert weights_bytes(LLAMA2_7B, Precision.FP8) == pytest.approx(fp16 / 2)


def test_gguf_q4_k_m_llama3_70b_matches_the_file() -> None:
    # Llama-3-70B Q4_K_M: 39.6 GiB (XiongjieDai perplexity table, mem028). A flat 4.5 bits per
    # weight would give 37.0 GiB: the mixture's Q6_K/Q5_K tensors are what make up the rest.
    assert weights_bytes(LLAMA3_70B, Precision.GGUF_Q4_K_M) / GIB == pytest.approx(39.6, rel=0.01)


def test_gguf_k_mixture_and_legacy_types_for_llama_7b() -> None:
    # llama-bench sizes for LLaMA-7B: Q5_K_M 4.45 GiB (mem016), Q4_1 3.95 GiB (mem018).
    assert weights_bytes(LLAMA2_7B, Precision.GGUF_Q5_K_M) / GIB == pytest.approx(4.45, rel=0.01)
    assert weights_bytes(LLAMA2_7B, Precision.GGUF_Q4_1) / GIB == pytest.approx(3.95, rel=0.01)


@pytest.mark.parametrize(
    ("precision", "published_gb"),
    [
        (Precision.GPTQ_INT4_NO_GROUP, 35.33),  # mem033
        (Precision.GPTQ_INT4_G64, 37.99),  # mem035
        (Precision.GPTQ_INT4_G32, 40.66),  # mem036
    ],
)
def test_gptq_group_size_overhead_llama2_70b(precision: Precision, published_gb: float) -> None:
    # TheBloke/Llama-2-70B-Chat-GPTQ branch sizes: smaller groups carry more fp16 scales.
    assert weights_bytes(LLAMA2_70B, precision) / 1e9 == pytest.approx(published_gb, rel=0.01)


def test_nf4_is_4_127_bits_per_weight_plus_16_bit_embeddings() -> None:
    # QLoRA §3: 4 bits + 0.127 bits of double-quantised constants. Embeddings stay in 16-bit.
    embeddings = 2 * 32000 * 4096
    expected = embeddings * 2 + (LLAMA2_7B.total_params - embeddings) * 4.127 / 8
    assert weights_bytes(LLAMA2_7B, Precision.NF4) == pytest.approx(expected, rel=0.001)


def test_kv_per_token_matches_models_csv() -> None:
    # models.csv kv_cache_bytes_per_token_16bit: 2 x layers x kv_heads x head_dim x 2 bytes.
    assert kv_cache_bytes_per_token(LLAMA3_70B, Precision.BF16) == 2 * 80 * 8 * 128 * 2 == 327_680
    assert kv_cache_bytes_per_token(LLAMA2_7B, Precision.FP16) == 524_288
    # DeepSeek-V3 MLA: 61 layers x (512 + 64) x 2 bytes = 70,272.
    assert kv_cache_bytes_per_token(DEEPSEEK_V3, Precision.BF16) == 70_272
    assert kv_cache_bytes_per_token(LLAMA3_70B, Precision.FP8) == 163_840


def test_sliding_window_caps_the_cache() -> None:
    mistral = dataclasses.replace(
        LLAMA2_7B,
        name="windowed",
        kv_heads=8,
        sliding_window=4096,
        sliding_window_layers=32,
        total_params_b=None,
    )
    at_window = float(kv_cache_bytes_per_sequence(mistral, Precision.BF16, 4096))
    assert float(kv_cache_bytes_per_sequence(mistral, Precision.BF16, 32768)) == at_window
    assert at_window == 4096 * 32 * 2 * 8 * 128 * 2


def test_half_the_layers_windowed_holds_full_plus_window() -> None:
    gemma_like = dataclasses.replace(
        LLAMA2_7B, name="alternating", sliding_window=1000, sliding_window_layers=16, total_params_b=None
    )
    per_token_layer = 2 * 32 * 128 * 2
    expected = per_token_layer * (16 * 8000 + 16 * 1000)
    assert float(kv_cache_bytes_per_sequence(gemma_like, Precision.BF16, 8000)) == expected


def test_deepseek_memory_counts_all_671b_parameters() -> None:
    # Memory holds every expert: 671 GB at FP8; the released FP8 files are 640.1 GiB = 687 GB
    # including the 14B multi-token-prediction module (mem011), i.e. (671 + 14) x ~1 byte.
    assert weights_bytes(DEEPSEEK_V3, Precision.FP8) / 1e9 == pytest.approx(671, rel=0.001)


def test_deepseek_decode_reads_and_computes_only_active_parameters() -> None:
    # One decode step at batch 1 reads the shared weights plus 8 of 256 experts: ~37 GB at FP8,
    # not 671 GB; its FLOPs are 2 x (37B active - 0.93B embedding lookup).
    config = InferenceConfig(
        accelerator_count=8, weight_precision=Precision.FP8, input_tokens=16, output_tokens=16
    )
    serving = DEFAULT_EFFICIENCY.serving_for(config.engine, H100_SXM.memory_kind)
    deployment = build_deployment(DEEPSEEK_V3, H100_SXM, config, serving, DEFAULT_EFFICIENCY)
    step = decode_pass(deployment, np.asarray(1.0), np.asarray(16.0))
    assert float(step.bytes_per_accelerator) * 8 == pytest.approx(37e9, rel=0.01)
    assert float(step.flops_per_accelerator) * 8 == pytest.approx(2 * (37e9 - 129280 * 7168), rel=0.01)


def test_mixtral_weights_hold_all_experts() -> None:
    assert weights_bytes(MIXTRAL_8X7B, Precision.BF16) / 1e9 == pytest.approx(2 * 46.7, rel=0.002)


def test_seventy_b_bf16_does_not_fit_one_h100_and_reports_the_shortfall() -> None:
    # 141.1 GB of weights against vLLM's 0.9 x 80 = 72 GB (gpu_memory_utilization default).
    estimate = estimate_inference(LLAMA3_70B, H100_SXM, InferenceConfig(engine=ServingEngine.VLLM))
    memory = estimate.memory
    assert not memory.fits
    assert memory.available_gb == pytest.approx(72.0)
    assert memory.shortfall_gb == pytest.approx(memory.total_gb - 72.0)
    assert memory.shortfall_gb > 69
    assert memory.max_concurrency == 0


def test_two_h100_at_fp8_fit_and_kv_split_over_replicas() -> None:
    config = InferenceConfig(
        accelerator_count=4,
        tensor_parallel=2,
        weight_precision=Precision.FP8,
        input_tokens=1000,
        output_tokens=1000,
        concurrency=10,
    )
    memory = estimate_inference(LLAMA3_70B, H100_SXM, config).memory
    assert memory.fits
    # Two replicas each hold the full 70.55 GB of FP8 weights.
    assert memory.weights_gb == pytest.approx(2 * 70.55, rel=0.001)
    # 10 sequences of 2000 tokens at 327,680 bytes per token (no replication: 8 KV heads, tp 2).
    assert memory.kv_cache_gb == pytest.approx(10 * 2000 * 327_680 / 1e9)
