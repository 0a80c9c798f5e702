"""Training FLOPs, memory per accelerator and fewest accelerators, against the papers' formulas and
published figures."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_engine_values import A100_SXM_80, H100_SXM, LLAMA2_7B, LLAMA3_70B, perfect_efficiency
from wheretorun.engine import (
    ModelArchitecture,
    Precision,
    TrainingConfig,
    TrainingMethod,
    estimate_training,
)
from wheretorun.engine.training_estimate import lora_parameters, training_flops

LLAMA2_MATMUL_PARAMS = 6.738e9 - 32000 * 4096  # the input-embedding lookup is not a matmul

# GPT-3 175B shapes: Brown et al. 2020, arXiv:2005.14165, Table 2.1 (96 layers, d_model 12288,
# 96 heads of 128, 2048 context), 4x MLP, BPE vocabulary of 50257, tied embeddings.
GPT3 = ModelArchitecture(
    name="GPT-3 175B",
    layers=96,
    hidden_size=12288,
    attention_heads=96,
    kv_heads=96,
    head_dim=128,
    vocab_size=50257,
    max_context=2048,
    intermediate_size=4 * 12288,
    gated_mlp=False,
    tied_embeddings=True,
)


def test_full_training_is_6_n_t_plus_attention() -> None:
    # Short sequences make attention negligible: 6 x 6.61B matmul params x 1e9 tokens.
    config = TrainingConfig(tokens=1e9, sequence_length=8)
    model_flops, executed = training_flops(LLAMA2_7B, config)
    assert model_flops == pytest.approx(6 * LLAMA2_MATMUL_PARAMS * 1e9, rel=0.002)
    assert executed == model_flops


def test_recomputation_adds_a_forward_pass() -> None:
    config = TrainingConfig(tokens=1e9, sequence_length=8, activation_checkpointing=True)
    model_flops, executed = training_flops(LLAMA2_7B, config)
    assert executed == pytest.approx(model_flops * 8 / 6, rel=0.001)


def test_lora_skips_weight_gradients_of_frozen_weights() -> None:
    full, _ = training_flops(LLAMA2_7B, TrainingConfig(tokens=1e9, sequence_length=8))
    lora, _ = training_flops(
        LLAMA2_7B, TrainingConfig(tokens=1e9, sequence_length=8, method=TrainingMethod.LORA)
    )
    # 4 N T for the frozen network, plus 6 x (trainable adapters) x T, which is < 1% here.
    assert lora / full == pytest.approx(4 / 6, rel=0.01)


def test_attention_flops_grow_with_sequence_length() -> None:
    # Causal attention adds 3 x 4 x width x layers x (s + 1) / 2 per token: at s = 4096 for
    # Llama-2-7B that is 3 x 4 x 4096 x 32 x 2048.5 = 3.22 GFLOP per token.
    short, _ = training_flops(LLAMA2_7B, TrainingConfig(tokens=1.0, sequence_length=1))
    long, _ = training_flops(LLAMA2_7B, TrainingConfig(tokens=1.0, sequence_length=4096))
    assert long - short == pytest.approx(3 * 4 * 4096 * 32 * (4097 - 2) / 2, rel=0.001)


def test_mixed_precision_adam_is_16_bytes_per_parameter_unsharded() -> None:
    # ZeRO paper: 2 + 2 + 12 = 16 bytes per parameter. Llama-2-7B: 6.738B x 16 = 107.8 GB.
    estimate = estimate_training(LLAMA2_7B, H100_SXM, TrainingConfig(accelerator_count=1, zero_stage=0))
    states = estimate.memory.weights_gb + estimate.memory.gradients_gb + estimate.memory.optimizer_gb
    assert states == pytest.approx(107.8, rel=0.002)
    assert not estimate.fits


@pytest.mark.parametrize(
    ("stage", "expected_gb"),
    [
        # ZeRO Figure 1 with Psi = 6.738B and N = 8 data-parallel ranks.
        (0, 16 * 6.738),
        (1, 4 * 6.738 + 12 * 6.738 / 8),
        (2, 2 * 6.738 + 14 * 6.738 / 8),
        (3, 16 * 6.738 / 8),
    ],
)
def test_zero_stages_shard_what_the_paper_says(stage: int, expected_gb: float) -> None:
    memory = estimate_training(
        LLAMA2_7B, H100_SXM, TrainingConfig(accelerator_count=8, zero_stage=stage)
    ).memory
    assert memory.weights_gb + memory.gradients_gb + memory.optimizer_gb == pytest.approx(
        expected_gb, rel=0.002
    )


def test_65b_full_finetune_needs_more_than_780_gb() -> None:
    # QLoRA paper intro (memory_footprints mem053): regular 16-bit finetuning of LLaMA-65B needs
    # "more than 780 GB of GPU memory". LLaMA-65B: 80 layers, d 8192, 64 heads, MLP 22016.
    llama65 = dataclasses.replace(
        LLAMA3_70B,
        name="LLaMA-65B",
        kv_heads=64,
        vocab_size=32000,
        intermediate_size=22016,
        total_params_b=None,
    )
    estimate = estimate_training(llama65, A100_SXM_80, TrainingConfig(accelerator_count=1, zero_stage=0))
    assert estimate.memory_per_accelerator_gb > 780


def test_gpt3_lora_memory_is_the_frozen_16_bit_weights() -> None:
    # LoRA paper §4.2 (mem055): GPT-3 175B training VRAM "from 1.2TB to 350GB" with LoRA: the
    # frozen fp16 weights are 175B x 2 = 350 GB; adapters and their Adam state are small.
    config = TrainingConfig(
        accelerator_count=1,
        method=TrainingMethod.LORA,
        lora_rank=4,
        zero_stage=0,
        sequence_length=2048,
        activation_checkpointing=True,
    )
    memory = estimate_training(GPT3, A100_SXM_80, config).memory
    assert memory.weights_gb == pytest.approx(350, rel=0.02)
    assert memory.optimizer_gb < 2


def test_qlora_llama2_7b_fits_in_under_10_gb() -> None:
    # torchtune QLoRA tutorial (mem057): "finetune a Llama2-7b model in <10 GB of memory" (the
    # recipe enables activation checkpointing).
    config = TrainingConfig(
        accelerator_count=1,
        method=TrainingMethod.QLORA,
        zero_stage=0,
        lora_rank=8,
        sequence_length=2048,
        activation_checkpointing=True,
    )
    estimate = estimate_training(LLAMA2_7B, A100_SXM_80, config)
    assert estimate.memory_per_accelerator_gb < 10
    # NF4 body (6.476B x 4.127 bits) + 16-bit embeddings (2 x 131M x 2 B) + 16-bit adapters.
    frozen = 6.476e9 * 4.127 / 8 + 2 * 32000 * 4096 * 2
    assert estimate.memory.weights_gb * 1e9 == pytest.approx(
        frozen + 2 * lora_parameters(LLAMA2_7B, 8), rel=0.001
    )


def test_lora_parameter_count_for_attention_and_mlp() -> None:
    # r x (d_in + d_out) per matrix: Llama-2-7B, r = 8: per layer 4 x 8 x 8192 (attention) +
    # 3 x 8 x (4096 + 11008) (MLP) = 624,640; x 32 layers = 19,988,480.
    assert lora_parameters(LLAMA2_7B, 8) == pytest.approx(19_988_480)


def test_activation_checkpointing_cuts_activation_memory() -> None:
    plain = TrainingConfig(accelerator_count=8, sequence_length=4096, micro_batch_size=4)
    recompute = dataclasses.replace(plain, activation_checkpointing=True)
    without = estimate_training(LLAMA3_70B, H100_SXM, plain).memory.activations_gb
    with_ckpt = estimate_training(LLAMA3_70B, H100_SXM, recompute).memory.activations_gb
    assert with_ckpt < without / 5


def test_korthikanti_activation_formula_for_a_4h_mlp() -> None:
    # Korthikanti et al. eq. 1 with flash attention: 34 s b h bytes per layer (the 5 a s^2 b term
    # is not stored), plus the output layer 4 s b h (1 + v / h). GPT-3 shapes, s = 2048, b = 1.
    memory = estimate_training(
        GPT3, A100_SXM_80, TrainingConfig(accelerator_count=1, sequence_length=2048)
    ).memory
    s, h, v, layers = 2048, 12288, 50257, 96
    expected = 34 * s * h * layers + 4 * s * h * (1 + v / h)
    assert memory.activations_gb == pytest.approx(expected / 1e9, rel=1e-6)


def test_fewest_accelerators_for_full_70b_training_with_zero3() -> None:
    # 16 B/param x 70.55B = 1129 GB of states sharded over N, plus ~19 GB of activations per GPU at
    # s = 2048 with recomputation off: N >= 1129 / (80 - activations).
    config = TrainingConfig(accelerator_count=64, zero_stage=3, sequence_length=2048)
    estimate = estimate_training(LLAMA3_70B, H100_SXM, config)
    assert estimate.min_accelerators is not None
    activations = estimate.memory.activations_gb
    assert estimate.min_accelerators == pytest.approx(16 * 70.55 / (80 - activations), abs=1.0)


def test_no_accelerator_count_fits_without_sharding() -> None:
    config = TrainingConfig(accelerator_count=8, zero_stage=0)
    assert estimate_training(LLAMA3_70B, H100_SXM, config).min_accelerators is None


def test_ideal_hardware_runs_at_peak() -> None:
    # With utilisation 1 and fast links, time = executed FLOPs / (N x peak): hours for 1e12 tokens
    # of Llama-2-7B on 8 H100 = 6 x 6.61e9 x 1e12 (+attention at s = 8) / (8 x 989e12) / 3600.
    config = TrainingConfig(accelerator_count=8, tokens=1e12, sequence_length=8, micro_batch_size=4096)
    estimate = estimate_training(LLAMA2_7B, H100_SXM, config, perfect_efficiency())
    assert estimate.mfu == pytest.approx(1.0, rel=1e-6)
    expected_hours = 6 * LLAMA2_MATMUL_PARAMS * 1e12 / (8 * 989e12) / 3600
    assert estimate.wall_clock_hours == pytest.approx(expected_hours, rel=0.003)
    assert estimate.accelerator_hours == pytest.approx(8 * expected_hours, rel=0.003)


def test_slow_inter_node_links_make_small_micro_batches_communication_bound() -> None:
    fast = TrainingConfig(
        accelerator_count=64,
        tokens=1e10,
        micro_batch_size=1,
        sequence_length=2048,
        internode_bandwidth_gb_s=50,
    )
    slow = dataclasses.replace(fast, internode_bandwidth_gb_s=1.25)  # 10 Gb/s Ethernet per GPU
    fast_hours = estimate_training(LLAMA3_70B, H100_SXM, fast).accelerator_hours
    slow_estimate = estimate_training(LLAMA3_70B, H100_SXM, slow)
    assert fast_hours is not None
    assert slow_estimate.accelerator_hours is not None
    assert slow_estimate.accelerator_hours > 2 * fast_hours
    assert any("interconnect-bound" in note for note in slow_estimate.notes)


def test_one_node_does_not_pay_for_inter_node_links() -> None:
    node = TrainingConfig(accelerator_count=8, tokens=1e10, internode_bandwidth_gb_s=0.1)
    other = dataclasses.replace(node, internode_bandwidth_gb_s=100.0)
    assert estimate_training(LLAMA2_7B, H100_SXM, node).accelerator_hours == pytest.approx(
        estimate_training(LLAMA2_7B, H100_SXM, other).accelerator_hours
    )


def test_fp8_training_uses_the_fp8_peak_and_its_own_utilisation() -> None:
    bf16 = TrainingConfig(accelerator_count=8, tokens=1e10)
    fp8 = dataclasses.replace(bf16, precision=Precision.FP8)
    a = estimate_training(LLAMA2_7B, H100_SXM, bf16)
    b = estimate_training(LLAMA2_7B, H100_SXM, fp8)
    assert a.mfu is not None
    assert b.mfu is not None
    assert a.tokens_per_s_per_accelerator is not None
    assert b.tokens_per_s_per_accelerator is not None
    # MFU is measured against each dtype's own peak (989 vs 1979 TFLOPS).
    assert b.tokens_per_s_per_accelerator / a.tokens_per_s_per_accelerator == pytest.approx(
        (b.mfu * 1979) / (a.mfu * 989), rel=1e-6
    )
