"""Fit the efficiency factors on the calibration cases.

Few parameters, shared across rows: per (serving engine, memory kind) a bandwidth fraction, a
compute fraction and a per-layer overhead; one all-reduce latency; per (accelerator family, dtype)
a training utilisation plus three scaling terms shared by all families. Fitting minimises the
robust (soft-L1) sum of squared log errors with scipy's bounded least squares, so a 2x over- and a
2x under-prediction weigh the same.

Entries without rows of their own are borrowed from a related entry, and their provenance says
so: vLLM, SGLang and TGI have no rows in the calibration set and use TensorRT-LLM's factors.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares

from wheretorun.calibration.cases import RUN_TOTAL_ACCELERATORS, Case, Metric
from wheretorun.calibration.data import calibration_dir
from wheretorun.engine import (
    ComputeDtype,
    EfficiencyTable,
    MemoryKind,
    ServingEfficiency,
    ServingEngine,
    TrainingEfficiency,
    TrainingScaling,
)
from wheretorun.engine.efficiency import ANY_FAMILY
from wheretorun.engine.whole_run import WholeRunEfficiency

__all__ = ["FitResult", "fit", "percent_error", "whole_run_held_out"]

FloatArray = npt.NDArray[np.float64]

# NCCL all-reduce bus bandwidth measured against the link's unidirectional spec (gpus.csv notes):
# 8xH200 367.61 GB/s of 450 (82%), A100 234.89 GB/s of 300 (78%); the mean, 0.80, is used.
ALLREDUCE_BUS_FRACTION = round((367.61 / 450 + 234.89 / 300) / 2, 2)

_START = {"bandwidth": 0.7, "compute": 0.5, "overhead": 0.1, "latency": 10.0}
_BOUNDS = {"bandwidth": (0.05, 1.0), "compute": (0.05, 1.0), "overhead": (0.0, 1.0), "latency": (0.0, 200.0)}
_COMPUTE_METRICS = (Metric.TTFT, Metric.HIGH_BATCH)
_NOT_SERVING = (Metric.WEIGHTS_GB, Metric.TRAINING_HOURS, Metric.WHOLE_RUN_HOURS)
_BORROW_ORDER = (MemoryKind.HBM, MemoryKind.GDDR, MemoryKind.UNIFIED)


def percent_error(predicted: float, measured: float) -> float:
    return (predicted / measured - 1.0) * 100.0


@dataclass(frozen=True)
class FitResult:
    table: EfficiencyTable
    fitted_rows: dict[str, tuple[str, ...]]  # entry -> row ids it was fitted on


def _group_key(case: Case) -> tuple[ServingEngine, MemoryKind]:
    engine, kind = case.group.split("/")
    return ServingEngine(engine), MemoryKind(kind)


def _log_residuals(cases: Sequence[Case], table: EfficiencyTable) -> FloatArray:
    out = []
    for case in cases:
        predicted = case.predict(table)
        out.append(math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 5.0)
    return np.asarray(out)


def _solve(
    residuals: Callable[[FloatArray], FloatArray], start: list[float], bounds: list[tuple[float, float]]
) -> FloatArray:
    lower, upper = zip(*bounds, strict=True)
    result = least_squares(residuals, np.asarray(start), bounds=(lower, upper), loss="soft_l1", f_scale=0.2)
    return np.asarray(result.x)


def _median_abs_errors(cases: Sequence[Case], table: EfficiencyTable) -> dict[Metric, float]:
    by_metric: dict[Metric, list[float]] = {}
    for case in cases:
        by_metric.setdefault(case.metric, []).append(abs(percent_error(case.predict(table), case.measured)))
    return {metric: statistics.median(errors) for metric, errors in by_metric.items()}


def _row_list(cases: Sequence[Case]) -> str:
    ids = sorted({case.row_id for case in cases})
    return ", ".join(ids) if len(ids) <= 12 else f"{ids[0]} ... {ids[-1]} ({len(ids)} rows)"


def _describe(cases: Sequence[Case], table: EfficiencyTable) -> str:
    ids = _row_list(cases)
    errors = "; ".join(
        f"{metric.value} {error:.0f}%" for metric, error in _median_abs_errors(cases, table).items()
    )
    return f"fitted on {len(cases)} figures from rows {ids}; in-sample median abs error: {errors}"


# ---- serving ------------------------------------------------------------------------------------


def _with_serving(
    table: EfficiencyTable, key: tuple[ServingEngine, MemoryKind], entry: ServingEfficiency, latency_us: float
) -> EfficiencyTable:
    serving = dict(table.serving)
    serving[key] = entry
    return EfficiencyTable(
        version=table.version,
        serving=serving,
        training=table.training,
        training_scaling=table.training_scaling,
        allreduce_latency_us=latency_us,
        allreduce_bus_fraction=table.allreduce_bus_fraction,
        provenance=table.provenance,
    )


def _fit_serving_group(
    table: EfficiencyTable, key: tuple[ServingEngine, MemoryKind], cases: Sequence[Case], fit_latency: bool
) -> EfficiencyTable:
    """Fit one (engine, memory kind) entry; its compute fraction only if rows depend on it."""
    fit_compute = any(case.metric in _COMPUTE_METRICS for case in cases)
    names = (
        ["bandwidth", "overhead"]
        + (["compute"] if fit_compute else [])
        + (["latency"] if fit_latency else [])
    )
    current = table.serving[key]

    def table_for(x: FloatArray) -> EfficiencyTable:
        values = dict(zip(names, x, strict=True))
        entry = ServingEfficiency(
            bandwidth_fraction=float(values["bandwidth"]),
            compute_fraction=float(values.get("compute", current.compute_fraction)),
            layer_overhead_ms=float(values["overhead"]),
            provenance="",
        )
        return _with_serving(table, key, entry, float(values.get("latency", table.allreduce_latency_us)))

    x = _solve(
        lambda v: _log_residuals(cases, table_for(v)), [_START[n] for n in names], [_BOUNDS[n] for n in names]
    )
    fitted = table_for(x)
    provenance = _describe(cases, fitted)
    if not fit_compute:
        provenance += "; compute fraction not identifiable from these rows (borrowed)"
    entry = ServingEfficiency(
        fitted.serving[key].bandwidth_fraction,
        fitted.serving[key].compute_fraction,
        fitted.serving[key].layer_overhead_ms,
        provenance,
    )
    return _with_serving(fitted, key, entry, fitted.allreduce_latency_us)


def _borrow(
    serving: dict[tuple[ServingEngine, MemoryKind], ServingEfficiency],
    fitted: set[tuple[ServingEngine, MemoryKind]],
    key: tuple[ServingEngine, MemoryKind],
) -> ServingEfficiency:
    """An entry for a pair without rows: same engine on another memory kind, else TensorRT-LLM on
    this kind (the only datacenter engine with rows), else any fitted entry."""
    engine, kind = key
    candidates = (
        [(engine, other) for other in _BORROW_ORDER]
        + [
            (ServingEngine.TENSORRT_LLM, kind),
            (ServingEngine.LLAMA_CPP, kind),
        ]
        + sorted(fitted)
    )
    if engine not in (ServingEngine.LLAMA_CPP, ServingEngine.TENSORRT_LLM):
        candidates = [(ServingEngine.TENSORRT_LLM, kind)] + candidates
    source = next(candidate for candidate in candidates if candidate in fitted)
    entry = serving[source]
    note = (
        f"no calibration rows for {engine.value} on {kind.value} memory; "
        f"borrowed from {source[0].value}/{source[1].value}"
    )
    return ServingEfficiency(entry.bandwidth_fraction, entry.compute_fraction, entry.layer_overhead_ms, note)


# ---- training -----------------------------------------------------------------------------------


def _training_key(case: Case) -> tuple[str, ComputeDtype]:
    _, family, dtype = case.group.split("/")
    return family, ComputeDtype(dtype)


def _scaling(x: FloatArray, provenance: str) -> TrainingScaling:
    return TrainingScaling(
        hidden_half_size=float(x[0]),
        attention_relative_efficiency=float(x[1]),
        provenance=provenance,
    )


def _training_table(
    table: EfficiencyTable,
    keys: Sequence[tuple[str, ComputeDtype]],
    x: FloatArray,
    provenance: dict[tuple[str, ComputeDtype], str],
    scaling_provenance: str,
) -> EfficiencyTable:
    """`x` = one utilisation per (family, dtype) key, then the two shared scaling terms. Each
    dtype also gets an all-family entry: the median of its fitted families."""
    bases = dict(zip(keys, (float(v) for v in x[: len(keys)]), strict=True))
    training = {key: TrainingEfficiency(value, provenance.get(key, "")) for key, value in bases.items()}
    for dtype in sorted({key[1] for key in keys}):
        families = [key[0] for key in keys if key[1] == dtype]
        median = statistics.median(bases[(family, dtype)] for family in families)
        note = f"median of the fitted families ({', '.join(families)})"
        training[(ANY_FAMILY, dtype)] = TrainingEfficiency(median, note)
    return EfficiencyTable(
        version=table.version,
        serving=table.serving,
        training=training,
        training_scaling=_scaling(x[len(keys) :], scaling_provenance),
        allreduce_latency_us=table.allreduce_latency_us,
        allreduce_bus_fraction=table.allreduce_bus_fraction,
        provenance=table.provenance,
    )


def _fit_training(table: EfficiencyTable, cases: Sequence[Case]) -> EfficiencyTable:
    """One utilisation per (family, dtype) in the rows plus the shared size and attention terms."""
    keys = sorted({_training_key(case) for case in cases})
    start = [0.5] * len(keys) + [500.0, 0.5]
    bounds = [(0.05, 1.0)] * len(keys) + [(0.0, 20000.0), (0.05, 1.0)]
    x = _solve(lambda v: _log_residuals(cases, _training_table(table, keys, v, {}, "")), start, bounds)
    fitted = _training_table(table, keys, x, {}, "")
    provenance = {key: _describe([c for c in cases if _training_key(c) == key], fitted) for key in keys}
    return _training_table(table, keys, x, provenance, f"shared by all families; {_describe(cases, fitted)}")


# ---- whole runs ---------------------------------------------------------------------------------


def _full_scale(table: EfficiencyTable) -> EfficiencyTable:
    """The table with a whole-run efficiency of 1: predictions carry interruptions only."""
    unit = WholeRunEfficiency(1.0, RUN_TOTAL_ACCELERATORS, 0.0, 0.0, "")
    return dataclasses.replace(table, whole_run=unit)


def _efficiency_needed(cases: Sequence[Case], table: EfficiencyTable) -> dict[str, float]:
    """Per run: the efficiency at scale that would predict it exactly (every run is at or beyond
    `RUN_TOTAL_ACCELERATORS`, where the full fitted figure applies, so the prediction is the
    interruptions-only prediction divided by it)."""
    base = _full_scale(table)
    return {case.row_id: case.predict(base) / case.measured for case in cases}


def _median_efficiency(needed: Sequence[float]) -> float:
    return min(statistics.median(needed), 1.0)


def whole_run_held_out(cases: Sequence[Case], table: EfficiencyTable) -> dict[str, float]:
    """Run id -> prediction with the efficiency fitted on the other runs only."""
    needed = _efficiency_needed(cases, table)
    base = _full_scale(table)
    out = {}
    for case in cases:
        others = [value for row, value in needed.items() if row != case.row_id]
        out[case.row_id] = case.predict(base) / _median_efficiency(others) if others else math.nan
    return out


def _fit_whole_run(table: EfficiencyTable, cases: Sequence[Case]) -> EfficiencyTable:
    """The median (robust with a handful of runs) of the efficiency each run needs, with the
    leave-one-run-out error stated beside it."""
    needed = _efficiency_needed(cases, table)
    efficiency = _median_efficiency(list(needed.values()))
    held = whole_run_held_out(cases, table)
    errors = [abs(percent_error(held[c.row_id], c.measured)) for c in cases if math.isfinite(held[c.row_id])]
    median_error = statistics.median(errors) if errors else math.nan
    worst = max(errors) if errors else math.nan
    provenance = (
        f"median of the efficiency each of {len(cases)} published whole runs needs "
        f"({_row_list(cases)}); leave-one-run-out median abs error {median_error:.0f}%, worst {worst:.0f}%"
    )
    fitted = WholeRunEfficiency(efficiency, RUN_TOTAL_ACCELERATORS, median_error, worst, provenance)
    return dataclasses.replace(table, whole_run=fitted)


# ---- everything ---------------------------------------------------------------------------------


def calibration_version() -> str:
    """Content hash of the CSVs: the same data always yields the same version string."""
    digest = hashlib.sha256()
    for path in sorted(calibration_dir().glob("*.csv")):
        digest.update(path.read_bytes())
    return f"calibration-{digest.hexdigest()[:12]}"


def _initial_table(version: str) -> EfficiencyTable:
    start = ServingEfficiency(_START["bandwidth"], _START["compute"], _START["overhead"], "")
    return EfficiencyTable(
        version=version,
        serving={(engine, kind): start for engine in ServingEngine for kind in MemoryKind},
        training={(ANY_FAMILY, ComputeDtype.BF16): TrainingEfficiency(0.5, "")},
        training_scaling=TrainingScaling(500.0, 0.5, ""),
        allreduce_latency_us=_START["latency"],
        allreduce_bus_fraction=ALLREDUCE_BUS_FRACTION,
    )


def _serving_groups(cases: Sequence[Case]) -> dict[tuple[ServingEngine, MemoryKind], list[Case]]:
    groups: dict[tuple[ServingEngine, MemoryKind], list[Case]] = {}
    for case in cases:
        if case.fitted and case.metric not in _NOT_SERVING:
            groups.setdefault(_group_key(case), []).append(case)
    return groups


def _fills_compute(cases: Sequence[Case]) -> bool:
    return any(case.metric in _COMPUTE_METRICS for case in cases)


def _lend_compute(
    serving: dict[tuple[ServingEngine, MemoryKind], ServingEfficiency],
    groups: dict[tuple[ServingEngine, MemoryKind], list[Case]],
) -> None:
    """A fitted entry whose rows never depend on compute (no compute peak, e.g. Apple) takes the
    compute fraction of the same engine on another memory kind."""
    for key in sorted(groups):
        if _fills_compute(groups[key]):
            continue
        donor = next((k for k in sorted(groups) if k[0] == key[0] and _fills_compute(groups[k])), None)
        if donor is None:
            continue
        entry = serving[key]
        serving[key] = ServingEfficiency(
            entry.bandwidth_fraction,
            serving[donor].compute_fraction,
            entry.layer_overhead_ms,
            entry.provenance.replace("(borrowed)", f"(borrowed from {donor[0].value}/{donor[1].value})"),
        )


def _fit_all_serving(table: EfficiencyTable, cases: Sequence[Case]) -> tuple[EfficiencyTable, list[str]]:
    groups = _serving_groups(cases)
    # The group with tensor-parallel rows fixes the all-reduce latency first; the rest reuse it.
    latency_group = (ServingEngine.TENSORRT_LLM, MemoryKind.HBM)
    for key in sorted(groups, key=lambda k: (k != latency_group, k)):
        table = _fit_serving_group(table, key, groups[key], fit_latency=key == latency_group)
    serving = dict(table.serving)
    _lend_compute(serving, groups)
    fitted = set(groups)
    for key in list(serving):
        if fitted and key not in fitted:
            serving[key] = _borrow(serving, fitted, key)
    provenance = (
        f"all-reduce latency fitted with {latency_group[0].value}/{latency_group[1].value} rows; "
        f"bus fraction {ALLREDUCE_BUS_FRACTION} from gpus.csv NCCL busbw notes"
    )
    table = EfficiencyTable(
        version=table.version,
        serving=serving,
        training=table.training,
        training_scaling=table.training_scaling,
        allreduce_latency_us=table.allreduce_latency_us,
        allreduce_bus_fraction=table.allreduce_bus_fraction,
        provenance=provenance,
    )
    rows = [f"{k[0].value}/{k[1].value}: {_row_list(v)}" for k, v in sorted(groups.items())]
    return table, rows


def fit(cases: Sequence[Case], version: str | None = None) -> FitResult:
    """Fit every entry the fitted cases inform; borrow the rest."""
    table, _ = _fit_all_serving(_initial_table(version or calibration_version()), cases)
    training_cases = [c for c in cases if c.fitted and c.group.startswith("training/")]
    if training_cases:
        table = _fit_training(table, training_cases)
    run_cases = [c for c in cases if c.fitted and c.metric == Metric.WHOLE_RUN_HOURS]
    if run_cases:
        table = _fit_whole_run(table, run_cases)
    groups = _serving_groups(cases)
    families = {case.family for group in groups.values() for case in group if case.family}
    table = dataclasses.replace(table, serving_families=tuple(sorted(families)))
    rows = {f"{k[0].value}/{k[1].value}": tuple(sorted({c.row_id for c in v})) for k, v in groups.items()}
    rows["training"] = tuple(sorted({c.row_id for c in training_cases}))
    rows["whole-run"] = tuple(sorted({c.row_id for c in run_cases}))
    return FitResult(table, rows)
