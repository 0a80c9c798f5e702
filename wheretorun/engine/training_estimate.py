"""Training and fine-tuning estimates: memory per accelerator, fewest accelerators, FLOPs, time.

Memory (per accelerator)
* Full training with mixed-precision Adam holds 2 (fp16/bf16 weights) + 2 (gradients) + 12 (fp32
  master weights, momentum, variance) = 16 bytes per parameter; ZeRO stage 1 shards the 12, stage
  2 also the gradients, stage 3 also the weights over the data-parallel ranks (Rajbhandari et al.
  2020, ZeRO, arXiv:1910.02054 §3 and Figure 1, K = 12).
* LoRA freezes the weights (16-bit) and trains r x (d_in + d_out) parameters per adapted matrix
  (Hu et al. 2021, arXiv:2106.09685 §4.1); adapters go on every linear layer of the blocks, as in
  QLoRA (Dettmers et al. 2023, arXiv:2305.14314 §4 "LoRA on all linear transformer block
  layers"). QLoRA stores the frozen weights in NF4 (precision.py).
* Activations per layer (Korthikanti et al. 2022, arXiv:2205.05198 §4.1, eq. 1):
  s b h (34 + 5 a s / h) bytes for a 4h MLP = attention 11 s b h + 5 a s^2 b, MLP 19 s b h,
  layer norms 4 s b h. The MLP term is 3 s b h + 2 bytes x (pre- and post-activation) x s b i for
  width i, so a model's real MLP width replaces the 4h assumption (a gated MLP stores three
  i-wide tensors: gate, up, activation). Flash attention does not store the s^2 scores, so the
  5 a s^2 b term is dropped. Tensor parallelism with sequence parallelism divides all by t (§4.2,
  eq. 4); the output layer adds 4 s b h (1 + v / h) / t (§4.3). Full recomputation stores only
  each layer's input, 2 s b h per layer, plus one layer's activations while it is recomputed (§5).

FLOPs
* Full: 6 N T (forward 2 N T, backward 4 N T: activation gradients and weight gradients, 2 N T
  each; Kaplan et al. 2020, arXiv:2001.08361 §2.1), plus attention; N counts matmul parameters.
* LoRA / QLoRA: frozen weights need no weight gradients, so 4 N T; the LoRA paper measures a 25%
  throughput gain on GPT-3 175B (§4.2), short of the 33% this predicts.
* Activation recomputation repeats the forward pass: + 2 N T (8 N T for full training), which is
  why HFU > MFU in llm-foundry's tables.

Time: a micro-step of micro_batch x sequence tokens per data-parallel rank takes the longer of
  compute = executed FLOPs / (tensor_parallel x peak x utilisation), utilisation from
            `efficiency.TrainingScaling` (rises with hidden size; attention runs slower), and
  communication = data-parallel bytes / (link x achieved bus fraction), over the intra-node link
            within a node and, across nodes, the node's inter-node links (FSDP overlaps the two).
So utilisation falls once a job leaves the node for slower links, more so with small
micro-batches.
Growth of collective latency with thousands of ranks, stragglers and failures are not
modelled: the calibration rows (<= 64 nodes) show no further fall.

Pipeline parallelism (degree p, the 1F1B schedule of Narayanan et al. 2021, arXiv:2104.04473 §2.2)
splits the layers into p stages: weights, gradients and optimiser state per accelerator fall by p,
and so do the data-parallel collectives; the first stage still holds p micro-batches in flight of
L/p layers each, so activation memory does not fall (Korthikanti §4.2.3). It costs the pipeline
bubble: a step of m micro-batches per pipeline takes (m + p - 1) / m of its compute time (§2.2.1),
m = the global batch / (micro-batch x data-parallel degree), with a global batch of
`GLOBAL_BATCH_TOKENS`; and each stage boundary sends one activation forward and one gradient back
per micro-batch (point-to-point, over the inter-node link when the stages span nodes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wheretorun.engine.config import TrainingConfig, TrainingMethod
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.memory import tensor_shapes, weights_bytes
from wheretorun.engine.precision import ComputeDtype, Precision, compute_dtype
from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture
from wheretorun.engine.whole_run import WholeRun, whole_run

__all__ = [
    "GLOBAL_BATCH_TOKENS",
    "REFERENCE_INTERNODE_GB_S",
    "TrainingEstimate",
    "TrainingMemory",
    "estimate_training",
    "fewest_accelerators",
    "lora_parameters",
    "memory_per_accelerator_gb",
    "pipeline_bubble",
    "training_flops",
]

_GB = 1e9
# Per-accelerator inter-node bandwidth when the caller gives none: the calibration rows' setting,
# llm-foundry's tables "A100 ... with 1600 Gbps node-node interconnect (RoCE)": 1600 Gb/s =
# 200 GB/s per 8-GPU node = 25 GB/s per GPU.
REFERENCE_INTERNODE_GB_S = 25.0
GLOBAL_BATCH_TOKENS = 4_000_000.0
"""Tokens per optimiser step: Llama 2 trained with "a global batch-size of 4M tokens" (Touvron et
al. 2023, arXiv:2307.09288 §2.2). Only the pipeline bubble depends on it."""
_MIXED_PRECISION_ADAM = (2.0, 2.0, 12.0)  # weights, gradients, optimiser state (ZeRO paper, K = 12)
# fp32 weights and gradients, plus Adam's two moments (Kingma & Ba 2015, arXiv:1412.6980, Alg. 1).
_FP32_ADAM = (4.0, 4.0, 8.0)


@dataclass(frozen=True, slots=True)
class TrainingMemory:
    """Bytes per accelerator by kind, in GB."""

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.gradients_gb + self.optimizer_gb + self.activations_gb


@dataclass(frozen=True, slots=True)
class TrainingEstimate:
    memory_per_accelerator_gb: float
    memory: TrainingMemory
    available_gb: float
    fits: bool
    shortfall_gb: float
    min_accelerators: int | None  # None: no count fits (ZeRO stage too low for the model)
    trainable_params: float
    model_flops: float  # the training maths (6NT or 4NT, plus attention)
    total_flops: float  # what the accelerators execute, including recomputation
    mfu: float | None
    hfu: float | None
    tokens_per_s_per_accelerator: float | None
    accelerator_hours: float | None  # None when the accelerator has no compute peak for the dtype
    wall_clock_hours: float | None
    efficiency_version: str
    notes: tuple[str, ...]
    # The steady-state figures above plus interruptions and efficiency at scale (whole_run.py);
    # None when time is not estimated.
    whole_run: WholeRun | None = None
    # False when data-parallel communication is needed but the catalog has no interconnect
    # figure for the accelerator: the time above leaves that communication out (a note says so)
    communication_priced: bool = True
    # where the utilisation behind the time comes from: the family's own fit (its rows and
    # error), or what stands in for a family with no fit (EfficiencyTable.training_key)
    efficiency_source: str = ""


# ---- parameters and FLOPs -----------------------------------------------------------------------


def lora_parameters(model: ModelArchitecture, rank: int) -> float:
    """Trainable LoRA parameters: rank x (d_in + d_out) for every linear matrix of every block."""
    shapes = tensor_shapes(model)
    h = model.hidden_size
    attention_sum = (h + model.attention_width) * 2 + (h + model.kv_heads * model.head_dim) * 2
    mlp_matrices = (3 if model.gated_mlp else 2) * model.experts
    mlp_width = shapes.ffn_up / model.experts / h
    per_layer = attention_sum + mlp_matrices * (h + mlp_width)
    return rank * per_layer * model.layers


def _trainable_params(model: ModelArchitecture, config: TrainingConfig) -> float:
    if config.method == TrainingMethod.FULL:
        return model.total_params
    return lora_parameters(model, config.lora_rank)


@dataclass(frozen=True, slots=True)
class _Flops:
    dense_model: float
    attention_model: float
    dense_executed: float
    attention_executed: float


def _flops(model: ModelArchitecture, config: TrainingConfig) -> _Flops:
    tokens = config.tokens
    forward_dense = 2.0 * model.matmul_params_per_token * tokens
    # Causal attention: 4 x width x mean context (s + 1) / 2 per token per layer, forward.
    forward_attention = (
        4.0 * model.attention_width * model.layers * (config.sequence_length + 1) / 2.0 * tokens
    )
    passes = 3.0 if config.method == TrainingMethod.FULL else 2.0
    recompute = 1.0 if config.activation_checkpointing else 0.0
    dense_lora = (
        6.0 * _trainable_params(model, config) * tokens if config.method != TrainingMethod.FULL else 0.0
    )
    return _Flops(
        dense_model=passes * forward_dense + dense_lora,
        attention_model=passes * forward_attention,
        dense_executed=(passes + recompute) * forward_dense + dense_lora,
        attention_executed=(passes + recompute) * forward_attention,
    )


def training_flops(model: ModelArchitecture, config: TrainingConfig) -> tuple[float, float]:
    """(model FLOPs, executed FLOPs) of the whole job."""
    f = _flops(model, config)
    return f.dense_model + f.attention_model, f.dense_executed + f.attention_executed


# ---- memory -------------------------------------------------------------------------------------


def _state_bytes(
    model: ModelArchitecture, config: TrainingConfig, data_parallel: int
) -> tuple[float, float, float]:
    """(weights, gradients, optimiser) bytes per accelerator for a data-parallel degree."""
    model_parallel = config.tensor_parallel * config.pipeline_parallel
    stage = config.zero_stage

    def shard(nbytes: float, from_stage: int) -> float:
        return nbytes / model_parallel / (data_parallel if stage >= from_stage else 1)

    trainable = _trainable_params(model, config)
    per_param = _FP32_ADAM if config.precision == Precision.FP32 else _MIXED_PRECISION_ADAM
    if config.method == TrainingMethod.FULL:
        weights = shard(per_param[0] * trainable, 3)
    else:
        frozen_precision = Precision.NF4 if config.method == TrainingMethod.QLORA else Precision.BF16
        frozen = weights_bytes(model, frozen_precision)
        weights = shard(frozen + per_param[0] * trainable, 3)
    return weights, shard(per_param[1] * trainable, 2), shard(per_param[2] * trainable, 1)


def _layer_activation_bytes(model: ModelArchitecture, tokens: float) -> float:
    """One layer's stored activations for `tokens` = s x b tokens (Korthikanti eq. 1, generalised)."""
    shapes = tensor_shapes(model)
    width = shapes.ffn_up / model.experts / model.hidden_size * model.experts_per_token
    mlp = (6.0 if model.gated_mlp else 4.0) * width
    return tokens * (18.0 * model.hidden_size + mlp)


