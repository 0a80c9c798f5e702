"""Inference estimates: memory, time to first token, time per output token, throughput, capacity.

`estimate_inference` is the service-level entry point. It
1. checks the layout (tensor-parallel degree divides the heads, the interconnect is known, the
   context fits the model),
2. sizes memory per replica: weights, KV cache at the peak context, activations, the engine's
   reserved share, and the largest concurrency that fits,
3. prices a prefill and a decode step with the roofline (roofline.py) using calibrated
   efficiencies, adds the interference between requests, and reports which bound applies,
4. if TTFT/TPOT targets are given, finds the largest sustainable request rate by evaluating every
   batch size at once and applying Little's law (concurrency = rate x time in system), the same
   capacity search vidur's `capacity_search.py` does by bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from wheretorun.engine.config import (
    InferenceConfig,
    ServingEngine,
    SpeculativeDecoding,
    accumulates_in_fp16,
    engine_memory_fraction,
)
from wheretorun.engine.efficiency import EfficiencyTable, ServingEfficiency
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.memory import kv_cache_bytes_per_sequence, tensor_shapes, weights_bytes
from wheretorun.engine.precision import Precision, compute_dtype, kv_bytes_per_element
from wheretorun.engine.roofline import (
    Array,
    Deployment,
    PassCost,
    decode_pass,
    float64s,
    nan_to_num,
    pipelined_prefill_seconds,
    prefill_pass,
    where,
)
from wheretorun.engine.specs import AcceleratorSpec, AttentionKind, ModelArchitecture

__all__ = [
    "Bound",
    "InferenceEstimate",
    "MemoryEstimate",
    "PerformanceEstimate",
    "RequestRate",
    "activation_bytes",
    "available_bytes",
    "build_deployment",
    "estimate_inference",
    "kv_replication",
    "prefill_chunk_tokens",
    "queueing_latencies",
]

_GB = 1e9
_LOGIT_BYTES = 4.0  # logits upcast to fp32 for sampling (transformers LlamaForCausalLM: logits.float())
_ACTIVATION_BYTES = 2.0  # activations in 16-bit
# Tokens one prefill pass processes at most (chunked prefill / micro-batch), engine defaults:
# llama.cpp `n_ubatch = 512` (common/common.h); SGLang `chunked_prefill_size = 8192` on GPUs with
# >= 25 GB (sglang/srt/server_args.py); TensorRT-LLM `max_num_tokens = 8192` (BuildConfig default).
_PREFILL_CHUNK_TOKENS = {ServingEngine.LLAMA_CPP: 512}
_DEFAULT_PREFILL_CHUNK_TOKENS = 8192
_MAX_SEARCHED_BATCH = 4096  # a bound of the capacity search (for speed), not of any hardware
_MAX_QUEUE_UTILISATION = 0.95  # keeps the M/D/1 wait finite when prefills nearly saturate the GPU


def _arr(value: float) -> Array:
    """`value` as a float64 the roofline formulas broadcast. A numpy scalar, not a 0-d array: the
    same IEEE arithmetic (the same answers), at a sixth of the cost per operation (~100 ns against
    ~600 ns), which is most of an estimate's (173 -> 124 us, 2026-12-04)."""
    return np.float64(value)  # type: ignore[return-value]  # a scalar broadcasts as a 0-d array does


class Bound(StrEnum):
    MEMORY_BANDWIDTH = "memory_bandwidth"
    COMPUTE = "compute"
    INTERCONNECT = "interconnect"


@dataclass(frozen=True, slots=True)
class MemoryEstimate:
    """Memory across all accelerators of the deployment, in GB (1e9 bytes)."""

    weights_gb: float
    kv_cache_gb: float
    kv_cache_per_sequence_gb: float
    activations_gb: float
    total_gb: float  # weights + KV cache + activations on the accelerators
    available_gb: float  # what the serving engine lets the model use
    reserved_gb: float  # held back by the engine's memory fraction
    offloaded_gb: float  # weights and KV kept in host RAM (CPU offload)
    fits: bool
    shortfall_gb: float
    max_concurrency: int


