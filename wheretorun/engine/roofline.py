"""Roofline cost of one forward pass, vectorised over deployments, batches and contexts.

A pass moves bytes (weights it reads + KV cache it reads or writes) and does FLOPs. Its time is

    max(bytes / (bandwidth x bandwidth_fraction), flops / (peak x compute_fraction))
      + tensor-parallel all-reduces + layers x per-layer overhead

with the fractions calibrated (efficiency.py) and never above 1, so no estimate beats the physical
roofline. Every function takes numpy arrays (0-d for a single estimate, 1-d for a sweep) so the
single estimate and the 10,000-configuration sweep run the same formulas.

Formulas and their sources
* MoE weights read at a step: a token picks top_k of E experts per layer; with B tokens the
  expected number of distinct experts is E x (1 - (1 - k/E)^B) (each expert is missed by one token
  with probability 1 - k/E; tokens treated as independent). Memory holds all E.
* FLOPs: 2 per multiply-accumulate; a token's matmuls cost 2 x active matmul parameters. Scores
  QK^T cost 2 x context x heads x head_dim per token per layer (Kaplan et al. 2020,
  arXiv:2001.08361, Table 1, "2 n_layer n_ctx d_attn"), and the weighted sum over V the same
  again: 4 x heads x head_dim x context per layer, as in llm-foundry's benchmarking README
  (`attn_flops_per_seq = n_layers * 2 * 2 * (d_model * (seq_len**2))`). A causal prompt of n
  tokens attends to n (n + 1) / 2 positions in total.
* Tensor parallelism (Megatron-LM, Shoeybi et al. 2019, arXiv:1909.08053 §3): two all-reduces of
  the activations per layer in the forward pass. Ring all-reduce moves 2 (p-1)/p x message bytes
  over each link (NCCL tests "busbw" definition); achieved bus bandwidth is a calibrated fraction
  of the link's unidirectional figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "Array",
    "Deployment",
    "PassCost",
    "allreduce_seconds",
    "causal_attention_token_layers",
    "decode_pass",
    "experts_read",
    "pipelined_prefill_seconds",
    "prefill_pass",
    "where",
]

Array = npt.NDArray[np.float64]


def float64s(value: object) -> Array:
    """`value` as float64 values: an array (or a list) becomes a float64 array, a numpy float64
    scalar stays a scalar. Scalars are what an estimate computes with (`inference_estimate._arr`):
    the same arithmetic at a sixth of the cost of 0-d arrays."""
    if isinstance(value, np.float64):
        return value  # type: ignore[return-value]  # a scalar broadcasts as a 0-d array does
    return np.asarray(value, dtype=np.float64)


_ACTIVATION_BYTES = 2.0  # activations travel between ranks in 16-bit


@dataclass(frozen=True, slots=True)
class Deployment:
    """One model replica on its accelerators, as arrays (0-d or 1-d, broadcastable).

    Byte and FLOP figures cover the whole replica; divide by `tp` for one accelerator. Pipeline
    stages run one after another for a given token, so they do not shorten a pass (they only
    split memory); `tp` does.
    """

    layers: Array
    window_layers: Array  # layers with sliding-window attention
    window: Array  # window length (0 when there are none)
    hidden: Array
    attention_width: Array  # heads x head_dim
    kv_bytes_per_token_layer: Array  # cached bytes per token per layer, x replication over TP ranks
    shared_weight_bytes: Array  # weights every token reads (all of a dense model)
    expert_weight_bytes: Array  # one routed expert, all layers
    experts: Array
    experts_per_token: Array
    matmul_params: Array  # active parameters in matmuls, LM head included
    lm_head_params: Array  # vocab x hidden: a prefill needs logits for the last position only
    tp: Array
    bandwidth_gb_s: Array
    peak_tflops: Array  # NaN when the accelerator has no published figure
    link_gb_s: Array  # interconnect, unidirectional per accelerator; NaN when unknown
    bandwidth_fraction: Array
    compute_fraction: Array
    layer_overhead_ms: Array
    allreduce_latency_us: Array
    allreduce_bus_fraction: Array
    host_fraction: Array  # share of layers held in host RAM (CPU offload), else 0
    host_bandwidth_gb_s: Array  # NaN when nothing is offloaded


@dataclass(frozen=True, slots=True)
class PassCost:
    """Seconds of one forward pass and its parts (arrays broadcast like the inputs)."""

    total_s: Array
    memory_s: Array
    compute_s: Array
    interconnect_s: Array
    overhead_s: Array
    bytes_per_accelerator: Array
    flops_per_accelerator: Array


def nan_to_num(values: Array) -> Array:
    """`np.nan_to_num(values)` (NaN -> 0, infinities -> the largest finite values), without its
    ~7 us of dtype look-ups for a finite scalar, which it returns unchanged."""
    if isinstance(values, np.float64) and math.isfinite(values):
        return values
    return np.nan_to_num(values)


def where(
    condition: npt.NDArray[np.bool_] | np.bool_, values: Array, otherwise: Array | float = 0.0
) -> Array:
    """`np.where(condition, values, otherwise)`. For a scalar condition and scalar values (an
    estimate) the same value chosen in Python: np.where on scalars costs ~1.2 us, and an estimate
    calls it seven times (-120,000 instructions of its ~1.89M, 2026-12-05)."""
    if isinstance(condition, np.bool_) and isinstance(values, np.float64):
        return values if condition else np.float64(otherwise)
    return np.where(condition, values, otherwise)


def experts_read(experts: Array, experts_per_token: Array, tokens: Array) -> Array:
    """Expected distinct experts a layer reads for `tokens` tokens: E (1 - (1 - k/E)^tokens)."""
    miss = 1.0 - experts_per_token / experts
    return float64s(experts * (1.0 - np.power(miss, tokens)))


def allreduce_seconds(
    message_bytes: Array, tp: Array, link_gb_s: Array, bus_fraction: Array, latency_us: Array
) -> Array:
    """Ring all-reduce among `tp` ranks; zero when tp == 1."""
    transfer = 2.0 * (tp - 1.0) / tp * message_bytes / (link_gb_s * 1e9 * bus_fraction)
    return where(tp > 1, transfer + latency_us * 1e-6)


def causal_attention_token_layers(layers: Array, window_layers: Array, window: Array, n: Array) -> Array:
    """Sum over prompt positions p = 1..n of the tokens attended to, summed over layers.

    Full layers attend to p tokens, sliding-window layers to min(p, window).
    """
    full = (layers - window_layers) * n * (n + 1.0) / 2.0
    inside = np.minimum(n, window)
    windowed = inside * (inside + 1.0) / 2.0 + np.maximum(n - window, 0.0) * window
    return float64s(full + window_layers * windowed)


def _tokens_held(d: Deployment, context: Array) -> Array:
    """Layer-tokens held in cache at `context` (sliding-window layers cap at the window)."""
    return float64s((d.layers - d.window_layers) * context + d.window_layers * np.minimum(context, d.window))


def _pass_cost(
    d: Deployment, bytes_moved: Array, flops: Array, tokens: Array, *, need_compute_peak: bool
) -> PassCost:
    bytes_per_acc = bytes_moved / d.tp
    flops_per_acc = flops / d.tp
    device_s = (1.0 - d.host_fraction) * bytes_per_acc / (d.bandwidth_gb_s * 1e9 * d.bandwidth_fraction)
    host_s = where(d.host_fraction > 0, d.host_fraction * bytes_per_acc / (d.host_bandwidth_gb_s * 1e9))
    memory_s = device_s + host_s
    compute_s = flops_per_acc / (d.peak_tflops * 1e12 * d.compute_fraction)
    # Without a compute peak a memory-bound pass (decode) is still bounded by bandwidth; a
    # compute-bound one (prefill) cannot be estimated and comes out NaN.
    roof = np.maximum(memory_s, compute_s) if need_compute_peak else np.fmax(memory_s, compute_s)
    message = tokens * d.hidden * _ACTIVATION_BYTES
    interconnect_s = (
        2.0
        * d.layers
        * allreduce_seconds(message, d.tp, d.link_gb_s, d.allreduce_bus_fraction, d.allreduce_latency_us)
    )
    overhead_s = d.layers * d.layer_overhead_ms / 1000.0
    total = float64s(roof + interconnect_s + overhead_s)
    return PassCost(total, memory_s, compute_s, interconnect_s, overhead_s, bytes_per_acc, flops_per_acc)


def decode_pass(
    d: Deployment, batch: Array, context: Array, new_tokens_per_seq: Array | float = 1.0
) -> PassCost:
    """One decode step: `batch` sequences at `context` tokens each, `new_tokens_per_seq` new
    tokens per sequence (1, or draft_tokens + 1 when verifying a speculative draft)."""
    tokens = batch * new_tokens_per_seq
    weights = d.shared_weight_bytes + d.expert_weight_bytes * experts_read(
        d.experts, d.experts_per_token, tokens
    )
    held = _tokens_held(d, context)
    kv_read = batch * held * d.kv_bytes_per_token_layer
    flops = 2.0 * d.matmul_params * tokens + 4.0 * d.attention_width * tokens * held
    return _pass_cost(d, weights + kv_read, flops, tokens, need_compute_peak=False)


def prefill_pass(d: Deployment, prompt_tokens: Array, sequences: Array | float = 1.0) -> PassCost:
    """Prefill of `sequences` prompts of `prompt_tokens` tokens, batched into one pass."""
    tokens = prompt_tokens * sequences
    weights = d.shared_weight_bytes + d.expert_weight_bytes * experts_read(
        d.experts, d.experts_per_token, tokens
    )
    kv_written = sequences * _tokens_held(d, prompt_tokens) * d.kv_bytes_per_token_layer
    attended = causal_attention_token_layers(d.layers, d.window_layers, d.window, prompt_tokens)
    body = 2.0 * (d.matmul_params - d.lm_head_params) * tokens
    logits = 2.0 * d.lm_head_params * sequences  # only each prompt's last position is sampled
    flops = body + logits + 4.0 * d.attention_width * sequences * attended
    return _pass_cost(d, weights + kv_written, flops, tokens, need_compute_peak=True)


def pipelined_prefill_seconds(
    single_pass_s: Array, prompt_tokens: Array, chunk_tokens: Array, stages: Array
) -> Array:
    """Prefill time when the prompt is cut into chunks that flow through `stages` pipeline stages.

    m chunks through p stages take (m + p - 1) stage-slots of T / (m p) each, so the pass costs
    T (m + p - 1) / (m p) (the GPipe bubble, Huang et al. 2019, arXiv:1811.06965 §2.3). One stage,
    or one chunk, leaves T unchanged.
    """
    chunks = np.maximum(np.ceil(prompt_tokens / chunk_tokens), 1.0)
    return float64s(single_pass_s * (chunks + stages - 1.0) / (chunks * stages))