def _activation_bytes(model: ModelArchitecture, config: TrainingConfig) -> float:
    tokens = float(config.sequence_length * config.micro_batch_size)
    tp = config.tensor_parallel
    per_layer = _layer_activation_bytes(model, tokens) / tp
    output_layer = 4.0 * tokens * model.hidden_size * (1.0 + model.vocab_size / model.hidden_size) / tp
    if config.activation_checkpointing:
        return 2.0 * tokens * model.hidden_size * model.layers / tp + per_layer + output_layer
    return per_layer * model.layers + output_layer


def _memory(model: ModelArchitecture, config: TrainingConfig, data_parallel: int) -> TrainingMemory:
    weights, gradients, optimizer = _state_bytes(model, config, data_parallel)
    return TrainingMemory(
        weights_gb=weights / _GB,
        gradients_gb=gradients / _GB,
        optimizer_gb=optimizer / _GB,
        activations_gb=_activation_bytes(model, config) / _GB,
    )


def _min_accelerators(model: ModelArchitecture, config: TrainingConfig, capacity_gb: float) -> int | None:
    """Fewest accelerators that fit. Memory per accelerator is A + B / dp (ZeRO shards scale as
    1/dp), so dp >= B / (capacity - A) in closed form."""
    at_one = _memory(model, config, 1).total_gb
    at_infinity = _memory(model, config, 10**12).total_gb  # the unshardable part A
    if at_infinity > capacity_gb:
        return None
    shardable = at_one - at_infinity
    data_parallel = 1 if shardable <= 0 else max(1, math.ceil(shardable / (capacity_gb - at_infinity) - 1e-9))
    while _memory(model, config, data_parallel).total_gb > capacity_gb:  # guard float rounding
        data_parallel += 1
    return data_parallel * config.tensor_parallel * config.pipeline_parallel