@dataclass(frozen=True, slots=True)
class PerformanceEstimate:
    ttft_ms: float | None  # None when the accelerator publishes no compute peak
    tpot_ms: float
    output_tokens_per_s_per_sequence: float
    output_tokens_per_s: float  # online, at the requested concurrency (Little's law)
    batch_output_tokens_per_s: float | None  # offline: requests prefilled and decoded as a batch
    prefill_ms: float | None
    decode_step_ms: float
    bound: Bound
    bound_reason: str


@dataclass(frozen=True, slots=True)
class RequestRate:
    """The largest sustainable load under the TTFT/TPOT targets."""

    requests_per_s: float
    concurrency: int
    ttft_ms: float
    tpot_ms: float


@dataclass(frozen=True, slots=True)
class InferenceEstimate:
    memory: MemoryEstimate
    performance: PerformanceEstimate
    max_request_rate: RequestRate | None
    replicas: int
    efficiency_version: str
    efficiency_provenance: str
    notes: tuple[str, ...]


# ---- validation ---------------------------------------------------------------------------------


def _validate_layout(model: ModelArchitecture, accelerator: AcceleratorSpec, config: InferenceConfig) -> None:
    problem = accelerator.serving_problem(config.weight_precision)
    if problem is not None:
        raise InvalidSpec("weight_precision", problem)
    tp = config.tp
    if model.attention_heads % tp:
        raise InvalidSpec(
            "tensor_parallel", f"{tp} does not divide the model's {model.attention_heads} attention heads"
        )
    if config.pipeline_parallel > model.layers:
        raise InvalidSpec("pipeline_parallel", f"more stages than the model's {model.layers} layers")
    if tp > 1 and accelerator.interconnect_gb_s is None:
        raise InvalidSpec(
            "accelerator.interconnect_gb_s",
            "tensor parallelism needs the accelerator's interconnect bandwidth",
        )
    if config.input_tokens + config.output_tokens > model.max_context:
        raise InvalidSpec(
            "input_tokens",
            f"input + output = {config.input_tokens + config.output_tokens} tokens exceeds the model's "
            f"context of {model.max_context}",
        )
    offload = config.cpu_offload
    if offload is not None and offload.gpu_layers is not None and offload.gpu_layers > model.layers:
        raise InvalidSpec(
            "cpu_offload.gpu_layers",
            f"{offload.gpu_layers} layers on the GPU, but the model has {model.layers}",
        )
    if config.speculative is not None and config.speculative.draft_model.attention_heads % tp:
        raise InvalidSpec(
            "speculative.draft_model", f"tensor parallel {tp} does not divide the draft's heads"
        )


# ---- memory -------------------------------------------------------------------------------------


def kv_replication(model: ModelArchitecture, tp: npt.ArrayLike) -> Array:
    """How many copies of each cached element a tensor-parallel group holds.

    KV heads are split across ranks; with fewer KV heads than ranks each head is replicated
    (tp / kv_heads copies). An MLA latent has no heads to split and sits on every rank.
    """
    ranks = float64s(tp)
    if model.attention == AttentionKind.MLA:
        return ranks
    return np.maximum(1.0, ranks / model.kv_heads)


def _mlp_width_per_token(model: ModelArchitecture) -> float:
    """Width of the MLP activations one token creates (x2 for gate and up of a gated MLP)."""
    shapes = tensor_shapes(model)
    per_expert = shapes.ffn_up / model.experts
    width = per_expert / model.hidden_size
    return width * (2 if model.gated_mlp else 1) * model.experts_per_token


def prefill_chunk_tokens(engine: ServingEngine) -> int:
    return _PREFILL_CHUNK_TOKENS.get(engine, _DEFAULT_PREFILL_CHUNK_TOKENS)


def activation_bytes(
    model: ModelArchitecture, chunk_tokens: float, input_tokens: Array, concurrency: Array, tp: Array
) -> Array:
    """Transient activations of the largest pass of one replica: the residual stream and its
    normalised copy on every TP rank, the MLP intermediate (split over ranks), and fp32 logits
    per sequence. A pass holds at most `chunk_tokens` prompt tokens (chunked prefill)."""
    tokens = np.maximum(np.minimum(input_tokens, chunk_tokens), concurrency)
    per_token = (2.0 * model.hidden_size * tp + _mlp_width_per_token(model)) * _ACTIVATION_BYTES
    logits = concurrency * model.vocab_size * _LOGIT_BYTES
    return float64s(tokens * per_token + logits)


