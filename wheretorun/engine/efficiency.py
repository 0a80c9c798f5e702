"""Calibrated efficiency factors: how much of the hardware's peak real software achieves.

The factors are data, fitted by `wheretorun.calibration` on the measured rows in
`pricing/data/calibration/` and written to `efficiency_data.py` with their provenance (rows,
fit error). This module holds their types and the lookup; the engine never reads files.

Serving factors are keyed by (serving engine, memory kind): decode speed is set by how well an
engine's kernels stream weights and KV cache from a given memory technology. Training factors are
keyed by (accelerator family, compute dtype): matmul utilisation is a property of the chip
generation and number format. Every factor is a fraction in (0, 1] (or a non-negative time), so an
estimate can never beat the roofline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from wheretorun.engine.config import ServingEngine
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.precision import ComputeDtype
from wheretorun.engine.specs import AcceleratorSpec, MemoryKind
from wheretorun.engine.whole_run import WholeRunEfficiency

__all__ = [
    "ANY_FAMILY",
    "EfficiencyTable",
    "ServingEfficiency",
    "TrainingEfficiency",
    "TrainingScaling",
    "serving_family",
]

ANY_FAMILY = "*"


def _check_fraction(value: float, name: str) -> None:
    if not 0 < value <= 1:
        raise InvalidSpec(name, f"an efficiency must be in (0, 1], got {value}")


@dataclass(frozen=True, slots=True)
class ServingEfficiency:
    """Achieved fractions for one serving engine on one memory kind.

    * `bandwidth_fraction`: achieved / peak memory bandwidth while a forward pass streams weights
      and KV cache (decode at small batch).
    * `compute_fraction`: achieved / dense peak FLOPS when a pass is compute-bound (prefill, decode
      at large batch).
    * `layer_overhead_ms`: fixed time per layer per forward pass (kernel launches, synchronisation);
      it is what keeps small models far from the bandwidth roofline at batch 1.
    """

    bandwidth_fraction: float
    compute_fraction: float
    layer_overhead_ms: float
    provenance: str

    def __post_init__(self) -> None:
        _check_fraction(self.bandwidth_fraction, "bandwidth_fraction")
        _check_fraction(self.compute_fraction, "compute_fraction")
        if self.layer_overhead_ms < 0:
            raise InvalidSpec("layer_overhead_ms", "must not be negative")


@dataclass(frozen=True, slots=True)
class TrainingEfficiency:
    """Hardware FLOPs utilisation of one accelerator family and dtype at the reference point
    (large hidden size, one node), before the size and scale terms of `TrainingScaling`."""

    hardware_flops_fraction: float
    provenance: str

    def __post_init__(self) -> None:
        _check_fraction(self.hardware_flops_fraction, "hardware_flops_fraction")


@dataclass(frozen=True, slots=True)
class TrainingScaling:
    """How matmul utilisation changes with model width and attention share.

    utilisation = base x hidden / (hidden + hidden_half_size); attention FLOPs run at
    `attention_relative_efficiency` x that (flash-attention kernels reach a lower share of peak
    than large GEMMs, more so in the backward pass). The fall with scale is not a fitted factor:
    `training_estimate.py` prices data-parallel communication over the intra-node link for one node and
    the slower inter-node link beyond, and a step takes the longer of compute and communication.
    """

    hidden_half_size: float
    attention_relative_efficiency: float
    provenance: str

    def __post_init__(self) -> None:
        _check_fraction(self.attention_relative_efficiency, "attention_relative_efficiency")
        if self.hidden_half_size < 0:
            raise InvalidSpec("hidden_half_size", "must not be negative")


@dataclass(frozen=True, slots=True)
class EfficiencyTable:
    """Everything calibrated, with a version string that results echo."""

    version: str
    serving: Mapping[tuple[ServingEngine, MemoryKind], ServingEfficiency] = field(hash=False)
    training: Mapping[tuple[str, ComputeDtype], TrainingEfficiency] = field(hash=False)
    training_scaling: TrainingScaling
    allreduce_latency_us: float
    allreduce_bus_fraction: float
    provenance: str = ""
    whole_run: WholeRunEfficiency | None = None  # None: no whole-run calibration (tests, partial fits)
    # the accelerator families, each on its memory kind ("hopper/hbm", `serving_family`), with a
    # measured serving row in the fit; empty: not known (tests)
    serving_families: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_fraction(self.allreduce_bus_fraction, "allreduce_bus_fraction")
        if self.allreduce_latency_us < 0:
            raise InvalidSpec("allreduce_latency_us", "must not be negative")

    def serving_for(self, engine: ServingEngine, memory_kind: MemoryKind) -> ServingEfficiency:
        """The factors for `engine` on `memory_kind`.

        The generated table covers every pair; an entry without its own calibration rows says in
        its provenance which entry it was borrowed from.
        """
        try:
            return self.serving[(engine, memory_kind)]
        except KeyError:
            raise InvalidSpec(
                "engine", f"no efficiency data for {engine.value} on {memory_kind.value} memory"
            ) from None

    def training_for(self, family: str, dtype: ComputeDtype) -> TrainingEfficiency:
        """The family's own factor if calibrated, else the all-family entry for the dtype."""
        return self.training[self.training_key(family, dtype)]

    def training_key(self, family: str, dtype: ComputeDtype) -> tuple[str, ComputeDtype]:
        """Which entry `training_for` reads: (family, dtype) when fitted, else the all-family
        entry for the dtype, else the all-family bf16 entry."""
        for key in ((family, dtype), (ANY_FAMILY, dtype), (ANY_FAMILY, ComputeDtype.BF16)):
            if key in self.training:
                return key
        raise InvalidSpec("precision", f"no training efficiency data for {dtype.value}")


def serving_family(spec: AcceleratorSpec) -> str:
    """An accelerator's family on its memory kind, as `EfficiencyTable.serving_families` lists
    them: "hopper/hbm", "blackwell/gddr" (lower case, as a request may spell the family)."""
    return f"{spec.family.lower()}/{spec.memory_kind.value}"
