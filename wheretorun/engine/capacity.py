"""How much one model replica can serve, for every (accelerator, accelerators per replica, precision).

This adapts the estimation engine to sizing. One replica is a tensor-parallel group of 1, 2, 4
or 8 accelerators (inside one node). Its capacity is the largest request rate it sustains
within the workload's TTFT/TPOT targets, found as `estimate_inference` finds `max_request_rate`
(Little's law over the largest concurrency that meets the targets), but for all configurations
at once with the vectorised `sweep_inference`, so the estimate is computed once per
configuration, not once per cloud offer:

1. every configuration at concurrency 1: does it fit, is it valid, does it meet the targets?
2. the feasible ones at concurrencies 1, 2, 4, ... up to the serving engine's batch limit and
   the memory limit: the last power of two that fits and meets the targets and the first that
   does not bracket the answer;
3. 16 evenly spaced concurrencies inside each bracket refine it.

Latency and memory grow with concurrency, so the bracket holds the largest feasible one; the
refinement leaves the capacity at most ~6% under the exact value, never over it.

Without latency targets a replica runs at the largest concurrency that fits, up to the engine's
batch limit (vLLM `max_num_seqs`, see `max_batch`).

Precisions are asked for as slots (bf16, fp8, int8, awq-int4). An accelerator that cannot serve a
slot's format but serves one that stores the same bytes runs that instead (bf16 -> fp16 on Turing
and Volta, awq-int4 -> gptq-int4 on Volta; `PrecisionSupport.served_instead`), and its capacity
says so in `precision`. A slot it cannot serve at all is `unsupported_precision`; one whose compute
peak is unknown is `unspecified_hardware`, never sized from decode alone (prefill needs the peak).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from wheretorun.engine.config import ServingEngine
from wheretorun.engine.costs.arrays import BoolArray, IntArray
from wheretorun.engine.efficiency import EfficiencyTable, serving_family
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules import hardware_spec, latency_target, memory_fit, precision_support
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture
from wheretorun.engine.sweep import SweepGrid, SweepResult, sweep_inference

__all__ = [
    "REPLICA_SIZES",
    "CapacityTable",
    "ReplicaCapacity",
    "clear_capacity_cache",
    "max_batch",
    "serving_capacities",
]

REPLICA_SIZES = (1, 2, 4, 8)  # tensor-parallel degrees inside one node
_REFINE_STEPS = 16
_GIB = 1024**3
_CACHED_CAPACITY_TABLES = 64  # the most recent argument sets `serving_capacities` remembers
_ANY_NAME = "(architecture)"  # the name a remembered table's model carries: names do not matter


@dataclass(frozen=True, slots=True)
class ReplicaCapacity:
    """One model replica on `accelerators` x `accelerator_id` at `precision` (the format it runs:
    fp16 where the bf16 slot was asked of a chip without bf16)."""

    accelerator_id: str
    accelerators: int
    precision: Precision
    verdict: RejectReason | None  # None when it can serve
    detail: str  # why not, in words
    requests_per_s: float  # sustained at the targets (0 when not OK), before planning headroom
    concurrency: int
    ttft_ms: float | None
    tpot_ms: float | None
    output_tokens_per_s: float
    memory_gb: float  # needed at concurrency 1
    available_gb: float
    single_stream_rps: float  # one request at a time (what a single local user gets), 0 if unusable
    single_stream_ttft_ms: float | None
    single_stream_tpot_ms: float | None
    # The tensor-parallel degree does not divide the attention heads: reported as
    # `does_not_fit_memory` (no replica of that size exists), named last when explaining a failure.
    invalid_layout: bool = False
    # where the serving-efficiency factors behind the figures above come from, or that they were
    # borrowed from another engine or memory kind for want of calibration rows (efficiency_data.py)
    efficiency_source: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict is None


# One replica's capacity by (accelerator id, accelerators per replica, precision); read-only.
CapacityTable = Mapping[tuple[str, int, Precision], ReplicaCapacity]


def max_batch(engine: ServingEngine, spec: AcceleratorSpec) -> int:
    """The serving engine's default limit on sequences in flight per replica.

    vLLM `EngineArgs.get_batch_defaults` (vllm/engine/arg_utils.py): `max_num_seqs` = 1024 on
    GPUs with >= 70 GiB that are not A100s, else 256. Other engines are given the same limit
    (planning convention: their defaults bound batches by tokens, not sequences).
    """
    large = spec.memory_gb * 1e9 >= 70 * _GIB and "a100" not in spec.name.lower()
    return 1024 if large else 256


@dataclass(frozen=True, slots=True)
class _Configs:
    """Flat list of configurations: parallel arrays indexing accelerators, precision slots and
    the precisions actually run (`_Request.run_precisions`)."""

    accelerator: IntArray
    size: IntArray
    precision: IntArray
    run: IntArray

    def __len__(self) -> int:
        return int(self.accelerator.shape[0])

    def take(self, rows: IntArray) -> _Configs:
        return _Configs(self.accelerator[rows], self.size[rows], self.precision[rows], self.run[rows])


@dataclass(frozen=True, slots=True)
class _Request:
    model: ModelArchitecture
    accelerators: tuple[AcceleratorSpec, ...]
    precisions: tuple[Precision, ...]  # the slots asked for
    run_precisions: tuple[Precision, ...]  # the slots and the same-bytes formats run instead
    engine: ServingEngine
    input_tokens: int
    output_tokens: int
    ttft_ms: float | None
    tpot_ms: float | None
    efficiency: EfficiencyTable

    def sweep(self, configs: _Configs, concurrency: IntArray) -> SweepResult:
        count = len(configs)
        grid = SweepGrid(
            models=(self.model,),
            accelerators=self.accelerators,
            precisions=self.run_precisions,
            engines=(self.engine,),
            model_index=np.zeros(count, dtype=np.int64),
            accelerator_index=configs.accelerator,
            precision_index=configs.run,
            engine_index=np.zeros(count, dtype=np.int64),
            accelerator_count=configs.size,
            input_tokens=np.full(count, self.input_tokens, dtype=np.int64),
            output_tokens=np.full(count, self.output_tokens, dtype=np.int64),
            concurrency=concurrency,
        )
        return sweep_inference(grid, self.efficiency)

    def meets(self, result: SweepResult) -> BoolArray:
        """Fits in memory (memory_fit.py) and meets both targets (latency_target.py)."""
        within = latency_target.meets_targets(result.ttft_ms, result.tpot_ms, self.ttft_ms, self.tpot_ms)
        return np.asarray(result.fits & within, dtype=bool)


def serving_capacities(
    model: ModelArchitecture,
    accelerators: Sequence[tuple[str, AcceleratorSpec]],
    precisions: Sequence[Precision],
    *,
    engine: ServingEngine,
    input_tokens: int,
    output_tokens: int,
    ttft_ms: float | None,
    tpot_ms: float | None,
    efficiency: EfficiencyTable = DEFAULT_EFFICIENCY,
) -> CapacityTable:
    """Capacity of one replica for every accelerator x replica size x precision.

    Remembered for the most recent argument sets: the capacities depend on nothing else (the
    catalog's hardware specs, the model, the request shape and targets, the calibration), not on
    volumes, prices or constraints, so a planning loop over volumes or prices, or a repeated
    request, computes them once; the model's name does not enter them, so two models of one
    architecture (llama-3.3-70b and llama-3.1-70b) share a table. The table is read-only, and the
    same object for the same arguments, so what is derived from it can be remembered by its
    identity (planning/layouts.py, planning/cloud_sizing.py).
    """
    return _serving_capacities(
        dataclasses.replace(model, name=_ANY_NAME),  # two models of one architecture share a table
        tuple(accelerators),
        tuple(precisions),
        engine,
        input_tokens,
        output_tokens,
        ttft_ms,
        tpot_ms,
        efficiency,
    )


def clear_capacity_cache() -> None:
    """Forget every remembered capacity table (the next call computes afresh)."""
    _serving_capacities.cache_clear()


@functools.lru_cache(maxsize=_CACHED_CAPACITY_TABLES)
def _serving_capacities(
    model: ModelArchitecture,
    accelerators: tuple[tuple[str, AcceleratorSpec], ...],
    precisions: tuple[Precision, ...],
    engine: ServingEngine,
    input_tokens: int,
    output_tokens: int,
    ttft_ms: float | None,
    tpot_ms: float | None,
    efficiency: EfficiencyTable,
) -> CapacityTable:
    if not accelerators or not precisions:
        return MappingProxyType({})
    specs = tuple(spec for _, spec in accelerators)
    request = _Request(
        model=model,
        accelerators=specs,
        precisions=tuple(precisions),
        run_precisions=_run_precisions(specs, precisions),
        engine=engine,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        ttft_ms=ttft_ms,
        tpot_ms=tpot_ms,
        efficiency=efficiency,
    )
    every = _all_configs(request)
    layouts = [_layout_problem(request, every, row) for row in range(len(every))]
    ids = [accelerator_id for accelerator_id, _ in accelerators]
    capacities = {
        _key(request, ids, every, row): _unusable(
            _key(request, ids, every, row), _runs(request, every, row), problem
        )
        for row, problem in enumerate(layouts)
        if problem is not None
    }
    configs = every.take(
        np.asarray([row for row, problem in enumerate(layouts) if problem is None], dtype=np.int64)
    )
    if len(configs) == 0:
        return MappingProxyType(capacities)
    first = request.sweep(configs, np.ones(len(configs), dtype=np.int64))
    limits = _concurrency_limits(request, configs, first)
    rows = np.flatnonzero(request.meets(first) & first.valid & (limits >= 1))
    best = _largest_feasible(request, configs.take(rows), limits[rows])
    final = _Columns.of(request.sweep(configs.take(rows), best)) if len(rows) else None
    at_one = _Columns.of(first)
    feasible = {int(row): (int(best[k]), k) for k, row in enumerate(rows)}
    sources: dict[int, str] = {}  # per accelerator: the same for all its rows
    for row in range(len(configs)):
        key = _key(request, ids, configs, row)
        if final is not None and row in feasible:
            concurrency, k = feasible[row]
            runs = _runs(request, configs, row)
            accelerator = int(configs.accelerator[row])
            if accelerator not in sources:
                sources[accelerator] = _efficiency_source(request, request.accelerators[accelerator])
            source = sources[accelerator]
            capacities[key] = _capacity(request, key, runs, at_one, row, final, k, concurrency, source)
        else:
            capacities[key] = _infeasible(
                key, _runs(request, configs, row), at_one, row, _why_not(request, configs, row, first)
            )
    return MappingProxyType(capacities)


def _efficiency_source(request: _Request, spec: AcceleratorSpec) -> str:
    table = request.efficiency
    entry = table.serving_for(request.engine, spec.memory_kind)
    source = (
        f"throughput and latency use the {request.engine.value} serving efficiency on "
        f"{spec.memory_kind.value} memory: {entry.provenance}"
    )
    family = serving_family(spec)
    if table.serving_families and family not in table.serving_families:
        measured = ", ".join(table.serving_families)
        source += f"; no serving measurement of {family} is in the fit (only {measured})"
    return source


def _key(request: _Request, ids: Sequence[str], configs: _Configs, row: int) -> tuple[str, int, Precision]:
    return ids[configs.accelerator[row]], int(configs.size[row]), request.precisions[configs.precision[row]]


def _runs(request: _Request, configs: _Configs, row: int) -> Precision:
    return request.run_precisions[int(configs.run[row])]


def _served_as(spec: AcceleratorSpec, slot: Precision) -> Precision:
    """The format `spec` runs for `slot` (the slot itself when it serves neither)."""
    support = spec.precision_support
    if support is None:
        return slot
    return support.served_instead(slot) or slot


def _run_precisions(specs: Sequence[AcceleratorSpec], slots: Sequence[Precision]) -> tuple[Precision, ...]:
    extra = {_served_as(spec, slot) for spec in specs for slot in slots} - set(slots)
    return (*slots, *sorted(extra))


def _layout_problem(request: _Request, configs: _Configs, row: int) -> Rejection | None:
    """Why a replica layout cannot exist at all (checked before any estimate), or None."""
    spec = request.accelerators[configs.accelerator[row]]
    size = int(configs.size[row])
    runs = _runs(request, configs, row)
    return (
        precision_support.serving(spec, runs)
        or hardware_spec.compute_peak(spec, runs)
        or memory_fit.replica_layout(size, request.model.attention_heads)
        or hardware_spec.interconnect(spec, size)
    )


def _unusable(key: tuple[str, int, Precision], runs: Precision, problem: Rejection) -> ReplicaCapacity:
    return ReplicaCapacity(
        accelerator_id=key[0],
        accelerators=key[1],
        precision=runs,
        verdict=problem.reason,
        detail=problem.detail,
        requests_per_s=0.0,
        concurrency=0,
        ttft_ms=None,
        tpot_ms=None,
        output_tokens_per_s=0.0,
        memory_gb=0.0,
        available_gb=0.0,
        single_stream_rps=0.0,
        single_stream_ttft_ms=None,
        single_stream_tpot_ms=None,
        # before any estimate, memory is named only for a layout that cannot exist
        invalid_layout=problem.reason is RejectReason.DOES_NOT_FIT_MEMORY,
    )


@dataclass(frozen=True, slots=True)
class _Columns:
    """Sweep results as Python lists (fast per-row access); NaN stays NaN."""

    total_gb: list[float]
    available_gb: list[float]
    ttft_ms: list[float]
    tpot_ms: list[float]
    output_tokens_per_s: list[float]

    @classmethod
    def of(cls, result: SweepResult) -> _Columns:
        return cls(
            result.total_gb.tolist(),
            result.available_gb.tolist(),
            result.ttft_ms.tolist(),
            result.tpot_ms.tolist(),
            result.output_tokens_per_s.tolist(),
        )


def _all_configs(request: _Request) -> _Configs:
    """Every accelerator x replica size x slot, with the index of the precision each row runs."""
    accelerators, slots = len(request.accelerators), len(request.precisions)
    grid = np.stack(
        np.meshgrid(np.arange(accelerators), np.asarray(REPLICA_SIZES), np.arange(slots), indexing="ij"),
        axis=-1,
    ).reshape(-1, 3)
    position = {precision: index for index, precision in enumerate(request.run_precisions)}
    run_of = np.asarray(
        [[position[_served_as(spec, slot)] for slot in request.precisions] for spec in request.accelerators],
        dtype=np.int64,
    )
    return _Configs(
        grid[:, 0].astype(np.int64),
        grid[:, 1].astype(np.int64),
        grid[:, 2].astype(np.int64),
        run_of[grid[:, 0], grid[:, 2]],
    )


def _concurrency_limits(request: _Request, configs: _Configs, first: SweepResult) -> IntArray:
    """Most sequences a replica may hold: the memory limit and the engine's batch limit."""
    engine_limit = np.asarray(
        [max_batch(request.engine, request.accelerators[index]) for index in configs.accelerator],
        dtype=np.int64,
    )
    memory_limit = np.nan_to_num(first.max_concurrency, nan=0.0).astype(np.int64)
    return np.minimum(engine_limit, memory_limit)


def _largest_feasible(request: _Request, configs: _Configs, limits: IntArray) -> IntArray:
    """Largest concurrency in [1, limit] that fits and meets the targets (bracket, then refine)."""
    if len(configs) == 0:
        return np.zeros(0, dtype=np.int64)
    steps = int(math.ceil(math.log2(int(limits.max())))) + 1
    powers = np.minimum(2 ** np.arange(steps, dtype=np.int64)[None, :], limits[:, None])
    passing = _meets_at(request, configs, powers)
    last_pass = np.where(passing, powers, 1).max(axis=1)
    first_fail = np.where(~passing & (powers > last_pass[:, None]), powers, limits[:, None] + 1).min(axis=1)
    gaps = first_fail - last_pass
    offsets = np.ceil(np.linspace(0, 1, _REFINE_STEPS + 2)[1:-1][None, :] * (gaps[:, None] - 1)).astype(
        np.int64
    )
    inner = np.clip(
        last_pass[:, None] + offsets, last_pass[:, None], np.maximum(first_fail - 1, last_pass)[:, None]
    )
    inner_pass = _meets_at(request, configs, inner)
    return np.asarray(np.maximum(last_pass, np.where(inner_pass, inner, 0).max(axis=1)), dtype=np.int64)


def _meets_at(request: _Request, configs: _Configs, concurrency: IntArray) -> BoolArray:
    """Evaluate each configuration at each of its concurrencies (rows x columns)."""
    rows, columns = concurrency.shape
    repeated = configs.take(np.repeat(np.arange(rows), columns))
    result = request.sweep(repeated, concurrency.reshape(-1))
    return request.meets(result).reshape(rows, columns)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _capacity(
    request: _Request,
    key: tuple[str, int, Precision],
    runs: Precision,
    at_one: _Columns,
    row: int,
    final: _Columns,
    k: int,
    concurrency: int,
    efficiency_source: str,
) -> ReplicaCapacity:
    """A feasible configuration at its largest feasible `concurrency` (`final` row `k`)."""
    tokens_per_s = final.output_tokens_per_s[k]
    return ReplicaCapacity(
        accelerator_id=key[0],
        accelerators=key[1],
        precision=runs,
        verdict=None,
        detail="",
        requests_per_s=tokens_per_s / request.output_tokens,
        concurrency=concurrency,
        ttft_ms=_number(final.ttft_ms[k]),
        tpot_ms=final.tpot_ms[k],
        output_tokens_per_s=tokens_per_s,
        memory_gb=at_one.total_gb[row],
        available_gb=at_one.available_gb[row],
        single_stream_rps=at_one.output_tokens_per_s[row] / request.output_tokens,
        single_stream_ttft_ms=_number(at_one.ttft_ms[row]),
        single_stream_tpot_ms=_number(at_one.tpot_ms[row]),
        efficiency_source=efficiency_source,
    )


def _infeasible(
    key: tuple[str, int, Precision], runs: Precision, at_one: _Columns, row: int, why: Rejection
) -> ReplicaCapacity:
    return ReplicaCapacity(
        accelerator_id=key[0],
        accelerators=key[1],
        precision=runs,
        verdict=why.reason,
        detail=why.detail,
        requests_per_s=0.0,
        concurrency=0,
        ttft_ms=_number(at_one.ttft_ms[row]),
        tpot_ms=_number(at_one.tpot_ms[row]),
        output_tokens_per_s=0.0,
        memory_gb=at_one.total_gb[row],
        available_gb=at_one.available_gb[row],
        single_stream_rps=0.0,
        single_stream_ttft_ms=None,
        single_stream_tpot_ms=None,
    )


def _why_not(request: _Request, configs: _Configs, row: int, first: SweepResult) -> Rejection:
    """Why a valid layout cannot serve: memory or latency (an unknown compute peak was caught in
    `_layout_problem`)."""
    spec = request.accelerators[configs.accelerator[row]]
    memory = memory_fit.replica_memory(
        bool(first.fits[row]),
        float(first.total_gb[row]),
        float(first.available_gb[row]),
        int(configs.size[row]),
        spec.name,
    )
    return memory or latency_target.misses_targets(
        float(first.ttft_ms[row]), float(first.tpot_ms[row]), request.ttft_ms, request.tpot_ms
    )
