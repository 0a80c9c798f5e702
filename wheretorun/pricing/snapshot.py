"""Catalog rows turned into the engine's immutable values.

The engine never sees the database: the service layer looks rows up here and hands the engine
`ModelArchitecture` and `AcceleratorSpec` values. A row that lacks a fact the engine needs is an
`InvalidInput` naming the field, not a guess.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from wheretorun.engine import AcceleratorSpec, AttentionKind, InvalidSpec, MemoryKind, ModelArchitecture
from wheretorun.errors import InvalidInput
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.models import Accelerator, Model

__all__ = ["accelerator_spec", "load_accelerator_spec", "load_model_architecture", "model_architecture"]


def model_architecture(model: Model, field: str = "model") -> ModelArchitecture:
    """The architecture of a catalog model; proprietary models have none."""
    required = {
        "total_params_b": model.total_params_b,
        "layers": model.layers,
        "hidden_size": model.hidden_size,
        "attention_heads": model.attention_heads,
        "kv_heads": model.kv_heads,
        "head_dim": model.head_dim,
        "vocab_size": model.vocab_size,
        "max_context": model.max_context,
    }
    missing = [name for name, value in required.items() if value is None]
    if missing:
        reason = "has no published architecture" if not model.open_weights else f"lacks {', '.join(missing)}"
        raise InvalidInput(field, f"catalog model {model.id!r} {reason}; pass an architecture object instead")
    mla = model.attention == "MLA"
    try:
        return ModelArchitecture(
            name=model.id,
            total_params_b=float(model.total_params_b or 0),
            active_params_b=model.active_params_b,
            layers=int(model.layers or 0),
            hidden_size=int(model.hidden_size or 0),
            intermediate_size=model.intermediate_size,
            attention_heads=int(model.attention_heads or 0),
            kv_heads=int(model.kv_heads or 0),
            head_dim=int(model.head_dim or 0),
            vocab_size=int(model.vocab_size or 0),
            max_context=int(model.max_context or 0),
            experts=model.experts or 1,
            experts_per_token=model.experts_per_token or 1,
            attention=AttentionKind.MLA if mla else AttentionKind.STANDARD,
            kv_elements_per_layer=_mla_elements_per_layer(model) if mla else None,
            sliding_window=model.sliding_window,
            sliding_window_layers=model.sliding_window_layers or 0,
        )
    except InvalidSpec as error:
        raise InvalidInput(f"{field}.{error.field}", f"catalog model {model.id!r}: {error.reason}") from error


def _mla_elements_per_layer(model: Model) -> int | None:
    """MLA caches one latent per layer: bytes per token at 16 bits / (2 bytes x layers)."""
    if model.kv_cache_bytes_per_token_16bit is None or not model.layers:
        return None
    return model.kv_cache_bytes_per_token_16bit // (2 * model.layers)


def accelerator_spec(accelerator: Accelerator, field: str = "accelerator") -> AcceleratorSpec:
    """The spec of a catalog accelerator; memory, bandwidth and memory technology are required."""
    required = {
        "memory_gb": accelerator.memory_gb,
        "memory_bandwidth_gb_s": accelerator.memory_bandwidth_gb_s,
        "memory_kind": accelerator.memory_kind,
    }
    missing = [name for name, value in required.items() if value is None]
    if missing:
        raise InvalidInput(
            field,
            f"catalog accelerator {accelerator.id!r} has no published {', '.join(missing)}; "
            "pass a spec object instead",
        )
    try:
        return AcceleratorSpec(
            name=accelerator.id,
            memory_gb=float(accelerator.memory_gb or 0),
            memory_bandwidth_gb_s=float(accelerator.memory_bandwidth_gb_s or 0),
            family=accelerator.family or "unknown",
            memory_kind=MemoryKind(accelerator.memory_kind or ""),
            bf16_tflops=accelerator.bf16_tflops,
            fp8_tflops=accelerator.fp8_tflops,
            int8_tops=accelerator.int8_tops,
            fp32_tflops=accelerator.fp32_tflops,
            tdp_w=accelerator.tdp_w,
            interconnect_gb_s=accelerator.interconnect_gb_s,
            usable_memory_fraction=_usable_memory_fraction(accelerator),
        )
    except InvalidSpec as error:
        raise InvalidInput(
            f"{field}.{error.field}", f"catalog accelerator {accelerator.id!r}: {error.reason}"
        ) from error


def _usable_memory_fraction(accelerator: Accelerator) -> float:
    # Apple Silicon wires ~75% of unified memory to the GPU by default (calibration gpus.csv,
    # M2 Ultra row note, citing XiongjieDai/GPU-Benchmarks-on-LLM-Inference).
    return 0.75 if accelerator.vendor == "Apple" else 1.0


def load_model_architecture(session: Session, model_id: str, field: str = "model") -> ModelArchitecture:
    return model_architecture(repo.get_model(session, model_id), field)


def load_accelerator_spec(session: Session, name_or_id: str, field: str = "accelerator") -> AcceleratorSpec:
    return accelerator_spec(repo.get_accelerator(session, name_or_id), field)
