"""Training searches before it rejects: the setting a job runs with on a given set of accelerators.

A setting is activation recomputation (on/off), the ZeRO stage (1-3), the tensor-parallel degree
(within one node, dividing the attention heads), the pipeline-parallel degree (stages across
nodes, dividing the layers) and the micro-batch size per data-parallel rank.
For a given count of accelerators the search keeps the settings whose memory fits, estimates the
time of each, and picks the fastest whole run (on a fixed count, the fastest run is the cheapest;
ties go to the simpler setting). So a job is rejected for memory only when no setting fits.

Tensor parallelism is tried only when no setting without it fits: `training.py` does not price
its own communication (it assumes it stays inside a node), so choosing it for speed alone would
flatter it. For each ZeRO stage and recomputation choice only the largest micro-batch that fits
is timed: with the same stage and recomputation, a larger micro-batch never runs slower here
(the same compute, fewer collectives per token).

Pipeline parallelism is tried for jobs that span nodes, at every tensor-parallel degree, and
timed against no pipeline: it prices its own bubble and its point-to-point traffic
(`training_estimate.py`), and wins when the data-parallel collectives over a slow inter-node link
cost more than the bubble (its stages never outnumber the nodes).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from wheretorun.engine.config import TrainingConfig, TrainingMethod
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.precision import Precision
from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture
from wheretorun.engine.training_estimate import (
    TrainingEstimate,
    estimate_training,
    fewest_accelerators,
    memory_per_accelerator_gb,
)

__all__ = [
    "MICRO_BATCHES",
    "PIPELINE_PARALLEL",
    "TENSOR_PARALLEL",
    "ZERO_STAGES",
    "TrainingSetting",
    "best_setting",
    "clear_training_setting_cache",
    "fewest_for_any",
]

ZERO_STAGES = (3, 2, 1)
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16)
MICRO_BATCHES = (8, 4, 2, 1)
_RECOMPUTE = (False, True)


@dataclass(frozen=True, slots=True)
class TrainingSetting:
    activation_checkpointing: bool
    zero_stage: int
    tensor_parallel: int
    micro_batch_size: int
    pipeline_parallel: int = 1

    def describe(self) -> str:
        parts = [f"ZeRO-{self.zero_stage}"]
        if self.tensor_parallel > 1:
            parts.append(f"tensor-parallel {self.tensor_parallel}")
        if self.pipeline_parallel > 1:
            parts.append(f"pipeline-parallel {self.pipeline_parallel}")
        parts.append(f"micro-batch {self.micro_batch_size}")
        parts.append("activation recomputation" if self.activation_checkpointing else "no recomputation")
        return ", ".join(parts)

    @property
    def simplicity(self) -> tuple[int, int, int, int]:
        """Smaller is simpler: no recomputation, less tensor and pipeline parallelism, lower ZeRO
        stage."""
        return (
            int(self.activation_checkpointing),
            self.tensor_parallel,
            self.pipeline_parallel,
            self.zero_stage,
        )


@dataclass(frozen=True, slots=True)
class _Job:
    """What does not change between settings."""

    model: ModelArchitecture
    spec: AcceleratorSpec
    method: TrainingMethod
    precision: Precision
    tokens: float
    sequence_length: int
    per_node: int
    internode_gb_s: float | None = None  # per accelerator; None: the calibration rows' setting


def _config(job: _Job, accelerators: int, setting: TrainingSetting) -> TrainingConfig:
    return TrainingConfig(
        accelerator_count=accelerators,
        method=job.method,
        precision=job.precision,
        tokens=job.tokens,
        sequence_length=job.sequence_length,
        micro_batch_size=setting.micro_batch_size,
        zero_stage=setting.zero_stage,
        activation_checkpointing=setting.activation_checkpointing,
        tensor_parallel=setting.tensor_parallel,
        pipeline_parallel=setting.pipeline_parallel,
        accelerators_per_node=job.per_node,
        internode_bandwidth_gb_s=job.internode_gb_s,
    )


def _degrees(job: _Job, accelerators: int) -> list[int]:
    """Tensor-parallel degrees that stay in one node and divide the heads and the accelerators."""
    return [
        tp
        for tp in TENSOR_PARALLEL
        if tp <= job.per_node and accelerators % tp == 0 and job.model.attention_heads % tp == 0
    ]


def _pipeline_degrees(job: _Job, accelerators: int, tp: int) -> list[int]:
    """1, and for a job that spans nodes the stage counts that divide the layers and the
    accelerators left after tensor parallelism, at most one stage per node."""
    nodes = -(-accelerators // job.per_node)
    return [
        pp
        for pp in PIPELINE_PARALLEL
        if pp == 1 or (pp <= nodes and (accelerators // tp) % pp == 0 and job.model.layers % pp == 0)
    ]


def _fitting(job: _Job, accelerators: int, tp: int) -> list[TrainingSetting]:
    """Per (pipeline degree, ZeRO stage, recomputation): the largest micro-batch that fits, at
    this tensor-parallel degree."""
    capacity = job.spec.usable_memory_gb
    out = []
    for pp in _pipeline_degrees(job, accelerators, tp):
        for recompute in _RECOMPUTE:
            for stage in ZERO_STAGES:
                for micro in MICRO_BATCHES:
                    setting = TrainingSetting(recompute, stage, tp, micro, pp)
                    if memory_per_accelerator_gb(job.model, _config(job, accelerators, setting)) <= capacity:
                        out.append(setting)
                        break
    return out


@functools.lru_cache(maxsize=8192)
def _best(
    job: _Job, accelerators: int, efficiency: EfficiencyTable
) -> tuple[TrainingSetting, TrainingEstimate] | None:
    for tp in _degrees(job, accelerators):
        timed = []
        for setting in _fitting(job, accelerators, tp):
            estimate = estimate_training(job.model, job.spec, _config(job, accelerators, setting), efficiency)
            run = estimate.whole_run
            if run is not None:
                timed.append((run.wall_clock_hours, setting.simplicity, setting, estimate))
        if timed:
            _, _, setting, estimate = min(timed, key=lambda item: (item[0], item[1]))
            return setting, estimate
    return None


def best_setting(
    model: ModelArchitecture,
    spec: AcceleratorSpec,
    method: TrainingMethod,
    precision: Precision,
    tokens: float,
    sequence_length: int,
    accelerators: int,
    per_node: int,
    efficiency: EfficiencyTable,
    internode_gb_s: float | None = None,
) -> tuple[TrainingSetting, TrainingEstimate] | None:
    """The fastest setting that fits on `accelerators` (and its estimate); None when none fits or
    the accelerator has no compute peak for the precision. `internode_gb_s` is the network
    between instances, per accelerator (cluster_network.py)."""
    job = _Job(model, spec, method, precision, tokens, sequence_length, per_node, internode_gb_s)
    return _best(job, accelerators, efficiency)


def clear_training_setting_cache() -> None:
    """Forget the remembered settings and fewest counts."""
    _best.cache_clear()
    _fewest_for_any.cache_clear()


def fewest_for_any(
    model: ModelArchitecture,
    spec: AcceleratorSpec,
    method: TrainingMethod,
    precision: Precision,
    tokens: float,
    sequence_length: int,
    per_node: int,
) -> int | None:
    """The fewest accelerators any setting fits on; None when no setting fits on any count."""
    return _fewest_for_any(
        _Job(model, spec, method, precision, tokens, sequence_length, per_node), spec.usable_memory_gb
    )


@functools.lru_cache(maxsize=4096)
def _fewest_for_any(job: _Job, capacity_gb: float) -> int | None:
    """`fewest_for_any`, remembered: a recommendation sizes every (accelerator, instance size)
    for up to three time limits and several cluster networks, and the fewest accelerators depend
    on none of those; the arguments are immutable values, so the memo changes timing only."""
    model, per_node = job.model, job.per_node
    counts = []
    for tp in TENSOR_PARALLEL:
        if tp > per_node or model.attention_heads % tp:
            continue
        for stage in ZERO_STAGES:
            # the smallest micro-batch and recomputation need the least memory
            setting = TrainingSetting(True, stage, tp, 1)
            count = fewest_accelerators(model, _config(job, tp, setting), capacity_gb)
            if count is not None:
                counts.append(count)
    return min(counts) if counts else None