def available_bytes(
    capacity: Array, fraction: Array, of_free: npt.NDArray[np.bool_] | np.bool_, resident: Array
) -> tuple[Array, Array]:
    """(available, reserved) bytes of a replica after the engine's memory fraction, which applies
    to the whole device or (TensorRT-LLM) to what is free after weights and activations."""
    base = where(of_free, np.maximum(capacity - resident, 0.0), capacity)
    reserved = (1.0 - fraction) * base
    return capacity - reserved, reserved


def _draft_bytes(config: InferenceConfig) -> tuple[float, float]:
    """Weights and per-sequence KV of a speculative draft model (0 without one)."""
    spec = config.speculative
    if spec is None:
        return 0.0, 0.0
    context = config.input_tokens + config.output_tokens
    weights = weights_bytes(spec.draft_model, config.weight_precision)
    kv = float(kv_cache_bytes_per_sequence(spec.draft_model, config.kv_cache_precision, context))
    return weights, kv * float(kv_replication(spec.draft_model, config.tp))


@dataclass(frozen=True, slots=True)
class _ReplicaMemory:
    estimate: MemoryEstimate
    host_fraction: float
    max_concurrency_per_replica: int


def _available_bytes(
    accelerator: AcceleratorSpec, config: InferenceConfig, resident: float
) -> tuple[float, float]:
    capacity = config.group_size * accelerator.usable_memory_gb * _GB
    fraction, of_free = engine_memory_fraction(config.engine, config.tp)
    available, reserved = available_bytes(_arr(capacity), _arr(fraction), np.bool_(of_free), _arr(resident))
    return float(available), float(reserved)


