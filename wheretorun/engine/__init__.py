"""The estimation core: pure functions over immutable values.

Service-level entry points:

    estimate_inference(model, accelerator, InferenceConfig(...)) -> InferenceEstimate
    estimate_training(model, accelerator, TrainingConfig(...)) -> TrainingEstimate
    sweep_inference(SweepGrid(...)) -> SweepResult        # many configurations, vectorised

Inputs are frozen dataclasses that validate themselves (`InvalidSpec(field, reason)` for an
impossible input); results are frozen dataclasses. Nothing here reads files, the clock, settings
or the network; calibrated efficiencies arrive as an `EfficiencyTable` argument whose default is
the generated `DEFAULT_EFFICIENCY`.
"""

from wheretorun.engine.config import (
    CpuOffload,
    InferenceConfig,
    ServingEngine,
    SpeculativeDecoding,
    TrainingConfig,
    TrainingMethod,
)
from wheretorun.engine.efficiency import (
    EfficiencyTable,
    ServingEfficiency,
    TrainingEfficiency,
    TrainingScaling,
)
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.errors import EngineError, InvalidSpec
from wheretorun.engine.inference_estimate import (
    Bound,
    InferenceEstimate,
    MemoryEstimate,
    PerformanceEstimate,
    RequestRate,
    estimate_inference,
)
from wheretorun.engine.memory import kv_cache_bytes_per_sequence, kv_cache_bytes_per_token, weights_bytes
from wheretorun.engine.precision import (
    ComputeDtype,
    Precision,
    PrecisionSupport,
    parse_precision,
    parse_precision_list,
)
from wheretorun.engine.specs import AcceleratorSpec, AttentionKind, MemoryKind, ModelArchitecture
from wheretorun.engine.sweep import SweepGrid, SweepResult, sweep_inference
from wheretorun.engine.training_estimate import TrainingEstimate, TrainingMemory, estimate_training

__all__ = [
    "DEFAULT_EFFICIENCY",
    "AcceleratorSpec",
    "AttentionKind",
    "Bound",
    "ComputeDtype",
    "CpuOffload",
    "EfficiencyTable",
    "EngineError",
    "InferenceConfig",
    "InferenceEstimate",
    "InvalidSpec",
    "MemoryEstimate",
    "MemoryKind",
    "ModelArchitecture",
    "PerformanceEstimate",
    "Precision",
    "PrecisionSupport",
    "RequestRate",
    "ServingEfficiency",
    "ServingEngine",
    "SpeculativeDecoding",
    "SweepGrid",
    "SweepResult",
    "TrainingConfig",
    "TrainingEfficiency",
    "TrainingEstimate",
    "TrainingMemory",
    "TrainingMethod",
    "TrainingScaling",
    "estimate_inference",
    "estimate_training",
    "kv_cache_bytes_per_sequence",
    "kv_cache_bytes_per_token",
    "parse_precision",
    "parse_precision_list",
    "sweep_inference",
    "weights_bytes",
]