# ---- time ---------------------------------------------------------------------------------------


def _communication_seconds(
    model: ModelArchitecture, accelerator: AcceleratorSpec, config: TrainingConfig, bus_fraction: float
) -> float | None:
    """Seconds of data-parallel collectives per micro-step; None when a needed link is unknown.

    NCCL runs one ring per NIC, so inside a node the ring volume crosses the accelerator's own link,
    while across nodes the whole node's NICs share it: the node boundary carries the ring volume
    once per node, over accelerators_per_node x the per-accelerator inter-node bandwidth. The
    slower of the two paths sets the time.
    """
    if config.data_parallel == 1 and config.pipeline_parallel == 1:
        return 0.0
    volume = _communication_bytes(model, config)
    intra = accelerator.interconnect_gb_s
    if intra is None:
        return None
    seconds = volume / (intra * 1e9 * bus_fraction)
    if config.nodes > 1:
        internode = config.internode_bandwidth_gb_s or REFERENCE_INTERNODE_GB_S
        node_link = min(config.accelerators_per_node, config.accelerator_count) * internode
        seconds = max(seconds, volume / (node_link * 1e9 * bus_fraction))
    return seconds


def _communication_bytes(model: ModelArchitecture, config: TrainingConfig) -> float:
    """Bytes one accelerator sends per micro-step for data parallelism (ring collectives move
    (d-1)/d of the buffer). ZeRO-3 all-gathers the 16-bit weights for the forward and again for
    the backward pass and reduce-scatters gradients (ZeRO paper §7.2: 1.5x the all-reduce volume
    of plain data parallelism); lower stages all-reduce the gradients (reduce-scatter + all-gather).
    Every micro-step is charged, as FSDP does without gradient accumulation."""
    dp = config.data_parallel
    ring = (dp - 1) / dp
    element = 4.0 if config.precision == Precision.FP32 else 2.0
    model_parallel = config.tensor_parallel * config.pipeline_parallel
    gradients = element * _trainable_params(model, config) / model_parallel
    if config.zero_stage < 3:
        return 2.0 * ring * gradients + _pipeline_bytes(model, config)
    if config.method == TrainingMethod.FULL:
        weights = element * model.total_params
    else:
        frozen = Precision.NF4 if config.method == TrainingMethod.QLORA else Precision.BF16
        weights = weights_bytes(model, frozen)
    return ring * (2.0 * weights / model_parallel + gradients) + _pipeline_bytes(model, config)


