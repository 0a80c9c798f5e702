"""Hardware whose estimate would rest on an unknown fact (`unspecified_hardware`): no spec at all
(memory, bandwidth, memory technology), no TDP to cost its power, no compute peak at the
precision it runs (prefill and training need it), no interconnect bandwidth for tensor
parallelism. A missing fact is never filled with a guess.

It applies before sizing: an estimate is only as good as the facts it stands on.
"""

from __future__ import annotations

from wheretorun.engine.catalog import AcceleratorEntry
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.specs import AcceleratorSpec

__all__ = ["compute_peak", "interconnect", "no_spec_to_size", "power", "spec"]


def spec(entry: AcceleratorEntry | None, accelerator_id: str) -> Rejection | None:
    """An accelerator the catalog has no spec for."""
    if entry is None or entry.spec is None:
        return Rejection(
            RejectReason.UNSPECIFIED_HARDWARE,
            f"{accelerator_id}: the catalog lacks its memory, bandwidth or memory technology",
        )
    return None


def no_spec_to_size(accelerator_id: str) -> Rejection:
    """An accelerator that was not sized (no spec to size a replica on)."""
    return Rejection(RejectReason.UNSPECIFIED_HARDWARE, f"{accelerator_id}: no spec to size a replica")


def power(entry: AcceleratorEntry) -> Rejection | None:
    """Hardware to buy without a TDP: its power cannot be costed."""
    if entry.spec is not None and entry.spec.tdp_w is None:
        return Rejection(
            RejectReason.UNSPECIFIED_HARDWARE, f"{entry.id} has no TDP: its power cannot be costed"
        )
    return None


def compute_peak(accelerator: AcceleratorSpec, precision: Precision) -> Rejection | None:
    """No published compute peak at `precision`."""
    problem = accelerator.compute_peak_problem(precision)
    return None if problem is None else Rejection(RejectReason.UNSPECIFIED_HARDWARE, problem)


def interconnect(accelerator: AcceleratorSpec, replica_size: int) -> Rejection | None:
    """Tensor parallelism over accelerators the catalog has no interconnect figure for."""
    if replica_size > 1 and accelerator.interconnect_gb_s is None:
        return Rejection(
            RejectReason.UNSPECIFIED_HARDWARE,
            f"the catalog has no interconnect figure for {accelerator.name}: tensor parallelism over it "
            "cannot be estimated",
        )
    return None