def _gpu_layers(model: ModelArchitecture, config: InferenceConfig, room: float, per_layer: float) -> int:
    offload = config.cpu_offload
    assert offload is not None
    fitting = int(room // per_layer) if per_layer > 0 else model.layers
    chosen = offload.gpu_layers if offload.gpu_layers is not None else fitting
    return max(0, min(chosen, model.layers))


def _replica_memory(
    model: ModelArchitecture, accelerator: AcceleratorSpec, config: InferenceConfig
) -> _ReplicaMemory:
    draft_weights, draft_kv = _draft_bytes(config)
    weights = weights_bytes(model, config.weight_precision) + draft_weights
    context = config.input_tokens + config.output_tokens
    kv_per_seq = float(kv_cache_bytes_per_sequence(model, config.kv_cache_precision, context))
    kv_per_seq = kv_per_seq * float(kv_replication(model, config.tp)) + draft_kv
    concurrency = config.concurrency_per_replica
    kv_total = kv_per_seq * concurrency
    activations = float(
        activation_bytes(
            model,
            prefill_chunk_tokens(config.engine),
            _arr(config.input_tokens),
            _arr(concurrency),
            _arr(config.tp),
        )
    )

    available, reserved = _available_bytes(accelerator, config, weights + activations)
    host_fraction = 0.0
    if config.cpu_offload is not None:
        per_layer = (weights + kv_total) / model.layers
        gpu_layers = _gpu_layers(model, config, available - activations, per_layer)
        host_fraction = (model.layers - gpu_layers) / model.layers
    on_device = (weights + kv_total) * (1 - host_fraction) + activations
    offloaded = (weights + kv_total) * host_fraction
    kv_budget = available - activations - weights * (1 - host_fraction)
    kv_room_per_seq = kv_per_seq * (1 - host_fraction)
    max_concurrency = int(kv_budget // kv_room_per_seq) if kv_budget > 0 and kv_room_per_seq > 0 else 0
    shortfall = max(on_device - available, 0.0)

    replicas = config.replicas
    estimate = MemoryEstimate(
        weights_gb=weights * replicas / _GB,
        kv_cache_gb=kv_total * replicas / _GB,
        kv_cache_per_sequence_gb=kv_per_seq / _GB,
        activations_gb=activations * replicas / _GB,
        total_gb=on_device * replicas / _GB,
        available_gb=available * replicas / _GB,
        reserved_gb=reserved * replicas / _GB,
        offloaded_gb=offloaded * replicas / _GB,
        fits=shortfall == 0.0,
        shortfall_gb=shortfall * replicas / _GB,
        max_concurrency=max_concurrency * replicas,
    )
    return _ReplicaMemory(estimate, host_fraction, max_concurrency)


# ---- performance --------------------------------------------------------------------------------


def build_deployment(
    model: ModelArchitecture,
    accelerator: AcceleratorSpec,
    config: InferenceConfig,
    serving: ServingEfficiency,
    table: EfficiencyTable,
    *,
    host_fraction: float = 0.0,
) -> Deployment:
    """The roofline inputs of one replica of `model` on `config.group_size` accelerators."""
    weights = weights_bytes(model, config.weight_precision)
    bytes_per_param = weights / model.total_params
    expert_bytes = model.params_per_expert * bytes_per_param
    peak = accelerator.peak_tflops(
        compute_dtype(config.weight_precision), accumulates_in_fp16(config.engine, config.weight_precision)
    )
    kv_element = kv_bytes_per_element(config.kv_cache_precision)
    offload = config.cpu_offload
    return Deployment(
        layers=_arr(model.layers),
        window_layers=_arr(model.sliding_window_layers),
        window=_arr(model.sliding_window or 0),
        hidden=_arr(model.hidden_size),
        attention_width=_arr(model.attention_width),
        kv_bytes_per_token_layer=model.cached_elements_per_layer
        * kv_element
        * kv_replication(model, config.tp),
        shared_weight_bytes=_arr(weights - model.experts * expert_bytes),
        expert_weight_bytes=_arr(expert_bytes),
        experts=_arr(model.experts),
        experts_per_token=_arr(model.experts_per_token),
        matmul_params=_arr(model.matmul_params_per_token),
        lm_head_params=_arr(model.vocab_size * model.hidden_size),
        tp=_arr(config.tp),
        bandwidth_gb_s=_arr(accelerator.memory_bandwidth_gb_s),
        peak_tflops=_arr(math.nan if peak is None else peak),
        link_gb_s=_arr(accelerator.interconnect_gb_s or math.nan),
        bandwidth_fraction=_arr(serving.bandwidth_fraction),
        compute_fraction=_arr(serving.compute_fraction),
        layer_overhead_ms=_arr(serving.layer_overhead_ms),
        allreduce_latency_us=_arr(table.allreduce_latency_us),
        allreduce_bus_fraction=_arr(table.allreduce_bus_fraction),
        host_fraction=_arr(host_fraction),
        host_bandwidth_gb_s=_arr(offload.host_memory_bandwidth_gb_s if offload else math.nan),
    )


@dataclass(frozen=True, slots=True)
class _Latencies:
    """Per-request timings at concurrency `batch` (arrays broadcast over batch)."""

    prefill_s: Array
    step: PassCost  # one target decode step at the batch
    decode_step_s: Array  # seconds per generated token of one sequence, before interference
    tpot_s: Array
    ttft_s: Array
    batch_prefill_s: Array  # all `batch` prompts prefilled in one pass (offline batches)


def _speculative_step_s(
    target: Deployment, draft: Deployment, spec: SpeculativeDecoding, batch: Array, context: Array
) -> tuple[PassCost, Array]:
    """Seconds per accepted token with a draft model: gamma draft steps + one verify pass, divided
    by the expected tokens per pass (1 - alpha^(gamma+1)) / (1 - alpha) (Leviathan et al. eq. 1)."""
    gamma = float(spec.draft_tokens)
    alpha = spec.acceptance_rate
    verify = decode_pass(target, batch, context, gamma + 1.0)
    drafting = gamma * decode_pass(draft, batch, context).total_s
    expected_tokens = (1.0 - alpha ** (gamma + 1.0)) / (1.0 - alpha)
    return verify, (verify.total_s + drafting) / expected_tokens


def _latencies(
    target: Deployment,
    config: InferenceConfig,
    batch: Array,
    draft: Deployment | None = None,
) -> _Latencies:
    prompt = _arr(config.input_tokens)
    output = float(config.output_tokens)
    mean_context = _arr(config.input_tokens + config.output_tokens / 2.0)
    prefill_s = pipelined_prefill_seconds(
        prefill_pass(target, prompt).total_s,
        prompt,
        _arr(prefill_chunk_tokens(config.engine)),
        _arr(config.pipeline_parallel),
    )
    if config.speculative is not None and draft is not None:
        step, step_s = _speculative_step_s(target, draft, config.speculative, batch, mean_context)
        prefill_s = prefill_s + prefill_pass(draft, prompt).total_s
    else:
        step = decode_pass(target, batch, mean_context)
        step_s = step.total_s
    tpot_s, ttft_s = queueing_latencies(prefill_s, step_s, batch, _arr(output))
    batch_prefill_s = prefill_pass(target, prompt, batch).total_s
    return _Latencies(prefill_s, step, step_s, tpot_s, ttft_s, batch_prefill_s)


def queueing_latencies(
    prefill_s: Array, step_s: Array, batch: Array, output_tokens: Array
) -> tuple[Array, Array]:
    """(TPOT, TTFT) in seconds of one request among `batch` concurrent ones.

    Other requests' prefills interrupt this one's decoding, (batch - 1) of them per generation.
    A new request waits for prefills in progress: the M/D/1 mean wait rho T / (2 (1 - rho))
    (Pollaczek-Khinchine formula, deterministic service time T = prefill), rho being the share of
    time spent on other requests' prefills (capped at 0.95).
    """
    known_prefill_s = nan_to_num(prefill_s)  # unknown prefill (no compute peak): no interference
    tpot_s = step_s + (batch - 1.0) * known_prefill_s / output_tokens
    cycle_s = prefill_s + output_tokens * tpot_s
    rho = np.minimum((batch - 1.0) * prefill_s / cycle_s, _MAX_QUEUE_UTILISATION)
    ttft_s = prefill_s * (1.0 + rho / (2.0 * (1.0 - rho)))
    return float64s(tpot_s), float64s(ttft_s)


def _bound(step: PassCost) -> tuple[Bound, str]:
    memory_s = float(step.memory_s)
    compute_s = float(nan_to_num(step.compute_s))
    interconnect_s = float(step.interconnect_s)
    parts = {Bound.MEMORY_BANDWIDTH: memory_s, Bound.COMPUTE: compute_s, Bound.INTERCONNECT: interconnect_s}
    bound = max(parts, key=lambda key: parts[key])
    reason = (
        f"decode step: moving {float(step.bytes_per_accelerator) / _GB:.2f} GB per accelerator takes "
        f"{memory_s * 1e3:.2f} ms, {float(step.flops_per_accelerator) / 1e12:.3f} TFLOP takes "
        f"{compute_s * 1e3:.2f} ms, tensor-parallel all-reduces {interconnect_s * 1e3:.2f} ms, "
        f"fixed per-layer overhead {float(step.overhead_s) * 1e3:.2f} ms"
    )
    if math.isnan(float(step.compute_s)):
        reason += "; the accelerator publishes no compute peak for this precision, so compute is not bounded"
    return bound, reason


def _optional_ms(seconds: Array) -> float | None:
    value = float(seconds)
    return None if math.isnan(value) else value * 1e3


def _performance(lat: _Latencies, config: InferenceConfig, replicas: int) -> PerformanceEstimate:
    batch = float(config.concurrency_per_replica)
    output = float(config.output_tokens)
    tpot_s = float(lat.tpot_s)
    ttft_s = float(lat.ttft_s)
    # Little's law with the decode-only time when the prefill cannot be estimated.
    in_system_s = (0.0 if math.isnan(ttft_s) else ttft_s) + output * tpot_s
    batch_time_s = float(lat.batch_prefill_s) + output * float(lat.decode_step_s)
    bound, reason = _bound(lat.step)
    return PerformanceEstimate(
        ttft_ms=_optional_ms(lat.ttft_s),
        tpot_ms=tpot_s * 1e3,
        output_tokens_per_s_per_sequence=1.0 / tpot_s,
        output_tokens_per_s=replicas * batch * output / in_system_s,
        batch_output_tokens_per_s=None
        if math.isnan(batch_time_s)
        else replicas * batch * output / batch_time_s,
        prefill_ms=_optional_ms(lat.prefill_s),
        decode_step_ms=float(lat.decode_step_s) * 1e3,
        bound=bound,
        bound_reason=reason,
    )


def _max_request_rate(
    target: Deployment,
    config: InferenceConfig,
    max_concurrency: int,
    replicas: int,
    draft: Deployment | None,
) -> RequestRate | None:
    """Largest load meeting both targets: evaluate every batch size at once, keep the largest that
    meets them, and convert concurrency to a rate with Little's law."""
    if max_concurrency < 1:
        return None
    batch = np.arange(1, min(max_concurrency, _MAX_SEARCHED_BATCH) + 1, dtype=np.float64)
    lat = _latencies(target, config, batch, draft)
    ok = np.ones_like(batch, dtype=bool)
    if config.ttft_target_ms is not None:
        ok &= lat.ttft_s * 1e3 <= config.ttft_target_ms
    if config.tpot_target_ms is not None:
        ok &= lat.tpot_s * 1e3 <= config.tpot_target_ms
    if not ok.any():
        return None
    best = int(np.flatnonzero(ok)[-1])
    ttft_s = float(lat.ttft_s[best])
    tpot_s = float(lat.tpot_s[best])
    rate = replicas * batch[best] / (ttft_s + config.output_tokens * tpot_s)
    return RequestRate(float(rate), int(batch[best]) * replicas, ttft_s * 1e3, tpot_s * 1e3)


# ---- entry point --------------------------------------------------------------------------------


def _notes(
    config: InferenceConfig, serving: ServingEfficiency, memory: _ReplicaMemory, perf: PerformanceEstimate
) -> tuple[str, ...]:
    notes = [f"efficiency: {serving.provenance}"]
    if memory.host_fraction > 0:
        notes.append(
            f"{memory.host_fraction:.0%} of layers run from host RAM at the given host bandwidth "
            "(not calibrated); prefill of those layers is not modelled beyond reading their weights"
        )
    if perf.ttft_ms is None:
        notes.append("TTFT needs the accelerator's compute peak, which is not published for it")
    if config.speculative is not None:
        notes.append("speculative decoding uses the acceptance rate given; no calibration rows cover it")
    if config.pipeline_parallel > 1:
        notes.append(
            "pipeline stages overlap prompt chunks in prefill; in decode they run one after another "
            "(micro-batch overlap across sequences is not modelled)"
        )
    if config.weight_precision in (Precision.FP4,):
        notes.append("FP4 compute peak falls back to FP8 where the spec gives no FP4 figure")
    return tuple(notes)


def estimate_inference(
    model: ModelArchitecture,
    accelerator: AcceleratorSpec,
    config: InferenceConfig,
    efficiency: EfficiencyTable = DEFAULT_EFFICIENCY,
) -> InferenceEstimate:
    """Memory, latency, throughput and (with targets) capacity of serving `model` on
    `config.accelerator_count` x `accelerator`. Raises InvalidSpec for impossible layouts and for
    weights the accelerator cannot serve (its `precision_support`)."""
    _validate_layout(model, accelerator, config)
    serving = efficiency.serving_for(config.engine, accelerator.memory_kind)
    memory = _replica_memory(model, accelerator, config)
    target = build_deployment(
        model, accelerator, config, serving, efficiency, host_fraction=memory.host_fraction
    )
    draft = None
    if config.speculative is not None:
        draft = build_deployment(config.speculative.draft_model, accelerator, config, serving, efficiency)
    batch = _arr(config.concurrency_per_replica)
    performance = _performance(_latencies(target, config, batch, draft), config, config.replicas)
    rate = None
    if config.ttft_target_ms is not None or config.tpot_target_ms is not None:
        rate = _max_request_rate(target, config, memory.max_concurrency_per_replica, config.replicas, draft)
    return InferenceEstimate(
        memory=memory.estimate,
        performance=performance,
        max_request_rate=rate,
        replicas=config.replicas,
        efficiency_version=efficiency.version,
        efficiency_provenance=serving.provenance,
        notes=_notes(config, serving, memory, performance),
    )