def _pipeline_bytes(model: ModelArchitecture, config: TrainingConfig) -> float:
    """Bytes a stage sends per micro-batch: its output activation forward and the gradient of its
    input backward, 16-bit, split over the tensor-parallel group (sequence parallelism)."""
    if config.pipeline_parallel == 1:
        return 0.0
    micro_tokens = float(config.micro_batch_size * config.sequence_length)
    return 2.0 * 2.0 * micro_tokens * model.hidden_size / config.tensor_parallel


def pipeline_bubble(config: TrainingConfig) -> float:
    """(m + p - 1) / m: the share of a step's compute time the 1F1B pipeline takes (1 without one)."""
    p = config.pipeline_parallel
    if p == 1:
        return 1.0
    sequences = GLOBAL_BATCH_TOKENS / config.sequence_length
    micro_batches = max(1.0, sequences / (config.micro_batch_size * config.data_parallel))
    return (micro_batches + p - 1) / micro_batches


def _utilisation(
    model: ModelArchitecture, accelerator: AcceleratorSpec, config: TrainingConfig, table: EfficiencyTable
) -> tuple[float, str]:
    """Matmul utilisation of the family and dtype, scaled down for narrow models, and where the
    family's figure comes from."""
    family, dtype = accelerator.family, compute_dtype(config.precision)
    key = table.training_key(family, dtype)
    base = table.training[key]
    half = table.training_scaling.hidden_half_size
    utilisation = base.hardware_flops_fraction * model.hidden_size / (model.hidden_size + half)
    return utilisation, _efficiency_source(family, config.precision, key, base.provenance)


def _efficiency_source(
    family: str, precision: Precision, key: tuple[str, ComputeDtype], provenance: str
) -> str:
    """The family's own fit, or the all-family figure standing in for a family (or precision)
    with none: "training efficiency of volta at fp16: no fit for volta at fp16; the all-family
    bf16 figure stands in: median of the fitted families (ampere, hopper)"."""
    run = f"training efficiency of {family} at {precision.value}"
    if key[0] != family:
        stand_in = f"the all-family {key[1].value} figure stands in"
        return f"{run}: no fit for {family} at {precision.value}; {stand_in}: {provenance}"
    if key[1].value != precision.value:
        return f"{run}: the {key[1].value} fit, {provenance}"
    return f"{run}: {provenance}"


@dataclass(frozen=True, slots=True)
class _Timing:
    seconds: float
    communication_bound: bool


def _timing(
    model: ModelArchitecture,
    accelerator: AcceleratorSpec,
    config: TrainingConfig,
    table: EfficiencyTable,
    flops: _Flops,
    peak_tflops: float,
    utilisation: float,
) -> _Timing:
    """A micro-step takes the longer of its compute and its (overlapped) communication."""
    per_token_dense = flops.dense_executed / config.tokens
    per_token_attention = flops.attention_executed / config.tokens
    attention_speed = utilisation * table.training_scaling.attention_relative_efficiency
    micro_tokens = float(config.micro_batch_size * config.sequence_length)
    compute_s = (
        micro_tokens
        * (per_token_dense / utilisation + per_token_attention / attention_speed)
        / (config.tensor_parallel * config.pipeline_parallel * peak_tflops * 1e12)
        * pipeline_bubble(config)
    )
    communication_s = _communication_seconds(model, accelerator, config, table.allreduce_bus_fraction) or 0.0
    step_s = max(compute_s, communication_s)
    micro_steps = config.tokens / (micro_tokens * config.data_parallel)
    return _Timing(micro_steps * step_s, communication_s > compute_s)


