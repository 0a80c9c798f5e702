"""Inference timing: hand-computed roofline cases, MoE expert reads, tensor parallelism,
speculative decoding, CPU offload and capacity under targets."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_engine_values import (
    A100_SXM_80,
    H100_SXM,
    LLAMA2_7B,
    LLAMA3_70B,
    MIXTRAL_8X7B,
    RTX_4090,
    perfect_efficiency,
)
from wheretorun.engine import (
    Bound,
    CpuOffload,
    InferenceConfig,
    Precision,
    ServingEngine,
    SpeculativeDecoding,
    estimate_inference,
)

IDEAL = perfect_efficiency()


def test_batch1_decode_on_the_ideal_roofline_is_bandwidth_over_bytes() -> None:
    # Llama-2-7B fp16 on one A100 SXM (2039 GB/s): each token reads 13.476 GB of weights plus the
    # KV cache at the current context. Prompt 1 token, 999 generated: mean context 500.5 tokens
    # x 524,288 B = 0.2624 GB. 2039 / (13.4768 + 0.2624) = 148.4 tokens/s.
    config = InferenceConfig(weight_precision=Precision.FP16, input_tokens=1, output_tokens=999)
    estimate = estimate_inference(LLAMA2_7B, A100_SXM_80, config, IDEAL)
    assert estimate.performance.output_tokens_per_s_per_sequence == pytest.approx(148.4, rel=0.002)
    assert estimate.performance.bound == Bound.MEMORY_BANDWIDTH


def test_kv_read_uses_the_current_context_not_the_final_one() -> None:
    # Same model, 3000 tokens generated after a 1-token prompt: the mean context is 1500.5, so a
    # step reads 13.4768 + 1500.5 x 524,288 / 1e9 = 14.2635 GB -> 142.95 tok/s. Charging the
    # final 3001-token cache every step (llm-analysis' simplification) would give 136.0 tok/s.
    config = InferenceConfig(weight_precision=Precision.FP16, input_tokens=1, output_tokens=3000)
    rate = estimate_inference(
        LLAMA2_7B, A100_SXM_80, config, IDEAL
    ).performance.output_tokens_per_s_per_sequence
    assert rate == pytest.approx(142.95, rel=0.002)


def test_prefill_is_compute_bound_and_on_the_ideal_flops_roofline() -> None:
    # 2048-token prompt, Llama-2-7B fp16 on A100 (312 TFLOPS): the 32 blocks hold 6.476B
    # parameters (6.738B - 2 x 32000 x 4096 embedding and head): 2 x 6.476B x 2048 = 26.53 TFLOP;
    # the LM head runs for the last position only (0.26 GFLOP); causal attention adds
    # 4 x 4096 x 32 layers x 2048 x 2049 / 2 = 1.10 TFLOP. 27.63 TFLOP / 312 TFLOPS = 88.5 ms.
    config = InferenceConfig(weight_precision=Precision.FP16, input_tokens=2048, output_tokens=1)
    prefill_ms = estimate_inference(LLAMA2_7B, A100_SXM_80, config, IDEAL).performance.prefill_ms
    assert prefill_ms == pytest.approx(88.5, rel=0.003)


LLAMA3_8B = dataclasses.replace(
    LLAMA3_70B,
    name="Llama-3-8B",
    layers=32,
    hidden_size=4096,
    attention_heads=32,
    intermediate_size=14336,
    total_params_b=None,
)


def test_large_batch_decode_becomes_compute_bound() -> None:
    # Llama-3-8B FP8 on one H100, batch 512 at ~24 tokens of context: 8.03 GB of weights +
    # 512 x 24 x 131,072 B = 1.6 GB of KV -> 2.9 ms at 3350 GB/s; 2 x 7.5B x 512 = 7.7 TFLOP of
    # matmuls -> 3.9 ms at 1979 TFLOPS. Compute wins.
    config = InferenceConfig(
        weight_precision=Precision.FP8, input_tokens=16, output_tokens=16, concurrency=512
    )
    assert estimate_inference(LLAMA3_8B, H100_SXM, config, IDEAL).performance.bound == Bound.COMPUTE


def test_tensor_parallel_all_reduces_can_dominate_at_large_batch() -> None:
    # Llama-3-70B FP8 on 8 H100 at batch 1024: each of the 2 x 80 all-reduces moves 1024 x 8192 x
    # 2 B = 16.8 MB; a ring moves 2 x 7/8 of it over 450 GB/s: 65 us, 10.4 ms per step, more than
    # the 9.0 ms of matmuls (17.8 TFLOP per GPU) and the 2.9 ms of memory traffic.
    config = InferenceConfig(
        accelerator_count=8,
        weight_precision=Precision.FP8,
        input_tokens=16,
        output_tokens=16,
        concurrency=1024,
    )
    performance = estimate_inference(LLAMA3_70B, H100_SXM, config, IDEAL).performance
    assert performance.bound == Bound.INTERCONNECT
    assert performance.decode_step_ms == pytest.approx(8.99 + 10.44, rel=0.01)


def test_mha_kv_cache_keeps_a_large_batch_memory_bound() -> None:
    # Llama-2-7B has 32 KV heads (no GQA): batch 2048 at ~96 tokens reads 2048 x 96 x 524,288 B
    # = 103 GB of KV per step (31 ms at 3350 GB/s) against 27 TFLOP of matmuls (14 ms at 1979).
    config = InferenceConfig(
        weight_precision=Precision.FP8, input_tokens=64, output_tokens=64, concurrency=2048
    )
    assert estimate_inference(LLAMA2_7B, H100_SXM, config, IDEAL).performance.bound == Bound.MEMORY_BANDWIDTH


def test_moe_reads_top_k_experts_at_batch_1_and_nearly_all_at_batch_64() -> None:
    # At batch 1 a Mixtral token reads shared weights + 2 experts = 12.9B parameters; at batch 64
    # the expected distinct experts are 8 (1 - (6/8)^64) ~ 8, i.e. nearly all 46.7B.
    batch1 = InferenceConfig(
        weight_precision=Precision.BF16, input_tokens=1, output_tokens=2, accelerator_count=2
    )
    step1 = estimate_inference(MIXTRAL_8X7B, H100_SXM, batch1, IDEAL).performance.decode_step_ms
    assert step1 == pytest.approx(12.88e9 * 2 / 2 / 3350e9 * 1e3, rel=0.01)
    batch64 = dataclasses.replace(batch1, concurrency=64)
    step64 = estimate_inference(MIXTRAL_8X7B, H100_SXM, batch64, IDEAL).performance.decode_step_ms
    assert step64 == pytest.approx(46.70e9 * 2 / 2 / 3350e9 * 1e3, rel=0.01)


def test_tensor_parallelism_splits_the_bytes_and_adds_all_reduces() -> None:
    one = InferenceConfig(weight_precision=Precision.FP8, input_tokens=128, output_tokens=128)
    two = dataclasses.replace(one, accelerator_count=2)
    single = estimate_inference(LLAMA3_70B, H100_SXM, one).performance
    split = estimate_inference(LLAMA3_70B, H100_SXM, two).performance
    assert split.decode_step_ms < single.decode_step_ms
    # Halving the bytes cannot more than halve the step: all-reduces and fixed overhead remain.
    assert split.decode_step_ms > single.decode_step_ms / 2


def test_replicas_multiply_throughput_not_latency() -> None:
    one = InferenceConfig(weight_precision=Precision.FP8, concurrency=8, input_tokens=512, output_tokens=256)
    four = dataclasses.replace(one, accelerator_count=4, tensor_parallel=1, concurrency=32)
    a = estimate_inference(LLAMA2_7B, H100_SXM, one)
    b = estimate_inference(LLAMA2_7B, H100_SXM, four)
    assert b.replicas == 4
    assert b.performance.tpot_ms == pytest.approx(a.performance.tpot_ms)
    assert b.performance.output_tokens_per_s == pytest.approx(4 * a.performance.output_tokens_per_s)


def test_speculative_decoding_expected_tokens() -> None:
    # alpha = 0.8, gamma = 4: (1 - 0.8^5) / (1 - 0.8) = 3.3616 tokens per verify pass. With a draft
    # that costs nothing, TPOT must be the verify pass / 3.3616.
    tiny_draft = dataclasses.replace(
        LLAMA2_7B,
        name="draft",
        layers=1,
        hidden_size=64,
        attention_heads=32,
        head_dim=2,
        intermediate_size=64,
        vocab_size=32,
        total_params_b=None,
    )
    spec = SpeculativeDecoding(draft_model=tiny_draft, draft_tokens=4, acceptance_rate=0.8)
    base = InferenceConfig(weight_precision=Precision.FP16, input_tokens=1, output_tokens=999)
    plain = estimate_inference(LLAMA2_7B, A100_SXM_80, base, IDEAL).performance.tpot_ms
    fast = estimate_inference(LLAMA2_7B, A100_SXM_80, dataclasses.replace(base, speculative=spec), IDEAL)
    # Verifying 5 tokens reads the same weights as decoding 1 (memory-bound), so the ratio is ~3.36.
    assert plain / fast.performance.tpot_ms == pytest.approx(3.3616, rel=0.01)


def test_speculation_with_zero_acceptance_is_slower() -> None:
    spec = SpeculativeDecoding(draft_model=LLAMA2_7B, draft_tokens=4, acceptance_rate=0.0)
    base = InferenceConfig(weight_precision=Precision.FP8, input_tokens=128, output_tokens=128)
    plain = estimate_inference(LLAMA3_70B, H100_SXM, base).performance.tpot_ms
    slow = estimate_inference(
        LLAMA3_70B, H100_SXM, dataclasses.replace(base, speculative=spec)
    ).performance.tpot_ms
    assert slow > plain


def test_cpu_offload_runs_what_does_not_fit_at_host_bandwidth() -> None:
    # Llama-3-70B Q4_K_M (42.5 GB) on a 24 GB RTX 4090 with 60 GB/s host RAM: about half the
    # layers live in host RAM, so a token takes at least (host bytes) / 60 GB/s.
    config = InferenceConfig(
        weight_precision=Precision.GGUF_Q4_K_M,
        engine=ServingEngine.LLAMA_CPP,
        input_tokens=128,
        output_tokens=128,
        cpu_offload=CpuOffload(host_memory_bandwidth_gb_s=60.0),
    )
    estimate = estimate_inference(LLAMA3_70B, RTX_4090, config, IDEAL)
    assert estimate.memory.fits
    assert 15 < estimate.memory.offloaded_gb < 25
    floor_ms = estimate.memory.offloaded_gb / 60.0 * 1e3
    assert estimate.performance.decode_step_ms >= floor_ms
    without = dataclasses.replace(config, cpu_offload=None)
    assert not estimate_inference(LLAMA3_70B, RTX_4090, without, IDEAL).memory.fits


def test_capacity_meets_both_targets_and_tighter_targets_lower_it() -> None:
    loose = InferenceConfig(
        accelerator_count=2,
        weight_precision=Precision.FP8,
        input_tokens=1000,
        output_tokens=200,
        ttft_target_ms=2000,
        tpot_target_ms=60,
        engine=ServingEngine.TENSORRT_LLM,
    )
    tight = dataclasses.replace(loose, tpot_target_ms=30)
    wide = estimate_inference(LLAMA3_70B, H100_SXM, loose).max_request_rate
    narrow = estimate_inference(LLAMA3_70B, H100_SXM, tight).max_request_rate
    assert wide is not None
    assert narrow is not None
    assert wide.tpot_ms <= 60
    assert wide.ttft_ms <= 2000
    assert narrow.tpot_ms <= 30
    assert narrow.requests_per_s < wide.requests_per_s
    # Little's law: rate = concurrency / (TTFT + output x TPOT).
    in_system_s = (wide.ttft_ms + 200 * wide.tpot_ms) / 1e3
    assert wide.requests_per_s == pytest.approx(wide.concurrency / in_system_s)


def test_unreachable_target_gives_no_rate() -> None:
    config = InferenceConfig(
        weight_precision=Precision.FP8, tpot_target_ms=0.01, input_tokens=64, output_tokens=64
    )
    assert estimate_inference(LLAMA2_7B, H100_SXM, config).max_request_rate is None


def test_accelerator_without_compute_peak_has_no_ttft_but_a_decode_speed() -> None:
    apple = dataclasses.replace(RTX_4090, name="no-peak", bf16_tflops=None, fp8_tflops=None)
    config = InferenceConfig(weight_precision=Precision.GGUF_Q4_K_M, engine=ServingEngine.LLAMA_CPP)
    estimate = estimate_inference(LLAMA2_7B, apple, config)
    assert estimate.performance.ttft_ms is None
    assert estimate.performance.output_tokens_per_s_per_sequence > 0
    assert any("compute peak" in note for note in estimate.notes)
