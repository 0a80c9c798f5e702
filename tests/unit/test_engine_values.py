"""Model and accelerator values shared by the engine unit tests, written out from their sources.

Plain constructors, not pytest fixtures: the engine is pure, so tests build values directly.
"""

from __future__ import annotations

from wheretorun.engine import (
    AcceleratorSpec,
    AttentionKind,
    EfficiencyTable,
    MemoryKind,
    ModelArchitecture,
    ServingEfficiency,
    ServingEngine,
    TrainingEfficiency,
    TrainingScaling,
)
from wheretorun.engine.precision import ComputeDtype

# Shapes from calibration models.csv (HF config.json copies; sources in its `source` column).
LLAMA2_7B = ModelArchitecture(
    name="Llama-2-7B",
    layers=32,
    hidden_size=4096,
    attention_heads=32,
    kv_heads=32,
    head_dim=128,
    vocab_size=32000,
    max_context=4096,
    intermediate_size=11008,
)
LLAMA3_70B = ModelArchitecture(
    name="Llama-3-70B",
    layers=80,
    hidden_size=8192,
    attention_heads=64,
    kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=8192,
    intermediate_size=28672,
)
MIXTRAL_8X7B = ModelArchitecture(
    name="Mixtral-8x7B",
    layers=32,
    hidden_size=4096,
    attention_heads=32,
    kv_heads=8,
    head_dim=128,
    vocab_size=32000,
    max_context=32768,
    intermediate_size=14336,
    experts=8,
    experts_per_token=2,
)
# DeepSeek-V3 config_671B.json / README via models.csv: 671B total, 37B active, MLA latent 512 + 64.
DEEPSEEK_V3 = ModelArchitecture(
    name="DeepSeek-V3",
    layers=61,
    hidden_size=7168,
    attention_heads=128,
    kv_heads=128,
    head_dim=128,
    vocab_size=129280,
    max_context=131072,
    total_params_b=671,
    active_params_b=37,
    experts=256,
    experts_per_token=8,
    attention=AttentionKind.MLA,
    kv_elements_per_layer=576,
)

# gpus.csv (stas00/ml-engineering spec tables).
H100_SXM = AcceleratorSpec(
    name="NVIDIA H100 SXM",
    memory_gb=80,
    memory_bandwidth_gb_s=3350,
    family="hopper",
    memory_kind=MemoryKind.HBM,
    bf16_tflops=989,
    fp8_tflops=1979,
    int8_tops=1979,
    fp32_tflops=67,
    tdp_w=700,
    interconnect_gb_s=450,
)
A100_SXM_80 = AcceleratorSpec(
    name="NVIDIA A100 SXM 80GB",
    memory_gb=80,
    memory_bandwidth_gb_s=2039,
    family="ampere",
    memory_kind=MemoryKind.HBM,
    bf16_tflops=312,
    int8_tops=624,
    fp32_tflops=19.5,
    interconnect_gb_s=300,
)
RTX_4090 = AcceleratorSpec(
    name="NVIDIA GeForce RTX 4090",
    memory_gb=24,
    memory_bandwidth_gb_s=1008,
    family="ada",
    memory_kind=MemoryKind.GDDR,
    bf16_tflops=330,
    fp8_tflops=660,
)


def perfect_efficiency() -> EfficiencyTable:
    """Every fraction 1 and no overheads: estimates sit exactly on the physical roofline."""
    ideal = ServingEfficiency(1.0, 1.0, 0.0, "ideal hardware, for tests")
    return EfficiencyTable(
        version="test-ideal",
        serving={(engine, kind): ideal for engine in ServingEngine for kind in MemoryKind},
        training={("*", ComputeDtype.BF16): TrainingEfficiency(1.0, "ideal")},
        training_scaling=TrainingScaling(0.0, 1.0, "ideal"),
        allreduce_latency_us=0.0,
        allreduce_bus_fraction=1.0,
    )