def estimate_training(
    model: ModelArchitecture,
    accelerator: AcceleratorSpec,
    config: TrainingConfig,
    efficiency: EfficiencyTable = DEFAULT_EFFICIENCY,
) -> TrainingEstimate:
    """Memory, fewest accelerators, FLOPs, utilisation and time of a training job. Raises
    InvalidSpec for a layout or a precision the accelerator cannot run."""
    problem = accelerator.training_problem(config.precision)
    if problem is not None:
        raise InvalidSpec("precision", problem)
    if model.attention_heads % config.tensor_parallel:
        raise InvalidSpec(
            "tensor_parallel",
            f"{config.tensor_parallel} does not divide {model.attention_heads} attention heads",
        )
    if model.layers % config.pipeline_parallel:
        raise InvalidSpec(
            "pipeline_parallel",
            f"{config.pipeline_parallel} does not divide the model's {model.layers} layers",
        )
    capacity = accelerator.usable_memory_gb
    memory = _memory(model, config, config.data_parallel)
    flops = _flops(model, config)
    model_flops = flops.dense_model + flops.attention_model
    executed = flops.dense_executed + flops.attention_executed
    peak = accelerator.peak_tflops(compute_dtype(config.precision))
    utilisation, source = _utilisation(model, accelerator, config, efficiency)
    notes = [source]
    mfu = hfu = tokens_per_s = accelerator_hours = wall_clock = None
    run: WholeRun | None = None
    if peak is None:
        notes.append("the accelerator publishes no compute peak for this precision; time is not estimated")
    else:
        timing = _timing(model, accelerator, config, efficiency, flops, peak, utilisation)
        capacity_flops = timing.seconds * config.accelerator_count * peak * 1e12
        mfu, hfu = model_flops / capacity_flops, executed / capacity_flops
        tokens_per_s = config.tokens / timing.seconds / config.accelerator_count
        wall_clock = timing.seconds / 3600.0
        accelerator_hours = wall_clock * config.accelerator_count
        run = whole_run(wall_clock, config.accelerator_count, efficiency.whole_run)
        if timing.communication_bound:
            notes.append(
                "data-parallel communication takes longer than compute: the job is interconnect-bound"
            )
    communication_priced = (
        _communication_seconds(model, accelerator, config, efficiency.allreduce_bus_fraction) is not None
    )
    if not communication_priced:
        notes.append("no interconnect figure for this accelerator; data-parallel communication not priced")
    if config.tensor_parallel > 1:
        notes.append("tensor-parallel communication is assumed to stay inside a node and is not priced")
    if config.pipeline_parallel > 1:
        notes.append(
            f"pipeline-parallel {config.pipeline_parallel} stages (1F1B): the bubble adds "
            f"{pipeline_bubble(config) - 1:.0%} to compute time at a global batch of "
            f"{GLOBAL_BATCH_TOKENS / 1e6:g}M tokens"
        )
    if config.method == TrainingMethod.QLORA:
        notes.append("QLoRA's NF4 dequantisation cost is not modelled (no calibration rows)")
    shortfall = max(memory.total_gb - capacity, 0.0)
    return TrainingEstimate(
        memory_per_accelerator_gb=memory.total_gb,
        memory=memory,
        available_gb=capacity,
        fits=shortfall == 0.0,
        shortfall_gb=shortfall,
        min_accelerators=_min_accelerators(model, config, capacity),
        trainable_params=_trainable_params(model, config),
        model_flops=model_flops,
        total_flops=executed,
        mfu=mfu,
        hfu=hfu,
        tokens_per_s_per_accelerator=tokens_per_s,
        accelerator_hours=accelerator_hours,
        wall_clock_hours=wall_clock,
        efficiency_version=efficiency.version,
        notes=tuple(notes),
        whole_run=run,
        communication_priced=communication_priced,
        efficiency_source=source,
    )


def memory_per_accelerator_gb(model: ModelArchitecture, config: TrainingConfig) -> float:
    """Memory one accelerator holds for `config` (the figure `estimate_training` checks), without
    estimating time: the cheap test a search over settings runs first."""
    return _memory(model, config, config.data_parallel).total_gb


def fewest_accelerators(model: ModelArchitecture, config: TrainingConfig, capacity_gb: float) -> int | None:
    """Fewest accelerators that hold `config` in `capacity_gb` each; None when none do."""
    return _min_accelerators(model, config, capacity_gb)
