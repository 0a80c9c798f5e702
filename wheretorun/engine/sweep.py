"""Many inference configurations at once, vectorised with numpy.

A sweep is the candidate table's first pass: every (model, accelerator, count, precision, engine,
workload) combination gets memory, fit, latency and throughput from one array computation that
runs the same roofline and memory formulas as `estimate_inference` (a unit test holds the two to
the same numbers). Each configuration is one replica with tensor parallelism over all its
accelerators; pipeline stages, CPU offload and speculative decoding need `estimate_inference`.
Layouts that `estimate_inference` rejects (tensor-parallel degree not dividing the heads, no
interconnect figure, context too long) come back with `valid=False` and NaN figures instead of
raising, so one bad combination does not stop a sweep.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from wheretorun.engine.config import ServingEngine, accumulates_in_fp16, engine_memory_fraction
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.inference_estimate import (
    activation_bytes,
    available_bytes,
    kv_replication,
    prefill_chunk_tokens,
    queueing_latencies,
)
from wheretorun.engine.memory import kv_cache_bytes_per_sequence, weights_bytes
from wheretorun.engine.precision import Precision, compute_dtype, kv_bytes_per_element
from wheretorun.engine.roofline import Array, Deployment, decode_pass, prefill_pass
from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture

__all__ = ["SweepGrid", "SweepResult", "sweep_inference"]

_GB = 1e9
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class SweepGrid:
    """Configurations as parallel integer arrays; `*_index` columns point into the tuples."""

    models: tuple[ModelArchitecture, ...]
    accelerators: tuple[AcceleratorSpec, ...]
    precisions: tuple[Precision, ...]
    engines: tuple[ServingEngine, ...]
    model_index: IntArray
    accelerator_index: IntArray
    precision_index: IntArray
    engine_index: IntArray
    accelerator_count: IntArray
    input_tokens: IntArray
    output_tokens: IntArray
    concurrency: IntArray
    kv_cache_precision: Precision = Precision.BF16

    @property
    def size(self) -> int:
        return int(self.model_index.shape[0])

    @classmethod
    def product(
        cls,
        models: Sequence[ModelArchitecture],
        accelerators: Sequence[AcceleratorSpec],
        accelerator_counts: Sequence[int],
        precisions: Sequence[Precision],
        engines: Sequence[ServingEngine],
        workloads: Sequence[tuple[int, int, int]],
        kv_cache_precision: Precision = Precision.BF16,
    ) -> SweepGrid:
        """Every combination; `workloads` are (input_tokens, output_tokens, concurrency)."""
        combos = np.asarray(
            list(
                itertools.product(
                    range(len(models)),
                    range(len(accelerators)),
                    accelerator_counts,
                    range(len(precisions)),
                    range(len(engines)),
                    range(len(workloads)),
                )
            ),
            dtype=np.int64,
        ).reshape(-1, 6)
        shapes = np.asarray(workloads, dtype=np.int64).reshape(-1, 3)[combos[:, 5]]
        return cls(
            models=tuple(models),
            accelerators=tuple(accelerators),
            precisions=tuple(precisions),
            engines=tuple(engines),
            model_index=combos[:, 0],
            accelerator_index=combos[:, 1],
            accelerator_count=combos[:, 2],
            precision_index=combos[:, 3],
            engine_index=combos[:, 4],
            input_tokens=shapes[:, 0],
            output_tokens=shapes[:, 1],
            concurrency=shapes[:, 2],
            kv_cache_precision=kv_cache_precision,
        )


@dataclass(frozen=True, slots=True)
class SweepResult:
    """One entry per configuration (same units as `InferenceEstimate`); NaN where not `valid`."""

    valid: BoolArray
    weights_gb: Array
    kv_cache_gb: Array
    total_gb: Array
    available_gb: Array
    fits: BoolArray
    max_concurrency: Array
    ttft_ms: Array
    tpot_ms: Array
    output_tokens_per_s_per_sequence: Array
    output_tokens_per_s: Array


def _lookup(keys: IntArray, compute: dict[str, list[float]]) -> dict[str, Array]:
    """Spread per-distinct-key values back to one entry per configuration."""
    _, inverse = np.unique(keys, return_inverse=True)
    return {name: np.asarray(values, dtype=np.float64)[inverse] for name, values in compute.items()}


def _model_columns(grid: SweepGrid) -> dict[str, Array]:
    """Model facts, computed once per distinct (model, precision)."""
    keys = grid.model_index * len(grid.precisions) + grid.precision_index
    columns: dict[str, list[float]] = {}
    for key in np.unique(keys):
        model = grid.models[int(key) // len(grid.precisions)]
        precision = grid.precisions[int(key) % len(grid.precisions)]
        weights = weights_bytes(model, precision)
        expert = model.params_per_expert * weights / model.total_params
        facts = {
            "weights": weights,
            "expert": expert,
            "shared": weights - model.experts * expert,
            "experts": model.experts,
            "top_k": model.experts_per_token,
            "matmul": model.matmul_params_per_token,
            "lm_head": model.vocab_size * model.hidden_size,
            "layers": model.layers,
            "window_layers": model.sliding_window_layers,
            "window": model.sliding_window or 0,
            "hidden": model.hidden_size,
            "width": model.attention_width,
            "elements": model.cached_elements_per_layer,
            "heads": model.attention_heads,
            "context": model.max_context,
        }
        for name, value in facts.items():
            columns.setdefault(name, []).append(float(value))
    return _lookup(keys, columns)


def _hardware_columns(grid: SweepGrid, table: EfficiencyTable) -> dict[str, Array]:
    """Accelerator figures and calibrated efficiencies, once per (accelerator, engine, precision)."""
    n_engines, n_precisions = len(grid.engines), len(grid.precisions)
    keys = (grid.accelerator_index * n_engines + grid.engine_index) * n_precisions + grid.precision_index
    columns: dict[str, list[float]] = {}
    for key in np.unique(keys):
        accelerator = grid.accelerators[int(key) // (n_engines * n_precisions)]
        engine = grid.engines[int(key) // n_precisions % n_engines]
        serving = table.serving_for(engine, accelerator.memory_kind)
        precision = grid.precisions[int(key) % n_precisions]
        peak = accelerator.peak_tflops(compute_dtype(precision), accumulates_in_fp16(engine, precision))
        facts = {
            "bandwidth": accelerator.memory_bandwidth_gb_s,
            "peak": np.nan if peak is None else peak,
            "link": accelerator.interconnect_gb_s or np.nan,
            "memory": accelerator.usable_memory_gb * _GB,
            "bandwidth_fraction": serving.bandwidth_fraction,
            "compute_fraction": serving.compute_fraction,
            "overhead_ms": serving.layer_overhead_ms,
            "chunk": prefill_chunk_tokens(engine),
        }
        for name, value in facts.items():
            columns.setdefault(name, []).append(float(value))
    return _lookup(keys, columns)


def _engine_memory_columns(grid: SweepGrid) -> tuple[Array, BoolArray]:
    """The engine's memory fraction, once per distinct (engine, tensor-parallel degree)."""
    keys = grid.engine_index * (int(grid.accelerator_count.max()) + 1) + grid.accelerator_count
    columns: dict[str, list[float]] = {}
    for key in np.unique(keys):
        engine = grid.engines[int(key) // (int(grid.accelerator_count.max()) + 1)]
        fraction, of_free = engine_memory_fraction(engine, int(key) % (int(grid.accelerator_count.max()) + 1))
        columns.setdefault("fraction", []).append(fraction)
        columns.setdefault("of_free", []).append(float(of_free))
    spread = _lookup(keys, columns)
    return spread["fraction"], spread["of_free"] > 0


def _model_dependent(grid: SweepGrid, chunk: Array) -> dict[str, Array]:
    """KV bytes per sequence, replication over TP ranks and activations, model by model."""
    out = {name: np.full(grid.size, np.nan) for name in ("kv_per_seq", "replication", "activations")}
    tp = grid.accelerator_count.astype(np.float64)
    context = (grid.input_tokens + grid.output_tokens).astype(np.float64)
    for index, model in enumerate(grid.models):
        rows = grid.model_index == index
        if not rows.any():
            continue
        out["kv_per_seq"][rows] = kv_cache_bytes_per_sequence(model, grid.kv_cache_precision, context[rows])
        out["replication"][rows] = kv_replication(model, tp[rows])
        prompt = np.minimum(grid.input_tokens[rows].astype(np.float64), chunk[rows])
        out["activations"][rows] = activation_bytes(
            model, np.inf, prompt, grid.concurrency[rows].astype(np.float64), tp[rows]
        )
    return out


def _validity(grid: SweepGrid, m: dict[str, Array], hw: dict[str, Array]) -> BoolArray:
    tp = grid.accelerator_count
    heads_divide = np.mod(m["heads"], tp) == 0
    context_fits = grid.input_tokens + grid.output_tokens <= m["context"]
    link_known = (tp == 1) | ~np.isnan(hw["link"])
    return np.asarray(heads_divide & context_fits & link_known, dtype=bool)


def sweep_inference(grid: SweepGrid, efficiency: EfficiencyTable = DEFAULT_EFFICIENCY) -> SweepResult:
    """Memory, fit, TTFT, TPOT and throughput of every configuration in `grid`."""
    m = _model_columns(grid)
    hw = _hardware_columns(grid, efficiency)
    fraction, of_free = _engine_memory_columns(grid)
    per_model = _model_dependent(grid, hw["chunk"])
    tp = grid.accelerator_count.astype(np.float64)
    batch = grid.concurrency.astype(np.float64)
    prompt = grid.input_tokens.astype(np.float64)
    output = grid.output_tokens.astype(np.float64)

    kv_per_seq = per_model["kv_per_seq"] * per_model["replication"]
    resident = m["weights"] + per_model["activations"]
    available, _ = available_bytes(tp * hw["memory"], fraction, of_free, resident)
    total = resident + kv_per_seq * batch
    max_concurrency = np.floor(np.maximum(available - resident, 0.0) / kv_per_seq)

    kv_element = kv_bytes_per_element(grid.kv_cache_precision)
    deployment = Deployment(
        layers=m["layers"],
        window_layers=m["window_layers"],
        window=m["window"],
        hidden=m["hidden"],
        attention_width=m["width"],
        kv_bytes_per_token_layer=m["elements"] * kv_element * per_model["replication"],
        shared_weight_bytes=m["shared"],
        expert_weight_bytes=m["expert"],
        experts=m["experts"],
        experts_per_token=m["top_k"],
        matmul_params=m["matmul"],
        lm_head_params=m["lm_head"],
        tp=tp,
        bandwidth_gb_s=hw["bandwidth"],
        peak_tflops=hw["peak"],
        link_gb_s=hw["link"],
        bandwidth_fraction=hw["bandwidth_fraction"],
        compute_fraction=hw["compute_fraction"],
        layer_overhead_ms=hw["overhead_ms"],
        allreduce_latency_us=np.full(grid.size, efficiency.allreduce_latency_us),
        allreduce_bus_fraction=np.full(grid.size, efficiency.allreduce_bus_fraction),
        host_fraction=np.zeros(grid.size),
        host_bandwidth_gb_s=np.full(grid.size, np.nan),
    )
    prefill_s = prefill_pass(deployment, prompt).total_s
    step_s = decode_pass(deployment, batch, prompt + output / 2.0).total_s
    tpot_s, ttft_s = queueing_latencies(prefill_s, step_s, batch, output)
    in_system_s = np.nan_to_num(ttft_s) + output * tpot_s

    valid = _validity(grid, m, hw)

    def masked(values: Array) -> Array:
        return np.where(valid, values, np.nan)

    return SweepResult(
        valid=valid,
        weights_gb=masked(m["weights"] / _GB),
        kv_cache_gb=masked(kv_per_seq * batch / _GB),
        total_gb=masked(total / _GB),
        available_gb=masked(available / _GB),
        fits=valid & (total <= available),
        max_concurrency=masked(max_concurrency),
        ttft_ms=masked(ttft_s * 1e3),
        tpot_ms=masked(tpot_s * 1e3),
        output_tokens_per_s_per_sequence=masked(1.0 / tpot_s),
        output_tokens_per_s=masked(batch * output / in_system_s),
    )
