"""Engine values (AcceleratorSpec, ModelArchitecture) built from gpus.csv and models.csv.

Figures come from the CSV cells, except the dense tensor peaks that the catalog's
`accelerator_tensor_peaks.csv` corrects (vendor whitepaper figures with FP32 accumulation: the
gpus.csv GeForce rows give the FP16-accumulate rate, twice as high), so calibration and the
catalog use one figure per part; what is added here is classification (which chip generation and
memory technology a GPU belongs to) and name matching, each with its reason. Models the benchmark
rows use but models.csv lacks are added only where a cited source gives their shapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache

from wheretorun.calibration.data import Row, calibration_dir, read_rows
from wheretorun.engine import AcceleratorSpec, AttentionKind, MemoryKind, ModelArchitecture

__all__ = [
    "GPU_ALIASES",
    "ResolvedGpu",
    "accelerators",
    "models",
    "mpt_model",
    "resolve_gpu",
    "resolve_model",
]

# Chip generation of each gpus.csv row (the vendor's architecture name for the product).
_FAMILY = {
    "NVIDIA H100 SXM": "hopper",
    "NVIDIA H100 PCIe": "hopper",
    "NVIDIA H200 SXM": "hopper",
    "NVIDIA B200 SXM": "blackwell",
    "NVIDIA A100 SXM 80GB": "ampere",
    "NVIDIA A100 SXM 40GB": "ampere",
    "NVIDIA A100 PCIe 80GB": "ampere",
    "NVIDIA A10G": "ampere",
    "NVIDIA A10": "ampere",
    "NVIDIA GeForce RTX 3090": "ampere",
    "NVIDIA L40S": "ada",
    "NVIDIA L4": "ada",
    "NVIDIA GeForce RTX 4090": "ada",
    "NVIDIA RTX 6000 Ada": "ada",
    "NVIDIA T4": "turing",
    "NVIDIA V100 SXM2 32GB": "volta",
    "NVIDIA Jetson AGX Orin 64GB": "ampere",
    "AMD Instinct MI300X": "cdna3",
    "AMD Instinct MI250X": "cdna2",
    "Apple M2 Ultra": "apple-m2",
    "Google TPU v5e": "tpu-v5e",
    "Google TPU v6e": "tpu-v6e",
}

# Memory technology where the memory_type cell is empty: A100 40GB is the SXM4 HBM2 part of the
# same board family as the 80GB row (HBM2e); GeForce/RTX/A10 boards carry GDDR6/6X (their form
# factor column says consumer/workstation PCIe).
_MEMORY_KIND_WHEN_EMPTY = {
    "NVIDIA A100 SXM 40GB": MemoryKind.HBM,
    "NVIDIA A10": MemoryKind.GDDR,
    "NVIDIA GeForce RTX 4090": MemoryKind.GDDR,
    "NVIDIA GeForce RTX 3090": MemoryKind.GDDR,
    "NVIDIA RTX 6000 Ada": MemoryKind.GDDR,
    "Google TPU v6e": MemoryKind.HBM,
}

# gpus.csv rows whose tensor peaks `accelerator_tensor_peaks.csv` corrects -> catalog accelerator id.
_CATALOG_ID = {
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA GeForce RTX 3090": "rtx-3090",
}

# gpus.csv note on the M2 Ultra row: "GPU can only wire ~75-78% of unified memory by default".
_USABLE_FRACTION = {"Apple M2 Ultra": 0.75}

# How benchmark rows spell GPUs -> (gpus.csv row, assumption made or "").
GPU_ALIASES: dict[str, tuple[str, str]] = {
    "NVIDIA GeForce RTX 3090": ("NVIDIA GeForce RTX 3090", ""),
    "NVIDIA GeForce RTX 4090": ("NVIDIA GeForce RTX 4090", ""),
    "NVIDIA RTX 6000 Ada": ("NVIDIA RTX 6000 Ada", ""),
    "NVIDIA L40S": ("NVIDIA L40S", ""),
    "NVIDIA A100 PCIe 80GB": ("NVIDIA A100 PCIe 80GB", ""),
    "NVIDIA A100 SXM 80GB": ("NVIDIA A100 SXM 80GB", ""),
    "NVIDIA H100 PCIe": ("NVIDIA H100 PCIe", ""),
    "Apple M2 Ultra": ("Apple M2 Ultra", ""),
    "NVIDIA H100 SXM 80GB": ("NVIDIA H100 SXM", ""),
    "NVIDIA H100 SXM 80GB (H100-HBM3-80GB per methodology)": ("NVIDIA H100 SXM", ""),
    "NVIDIA H100 SXM 80GB (DGX H100)": ("NVIDIA H100 SXM", ""),
    "NVIDIA H200 SXM 141GB": ("NVIDIA H200 SXM", ""),
    "NVIDIA B200 180GB": ("NVIDIA B200 SXM", ""),
    "AMD Instinct MI300X": ("AMD Instinct MI300X", ""),
    "NVIDIA A100 80GB (form factor not stated)": (
        "NVIDIA A100 SXM 80GB",
        "A100 form factor not stated; SXM assumed",
    ),
    "NVIDIA A100 (variant not stated)": ("NVIDIA A100 SXM 80GB", "A100 variant not stated; SXM 80GB assumed"),
    "NVIDIA H100 80GB (form factor not stated)": (
        "NVIDIA H100 SXM",
        "H100 form factor not stated; SXM assumed",
    ),
    # training_runs.csv spellings
    "NVIDIA H100 80GB": ("NVIDIA H100 SXM", "llm-foundry's h100_80gb: SXM assumed"),
    "NVIDIA A100 80GB": ("NVIDIA A100 SXM 80GB", ""),
    "NVIDIA A100 40GB": ("NVIDIA A100 SXM 40GB", ""),
    "NVIDIA A100-80GB (TDP 350-400W)": ("NVIDIA A100 SXM 80GB", "400 W TDP = SXM"),
    "NVIDIA A100-40G": ("NVIDIA A100 SXM 40GB", ""),
    "NVIDIA H100-80GB (TDP 700W)": ("NVIDIA H100 SXM", ""),
    "NVIDIA H100-80GB": ("NVIDIA H100 SXM", "700 W Meta cluster: SXM assumed"),
    "NVIDIA H800": ("NVIDIA H100 SXM", "H800 is not in gpus.csv; H100 SXM compute figures used"),
    "NVIDIA V100 SXM3 32GB (DGX-2H)": (
        "NVIDIA V100 SXM2 32GB",
        "V100 SXM3 (DGX-2H) not in gpus.csv; SXM2 32GB used",
    ),
}


def _float(cell: str) -> float | None:
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*$", cell)
    return float(match.group(1)) if match else None


def _memory_kind(row: Row) -> MemoryKind | None:
    memory_type = row["memory_type"].lower()
    if "hbm" in memory_type:
        return MemoryKind.HBM
    if "gddr" in memory_type:
        return MemoryKind.GDDR
    if "unified" in memory_type or "lpddr" in memory_type:
        return MemoryKind.UNIFIED
    return _MEMORY_KIND_WHEN_EMPTY.get(row["gpu"])


@cache
def _tensor_peaks() -> dict[str, dict[str, float]]:
    """The catalog's corrected peaks by accelerator id and field (the file lives next to
    calibration/ in the package data)."""
    rows = read_rows("accelerator_tensor_peaks.csv", calibration_dir().parent)
    peaks: dict[str, dict[str, float]] = {}
    for row in rows:
        peaks.setdefault(row["id"], {})[row["field"]] = float(row["value"])
    return peaks


def _accelerator(row: Row) -> AcceleratorSpec | None:
    memory = _float(row["memory_gb"])
    bandwidth = _float(row["memory_bandwidth_gb_s"])
    kind = _memory_kind(row)
    if memory is None or bandwidth is None or kind is None:
        return None
    corrected = _tensor_peaks().get(_CATALOG_ID.get(row["gpu"], ""), {})
    spec = AcceleratorSpec(
        name=row["gpu"],
        memory_gb=memory,
        memory_bandwidth_gb_s=bandwidth,
        family=_FAMILY[row["gpu"]],
        memory_kind=kind,
        bf16_tflops=_float(row["fp16_bf16_dense_tflops"]),
        fp8_tflops=_float(row["fp8_dense_tflops"]),
        int8_tops=_float(row["int8_dense_tops"]),
        fp32_tflops=_float(row["fp32_tflops"]),
        tdp_w=_float(row["tdp_w"]),
        interconnect_gb_s=_float(row["interconnect_bw_gb_s_unidirectional"]),
        usable_memory_fraction=_USABLE_FRACTION.get(row["gpu"], 1.0),
    )
    return replace(
        spec,
        bf16_tflops=corrected.get("bf16_tflops", spec.bf16_tflops),
        fp16_accumulate_tflops=corrected.get("fp16_accumulate_tflops", spec.fp16_accumulate_tflops),
        fp8_tflops=corrected.get("fp8_tflops", spec.fp8_tflops),
        int8_tops=corrected.get("int8_tops", spec.int8_tops),
        fp32_tflops=corrected.get("fp32_tflops", spec.fp32_tflops),
    )


@cache
def accelerators() -> dict[str, AcceleratorSpec]:
    """gpus.csv rows that have memory, bandwidth and a known memory kind, by name."""
    built = (_accelerator(row) for row in read_rows("gpus.csv"))
    return {spec.name: spec for spec in built if spec is not None}


@dataclass(frozen=True, slots=True)
class ResolvedGpu:
    spec: AcceleratorSpec
    assumption: str


def resolve_gpu(name: str) -> ResolvedGpu | None:
    alias = GPU_ALIASES.get(name)
    if alias is None or alias[0] not in accelerators():
        return None
    return ResolvedGpu(accelerators()[alias[0]], alias[1])


# ---- models -------------------------------------------------------------------------------------


def _int(cell: str) -> int | None:
    value = _float(cell)
    return None if value is None else int(value)


def _standard_model(row: Row) -> ModelArchitecture:
    """A models.csv row with standard attention. Parameter counts come from the shapes (the CSV's
    total_params_b is the card's rounded figure) except for MoE, whose card figures are kept."""
    experts = 8 if row["model"].startswith("Mixtral") else 1  # attention_notes: "MoE 8 experts, top-2"
    layers, hidden = int(row["layers"]), int(row["hidden_size"])
    heads, kv_heads = int(row["attention_heads"]), int(row["kv_heads"])
    return ModelArchitecture(
        name=row["model"],
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=int(row["head_dim"]),
        vocab_size=int(row["vocab_size"]),
        max_context=int(row["max_context"]),
        intermediate_size=_int(row["intermediate_size"]),
        total_params_b=_float(row["total_params_b"]) if experts > 1 else None,
        active_params_b=_float(row["active_params_b"]) if experts > 1 else None,
        experts=experts,
        experts_per_token=2 if experts > 1 else 1,
    )


def _deepseek_v3(row: Row) -> ModelArchitecture:
    """DeepSeek-V3 (config_671B.json via models.csv): MLA caches kv_lora_rank 512 + rope 64 = 576
    elements per layer (70,272 B/token at 16-bit over 61 layers); 256 routed experts, 8 active;
    head_dim is the 128-wide value head; 671B total / 37B active from the README."""
    return ModelArchitecture(
        name=row["model"],
        layers=int(row["layers"]),
        hidden_size=int(row["hidden_size"]),
        attention_heads=int(row["attention_heads"]),
        kv_heads=int(row["attention_heads"]),
        head_dim=128,
        vocab_size=int(row["vocab_size"]),
        max_context=int(row["max_context"]),
        total_params_b=float(row["total_params_b"]),
        active_params_b=float(row["active_params_b"]),
        experts=256,
        experts_per_token=8,
        attention=AttentionKind.MLA,
        kv_elements_per_layer=512 + 64,
    )


def _renamed(model: ModelArchitecture, name: str, max_context: int | None = None) -> ModelArchitecture:
    fields = {slot: getattr(model, slot) for slot in model.__slots__}
    fields.update(name=name, max_context=max_context or model.max_context)
    if model.experts == 1:
        fields.update(total_params_b=None, active_params_b=None)
    return ModelArchitecture(**fields)


@cache
def models() -> dict[str, ModelArchitecture]:
    """models.csv rows the engine can express, plus same-shape aliases used by benchmark rows."""
    built: dict[str, ModelArchitecture] = {}
    for row in read_rows("models.csv"):
        if row["model"] == "DeepSeek-V3":
            built[row["model"]] = _deepseek_v3(row)
        elif _int(row["kv_heads"]) and _int(row["intermediate_size"]) and _int(row["vocab_size"]):
            built[row["model"]] = _standard_model(row)
    # LLaMA-1 7B has Llama-2-7B's shapes with a 2k context; models.csv's note quotes llama.cpp's
    # 6.74B for LLaMA-7B, which the Llama-2-7B shapes reproduce.
    built["LLaMA-7B (v1)"] = _renamed(built["Llama-2-7B"], "LLaMA-7B (v1)", max_context=2048)
    # Llama 3.3 70B reuses Llama 3.1 70B's architecture (training_runs trn013: "same ... as Llama 3.1 70B").
    built["Llama-3.3-70B"] = _renamed(built["Llama-3.1-70B"], "Llama-3.3-70B")
    return built


_MODEL_ALIASES = {
    "Llama-2-70B-chat": "Llama-2-70B",
    "Llama-3.1-8B-Instruct": "Llama-3.1-8B",
    "Llama-3.3-70B-Instruct": "Llama-3.3-70B",
    "Llama-3.1-405B-Instruct": "Llama-3.1-405B",
    "Mixtral-8x7B": "Mixtral-8x7B-v0.1",
    "Zephyr-7B-alpha": "Mistral-7B-v0.1",
}


def resolve_model(name: str) -> ModelArchitecture | None:
    """A benchmark row's model: exact name, or the name before a parenthesis, or an alias."""
    for candidate in (name, name.split(" (")[0].strip()):
        key = _MODEL_ALIASES.get(candidate, candidate)
        if key in models():
            return models()[key]
    return None


# MPT shapes from mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml: (d_model, n_layers,
# n_heads); all use expansion_ratio 4 (plain GELU MLP), vocab 50368, tied embeddings.
_MPT_SHAPES = {
    "MPT-125m": (768, 12, 12),
    "MPT-350m": (1024, 24, 16),
    "MPT-760m": (1536, 24, 12),
    "MPT-1b": (2048, 24, 16),
    "MPT-3b": (2560, 32, 20),
    "MPT-7b": (4096, 32, 32),
    "MPT-13b": (5120, 40, 40),
    "MPT-30b": (7168, 48, 56),
    "MPT-70b": (8192, 80, 64),
}


def mpt_model(name: str, params_b: float, sequence_length: int) -> ModelArchitecture | None:
    """An MPT model as benchmarked; `params_b` is the row's NumParams (it grows with sequence
    length in the table, so the row's own figure is used)."""
    shape = _MPT_SHAPES.get(name)
    if shape is None:
        return None
    hidden, layers, heads = shape
    return ModelArchitecture(
        name=name,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=heads,
        head_dim=hidden // heads,
        vocab_size=50368,
        max_context=max(sequence_length, 2048),
        intermediate_size=4 * hidden,
        total_params_b=params_b,
        gated_mlp=False,
        tied_embeddings=True,
    )
