"""Whole runs: what a training job costs beyond its steady-state speed.

A steady-state estimate (`training.py`, calibrated on llm-foundry's throughput tables) says how
fast a job runs while it runs. A whole run also loses time to interruptions (a failed GPU, a
network link, a reclaimed spot instance: the job restarts from its last checkpoint) and runs
below its benchmark speed at production scale (evaluation, checkpoint stalls, stragglers, data
loading, restarts after loss spikes). Published whole-run accelerator-hours (Llama 2/3 model
cards) are 1.5-2.8x what the steady-state estimate predicts for them.

whole-run hours = steady-state hours x 1 / goodput x 1 / efficiency at scale

* goodput = 1 - interruptions per hour x hours lost per interruption. Interruptions per hour =
  the rate per accelerator-hour x the accelerators in the job (more nodes, more failures); each
  costs the restart plus, on average, half a checkpoint interval of redone work.
  Default rate and loss: Meta's Llama 3 405B run, 466 job interruptions (419 unexpected) in a
  54-day snapshot on 16,384 H100 with "higher than 90% effective training time" (Llama 3 Herd of
  Models, arXiv:2407.21783 §3.3.4, reported by DatacenterDynamics 2024-07-29): 466 / (54 x 24 x
  16,384) = 2.19e-5 interruptions per accelerator-hour, and at most 10% x 1,296 h / 466 = 0.278 h
  lost per interruption.
* efficiency at scale: the rest of the gap, fitted on the published whole runs (calibration
  `WholeRunEfficiency`). No public figure says how it grows between one node and a production
  cluster, so it is applied in proportion to log(nodes): none inside one node, the full fitted
  gap from `full_scale_accelerators` on (a planning convention, stated with every estimate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "HARDWARE_INTERRUPTIONS_PER_ACCELERATOR_HOUR",
    "HOURS_LOST_PER_HARDWARE_INTERRUPTION",
    "WholeRun",
    "WholeRunEfficiency",
    "goodput",
    "scale_efficiency",
    "whole_run",
]

# Llama 3 405B pre-training, arXiv:2407.21783 §3.3.4: 466 interruptions in 54 days on 16,384 H100.
HARDWARE_INTERRUPTIONS_PER_ACCELERATOR_HOUR = 466 / (54 * 24 * 16_384)
# Same source: > 90% effective training time, so at most 10% of 1,296 h over 466 interruptions.
HOURS_LOST_PER_HARDWARE_INTERRUPTION = 0.10 * 54 * 24 / 466
# Goodput is floored here: beyond it a job spends nearly all its time restarting and the
# estimate says so rather than dividing by ~0.
_MIN_GOODPUT = 0.05
_ONE_NODE = 8


@dataclass(frozen=True, slots=True)
class WholeRunEfficiency:
    """The fitted share of steady-state speed a whole production run keeps, and how well that
    figure predicts runs it was not fitted on (leave-one-run-out)."""

    efficiency_at_full_scale: float
    full_scale_accelerators: int
    held_out_median_error_pct: float
    held_out_worst_error_pct: float
    provenance: str

    def __post_init__(self) -> None:
        if not 0 < self.efficiency_at_full_scale <= 1:
            raise ValueError("efficiency_at_full_scale must be in (0, 1]")
        if self.full_scale_accelerators <= _ONE_NODE:
            raise ValueError("full_scale_accelerators must be more than one node")


@dataclass(frozen=True, slots=True)
class WholeRun:
    accelerator_hours: float
    wall_clock_hours: float
    goodput: float  # share of wall-clock time doing new work
    scale_efficiency: float  # share of steady-state speed kept at this scale
    uncertainty: str  # how far off the whole-run figure may be, in words
    median_error: float | None = None  # the held-out median error of the hours (0.19 = 19%), if fitted


def goodput(accelerators: int, interruptions_per_accelerator_hour: float, hours_lost: float) -> float:
    """Share of wall-clock time that does new work, given interruptions that stop the whole job."""
    lost_share = interruptions_per_accelerator_hour * accelerators * hours_lost
    return max(1.0 - lost_share, _MIN_GOODPUT)


def scale_efficiency(accelerators: int, fitted: WholeRunEfficiency | None) -> float:
    """1 inside one node; the fitted full-scale figure from `full_scale_accelerators` on; in
    between, geometric in the number of accelerators (linear in log nodes)."""
    if fitted is None or accelerators <= _ONE_NODE:
        return 1.0
    span = math.log(fitted.full_scale_accelerators / _ONE_NODE)
    share = min(math.log(accelerators / _ONE_NODE) / span, 1.0)
    return float(fitted.efficiency_at_full_scale**share)


def whole_run(
    steady_wall_clock_hours: float,
    accelerators: int,
    fitted: WholeRunEfficiency | None,
    interruptions_per_accelerator_hour: float = HARDWARE_INTERRUPTIONS_PER_ACCELERATOR_HOUR,
    hours_lost_per_interruption: float = HOURS_LOST_PER_HARDWARE_INTERRUPTION,
) -> WholeRun:
    """A whole run's wall-clock and accelerator-hours from its steady-state wall-clock."""
    kept = goodput(accelerators, interruptions_per_accelerator_hour, hours_lost_per_interruption)
    efficiency = scale_efficiency(accelerators, fitted)
    wall = steady_wall_clock_hours / kept / efficiency
    if fitted is None:
        uncertainty = "no whole-run calibration: only interruptions are added to the steady-state time"
    else:
        uncertainty = (
            f"whole-run hours predicted within {fitted.held_out_median_error_pct:.0f}% (median; worst "
            f"{fitted.held_out_worst_error_pct:.0f}%) on published runs held out of the fit; how the gap "
            "grows between one node and a full cluster has no public measurement"
        )
    return WholeRun(
        accelerator_hours=wall * accelerators,
        wall_clock_hours=wall,
        goodput=kept,
        scale_efficiency=efficiency,
        uncertainty=uncertainty,
        median_error=None if fitted is None else fitted.held_out_median_error_pct / 100,
    )
